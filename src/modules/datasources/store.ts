import { and, eq } from 'drizzle-orm'
import { datasourceEntrySets, datasources } from '../../../db/schema'
import type { Kernel } from '../../kernel/kernel'

/**
 * The in-memory side of datasources, one per process (the module's state): what the read step needs to decide from
 * memory.
 *
 * - Per Space: key → {id, revision} of every datasource (the render key carries the referenced ones).
 * - Per (Space, key): the entries at one revision — one copy, replaced when a newer revision is loaded.
 *
 * Both follow the module's `datasource.changed` event, here at commit and on other instances through NOTIFY: the
 * Space map is updated in place, a copy at an older revision is dropped and reloaded on the next render that needs
 * it. Loads that raced with a change are not stored (per-Space epochs, as in the Story cache).
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

export class DatasourceStore {
  private spaces = new Map<number, Map<string, DatasourceRef>>()
  private spaceLoads = new Map<number, Promise<Map<string, DatasourceRef>>>()
  private sets = new Map<string, EntrySet>()
  private setLoads = new Map<string, Promise<EntrySet | null>>()
  private epochs = new Map<number, number>()

  constructor(private kernel: Kernel) {}

  /** Moves with every change to the Space's datasources (and every forget): a memo built at one epoch holds while it stays. */
  epoch(spaceId: number) {
    return this.epochs.get(spaceId) ?? 0
  }

  /** key → {id, revision} of the Space's datasources: from memory when known (no Promise), else loaded once. */
  refs(spaceId: number): Map<string, DatasourceRef> | Promise<Map<string, DatasourceRef>> {
    const known = this.spaces.get(spaceId)
    if (known) return known
    let p = this.spaceLoads.get(spaceId)
    if (!p) {
      const epoch = this.epoch(spaceId)
      p = this.kernel.db.db
        .select({ key: datasources.key, id: datasources.id, revision: datasources.revision })
        .from(datasources)
        .where(eq(datasources.spaceId, spaceId))
        .then((rows) => {
          const map = new Map(rows.map((r) => [r.key, { id: r.id, revision: r.revision }]))
          if (this.epoch(spaceId) === epoch) {
            if (this.spaces.size >= MAX_SPACES) this.spaces.clear()
            this.spaces.set(spaceId, map)
          }
          return map
        })
        .finally(() => this.spaceLoads.delete(spaceId))
      this.spaceLoads.set(spaceId, p)
    }
    return p
  }

  /** The entries of (Space, key) as of its current revision; null when there is no such datasource. */
  async entries(spaceId: number, key: string): Promise<EntrySet | null> {
    const refs = await this.refs(spaceId)
    const ref = refs.get(key)
    if (!ref) return null
    const k = `${spaceId}\u0000${key}`
    const copy = this.sets.get(k)
    if (copy && copy.id === ref.id && copy.revision >= ref.revision) return copy
    let p = this.setLoads.get(k)
    if (!p) {
      const epoch = this.epoch(spaceId)
      p = this.loadSet(spaceId, key)
        .then((set) => {
          if (set && this.epoch(spaceId) === epoch) {
            this.sets.delete(k)
            if (this.sets.size >= MAX_SETS) this.sets.delete(this.sets.keys().next().value!)
            this.sets.set(k, set)
          }
          return set
        })
        .finally(() => this.setLoads.delete(k))
      this.setLoads.set(k, p)
    }
    return p
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

  /** A datasource was created, changed, synced, pushed to or deleted (here or on another instance). */
  changed(spaceId: number, key: string, ref: DatasourceRef | null) {
    this.epochs.set(spaceId, this.epoch(spaceId) + 1)
    const map = this.spaces.get(spaceId)
    if (map) {
      const known = map.get(key)
      if (!ref) map.delete(key)
      // Events may arrive out of order across instances: a revision never goes back for the same datasource.
      else if (!known || known.id !== ref.id || known.revision < ref.revision) map.set(key, ref)
    }
    const k = `${spaceId}\u0000${key}`
    const copy = this.sets.get(k)
    if (copy && (!ref || copy.id !== ref.id || copy.revision < ref.revision)) this.sets.delete(k)
  }

  /** Events may have been missed: forget everything. */
  clear() {
    for (const spaceId of this.spaces.keys()) this.epochs.set(spaceId, this.epoch(spaceId) + 1)
    for (const k of this.sets.keys()) {
      const spaceId = Number(k.slice(0, k.indexOf('\u0000')))
      this.epochs.set(spaceId, this.epoch(spaceId) + 1)
    }
    this.spaces.clear()
    this.sets.clear()
  }
}
