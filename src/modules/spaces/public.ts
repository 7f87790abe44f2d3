import { and, eq, isNull } from 'drizzle-orm'
import { spaces } from '../../../db/schema'
import type { Kernel } from '../../kernel/kernel'
import { isSpaceSlug } from '../../kernel/schemas'
import { localeSettings } from './locales'

/** A live Space as the public surface sees it: what locale resolution and rendering need, nothing private. */
export interface PublicSpace {
  id: number
  slug: string
  name: string
  defaultLang: string
  /** Locales in display order. */
  codes: string[]
  /** Explicit fallbacks: code → fallback code. */
  fallbacks: Map<string, string>
  /** Memoised locale chains of the public read, keyed by `?lang` value or Accept-Language header (bounded). */
  chains: Map<string, string[]>
}

/**
 * Long safety expiry only: every change that alters a cached entry arrives as an event (space.created, .updated,
 * .locales_changed, .archived) on this instance at commit and on the others through NOTIFY; a lost notification is
 * repaired when the LISTEN connection comes back (onResync) or, at the latest, after this.
 */
const TTL_MS = 10 * 60_000
const MAX_ENTRIES = 10_000

type Entry = { space: PublicSpace | null; expiresAt: number }

/**
 * The public surface's view of Spaces by slug (positive and negative entries), shared by every public route: a
 * cached read costs a Map lookup and no query. Loads are single-flight and dropped when an invalidation happened
 * while they ran.
 */
export class PublicSpaces {
  private entries = new Map<string, Entry>()
  private inflight = new Map<string, Promise<PublicSpace | null>>()
  /** Bumped by every invalidation: a load that started before one is not stored. */
  private generation = 0

  constructor(private kernel: Pick<Kernel, 'db' | 'clock'>) {}

  /** The live Space of `slug`, or null (unknown, archived or malformed); synchronous when cached. */
  get(slug: string): PublicSpace | null | Promise<PublicSpace | null> {
    if (!isSpaceSlug(slug)) return null
    const e = this.entries.get(slug)
    if (e && e.expiresAt > this.kernel.clock.ms()) return e.space
    const key = `${this.generation}:${slug}`
    let p = this.inflight.get(key)
    if (!p) {
      p = this.load(slug, this.generation).finally(() => this.inflight.delete(key))
      this.inflight.set(key, p)
    }
    return p
  }

  private async load(slug: string, generation: number): Promise<PublicSpace | null> {
    const [row] = await this.kernel.db.db
      .select()
      .from(spaces)
      .where(and(eq(spaces.slug, slug), isNull(spaces.archivedAt)))
      .limit(1)
    let space: PublicSpace | null = null
    if (row) {
      const l = await localeSettings(this.kernel.db.db, row.id)
      space = { id: row.id, slug, name: row.name, defaultLang: row.defaultLang, codes: l.codes, fallbacks: l.fallbacks, chains: new Map() }
    }
    if (generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!)
      this.entries.set(slug, { space, expiresAt: this.kernel.clock.ms() + TTL_MS })
    }
    return space
  }

  /** When the cached entry of `slug` expires (epoch ms), or 0 when none is cached. */
  expiresAt(slug: string): number {
    return this.entries.get(slug)?.expiresAt ?? 0
  }

  /** Drops what is cached under `slug` (a Space created, changed or archived). */
  invalidate(slug: string) {
    this.generation++
    this.entries.delete(slug)
  }

  clear() {
    this.generation++
    this.entries.clear()
  }
}
