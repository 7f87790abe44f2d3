import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { ManualClock } from '../../src/kernel/clock'
import { type Database, openDatabase } from '../../src/kernel/db'
import {
  Backoff,
  MemoryRateLimitStore,
  PostgresRateLimitStore,
  type RateLimitRule,
  type RateLimitStore,
  RateLimiter,
  RateLimitTable,
} from '../../src/kernel/rate-limit'
import { rateLimitRules } from '../../src/app'
import { freshDatabase, type TestDatabase } from '../helpers/db'

const RATE_LIMITS = rateLimitRules()

// bunfig's `[test] timeout` is not honoured by `bun test`; a fresh testApp() can take longer than the 5 s default.
setDefaultTimeout(60_000)

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0)
let keyCounter = 0
const freshKey = (prefix = 'k') => `${prefix}|${++keyCounter}|${Math.random().toString(36).slice(2, 8)}`

let tdb: TestDatabase
/** A second connection to the same database when running on a real Postgres server (a second process). */
let second: Database | null = null

beforeAll(async () => {
  tdb = await freshDatabase()
  if (tdb.url) second = await openDatabase({ databaseUrl: tdb.url, dataDir: '' })
})

afterAll(async () => {
  await second?.close()
  await tdb?.drop()
})

describe('RateLimitTable', () => {
  const rules: RateLimitRule[] = [
    { id: 'special', method: 'GET', path: '/x/:id/special', limit: 1, windowSeconds: 60 },
    { id: 'param', method: 'GET', path: '/x/:id', limit: 2, windowSeconds: 60 },
    { id: 'rest', method: 'GET', path: '/x/*', limit: 3, windowSeconds: 60 },
    { id: 'post', method: 'POST', path: '/x/:id', limit: 4, windowSeconds: 60 },
    { id: 'dotted', method: 'GET', path: '/files/schema.gql', limit: 5, windowSeconds: 60 },
    { id: 'exact', method: 'GET', path: '/y', limit: 6, windowSeconds: 60 },
  ]
  const table = new RateLimitTable(rules)
  const idOf = (method: string, path: string) => table.match(method, path)?.id

  test('a :param matches exactly one non-empty segment', () => {
    expect(idOf('GET', '/x/42')).toBe('param')
    expect(idOf('GET', '/x/42/')).toBe('param')
    expect(idOf('GET', '/x/42/special')).toBe('special')
    expect(idOf('GET', '/x/42/other')).toBe('rest')
    expect(idOf('GET', '/x//special')).toBe('rest')
  })

  test('a trailing * matches the rest of the path, but not nothing', () => {
    expect(idOf('GET', '/x/a/b/c')).toBe('rest')
    expect(idOf('GET', '/x/')).toBeUndefined()
    expect(idOf('GET', '/x')).toBeUndefined()
  })

  test('the first matching row wins', () => {
    const general = new RateLimitTable([
      { id: 'general', method: 'GET', path: '/a/*', limit: 1, windowSeconds: 1 },
      { id: 'specific', method: 'GET', path: '/a/b', limit: 1, windowSeconds: 1 },
    ])
    expect(general.match('GET', '/a/b')?.id).toBe('general')
    const specificFirst = new RateLimitTable([
      { id: 'specific', method: 'GET', path: '/a/b', limit: 1, windowSeconds: 1 },
      { id: 'general', method: 'GET', path: '/a/*', limit: 1, windowSeconds: 1 },
    ])
    expect(specificFirst.match('GET', '/a/b')?.id).toBe('specific')
    expect(specificFirst.match('GET', '/a/c')?.id).toBe('general')
  })

  test('rows are per method', () => {
    expect(idOf('POST', '/x/42')).toBe('post')
    expect(idOf('PUT', '/x/42')).toBeUndefined()
    expect(idOf('DELETE', '/x/42')).toBeUndefined()
    expect(idOf('POST', '/x/42/special')).toBeUndefined()
  })

  test('literal segments are matched literally, regex characters included', () => {
    expect(idOf('GET', '/files/schema.gql')).toBe('dotted')
    expect(idOf('GET', '/files/schemaXgql')).toBeUndefined()
    expect(idOf('GET', '/y')).toBe('exact')
    expect(idOf('GET', '/yy')).toBeUndefined()
    expect(idOf('GET', '/y/z')).toBeUndefined()
    expect(idOf('GET', '/prefix/y')).toBeUndefined()
  })

  test('the service table holds the stated limits of the spec for every route that exists', () => {
    const real = new RateLimitTable(RATE_LIMITS)
    const rule = (method: string, path: string) => {
      const r = real.match(method, path)
      return r && { id: r.id, limit: r.limit, windowSeconds: r.windowSeconds }
    }
    expect(rule('POST', '/v1/auth/login')).toEqual({ id: 'auth.login', limit: 10, windowSeconds: 3600 })
    expect(rule('POST', '/v1/auth/register')).toEqual({ id: 'auth.register', limit: 5, windowSeconds: 3600 })
    expect(rule('POST', '/v1/auth/logout')).toMatchObject({ limit: 60, windowSeconds: 60 })
    expect(rule('GET', '/v1/auth/me')).toMatchObject({ limit: 60, windowSeconds: 60 })
    expect(rule('POST', '/v1/spaces')).toMatchObject({ limit: 60, windowSeconds: 60 })
    expect(rule('GET', '/v1/spaces')).toMatchObject({ limit: 60, windowSeconds: 60 })
    expect(rule('GET', '/v1/openapi.json')).toMatchObject({ limit: 60, windowSeconds: 60 })
    expect(rule('GET', '/openapi.yaml')).toMatchObject({ limit: 60, windowSeconds: 60 })
    expect(rule('GET', '/v1/cdn/my-space/search')).toMatchObject({ id: 'cdn.search', limit: 600 })
    expect(rule('GET', '/v1/cdn/my-space/stories/abc/og.svg')?.id).toBe('cdn.og')
    expect(rule('GET', '/v1/cdn/my-space/stories/blog/post-1')?.id).toBe('cdn.stories')
    expect(rule('GET', '/v1/cdn/my-space/anything/else')).toMatchObject({ id: 'cdn.default.get', limit: 600 })
    // Spec 9: the version endpoint has no rate limit.
    expect(real.match('GET', '/v1/version')).toBeUndefined()
    expect(real.match('GET', '/version')).toBeUndefined()
  })

  test('no row of the service table is shadowed by a row above it', () => {
    const real = new RateLimitTable(RATE_LIMITS)
    const ids = RATE_LIMITS.map((r) => r.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const r of RATE_LIMITS) {
      expect(r.path.startsWith('/v1/') || r.path.startsWith('/openapi.')).toBe(true)
      expect(r.limit).toBeGreaterThan(0)
      expect(r.windowSeconds).toBeGreaterThan(0)
      const sample = r.path
        .split('/')
        .map((seg) => (seg === '*' ? 'some/deeper/path' : seg.startsWith(':') ? 'p1' : seg))
        .join('/')
      expect({ path: sample, id: real.match(r.method, sample)?.id }).toEqual({ path: sample, id: r.id })
    }
  })
})

