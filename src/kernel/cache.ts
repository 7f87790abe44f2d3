import type { DomainEvent, EventType } from './events'

/**
 * The one in-memory cache primitive of the modules (Spaces by slug, segments, forms, datasources, the Story read).
 *
 * - Keys belong to a **scope** (a Space id, a slug): `invalidate(scope)` drops the scope's entries (or only the
 *   given ones) and moves the scope's epoch. A load remembers the epoch it started at and is stored only if it did
 *   not move; a `get` after an invalidation never joins a load that started before it (loads in flight are keyed by
 *   the epoch).
 * - `clear()` (events may have been missed: the bus resynced) moves a global generation that every scope's epoch
 *   includes, so it also discards loads in flight for scopes with nothing cached yet.
 * - One eviction policy: oldest stored first, against an entry budget and/or a byte budget (`sizeOf`).
 * - TTL per entry as a safety net (`ttlMs`, `negativeTtlMs` for `null` values, which are negative entries; their count
 *   is capped by `maxNegatives`: past it a miss is served but not stored).
 * - Invalidation is declared, not hand-wired: `invalidateOn: {'datasource.changed': (e) => e.spaceId}`. The runtime
 *   subscribes every cache a module lists in its `caches` field to those events and clears it on resync.
 *
 * A cached read costs one Map lookup and a comparison (`peek`, `get`); nothing is allocated on a hit.
 */

export type Scope = number | string

/** What an event invalidates: a whole scope, or some keys of it (their ids); null or undefined: nothing. */
export type Invalidation = Scope | { scope: Scope; ids: readonly string[] } | null | undefined

export type InvalidateOn = { [T in EventType]?: (event: DomainEvent<T>) => Invalidation }

export interface ScopedCacheOptions<K, V> {
  /** For logs and docs. */
  name: string
  /** The scope `key` belongs to. */
  scopeOf(key: K): Scope
  /** The string the entry is stored under (distinct keys, distinct ids). */
  idOf(key: K): string
  /** Reads the value from the database. */
  load(key: K): Promise<V>
  /** Epoch ms now (the kernel clock). */
  now(): number
  /** How long an entry lives (default: until invalidated or evicted). */
  ttlMs?: number
  /** The same for a `null` value (default: ttlMs). */
  negativeTtlMs?: number
  /** At most this many `null` entries; past it a `null` is not stored (random misses must not push real entries out). */
  maxNegatives?: number
  /** At most this many entries; the oldest stored goes first. */
  maxEntries?: number
  /** At most this many bytes (as `sizeOf` counts them); the oldest stored goes first. */
  maxBytes?: number
  sizeOf?(value: V, id: string): number
  /** Whether a loaded value is kept (default: every value). */
  storable?(value: V): boolean
  /** The events that invalidate entries, and what of the cache each one invalidates. */
  invalidateOn?: InvalidateOn
}

interface Entry<V> {
  value: V
  expiresAt: number
  scope: Scope
  size: number
}

export class ScopedCache<K, V> {
  private entries = new Map<string, Entry<V>>()
  private inflight = new Map<string, Promise<V>>()
  private epochs = new Map<Scope, number>()
  /** The ids stored per scope: invalidating a scope touches its entries only. */
  private byScope = new Map<Scope, Set<string>>()
  private generation = 0
  private bytes = 0
  private negatives = 0
  /**
   * Moves with every change of a live entry (a drop, an eviction, an invalidation, a clear): a memo of lookups is
   * valid while it stays the same. Replacing an entry whose TTL ran out does not move it (a memo of it expired too).
   */
  changes = 0

  constructor(readonly options: ScopedCacheOptions<K, V>) {}

  get name() {
    return this.options.name
  }

  get invalidateOn(): InvalidateOn {
    return this.options.invalidateOn ?? {}
  }

  /** The cached value of `id`, or undefined when none is cached or it expired. */
  peek(id: string, now: number): V | undefined {
    const e = this.entries.get(id)
    if (e === undefined || e.expiresAt <= now) return undefined
    return e.value
  }

  /** The value of `key`: synchronous when cached, else one load shared by every caller of the same epoch. */
  get(key: K): V | Promise<V> {
    const o = this.options
    const id = o.idOf(key)
    const e = this.entries.get(id)
    if (e !== undefined && e.expiresAt > o.now()) return e.value
    return this.load(key, id)
  }

