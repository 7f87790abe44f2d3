import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createLogger } from '../src/kernel/logger'
import { type TestApp, testApp } from './helpers/app'

// The one line per request at LOG_LEVEL=info, on each path that answers: Elysia, the fast path of cached public reads,
// and the beacon (which keeps no client address, not even in the log).

let t: TestApp
let space: string
const lines: Record<string, unknown>[] = []

beforeAll(async () => {
  const logger = createLogger('info', (line) => void lines.push(JSON.parse(line)))
  t = await testApp({}, {}, { logger })
  const owner = (await t.register()).token
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
