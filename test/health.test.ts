import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { defineModule } from '../src/kernel/module'
import { MODULES } from '../src/modules'
import { searchModule } from '../src/modules/search'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

/** Waits for a condition with a generous bound (no wall-clock assertion). */
async function until(what: string, check: () => Promise<boolean> | boolean, ms = 30_000) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

let probeReason: string | null = null
const probe = defineModule({ name: 'probe', ready: () => probeReason })

let t: TestApp
beforeAll(async () => {
  t = await testApp({}, {}, { modules: [...MODULES, probe] })
  await until('search warm', () => t.app.state(searchModule).registry.warm)
})
afterAll(() => t.close())

describe('GET /v1/health/live', () => {
  test('answers 200 {status: ok}, not cached', async () => {
    const r = await t.request('GET', '/v1/health/live')
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ status: 'ok' })
    expect(r.headers.get('cache-control')).toBe('no-store')
  })
})

describe('GET /v1/health/ready', () => {
  test('answers 200 once the database answers, migrations are applied and search is warm', async () => {
    const r = await t.request('GET', '/v1/health/ready')
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ status: 'ok' })
  })

  test('answers 503 not_ready with the reason and Retry-After while a module is not ready', async () => {
    probeReason = 'the probe is warming up'
    try {
      const r = await t.request('GET', '/v1/health/ready')
      expect(r.status).toBe(503)
      expect(r.body.error).toBe('not_ready')
      expect(r.body.message).toContain('the probe is warming up')
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
    } finally {
      probeReason = null
    }
    expect((await t.request('GET', '/v1/health/ready')).status).toBe(200)
  })

  test('answers 503 while a migration is not applied', async () => {
    const other = await testApp()
    try {
      const [last] = await other.kernel.db.query<{ tag: string }>('select tag from _migrations order by tag desc limit 1')
      await other.kernel.db.query('delete from _migrations where tag = $1', [last.tag])
      const r = await other.request('GET', '/v1/health/ready')
      expect(r.status).toBe(503)
      expect(r.body.error).toBe('not_ready')
      expect(r.body.message).toContain('migration')
      expect(Object.keys(r.body).sort()).toEqual(['error', 'message'])
    } finally {
      await other.close()
    }
  })

  test('answers 503 (never a 500) when the database is gone, and live still answers 200', async () => {
    const other = await testApp()
    await until('search warm', () => other.app.state(searchModule).registry.warm)
    try {
      await other.kernel.db.close()
      const r = await other.request('GET', '/v1/health/ready')
      expect(r.status).toBe(503)
      expect(r.body.error).toBe('not_ready')
      expect(r.body.message).toContain('database')
      expect(r.text).not.toContain('at ')
      expect((await other.request('GET', '/v1/health/live')).status).toBe(200)
    } finally {
      await other.close().catch(() => {})
    }
  })

  test('is never rate limited: no rate-limit row, no RateLimit headers, many requests from one IP all pass', async () => {
    for (const path of ['/v1/health/live', '/v1/health/ready']) {
      expect(t.kernel.rateLimiter.table.match('GET', path)).toBeUndefined()
      for (let i = 0; i < 50; i++) {
        const r = await t.request('GET', path, { ip: '203.0.113.7' })
        expect(r.status).toBe(200)
        expect(r.headers.get('ratelimit-limit')).toBeNull()
      }
    }
  })

  test('both probes are in the OpenAPI description, with the 503', async () => {
    const r = await t.request('GET', '/v1/openapi.json')
    expect(r.body.paths['/v1/health/live'].get.responses['200']).toBeDefined()
    expect(r.body.paths['/v1/health/ready'].get.responses['503']).toBeDefined()
  })
})