  /** Loads `key` (joining a load of the same epoch in flight) whatever is cached, and stores the result. */
  load(key: K, id = this.options.idOf(key)): Promise<V> {
    const scope = this.options.scopeOf(key)
    const epoch = this.epoch(scope)
    const flight = `${epoch}\u0000${id}`
    let p = this.inflight.get(flight)
    if (!p) {
      p = this.options
        .load(key)
        .then((value) => {
          this.store(scope, id, value, epoch)
          return value
        })
        .finally(() => this.inflight.delete(flight))
      this.inflight.set(flight, p)
    }
    return p
  }

  /**
   * The scope's version: moves with every invalidation of the scope and every clear (both only grow, so their sum
   * moves whenever either does). A value loaded at one epoch may be stored only while it stays.
   */
  epoch(scope: Scope): number {
    return (this.epochs.get(scope) ?? 0) + this.generation
  }

  /** When the entry of `id` expires (epoch ms), or 0 when none is cached. */
  expiresAt(id: string): number {
    return this.entries.get(id)?.expiresAt ?? 0
  }

  /**
   * Stores a value loaded by the caller (e.g. many keys in one query) unless the scope moved since `epoch` was read.
   * Returns whether it was stored.
   */
  store(scope: Scope, id: string, value: V, epoch: number): boolean {
    const o = this.options
    if (this.epoch(scope) !== epoch) return false
    if (o.storable && !o.storable(value)) return false
    const now = o.now()
    const old = this.entries.get(id)
    if (old !== undefined) this.drop(id, old, old.expiresAt <= now)
    if (value === null && o.maxNegatives !== undefined && this.negatives >= o.maxNegatives) return false
    const size = o.sizeOf ? o.sizeOf(value, id) : 0
    const ttl = value === null ? (o.negativeTtlMs ?? o.ttlMs) : o.ttlMs
    this.entries.set(id, { value, expiresAt: ttl === undefined ? Number.POSITIVE_INFINITY : now + ttl, scope, size })
    let ids = this.byScope.get(scope)
    if (!ids) this.byScope.set(scope, (ids = new Set()))
    ids.add(id)
    this.bytes += size
    if (value === null) this.negatives++
    this.evict()
    return true
  }

  /** The entry of `id` grew (or shrank) by `delta` bytes, if `value` is still what is cached there. */
  resize(id: string, value: V, delta: number) {
    const e = this.entries.get(id)
    if (e === undefined || e.value !== value) return
    e.size += delta
    this.bytes += delta
    this.evict()
  }

  /** Drops the scope's entries (or only `ids` of it) and moves its epoch: loads in flight for it are not stored. */
  invalidate(scope: Scope, ids?: readonly string[]) {
    this.epochs.set(scope, (this.epochs.get(scope) ?? 0) + 1)
    this.changes++
    const stored = this.byScope.get(scope)
    if (!stored) return
    for (const id of ids ?? [...stored]) {
      const e = this.entries.get(id)
      if (e !== undefined && e.scope === scope) this.drop(id, e)
    }
  }

  /** Drops the entry of `id` without moving any epoch (it is known to be outdated; a reload may be stored). */
  delete(id: string) {
    const e = this.entries.get(id)
    if (e !== undefined) this.drop(id, e)
  }

  /** Events may have been missed: forget everything, and store no load that is in flight. */
  clear() {
    this.generation++
    this.changes++
    this.entries.clear()
    this.byScope.clear()
    this.bytes = 0
    this.negatives = 0
  }

  /** An event the cache declared arrived: drop what it invalidates. */
  invalidateFor(what: Invalidation) {
    if (what === null || what === undefined) return
    if (typeof what === 'object') this.invalidate(what.scope, what.ids)
    else this.invalidate(what)
  }

  get stats() {
    return { entries: this.entries.size, negatives: this.negatives, bytes: this.bytes }
  }

  private drop(id: string, e: Entry<V>, expired = false) {
    if (!expired) this.changes++
    this.entries.delete(id)
    const ids = this.byScope.get(e.scope)
    if (ids) {
      ids.delete(id)
      if (!ids.size) this.byScope.delete(e.scope)
    }
    this.bytes -= e.size
    if (e.value === null) this.negatives--
  }

  /** Oldest stored first: a simple, allocation-free policy; hot entries come straight back on their next read. */
  private evict() {
    const { maxEntries, maxBytes } = this.options
    while (
      this.entries.size > 0 &&
      ((maxEntries !== undefined && this.entries.size > maxEntries) || (maxBytes !== undefined && this.bytes > maxBytes))
    ) {
      const id = this.entries.keys().next().value!
      this.drop(id, this.entries.get(id)!)
    }
  }
}
