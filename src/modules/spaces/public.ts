import { and, eq, isNull } from 'drizzle-orm'
import { spaces } from '../../kernel/tables'
import { ScopedCache, cacheShare, plainSize } from '../../kernel/cache'
import type { Kernel } from '../../kernel/kernel'
import type { PublicSpace, PublicSpaceResolver } from '../../kernel/public-space'
import { isSpaceSlug } from '../../kernel/schemas'
import { localeSettings } from './locales'

/** The kernel's shape of a live Space (kernel/public-space.ts), which this cache holds. */
export type { PublicSpace }

/**
 * Long safety expiry only: every change that alters a cached entry arrives as an event (space.created, .updated,
 * .locales_changed, .archived) on this instance at commit and on the others through NOTIFY; a lost notification is
 * repaired when the LISTEN connection comes back (onResync) or, at the latest, after this.
 */
const TTL_MS = 10 * 60_000
const MAX_ENTRIES = 10_000

/**
 * The public surface's view of Spaces by slug (positive and negative entries), shared by every public route: a
 * cached read costs a Map lookup and no query. A kernel cache (kernel/cache.ts), one scope per slug, following the
 * Space events the runtime wires from `invalidateOn`.
 */
export class PublicSpaces implements PublicSpaceResolver {
  readonly cache: ScopedCache<string, PublicSpace | null>

  constructor(private kernel: Pick<Kernel, 'db' | 'replicas' | 'clock' | 'config'>) {
    const bySlug = (e: { payload: { space: { slug: string } } }) => e.payload.space.slug
    this.cache = new ScopedCache({
      name: 'spaces.public',
      scopeOf: (slug) => slug,
      idOf: (slug) => slug,
      load: (slug) => this.load(slug),
      now: () => kernel.clock.ms(),
      ttlMs: TTL_MS,
      maxEntries: MAX_ENTRIES,
      maxBytes: cacheShare(kernel.config, 1 / 32),
      sizeOf: plainSize,
      invalidateOn: { 'space.created': bySlug, 'space.updated': bySlug, 'space.locales_changed': bySlug, 'space.archived': bySlug },
    })
  }

  /** The live Space of `slug`, or null (unknown, archived or malformed); synchronous when cached. */
  get(slug: string): PublicSpace | null | Promise<PublicSpace | null> {
    if (!isSpaceSlug(slug)) return null
    return this.cache.get(slug)
  }

  /** A public read (kernel.replicas): a replica serves it when it has replayed the found Space's last change. */
  private load(slug: string): Promise<PublicSpace | null> {
    return this.kernel.replicas.readFinding(
      async (db): Promise<PublicSpace | null> => {
        const [row] = await db
          .select()
          .from(spaces)
          .where(and(eq(spaces.slug, slug), isNull(spaces.archivedAt)))
          .limit(1)
        if (!row) return null
        const l = await localeSettings(db, row.id)
        return { id: row.id, slug, name: row.name, defaultLang: row.defaultLang, codes: l.codes, fallbacks: l.fallbacks, chains: new Map() }
      },
      (space) => space?.id ?? null,
    )
  }

  /** When the cached entry of `slug` expires (epoch ms), or 0 when none is cached. */
  expiresAt(slug: string): number {
    return this.cache.expiresAt(slug)
  }
}