/** The same contract for every store. */
function storeContract(name: string, makeStore: () => RateLimitStore) {
  describe(name, () => {
    test('the first hit counts 1 and the window ends windowMs later', async () => {
      const store = makeStore()
      const key = freshKey()
      const h = await store.hit(key, 60_000, T0)
      expect(h).toEqual({ count: 1, resetAt: T0 + 60_000 })
    })

    test('hits inside the window count up and keep the window end', async () => {
      const store = makeStore()
      const key = freshKey()
      for (let i = 1; i <= 5; i++) {
        const h = await store.hit(key, 60_000, T0 + i * 1000)
        expect(h.count).toBe(i)
        expect(h.resetAt).toBe(T0 + 1000 + 60_000)
      }
    })

    test('the window resets once its end is reached', async () => {
      const store = makeStore()
      const key = freshKey()
      await store.hit(key, 10_000, T0)
      await store.hit(key, 10_000, T0 + 5_000)
      expect((await store.hit(key, 10_000, T0 + 9_999)).count).toBe(3)
      const fresh = await store.hit(key, 10_000, T0 + 10_000)
      expect(fresh).toEqual({ count: 1, resetAt: T0 + 20_000 })
      expect((await store.hit(key, 10_000, T0 + 10_001)).count).toBe(2)
      // Long after: again a fresh window.
      expect(await store.hit(key, 10_000, T0 + 3_600_000)).toEqual({ count: 1, resetAt: T0 + 3_610_000 })
    })

    test('keys are counted independently', async () => {
      const store = makeStore()
      const a = freshKey('a')
      const b = freshKey('b')
      await store.hit(a, 60_000, T0)
      await store.hit(a, 60_000, T0)
      expect((await store.hit(b, 60_000, T0)).count).toBe(1)
      expect((await store.hit(a, 60_000, T0)).count).toBe(3)
    })

    test('concurrent hits on one key are all counted', async () => {
      const store = makeStore()
      const key = freshKey()
      const hits = await Promise.all(Array.from({ length: 20 }, () => store.hit(key, 60_000, T0)))
      expect(hits.map((h) => h.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    })

    test('a refund gives one hit back inside the window, never below zero, and keeps the window end', async () => {
      const store = makeStore()
      const key = freshKey()
      await store.hit(key, 60_000, T0)
      await store.hit(key, 60_000, T0 + 1000)
      await store.refund(key, T0 + 2000)
      expect(await store.hit(key, 60_000, T0 + 3000)).toEqual({ count: 2, resetAt: T0 + 60_000 })
      for (let i = 0; i < 5; i++) await store.refund(key, T0 + 4000)
      expect((await store.hit(key, 60_000, T0 + 5000)).count).toBe(1)
      // An ended window is not touched; an unknown key is no error.
      await store.refund(key, T0 + 60_000)
      await store.refund(freshKey(), T0)
      expect((await store.hit(key, 60_000, T0 + 59_000)).count).toBe(2)
    })

    test('clear forgets a counter', async () => {
      const store = makeStore()
      const key = freshKey()
      for (let i = 0; i < 3; i++) await store.hit(key, 60_000, T0)
      await store.clear(key)
      expect(await store.hit(key, 60_000, T0 + 1000)).toEqual({ count: 1, resetAt: T0 + 61_000 })
    })
  })
}

storeContract('MemoryRateLimitStore', () => new MemoryRateLimitStore())
storeContract('PostgresRateLimitStore', () => new PostgresRateLimitStore(tdb.database))
storeContract('PostgresRateLimitStore (hashed keys)', () => new PostgresRateLimitStore(tdb.database, new Uint8Array(32).fill(7)))

describe('PostgresRateLimitStore with a hash key', () => {
  test('stores keyed digests, never the key (client IPs stay out of the database)', async () => {
    const store = new PostgresRateLimitStore(tdb.database, new Uint8Array(32).fill(9))
    const key = `cdn|203.0.113.${Math.floor(Math.random() * 250)}|${freshKey()}`
    expect((await store.hit(key, 60_000, T0)).count).toBe(1)
    expect((await store.hit(key, 60_000, T0)).count).toBe(2)
    const stored = store.storedKey(key)
    expect(stored).toMatch(/^[A-Za-z0-9_-]{22}$/)
    const rows = await tdb.database.query<{ key: string; count: number }>('select key, count from rate_limit_counters where key = $1 or key = $2', [key, stored])
    expect(rows).toEqual([{ key: stored, count: 2 }])
    // Another hash key gives another digest: the digest cannot be recomputed without SERVICE_SECRET_KEY.
    expect(new PostgresRateLimitStore(tdb.database, new Uint8Array(32).fill(8)).storedKey(key)).not.toBe(stored)
  })
})

describe('PostgresRateLimitStore housekeeping', () => {
  test('expired counters are swept from the table', async () => {
    const store = new PostgresRateLimitStore(tdb.database)
    const old = freshKey('old')
    const live = freshKey('live')
    await store.hit(old, 1_000, T0)
    await store.hit(live, 3_600_000, T0)
    const keys = async () =>
      (await tdb.database.query<{ key: string }>('select key from rate_limit_counters where key in ($1, $2)', [old, live])).map(
        (r) => r.key,
      )
    expect((await keys()).sort()).toEqual([live, old].sort())
    await store.hit(freshKey('trigger'), 1_000, T0 + 120_000)
    expect(await keys()).toEqual([live])
  })
})

describe('RateLimiter', () => {
  const rule: RateLimitRule = { id: 'demo', method: 'POST', path: '/v1/demo', limit: 3, windowSeconds: 60 }

  test('allows up to the limit, then refuses with Retry-After until the window ends', async () => {
    const clock = new ManualClock(T0)
    const limiter = new RateLimiter(new RateLimitTable([rule]), new MemoryRateLimitStore(), clock)
    for (let i = 1; i <= 3; i++) {
      const d = await limiter.check('POST', '/v1/demo', '192.0.2.1')
      expect(d?.allowed).toBe(true)
      expect(d?.headers['RateLimit-Limit']).toBe('3')
      expect(d?.headers['RateLimit-Remaining']).toBe(String(3 - i))
      expect(d?.headers['RateLimit-Reset']).toBe('60')
      expect(d?.headers['Retry-After']).toBeUndefined()
    }
    const blocked = await limiter.check('POST', '/v1/demo', '192.0.2.1')
    expect(blocked?.allowed).toBe(false)
    expect(blocked?.headers['Retry-After']).toBe('60')
    expect(blocked?.headers['RateLimit-Remaining']).toBe('0')

    clock.advance(45_000)
    const still = await limiter.check('POST', '/v1/demo', '192.0.2.1')
    expect(still?.allowed).toBe(false)
    expect(still?.headers['Retry-After']).toBe('15')
    expect(still?.headers['RateLimit-Reset']).toBe('15')

    clock.advance(15_000)
    const again = await limiter.check('POST', '/v1/demo', '192.0.2.1')
    expect(again?.allowed).toBe(true)
    expect(again?.headers['RateLimit-Remaining']).toBe('2')
  })

  test('Retry-After is at least 1 second even in the last milliseconds of a window', async () => {
    const clock = new ManualClock(T0)
    const limiter = new RateLimiter(new RateLimitTable([{ ...rule, limit: 1 }]), new MemoryRateLimitStore(), clock)
    await limiter.check('POST', '/v1/demo', '192.0.2.1')
    clock.advance(59_999)
    const d = await limiter.check('POST', '/v1/demo', '192.0.2.1')
    expect(d?.allowed).toBe(false)
    expect(Number(d?.headers['Retry-After'])).toBeGreaterThanOrEqual(1)
  })

  test('an unlimited route gives no decision at all', async () => {
    const limiter = new RateLimiter(new RateLimitTable([rule]), new MemoryRateLimitStore(), new ManualClock(T0))
    expect(await limiter.check('GET', '/v1/demo', '192.0.2.1')).toBeNull()
    expect(await limiter.check('POST', '/v1/other', '192.0.2.1')).toBeNull()
  })

  test('each IP has its own budget', async () => {
    const limiter = new RateLimiter(new RateLimitTable([rule]), new MemoryRateLimitStore(), new ManualClock(T0))
    for (let i = 0; i < 3; i++) await limiter.check('POST', '/v1/demo', '192.0.2.1')
    expect((await limiter.check('POST', '/v1/demo', '192.0.2.1'))?.allowed).toBe(false)
    expect((await limiter.check('POST', '/v1/demo', '192.0.2.2'))?.allowed).toBe(true)
  })

  test('two limiters over one Postgres store share their counts (two processes)', async () => {
    const clock = new ManualClock(T0 + 10 * 86_400_000)
    const table = new RateLimitTable([{ ...rule, limit: 10 }])
    const processA = new RateLimiter(table, new PostgresRateLimitStore(tdb.database), clock)
    const processB = new RateLimiter(table, new PostgresRateLimitStore(second ?? tdb.database), clock)
    const ip = `198.51.100.${Math.floor(Math.random() * 200)}`
    for (let i = 1; i <= 10; i++) {
      const d = await (i % 2 ? processA : processB).check('POST', '/v1/demo', ip)
      expect(d?.allowed).toBe(true)
      expect(d?.headers['RateLimit-Remaining']).toBe(String(10 - i))
    }
    expect((await processA.check('POST', '/v1/demo', ip))?.allowed).toBe(false)
    expect((await processB.check('POST', '/v1/demo', ip))?.allowed).toBe(false)

    clock.advance(60_000)
    expect((await processB.check('POST', '/v1/demo', ip))?.allowed).toBe(true)
    expect((await processA.check('POST', '/v1/demo', ip))?.headers['RateLimit-Remaining']).toBe('8')
  })

  test('concurrent requests through two limiters over one Postgres store admit exactly the limit', async () => {
    const clock = new ManualClock(T0 + 20 * 86_400_000)
    const table = new RateLimitTable([{ ...rule, limit: 10 }])
    const processA = new RateLimiter(table, new PostgresRateLimitStore(tdb.database), clock)
    const processB = new RateLimiter(table, new PostgresRateLimitStore(second ?? tdb.database), clock)
    const ip = '203.0.113.250'
    const decisions = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? processA : processB).check('POST', '/v1/demo', ip)),
    )
    expect(decisions.filter((d) => d?.allowed).length).toBe(10)
  })

  test('IPv6 clients are counted by their /64: any address in it shares the budget', async () => {
    const limiter = new RateLimiter(new RateLimitTable([rule]), new MemoryRateLimitStore(), new ManualClock(T0))
    for (let i = 1; i <= 3; i++) expect((await limiter.check('POST', '/v1/demo', `2001:db8:5:6::${i}`))?.allowed).toBe(true)
    expect((await limiter.check('POST', '/v1/demo', '2001:db8:5:6:ffff:1:2:3'))?.allowed).toBe(false)
    expect((await limiter.check('POST', '/v1/demo', '2001:db8:5:7::1'))?.allowed).toBe(true)
  })

  test('refundRequest gives a request its hit back (a route whose successes do not count)', async () => {
    const limiter = new RateLimiter(new RateLimitTable([{ ...rule, limit: 1 }]), new MemoryRateLimitStore(), new ManualClock(T0))
    for (let i = 0; i < 5; i++) {
      const d = await limiter.check('POST', '/v1/demo', '2001:db8:9::1')
      expect(d?.allowed).toBe(true)
      await limiter.refundRequest(d, '2001:db8:9::2')
    }
  })

  test('a back-off over one Postgres store holds across two limiters (a guesser spread over two instances)', async () => {
    const clock = new ManualClock(T0 + 30 * 86_400_000)
    const table = new RateLimitTable([])
    const processA = new RateLimiter(table, new PostgresRateLimitStore(tdb.database), clock)
    const processB = new RateLimiter(table, new PostgresRateLimitStore(second ?? tdb.database), clock)
    const backoff = new Backoff(`test.backoff.${freshKey()}`, { free: 3, firstWaitSeconds: 60, maxWaitSeconds: 600, forgetSeconds: 86_400 })
    const waits: number[] = []
    for (let i = 0; i < 6; i++) waits.push(await backoff.attempt(i % 2 ? processA : processB, 'subject'))
    // 3 free, the 4th goes ahead (a fresh wait window), the 5th and 6th wait for its end.
    expect(waits.slice(0, 4)).toEqual([0, 0, 0, 0])
    expect(waits[4]).toBe(60)
    expect(waits[5]).toBe(60)
    clock.advance(60_000)
    expect(await backoff.attempt(processB, 'subject')).toBe(0)
    expect(await backoff.attempt(processA, 'subject')).toBe(120)
    await backoff.forgive(processA, 'subject')
    expect(await backoff.attempt(processB, 'subject')).toBe(0)
  })

  test('two memory stores do not share counts (why production with several instances needs the Postgres store)', async () => {
    const clock = new ManualClock(T0)
    const table = new RateLimitTable([{ ...rule, limit: 1 }])
    const a = new RateLimiter(table, new MemoryRateLimitStore(), clock)
    const b = new RateLimiter(table, new MemoryRateLimitStore(), clock)
    expect((await a.check('POST', '/v1/demo', '192.0.2.9'))?.allowed).toBe(true)
    expect((await b.check('POST', '/v1/demo', '192.0.2.9'))?.allowed).toBe(true)
  })
})
