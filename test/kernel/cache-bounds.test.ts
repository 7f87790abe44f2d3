import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { ScopedCache, type ScopedCacheOptions } from '../../src/kernel/cache'
import { MODULES } from '../../src/modules'
import { type TestApp, testApp } from '../helpers/app'

setDefaultTimeout(60_000)

/**
 * Every cache is bounded in bytes and evicts by SIEVE (kernel/sieve.ts): a cache without a byte budget or a size
 * function is refused, the budget holds whatever is stored, a scan of one-time keys does not push the hot set out,
 * and the epochs of invalidated scopes do not grow without bound.
 */
function cache(opts: Partial<ScopedCacheOptions<string, string>> = {}) {
  let now = 1_000
  const c = new ScopedCache<string, string>({
    name: 'bounds',
    scopeOf: (k) => k.split('/')[0],
    idOf: (k) => k,
    load: async (k) => `v:${k}`,
    now: () => now,
    maxBytes: 100,
    sizeOf: (v) => v.length,
    ...opts,
  })
  const put = (k: string, v = 'x') => c.store(c.options.scopeOf(k), k, v, c.epoch(c.options.scopeOf(k)))
  return { c, put, now: () => now, tick: (ms: number) => (now += ms) }
}

describe('a cache without a byte bound is refused', () => {
  test('no maxBytes, an infinite or zero one, or no sizeOf: the constructor throws', () => {
    expect(() => cache({ maxBytes: undefined as never })).toThrow(/maxBytes/)
    expect(() => cache({ maxBytes: Number.POSITIVE_INFINITY })).toThrow(/maxBytes/)
    expect(() => cache({ maxBytes: 0 })).toThrow(/maxBytes/)
    expect(() => cache({ sizeOf: undefined as never })).toThrow(/sizeOf/)
  })
})

describe('byte bounds', () => {
  test('the stored bytes never exceed the budget; evictions are counted', () => {
    const { c, put } = cache({ maxBytes: 50 })
    for (let i = 0; i < 1_000; i++) {
      put(`s${i % 7}/k${i}`, 'y'.repeat(1 + (i % 13)))
      expect(c.stats.bytes).toBeLessThanOrEqual(50)
    }
    expect(c.stats.evictions).toBeGreaterThan(900)
    expect(c.stats.entries).toBeGreaterThan(0)
  })

  test('an entry larger than the whole budget is not stored, and pushes nothing out', () => {
    const { c, put, now } = cache({ maxBytes: 10 })
    put('s/a', 'aaaa')
    expect(put('s/big', 'b'.repeat(11))).toBe(false)
    expect(c.peek('s/a', now())).toBe('aaaa')
    expect(c.peek('s/big', now())).toBeUndefined()
  })

  test('an entry that grows past the budget evicts others, never overruns it', () => {
    const { c, put, now } = cache({ maxBytes: 10 })
    put('s/a', 'aaa')
    put('s/b', 'bbb')
    c.resize('s/b', 'bbb', 6)
    expect(c.stats.bytes).toBeLessThanOrEqual(10)
    expect(c.peek('s/a', now())).toBeUndefined()
    expect(c.peek('s/b', now())).toBe('bbb')
  })
})

describe('SIEVE eviction', () => {
  test('a scan of one-time keys does not evict the hot set', () => {
    const { c, put, now } = cache({ maxBytes: 1_000, maxEntries: 20, sizeOf: () => 1 })
    const hot = Array.from({ length: 10 }, (_, i) => `hot/${i}`)
    for (const k of hot) put(k)
    for (let i = 0; i < 5_000; i++) {
      // The hot set is read now and then; the scan never comes back to a key.
      if (i % 50 === 0) for (const k of hot) expect(c.peek(k, now())).toBe('x')
      put(`scan${i}/k`)
    }
    for (const k of hot) expect(c.peek(k, now())).toBe('x')
    expect(c.stats.entries).toBe(20)
    expect(c.stats.evictions).toBe(5_000 + 10 - 20)
  })

  test('a visited entry gets a second chance; the first unvisited one in insertion order goes', () => {
    const { c, put, now } = cache({ maxEntries: 3, sizeOf: () => 1 })
    put('s/a')
    put('s/b')
    put('s/c')
    c.peek('s/a', now())
    put('s/d')
    expect(c.peek('s/b', now())).toBeUndefined()
    expect(c.peek('s/a', now())).toBe('x')
    expect(c.peek('s/c', now())).toBe('x')
    expect(c.peek('s/d', now())).toBe('x')
  })
})

describe('epochs', () => {
  test('invalidating many scopes keeps a bounded set of epochs; a load older than a pruning is not stored', async () => {
    let release!: (v: string) => void
    let loads = 0
    const { c, now } = cache({ load: () => (loads++ === 0 ? new Promise<string>((r) => (release = r)) : Promise.resolve('new')) })
    const pending = c.get('s0/k') as Promise<string>
    for (let i = 1; i <= 20_000; i++) c.invalidate(`s${i}`)
    expect(c.stats.epochs).toBeLessThanOrEqual(4096)
    // s0 itself was never invalidated, but its epoch's memory was forgotten: its older load must not be stored.
    release('old')
    expect(await pending).toBe('old')
    expect(c.peek('s0/k', now())).toBeUndefined()
    expect(await c.get('s0/k')).toBe('new')
    expect(c.peek('s0/k', now())).toBe('new')
  })

  test('an epoch never comes back to a value it had, across prunings', () => {
    const { c } = cache()
    const seen = new Set<number>()
    seen.add(c.epoch('hot'))
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3; i++) {
        c.invalidate('hot')
        expect(seen.has(c.epoch('hot'))).toBe(false)
        seen.add(c.epoch('hot'))
      }
      for (let i = 0; i < 5_000; i++) c.invalidate(`cold${round}-${i}`)
      expect(seen.has(c.epoch('hot'))).toBe(false)
      seen.add(c.epoch('hot'))
    }
  })
})

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t?.close())

describe('the caches and memos the modules declare', () => {
  test('each has a finite byte budget and a size function', () => {
    let n = 0
    for (const m of MODULES) {
      const self = t.state(m)
      for (const x of [...(m.caches?.(self) ?? []), ...(m.memos?.(self) ?? [])]) {
        n++
        expect({ name: x.name, maxBytes: Number.isFinite(x.stats.maxBytes) && x.stats.maxBytes > 0 }).toEqual({ name: x.name, maxBytes: true })
      }
    }
    expect(n).toBeGreaterThanOrEqual(15)
  })
})
