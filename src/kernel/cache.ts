import type { DomainEvent, EventType } from './events'
import { type Scope, SieveStore } from './sieve'
import { approxBytes } from './sizeof'

export type { Scope }

/**
 * The one in-memory cache primitive of the modules (Spaces by slug, segments, forms, datasources, the Story read).
 *
 * - Keys belong to a **scope** (a Space id, a slug): `invalidate(scope)` drops the scope's entries (or only the
 *   given ones) and moves the scope's epoch. A load remembers the epoch it started at and is stored only if it did
 *   not move; a `get` after an invalidation never joins a load that started before it (loads in flight are keyed by
 *   the epoch).
 * - `clear()` (events may have been missed: the bus resynced) moves a global generation that every scope's epoch
 *   includes, so it also discards loads in flight for scopes with nothing cached yet.
 * - Bounded in bytes: every cache declares `maxBytes` and `sizeOf` (the constructor refuses one without), optionally
 *   an entry count too; past the budget SIEVE evicts (kernel/sieve.ts: scan-resistant, a hit sets one bit).
 * - Epochs are kept only for scopes invalidated lately (MAX_EPOCHS), so 50,000 tenants' events do not grow a map.
 * - TTL per entry as a safety net (`ttlMs`, `negativeTtlMs` for `null` values, which are negative entries; their count
 *   is capped by `maxNegatives`: past it a miss is served but not stored).
 * - Invalidation is declared, not hand-wired: `invalidateOn: {'datasource.changed': (e) => e.spaceId}`. The runtime
 *   subscribes every cache a module lists in its `caches` field to those events and clears it on resync.
 *
 * A cached read costs one Map lookup and a comparison (`peek`, `get`); nothing is allocated on a hit.
 */

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
  /** At most this many entries as well (SIEVE evicts past it). */
  maxEntries?: number
  /** At most this many bytes, as `sizeOf` counts them (SIEVE evicts past it). Required: memory is set by configuration. */
  maxBytes: number
  /** The bytes an entry holds (an estimate: `approxBytes` of kernel/sizeof.ts for plain data). */
  sizeOf(value: V, id: string): number
  /** Whether a loaded value is kept (default: every value). */
  storable?(value: V): boolean
  /** The events that invalidate entries, and what of the cache each one invalidates. */
  invalidateOn?: InvalidateOn
  /**
   * Called for every entry that leaves the cache: evicted, invalidated, replaced, deleted, cleared (not a load that was
   * never stored). For a memo that keeps references into the values and must not outlive them.
   */
  onDrop?(value: V, id: string): void
}

/** Scopes whose epoch is remembered; past it every epoch is forgotten at once (and the generation jumps past them). */
const MAX_EPOCHS = 4096

export class ScopedCache<K, V> {
  private store_: SieveStore<V>
  private inflight = new Map<string, Promise<V>>()
  private epochs = new Map<Scope, number>()
  private generation = 0
  private negatives = 0
  /**
   * Moves with every change of a live entry (a drop, an eviction, an invalidation, a clear): a memo of lookups is
   * valid while it stays the same. Replacing an entry whose TTL ran out does not move it (a memo of it expired too).
   */
  changes = 0

  constructor(readonly options: ScopedCacheOptions<K, V>) {
    if (typeof options.sizeOf !== 'function') throw new Error(`cache ${options.name}: a cache needs a sizeOf (its bytes are bounded)`)
    if (!(Number.isFinite(options.maxBytes) && options.maxBytes > 0)) throw new Error(`cache ${options.name}: a cache needs a positive, finite maxBytes`)
    const onDrop = options.onDrop
    this.store_ = new SieveStore<V>(
      options.maxBytes,
      options.maxEntries ?? Number.POSITIVE_INFINITY,
      (e) => {
        if (e.expiresAt > this.options.now()) this.changes++
        if (e.value === null) this.negatives--
        if (onDrop !== undefined) onDrop(e.value, e.id)
      },
      onDrop !== undefined,
    )
  }

