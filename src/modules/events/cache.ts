import { and, eq } from 'drizzle-orm'
import { calendarEvents } from './tables'
import { ScopedCache, cacheShare, plainSize } from '../../kernel/cache'
import type { Kernel } from '../../kernel/kernel'
import type { EventRow } from './service'

/** Every change arrives as event.created/updated/deleted (here at commit, elsewhere through NOTIFY); the expiry is a safety net. */
const TTL_MS = 60_000
const MAX_ENTRIES = 10_000

/**
 * Published events by (Space, slug) for the public registration: a cached event costs a Map lookup, no query. Keyed
 * `<space id>:<slug>`, one scope per Space (a change of slug drops the old key too). The row's `confirmed_count` is not
 * read from here: spots are taken from the database row in the registering transaction.
 */
export class PublishedEventCache {
  readonly cache: ScopedCache<string, EventRow | null>

  constructor(private kernel: Pick<Kernel, 'db' | 'clock' | 'config'>) {
    const bySpace = (e: { spaceId: number | null }) => e.spaceId
    this.cache = new ScopedCache({
      name: 'events',
      scopeOf: (id) => Number(id.slice(0, id.indexOf(':'))),
      idOf: (id) => id,
      load: (id) => this.load(Number(id.slice(0, id.indexOf(':'))), id.slice(id.indexOf(':') + 1)),
      now: () => kernel.clock.ms(),
      ttlMs: TTL_MS,
      maxEntries: MAX_ENTRIES,
      maxBytes: cacheShare(kernel.config, 1 / 32),
      sizeOf: plainSize,
      invalidateOn: { 'event.created': bySpace, 'event.updated': bySpace, 'event.deleted': bySpace },
    })
  }

  get(spaceId: number, slug: string): EventRow | null | Promise<EventRow | null> {
    return this.cache.get(`${spaceId}:${slug}`)
  }

  private async load(spaceId: number, slug: string): Promise<EventRow | null> {
    const [row] = await this.kernel.db.db
      .select()
      .from(calendarEvents)
      .where(and(eq(calendarEvents.spaceId, spaceId), eq(calendarEvents.slug, slug), eq(calendarEvents.published, true)))
      .limit(1)
    return row ?? null
  }
}
