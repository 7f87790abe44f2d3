import { and, eq } from 'drizzle-orm'
import { datasourceEntrySets, datasources } from './tables'
import { ScopedCache, cacheShare, plainSize } from '../../kernel/cache'
import type { Kernel } from '../../kernel/kernel'

/**
 * The in-memory side of datasources, one per process (the module's state): what the read step needs to decide from
 * memory.
 *
 * - Per Space: key → {id, revision} of every datasource (the render key carries the referenced ones).
 * - Per (Space, key): the entries at one revision — one copy, replaced when a newer revision is loaded.
 *
 * Both are kernel caches (kernel/cache.ts) declared to follow the module's `datasource.changed` event, here at commit
 * and on other instances through NOTIFY: the Space's map and the changed key's copy are dropped and reloaded on the
 * next read that needs them. Loads that raced with a change or a resync are not stored, and a read after a change
 * never joins a load that started before it.
 */

export type Entry = Record<string, unknown>

export interface DatasourceRef {
  id: number
  revision: number
}

export interface EntrySet {
  id: number
  revision: number
  entries: Entry[]
}

const MAX_SPACES = 10_000
/** Entry sets kept in memory (oldest loaded first out); a set is at most what one 5 MB pull or 1 MB push holds. */
const MAX_SETS = 500

const setId = (spaceId: number, key: string) => `${spaceId}\u0000${key}`

export class DatasourceStore {
  private spaces: ScopedCache<number, Map<string, DatasourceRef>>
  private sets: ScopedCache<{ spaceId: number; key: string }, EntrySet | null>

  constructor(private kernel: Kernel) {
    const now = () => kernel.clock.ms()
    this.spaces = new ScopedCache({
      name: 'datasources.refs',
      scopeOf: (spaceId) => spaceId,
      idOf: String,
      load: (spaceId) => this.loadRefs(spaceId),
      now,
      maxEntries: MAX_SPACES,
      maxBytes: cacheShare(kernel.config, 1 / 64),
      sizeOf: plainSize,
      invalidateOn: { 'datasource.changed': (e) => e.spaceId },
    })
    this.sets = new ScopedCache({
      name: 'datasources.entries',
      scopeOf: (k) => k.spaceId,
      idOf: (k) => setId(k.spaceId, k.key),
      load: (k) => this.loadSet(k.spaceId, k.key),
      now,
      maxEntries: MAX_SETS,
      maxBytes: cacheShare(kernel.config, 1 / 16),
      sizeOf: plainSize,
      // A missing datasource is not remembered: the refs map (null there) already answers it.
      storable: (set) => set !== null,
      invalidateOn: {
        'datasource.changed': (e) => (e.spaceId === null ? null : { scope: e.spaceId, ids: [setId(e.spaceId, e.payload.key)] }),
      },
    })
  }

  /** The caches, for the module's `caches` field (the runtime wires their invalidation and resync). */
  get caches() {
    return [this.spaces, this.sets] as const
  }

  /** Moves with every change to the Space's datasources (and every resync): a memo built at one epoch holds while it stays. */
  epoch(spaceId: number) {
    return this.spaces.epoch(spaceId)
  }

  /** key → {id, revision} of the Space's datasources: from memory when known (no Promise), else loaded once. */
  refs(spaceId: number): Map<string, DatasourceRef> | Promise<Map<string, DatasourceRef>> {
    return this.spaces.get(spaceId)
  }

  /** The entries of (Space, key) as of its current revision; null when there is no such datasource. */
  async entries(spaceId: number, key: string): Promise<EntrySet | null> {
    const refs = await this.refs(spaceId)
    const ref = refs.get(key)
    if (!ref) return null
    const id = setId(spaceId, key)
    const copy = this.sets.peek(id, this.kernel.clock.ms())
    if (copy && copy.id === ref.id && copy.revision >= ref.revision) return copy
    if (copy) this.sets.delete(id)
    return this.sets.load({ spaceId, key }, id)
  }

  private async loadRefs(spaceId: number): Promise<Map<string, DatasourceRef>> {
    const rows = await this.kernel.db.db
      .select({ key: datasources.key, id: datasources.id, revision: datasources.revision })
      .from(datasources)
      .where(eq(datasources.spaceId, spaceId))
    return new Map(rows.map((r) => [r.key, { id: r.id, revision: r.revision }]))
  }

  private async loadSet(spaceId: number, key: string): Promise<EntrySet | null> {
    const [row] = await this.kernel.db.db
      .select({ id: datasources.id, revision: datasources.revision, entries: datasourceEntrySets.entries })
      .from(datasources)
      .leftJoin(datasourceEntrySets, eq(datasourceEntrySets.datasourceId, datasources.id))
      .where(and(eq(datasources.spaceId, spaceId), eq(datasources.key, key)))
      .limit(1)
    if (!row) return null
    return { id: row.id, revision: row.revision, entries: Array.isArray(row.entries) ? (row.entries as Entry[]) : [] }
  }
}
