import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createLogger } from '../src/kernel/logger'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

// The one line per request at LOG_LEVEL=info, on each path that answers: Elysia, the fast path of cached public reads,
// and the beacon (which keeps no client address, not even in the log).

let t: TestApp
let space: string
let owner: string
const lines: Record<string, unknown>[] = []

beforeAll(async () => {
  const logger = createLogger('info', (line) => void lines.push(JSON.parse(line)))
  t = await testApp({}, {}, { logger })
  owner = (await t.register()).token
  space = (await t.createSpace(owner, { default_lang: 'en' })).slug
  await t.request('POST', `/v1/spaces/${space}/components`, { token: owner, body: { name: 'hero', schema: { headline: { type: 'text' } } } })
  const created = await t.request('POST', `/v1/spaces/${space}/stories`, {
    token: owner,
    body: { name: 'Home', slug: 'home', content: { type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline: 'Hi' }] } },
  })
  expect(created.status).toBe(201)
  expect((await t.request('POST', `/v1/spaces/${space}/stories/${created.body.data.uuid}/publish`, { token: owner })).status).toBe(200)
}, 60_000)

afterAll(async () => {
  await t?.close()
})

/**
 * The request lines of the request `run` sends with X-Request-Id `requestId`. Elysia writes its line after the
 * response is handed over (an after-response hook), so wait for one, then a little longer: a second line for the same
 * request would show up too.
 */
async function linesOf(requestId: string, run: () => Promise<unknown>) {
  const mine = () => lines.filter((l) => l.msg === 'request' && l.request_id === requestId)
  await run()
  for (let waited = 0; mine().length === 0 && waited < 2000; waited += 10) await Bun.sleep(10)
  await Bun.sleep(30)
  return mine()
}

describe('the request log', () => {
  test('an Elysia-routed request: method, route, status, time, request id and the client address behind a trusted proxy', async () => {
    const got = await linesOf('log-test-1', () => t.request('GET', '/v1/version', { ip: '10.20.30.40', headers: { 'X-Request-Id': 'log-test-1' } }))
    expect(got).toHaveLength(1)
    expect(got[0]).toMatchObject({ level: 'info', method: 'GET', route: '/v1/version', status: 200, request_id: 'log-test-1', ip: '10.20.30.40' })
    expect(typeof got[0].ms).toBe('number')
    expect(Object.keys(got[0]).sort()).toEqual(['ip', 'level', 'method', 'ms', 'msg', 'request_id', 'route', 'status', 'time'])
  })

  test('a cached public read answered by the fast path writes the same line, with the client address', async () => {
    const path = `/v1/cdn/${space}/stories/home`
    await t.request('GET', path) // the first read fills the cache; the second is answered from it
    let res: Awaited<ReturnType<TestApp['request']>> | undefined
    const got = await linesOf('log-test-2', async () => (res = await t.request('GET', path, { ip: '10.20.30.41', headers: { 'X-Request-Id': 'log-test-2' } })))
    expect(res!.status).toBe(200)
    expect(got).toHaveLength(1)
    expect(got[0]).toMatchObject({ method: 'GET', route: '/v1/cdn/:space/stories/*', status: 200, ip: '10.20.30.41' })
    expect(res!.headers.get('x-request-id')).toBe('log-test-2')
  })

  test('a 404 is logged with its status', async () => {
    const got = await linesOf('log-test-3', () =>
      t.request('GET', `/v1/cdn/${space}/stories/nowhere`, { ip: '10.20.30.42', headers: { 'X-Request-Id': 'log-test-3' } }),
    )
    expect(got).toHaveLength(1)
    expect(got[0]).toMatchObject({ method: 'GET', status: 404, ip: '10.20.30.42' })
  })

  test('a beacon line carries "-" instead of the client address', async () => {
    let status = 0
    const got = await linesOf('log-test-4', async () => {
      const res = await t.request('POST', `/v1/cdn/${space}/_beacon`, {
        ip: '10.20.30.43',
        raw: JSON.stringify({ story_uuid: crypto.randomUUID(), path: '/home' }),
        headers: { 'Content-Type': 'text/plain', 'X-Request-Id': 'log-test-4' },
      })
      status = res.status
    })
    expect(got).toHaveLength(1)
    expect(got[0]).toMatchObject({ method: 'POST', route: '/v1/cdn/:space/_beacon', status, ip: '-' })
    expect(JSON.stringify(lines)).not.toContain('10.20.30.43')
  })
})

/** Lines of a second app built with `env`, for the LOG_CLIENT_IP modes. */
async function appWithLog(env: Record<string, string>) {
  const mine: Record<string, unknown>[] = []
  const logger = createLogger('info', (line) => void mine.push(JSON.parse(line)))
  const app = await testApp({}, env, { logger })
  const of = async (requestId: string, run: () => Promise<unknown>) => {
    const got = () => mine.filter((l) => l.msg === 'request' && l.request_id === requestId)
    await run()
    for (let waited = 0; got().length === 0 && waited < 2000; waited += 10) await Bun.sleep(10)
    await Bun.sleep(30)
    return got()
  }
  return { app, lines: mine, of }
}

