/**
 * The storage and eviction policy under the kernel's caches and memos (kernel/cache.ts, kernel/memo.ts): entries
 * grouped by scope (a Space id, a slug), bounded in bytes (and optionally in count), evicted by SIEVE.
 *
 * SIEVE (Zhang et al., NSDI 2024): entries sit in one queue in insertion order with a `visited` bit that a hit sets; a
 * hand walks from the oldest entry towards the newest, clearing the bit of visited entries and evicting the first one
 * not visited since the hand last passed. A hit costs one boolean store (no list moves, nothing allocated), and a scan
 * — a crawler walking every Space once, a random walk over thousands of tenants — inserts entries that are never hit
 * again and go first, while the hot set keeps its bits and survives. FIFO, which this replaced, let any scan longer
 * than the cache push the whole hot set out.
 */

export type Scope = number | string

export interface SieveEntry<V> {
  readonly id: string
  value: V
  readonly scope: Scope
  size: number
  expiresAt: number
  visited: boolean
  /** Towards the newest entry (null: this is the newest). */
  newer: SieveEntry<V> | null
  /** Towards the oldest entry (null: this is the oldest). */
  older: SieveEntry<V> | null
}

export class SieveStore<V> {
  private map = new Map<string, SieveEntry<V>>()
  private byScope = new Map<Scope, Set<SieveEntry<V>>>()
  private newest: SieveEntry<V> | null = null
  private oldest: SieveEntry<V> | null = null
  private hand: SieveEntry<V> | null = null
  bytes = 0
  /** Entries dropped to stay within the budget (not invalidations, not expiries). */
  evictions = 0

  constructor(
    readonly maxBytes: number,
    readonly maxEntries: number,
    /** Called for every entry that leaves (evicted, dropped, invalidated; on `clear` only with `dropOnClear`). */
    private onDrop: (e: SieveEntry<V>, evicted: boolean) => void = () => {},
    /** `clear` calls `onDrop` for each entry too (an owner that links entries to other structures). */
    private dropOnClear = false,
  ) {
    if (!(Number.isFinite(maxBytes) && maxBytes > 0)) throw new Error('a cache needs a positive, finite maxBytes')
  }

  get size() {
    return this.map.size
  }

  /** The entry of `id` without marking it (for bookkeeping, not for reads). */
  entry(id: string): SieveEntry<V> | undefined {
    return this.map.get(id)
  }

  /** The live value of `id`, marked as visited; undefined when absent or expired (an expired entry stays until replaced or evicted). */
  hit(id: string, now: number): V | undefined {
    const e = this.map.get(id)
    if (e === undefined || e.expiresAt <= now) return undefined
    e.visited = true
    return e.value
  }

  /**
   * Stores `value` under `id` (replacing what was there) as the newest entry, then evicts past the budget. An entry
   * larger than the whole budget is not stored (false).
   */
  set(id: string, scope: Scope, value: V, size: number, expiresAt: number): boolean {
    const old = this.map.get(id)
    if (old !== undefined) this.remove(old, false)
    if (size > this.maxBytes) return false
    const e: SieveEntry<V> = { id, value, scope, size, expiresAt, visited: false, newer: null, older: this.newest }
    if (this.newest) this.newest.newer = e
    this.newest = e
    if (!this.oldest) this.oldest = e
    this.map.set(id, e)
    let ids = this.byScope.get(scope)
    if (!ids) this.byScope.set(scope, (ids = new Set()))
    ids.add(e)
    this.bytes += size
    this.evict()
    return true
  }

  /** The entry grew or shrank by `delta` bytes. */
  resize(e: SieveEntry<V>, delta: number) {
    if (this.map.get(e.id) !== e) return
    e.size += delta
    this.bytes += delta
    this.evict()
  }

  delete(id: string) {
    const e = this.map.get(id)
    if (e !== undefined) this.remove(e, false)
  }

  /** Drops the scope's entries, or only those of `ids`. */
  dropScope(scope: Scope, ids?: readonly string[]) {
    const stored = this.byScope.get(scope)
    if (!stored) return
    if (ids === undefined) {
      for (const e of [...stored]) this.remove(e, false)
      return
    }
    for (const id of ids) {
      const e = this.map.get(id)
      if (e !== undefined && e.scope === scope) this.remove(e, false)
    }
  }

  clear() {
    const dropped = this.dropOnClear && this.map.size ? [...this.map.values()] : null
    this.map.clear()
    this.byScope.clear()
    this.newest = this.oldest = this.hand = null
    this.bytes = 0
    if (dropped) for (const e of dropped) this.onDrop(e, false)
  }

  private remove(e: SieveEntry<V>, evicted: boolean) {
    if (this.hand === e) this.hand = e.newer
    if (e.newer) e.newer.older = e.older
    else this.newest = e.older
    if (e.older) e.older.newer = e.newer
    else this.oldest = e.newer
    e.newer = e.older = null
    this.map.delete(e.id)
    const ids = this.byScope.get(e.scope)
    if (ids) {
      ids.delete(e)
      if (!ids.size) this.byScope.delete(e.scope)
    }
    this.bytes -= e.size
    this.onDrop(e, evicted)
  }

  private evict() {
    while (this.map.size > 0 && (this.bytes > this.maxBytes || this.map.size > this.maxEntries)) {
      let h = this.hand ?? this.oldest!
      while (h.visited) {
        h.visited = false
        h = h.newer ?? this.oldest!
      }
      this.hand = h.newer
      this.evictions++
      this.remove(h, true)
    }
  }
}
