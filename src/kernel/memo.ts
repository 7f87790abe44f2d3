import type { DomainEvent } from './events'
import { type Scope, SieveStore } from './sieve'

/**
 * The kernel's memo primitive: answers a module computed from its caches (a whole public read, a search answer),
 * kept per scope (the Space id) under a byte budget, evicted by SIEVE (kernel/sieve.ts). Unlike a cache it loads
 * nothing: the module stores what it served and asks for it again.
 *
 * A module lists its memos in the contract's `memos` slot; the runtime then drops, on every committed event (this
 * instance and the others through the bus), the entries of the event's Space — or every entry for an event that
 * names no Space — and everything on a resync. So an entry holds only while no change of its Space was seen, and one
 * tenant's writes do not empty the memo of 50,000 others.
 */

export interface ScopedMemoOptions<V> {
  /** For metrics and docs. */
  name: string
  /** At most this many bytes, as `sizeOf` counts them. Required. */
  maxBytes: number
  /** At most this many entries as well. */
  maxEntries?: number
  sizeOf(value: V, id: string): number
  /** Called for every entry that leaves (evicted, replaced, deleted, invalidated, cleared). */
  onDrop?(value: V, id: string): void
}

export class ScopedMemo<V> {
  private store: SieveStore<V>

  constructor(readonly options: ScopedMemoOptions<V>) {
    if (typeof options.sizeOf !== 'function') throw new Error(`memo ${options.name}: a memo needs a sizeOf (its bytes are bounded)`)
    if (!(Number.isFinite(options.maxBytes) && options.maxBytes > 0)) throw new Error(`memo ${options.name}: a memo needs a positive, finite maxBytes`)
    const onDrop = options.onDrop
    this.store =
      onDrop === undefined
        ? new SieveStore<V>(options.maxBytes, options.maxEntries ?? Number.POSITIVE_INFINITY)
        : new SieveStore<V>(options.maxBytes, options.maxEntries ?? Number.POSITIVE_INFINITY, (e) => onDrop(e.value, e.id), true)
  }

  get name() {
    return this.options.name
  }

  /** The memoised value of `id`, unless absent or expired (`now`, epoch ms). One Map lookup; nothing allocated. */
  get(id: string, now: number): V | undefined {
    return this.store.hit(id, now)
  }

  /** Remembers `value` under `id` in `scope` until `expiresAt` (epoch ms; default never). False if it is over budget. */
  set(scope: Scope, id: string, value: V, expiresAt = Number.POSITIVE_INFINITY): boolean {
    return this.store.set(id, scope, value, this.options.sizeOf(value, id), expiresAt)
  }

  /** The value stored under `id` grew by `delta` bytes (it is a container the module adds to). */
  resize(id: string, value: V, delta: number) {
    const e = this.store.entry(id)
    if (e !== undefined && e.value === value) this.store.resize(e, delta)
  }

  /** The entry of `id` whatever its expiry, for a module that adds to it; not counted as a hit. */
  peekEntry(id: string): { value: V; expiresAt: number } | undefined {
    return this.store.entry(id)
  }

  delete(id: string) {
    this.store.delete(id)
  }

  /** Drops every entry of the scope. */
  invalidate(scope: Scope) {
    this.store.dropScope(scope)
  }

  clear() {
    this.store.clear()
  }

  /** A committed event: its Space's entries go, or all of them for an event of no Space (the runtime calls it). */
  onEvent(event: Pick<DomainEvent, 'spaceId'>) {
    if (event.spaceId === null || event.spaceId === undefined) this.clear()
    else this.invalidate(event.spaceId)
  }

  get stats() {
    return { entries: this.store.size, bytes: this.store.bytes, maxBytes: this.options.maxBytes, evictions: this.store.evictions }
  }
}