describe('the client address in request lines (LOG_CLIENT_IP, private routes)', () => {
  const HASH = /^[0-9a-f]{16}$/

  test('private routes (form submit, subscribe, confirm, unsubscribe, registration) never log the address as seen', async () => {
    const form = await t.request('POST', `/v1/spaces/${space}/forms`, {
      token: owner,
      body: { slug: 'contact', label: 'Contact', fields: [{ key: 'name', type: 'text', label: 'Name', required: true }] },
    })
    expect(form.status).toBe(201)
    const ip = '10.99.0.7'
    const sends: [string, string, Record<string, unknown> | undefined][] = [
      ['POST', `/v1/cdn/${space}/forms/contact`, { data: { name: 'Ada' } }],
      ['POST', `/v1/cdn/${space}/forms/no-such-form`, { data: {} }],
      ['POST', `/v1/cdn/${space}/subscribe`, { email: 'ada@example.com' }],
      ['GET', `/v1/cdn/${space}/subscribe/confirm/not-a-real-token`, undefined],
      ['GET', `/v1/cdn/${space}/unsubscribe/not-a-real-token`, undefined],
      ['POST', `/v1/cdn/${space}/subscribe/confirm/${'A'.repeat(43)}`, undefined],
      ['POST', `/v1/cdn/${space}/unsubscribe/${'A'.repeat(43)}`, undefined],
      ['POST', '/v1/auth/register', { email: 'private-log@example.com', password: 'correct horse battery staple', name: 'P' }],
    ]
    const hashes = new Set<unknown>()
    for (const [i, [method, path, body]] of sends.entries()) {
      let status = 0
      const got = await linesOf(`private-${i}`, async () => {
        status = (await t.request(method, path, { ip, body, headers: { 'X-Request-Id': `private-${i}` } })).status
      })
      expect(status).toBeLessThan(500)
      expect(got).toHaveLength(1)
      expect(got[0].method).toBe(method)
      expect(got[0].ip).toMatch(HASH)
      hashes.add(got[0].ip)
    }
    // One address, one day, one process: one hash (lines can be grouped, e.g. against abuse), never the address.
    expect(hashes.size).toBe(1)
    expect(JSON.stringify(lines)).not.toContain(ip)
    // A request no route pattern matched (here another method; a 429 too) names the private pattern, not its path,
    // which may carry a token.
    const unmatched = await linesOf('private-unmatched', () =>
      t.request('DELETE', `/v1/cdn/${space}/unsubscribe/secret-token-in-path`, { ip, headers: { 'X-Request-Id': 'private-unmatched' } }),
    )
    expect(unmatched).toHaveLength(1)
    expect(unmatched[0]).toMatchObject({ method: 'DELETE', route: '/v1/cdn/:space/unsubscribe/:token' })
    expect(unmatched[0].ip).toMatch(HASH)
    expect(JSON.stringify(lines)).not.toContain('secret-token-in-path')
    // Any other route keeps the address as seen by default (LOG_CLIENT_IP=full).
    const other = await linesOf('private-other', () => t.request('GET', '/v1/version', { ip, headers: { 'X-Request-Id': 'private-other' } }))
    expect(other[0].ip).toBe(ip)
  })

  test('LOG_CLIENT_IP=hash logs the daily-salted hash on every route; the salt changes with the UTC day', async () => {
    const { app, of } = await appWithLog({ LOG_CLIENT_IP: 'hash' })
    try {
      const ip = '10.99.0.8'
      const a = await of('hash-1', () => app.request('GET', '/v1/version', { ip, headers: { 'X-Request-Id': 'hash-1' } }))
      const b = await of('hash-2', () => app.request('POST', '/v1/cdn/nowhere/subscribe', { ip, body: {}, headers: { 'X-Request-Id': 'hash-2' } }))
      const c = await of('hash-3', () => app.request('GET', '/v1/version', { ip: '10.99.0.9', headers: { 'X-Request-Id': 'hash-3' } }))
      expect(a[0].ip).toMatch(HASH)
      expect(b[0].ip).toBe(a[0].ip)
      expect(c[0].ip).not.toBe(a[0].ip)
      app.clock.advance(86_400_000)
      const d = await of('hash-4', () => app.request('GET', '/v1/version', { ip, headers: { 'X-Request-Id': 'hash-4' } }))
      expect(d[0].ip).toMatch(HASH)
      expect(d[0].ip).not.toBe(a[0].ip)
    } finally {
      await app.close()
    }
  })

  test('LOG_CLIENT_IP=off logs "-" on every route', async () => {
    const { app, lines: mine, of } = await appWithLog({ LOG_CLIENT_IP: 'off' })
    try {
      const a = await of('off-1', () => app.request('GET', '/v1/version', { ip: '10.99.0.10', headers: { 'X-Request-Id': 'off-1' } }))
      const b = await of('off-2', () => app.request('POST', '/v1/cdn/nowhere/forms/x', { ip: '10.99.0.10', body: {}, headers: { 'X-Request-Id': 'off-2' } }))
      expect(a[0].ip).toBe('-')
      expect(b[0].ip).toBe('-')
      expect(JSON.stringify(mine)).not.toContain('10.99.0.10')
    } finally {
      await app.close()
    }
  })
})
