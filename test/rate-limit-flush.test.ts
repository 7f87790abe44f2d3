import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(120_000)

// RATE_LIMIT_STORE=postgres (kernel/rate-limit.ts): the public read surface's limits (large rules) are counted in
// memory and flushed to Postgres at most once a second, so a cached read writes nothing; small rules (sign-in) still
// count with one upsert per request. The counts that reach Postgres are exact, and the limit still answers 429.

let t: TestApp
let space: string
const IP = '198.51.100.7'

beforeAll(async () => {
  t = await testApp({ rateLimitStore: 'postgres' })
  const owner = (await t.register()).token
  space = (await t.createSpace(owner)).slug
  await t.request('POST', `/v1/spaces/${space}/components`, { token: owner, body: { name: 'hero', schema: { headline: { type: 'text' } } } })
  const r = await t.request('POST', `/v1/spaces/${space}/stories`, { token: owner, body: { name: 'home', slug: 'home', content: { type: 'doc', blocks: [{ component: 'hero', _uid: 'a', headline: 'Hi' }] } } })
  await t.request('POST', `/v1/spaces/${space}/stories/${r.body.data.uuid}/publish`, { token: owner })
}, 120_000)
afterAll(() => t?.close())

/** The counts Postgres holds for the public read rules (keys are keyed digests: no address is stored). */
async function storedCounts(): Promise<number[]> {
  const rows = await t.kernel.db.query<{ count: number }>(`select count from rate_limit_counters order by count desc`)
  return rows.map((r) => Number(r.count))
}

describe('rate limits on Postgres, counted in memory and flushed', () => {
  test('cached reads write nothing until the flush, which writes their exact count in one row', async () => {
    const read = () => t.request('GET', `/v1/cdn/${space}/stories/home`, { ip: IP })
    const first = await read()
    expect(first.status).toBe(200)
    await t.kernel.rateLimiter.flush()
    const before = await storedCounts()
    // The clock stands still: no second has passed since the last flush.
    for (let i = 0; i < 40; i++) expect((await read()).status).toBe(200)
    expect(await storedCounts()).toEqual(before)
    const last = await read()
    expect(last.headers.get('ratelimit-remaining')).toBe(String(600 - 42))
    t.clock.advance(1_001)
    await t.kernel.rateLimiter.flush()
    const after = await storedCounts()
    expect(after.length).toBe(before.length)
    expect(after[0]).toBe(42)
  })

  test('the limit holds: past 600 a minute the public read answers 429', async () => {
    const ip = '198.51.100.8'
    let last = 0
    for (let i = 0; i < 601; i++) last = (await t.request('GET', `/v1/cdn/${space}/stories/home`, { ip })).status
    expect(last).toBe(429)
    t.clock.advance(1_001)
    await t.kernel.rateLimiter.flush()
    expect((await storedCounts())[0]).toBe(601)
  })

  test('another instance sees the flushed count: its next request starts from the fleet total', async () => {
    const ip = '198.51.100.9'
    for (let i = 0; i < 10; i++) await t.request('GET', `/v1/cdn/${space}/stories/home`, { ip })
    t.clock.advance(1_001)
    await t.kernel.rateLimiter.flush()
    // The same rule counted by a second limiter on the same database (as a second instance would).
    const { PostgresRateLimitStore, RateLimiter } = await import('../src/kernel/rate-limit')
    const other = new RateLimiter(t.kernel.rateLimiter.table, new PostgresRateLimitStore(t.kernel.db, t.kernel.secrets.derive('rate-limit-keys')), t.kernel.clock)
    other.check('GET', `/v1/cdn/${space}/stories/home`, ip)
    await other.flush()
    const d = other.check('GET', `/v1/cdn/${space}/stories/home`, ip)
    expect(d instanceof Promise ? null : d?.remaining).toBe(600 - 12)
  })

  test('a small rule (sign-in) still counts in Postgres on every request', async () => {
    const ip = '198.51.100.10'
    const rows = async () => (await t.kernel.db.query<{ n: number }>('select count(*)::int as n from rate_limit_counters'))[0].n
    const before = await rows()
    await t.request('POST', '/v1/auth/login', { ip, body: { email: 'nobody@example.com', password: 'wrong-password-1' } })
    expect(await rows()).toBeGreaterThan(before)
  })
})
