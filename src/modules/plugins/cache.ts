import { and, asc, eq } from 'drizzle-orm'
import { plugins } from './tables'
import { ScopedCache, cacheShare, plainSize } from '../../kernel/cache'
import type { Kernel } from '../../kernel/kernel'

export type PluginRow = typeof plugins.$inferSelect

/** A Space's active plugins by hook, in plugin order. */
export interface SpacePlugins {
  byHook: Map<string, PluginRow[]>
}

const EMPTY: SpacePlugins = { byHook: new Map() }

/**
 * The active plugins of each Space, by hook: what makes a change in a Space without plugins cost nothing (a Map
 * lookup, no query). A kernel cache (kernel/cache.ts), one scope per Space, dropped by `plugin.changed` on every
 * instance; the expiry is a safety net.
 */
export class PluginCache {
  readonly cache: ScopedCache<number, SpacePlugins>

  constructor(private kernel: Pick<Kernel, 'db' | 'clock' | 'config'>) {
    this.cache = new ScopedCache({
      name: 'plugins',
      scopeOf: (spaceId) => spaceId,
      idOf: (spaceId) => String(spaceId),
      load: (spaceId) => this.load(spaceId),
      now: () => kernel.clock.ms(),
      ttlMs: 60_000,
      maxEntries: 50_000,
      maxBytes: cacheShare(kernel.config, 1 / 64),
      sizeOf: plainSize,
      invalidateOn: { 'plugin.changed': (e) => e.payload.space_id },
    })
  }

  /** The Space's plugins, synchronously when cached. */
  get(spaceId: number): SpacePlugins | Promise<SpacePlugins> {
    return this.cache.get(spaceId)
  }

  /** Whether the Space may have plugins on `hook`: true while unknown (the call then loads them). */
  mayHave(spaceId: number, hook: string): boolean {
    const v = this.cache.get(spaceId)
    if (v instanceof Promise) {
      v.catch(() => {}) // the call that follows awaits the same load and answers its failure
      return true
    }
    return v.byHook.has(hook)
  }

  private async load(spaceId: number): Promise<SpacePlugins> {
    const rows = await this.kernel.db.db
      .select()
      .from(plugins)
      .where(and(eq(plugins.spaceId, spaceId), eq(plugins.active, true)))
      .orderBy(asc(plugins.position), asc(plugins.id))
    if (!rows.length) return EMPTY
    const byHook = new Map<string, PluginRow[]>()
    for (const r of rows) {
      for (const h of r.hooks) {
        const list = byHook.get(h) ?? []
        list.push(r)
        byHook.set(h, list)
      }
    }
    return { byHook }
  }
}
