import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { ScopedCache, type ScopedCacheOptions } from '../../src/kernel/cache'

setDefaultTimeout(30_000)

/** The kernel's cache primitive on its own, with a loader the test answers by hand. */
function harness(opts: Partial<ScopedCacheOptions<string, string | null>> = {}) {
  let now = 1_000
  const pending: { key: string; resolve: (v: string | null) => void }[] = []
  const cache = new ScopedCache<string, string | null>({
    name: 'test',
    scopeOf: (k) => k.split('/')[0],
    idOf: (k) => k,
    load: (key) => new Promise((resolve) => pending.push({ key, resolve })),
    now: () => now,
    maxBytes: 1 << 20,
    sizeOf: (v) => (v?.length ?? 0) + 1,
    ...opts,
  })
  const answer = async (value: string | null) => {
    pending.shift()!.resolve(value)
    await Bun.sleep(0)
  }
  return { cache, pending, answer, tick: (ms: number) => (now += ms), now: () => now }
}

describe('the kernel cache', () => {
  test('loads once for concurrent readers, then answers synchronously', async () => {
    const h = harness()
    const a = h.cache.get('s1/a')
    expect(h.cache.get('s1/a')).toBe(a)
    expect(h.pending.length).toBe(1)
    await h.answer('A')
    expect(await a).toBe('A')
    expect(h.cache.get('s1/a')).toBe('A')
  })

  test('a get after an invalidation of the scope starts its own load; the older load is not stored', async () => {
    const h = harness()
    const before = h.cache.get('s1/a')
    h.cache.invalidate('s1')
    const after = h.cache.get('s1/a')
    expect(after).not.toBe(before)
    await h.answer('old')
    expect(h.cache.peek('s1/a', h.now())).toBeUndefined()
    await h.answer('new')
    expect(h.cache.get('s1/a')).toBe('new')
  })

  test('invalidating one scope leaves the others; ids drop only those entries', async () => {
    const h = harness()
    for (const k of ['s1/a', 's1/b', 's2/a']) h.cache.store(h.cache.options.scopeOf(k), k, k, h.cache.epoch(h.cache.options.scopeOf(k)))
    h.cache.invalidate('s1', ['s1/a'])
    expect(h.cache.peek('s1/a', h.now())).toBeUndefined()
    expect(h.cache.peek('s1/b', h.now())).toBe('s1/b')
    h.cache.invalidate('s1')
    expect(h.cache.peek('s1/b', h.now())).toBeUndefined()
    expect(h.cache.peek('s2/a', h.now())).toBe('s2/a')
  })

  test('clear discards loads in flight, also of scopes with nothing cached', async () => {
    const h = harness()
    const p = h.cache.get('s9/a')
    h.cache.clear()
    await h.answer('stale')
    expect(await p).toBe('stale')
    expect(h.cache.peek('s9/a', h.now())).toBeUndefined()
  })

  test('entries expire; null entries have their own TTL and a cap', async () => {
    const h = harness({ ttlMs: 1_000, negativeTtlMs: 100, maxNegatives: 1 })
    const epoch = h.cache.epoch('s1')
    h.cache.store('s1', 's1/a', 'A', epoch)
    h.cache.store('s1', 's1/none', null, epoch)
    expect(h.cache.store('s1', 's1/none2', null, epoch)).toBe(false)
    expect(h.cache.peek('s1/none', h.now())).toBeNull()
    h.tick(100)
    expect(h.cache.peek('s1/none', h.now())).toBeUndefined()
    expect(h.cache.peek('s1/a', h.now())).toBe('A')
    h.tick(900)
    expect(h.cache.peek('s1/a', h.now())).toBeUndefined()
  })

  test('without hits, the entry and byte budgets evict the oldest stored first', () => {
    const h = harness({ maxEntries: 2, maxBytes: 10, sizeOf: (v) => v?.length ?? 0 })
    const put = (k: string, v: string) => h.cache.store('s', k, v, h.cache.epoch('s'))
    put('a', 'xx')
    put('b', 'xx')
    put('c', 'xx')
    expect(h.cache.peek('a', h.now())).toBeUndefined()
    expect(h.cache.stats).toMatchObject({ entries: 2, bytes: 4 })
    put('d', 'xxxxxxxxx')
    expect(h.cache.peek('c', h.now())).toBeUndefined()
    expect(h.cache.peek('d', h.now())).toBe('xxxxxxxxx')
    expect(h.cache.stats.bytes).toBe(9)
  })

  test('declared invalidations are what the runtime applies on an event', () => {
    const h = harness({ invalidateOn: { 'space.archived': (e) => `s${e.spaceId}` } })
    h.cache.store('s3', 's3/a', 'A', h.cache.epoch('s3'))
    const handler = h.cache.invalidateOn['space.archived']!
    h.cache.invalidateFor(handler({ id: 1, type: 'space.archived', spaceId: 3, payload: {} as never, createdAt: new Date() }))
    expect(h.cache.peek('s3/a', h.now())).toBeUndefined()
  })
})