  get name() {
    return this.options.name
  }

  get invalidateOn(): InvalidateOn {
    return this.options.invalidateOn ?? {}
  }

  /** The cached value of `id`, or undefined when none is cached or it expired. */
  peek(id: string, now: number): V | undefined {
    return this.store_.hit(id, now)
  }

  /** The value of `key`: synchronous when cached, else one load shared by every caller of the same epoch. */
  get(key: K): V | Promise<V> {
    const o = this.options
    const id = o.idOf(key)
    const v = this.store_.hit(id, o.now())
    if (v !== undefined) return v
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
    return this.store_.entry(id)?.expiresAt ?? 0
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
    this.store_.delete(id)
    if (value === null && o.maxNegatives !== undefined && this.negatives >= o.maxNegatives) return false
    const ttl = value === null ? (o.negativeTtlMs ?? o.ttlMs) : o.ttlMs
    const expiresAt = ttl === undefined ? Number.POSITIVE_INFINITY : now + ttl
    if (value === null) this.negatives++
    const stored = this.store_.set(id, scope, value, o.sizeOf(value, id), expiresAt)
    if (!stored && value === null) this.negatives--
    return stored
  }

  /** The entry of `id` grew (or shrank) by `delta` bytes, if `value` is still what is cached there. */
  resize(id: string, value: V, delta: number) {
    const e = this.store_.entry(id)
    if (e === undefined || e.value !== value) return
    this.store_.resize(e, delta)
  }

  /** Drops the scope's entries (or only `ids` of it) and moves its epoch: loads in flight for it are not stored. */
  invalidate(scope: Scope, ids?: readonly string[]) {
    if (this.epochs.size >= MAX_EPOCHS && !this.epochs.has(scope)) this.forgetEpochs()
    this.epochs.set(scope, (this.epochs.get(scope) ?? 0) + 1)
    this.changes++
    this.store_.dropScope(scope, ids)
  }

  /** Drops the entry of `id` without moving any epoch (it is known to be outdated; a reload may be stored). */
  delete(id: string) {
    this.store_.delete(id)
  }

  /** Events may have been missed: forget everything, and store no load that is in flight. */
  clear() {
    this.forgetEpochs()
    this.changes++
    this.store_.clear()
    this.negatives = 0
  }

  /** An event the cache declared arrived: drop what it invalidates. */
  invalidateFor(what: Invalidation) {
    if (what === null || what === undefined) return
    if (typeof what === 'object') this.invalidate(what.scope, what.ids)
    else this.invalidate(what)
  }

  get stats() {
    return {
      entries: this.store_.size,
      negatives: this.negatives,
      bytes: this.store_.bytes,
      maxBytes: this.options.maxBytes,
      evictions: this.store_.evictions,
      epochs: this.epochs.size,
    }
  }

  /**
   * Forgets every scope's epoch: the generation jumps past every epoch handed out so far, so each scope's epoch only
   * grows (a load that started before is never stored). The epochs matter only to loads in flight, which this
   * discards — a small cost, paid once per MAX_EPOCHS invalidated scopes.
   */
  private forgetEpochs() {
    let max = 0
    for (const n of this.epochs.values()) if (n > max) max = n
    this.generation += max + 1
    this.epochs.clear()
  }
}

/**
 * A cache's byte budget as a share of the read-cache budget (CDN_CACHE_MB): the Story read cache takes all of it, the
 * smaller caches and memos of the public side a fixed fraction each (docs/operations.md lists them), so the memory of
 * every cache follows one setting. Never below 256 KiB.
 */
export function cacheShare(config: { cdnCacheBytes: number }, fraction: number): number {
  return Math.max(256 * 1024, Math.floor(config.cdnCacheBytes * fraction))
}

/** The size function of caches of plain records: the value's estimated heap bytes and its id. */
export function plainSize<V>(value: V, id: string): number {
  return approxBytes(value) + 16 + (typeof id === 'string' ? id.length * 2 : 8)
}
