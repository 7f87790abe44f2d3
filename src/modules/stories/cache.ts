import { sql } from 'drizzle-orm'
import type { Database, Tx } from '../../kernel/db'
import type { Logger } from '../../kernel/logger'

/**
 * The in-memory cache of the public Story read, one per process (made in createDeps, so tests get one per app).
 *
 * - Spaces: slug → the Space's public settings (id, name, default locale, locales and fallbacks), or a negative
 *   entry. They expire after SPACE_TTL_MS because not every Space change announces itself (the spaces module emits
 *   no event when the default locale changes); the expiry bounds that staleness.
 * - Stories: (Space id, full path) → the published snapshot of every locale plus the rendered response bodies, or a
 *   negative entry for a path that has no published Story. Every change that can alter what a path serves
 *   invalidates it (publish, unpublish, archive, delete by path; moves and locale changes by Space), negative entries
 *   included — a cached 404 is dropped when a Story is published or moved onto its path. Entries still expire
 *   (STORY_TTL_MS, NEGATIVE_TTL_MS) as a safety net: a notification lost while the LISTEN connection was down must
 *   not leave a path stale for ever, least of all a published page answering 404.
 *
 * Invalidation reaches this process through the event bus (after commit) or a direct call, and other processes
 * through Postgres NOTIFY, sent inside the changing transaction so it is delivered only if the change commits.
 * A process ignores its own notifications (it has already invalidated). A fill that raced with an invalidation is
 * dropped: loads note the Space's epoch before reading and store only if no invalidation happened meanwhile (and
 * requests that arrive after an invalidation never join a load that started before it).
 */

export const CACHE_CHANNEL = 'content_service_story_cache'
const SPACE_TTL_MS = 5_000
const STORY_TTL_MS = 10 * 60_000
const NEGATIVE_TTL_MS = 60_000
const MAX_SPACES = 10_000

export interface SpaceSettings {
  id: number
  slug: string
  name: string
  defaultLang: string
  codes: string[]
  fallbacks: Map<string, string>
  /** Memoised locale chains keyed by `?lang` value or Accept-Language header (bounded). */
  chains: Map<string, string[]>
}

export interface Snapshot {
  lang: string
  name: string
  /** The content as JSON text, exactly as it goes into the body: rendering does no JSON.stringify of it. */
  contentJson: string
  versionNo: number
  publishedAt: string
}

export interface Rendered {
  body: Uint8Array
  etag: string
  headers: Record<string, string>
  /** The same without Content-Type/Content-Language, for 304. */
  notModifiedHeaders: Record<string, string>
}

export interface PublishedStory {
  spaceId: number
  id: number
  uuid: string
  slug: string
  fullPath: string
  /** The Story's own locale: the last resort of the locale chain. */
  lang: string
  snapshots: Map<string, Snapshot>
  /** Rendered bodies by render key (locale, segment, step keys, origin); bounded per Story. */
  renders: Map<string, Rendered>
  bytes: number
}

const MAX_RENDERS_PER_STORY = 16
const NEGATIVE_ENTRY_BYTES = 64
/** Past this many cached 404s a miss is not cached: random paths must not push published Stories out. */
const MAX_NEGATIVE_ENTRIES = 100_000

type StoryEntry = { story: PublishedStory | null; expiresAt: number }
type SpaceEntry = { settings: SpaceSettings | null; expiresAt: number }

interface Wire {
  /** Sending process. */
  i: string
  s: number
  /** Full paths to drop; absent = the whole Space. */
  p?: string[]
}

export interface StoryCacheOptions {
  maxBytes: number
  now: () => number
}

export class StoryCache {
  readonly instanceId = crypto.randomUUID()
  private spaces = new Map<string, SpaceEntry>()
  private stories = new Map<string, StoryEntry>()
  private epochs = new Map<number, number>()
  /** Bumped by every Space-level invalidation: a Space load that started before one is not stored. */
  private spaceGeneration = 0
  private bytes = 0
  private negatives = 0
  private unlisten: (() => Promise<void>) | null = null
  private listening: Promise<void> | null = null

  constructor(
    private database: Database,
    private logger: Logger,
    private opts: StoryCacheOptions,
  ) {}

  // ---- Spaces ----

  /** The cached settings of a live Space (null = unknown or archived), or undefined when missing or expired. */
  space(slug: string, now: number): SpaceSettings | null | undefined {
    const e = this.spaces.get(slug)
    if (!e || e.expiresAt <= now) return undefined
    return e.settings
  }

  get spaceEpoch() {
    return this.spaceGeneration
  }

  storeSpace(slug: string, settings: SpaceSettings | null, generation: number) {
    if (generation !== this.spaceGeneration) return
    if (this.spaces.size >= MAX_SPACES) this.spaces.delete(this.spaces.keys().next().value!)
    this.spaces.set(slug, { settings, expiresAt: this.opts.now() + SPACE_TTL_MS })
  }

  forgetSpaceSlug(slug: string) {
    this.spaceGeneration++
    this.spaces.delete(slug)
  }

  // ---- Stories ----

  private key(spaceId: number, fullPath: string) {
    return `${spaceId}${fullPath}`
  }

  /** The cached entry: a Story, null for a cached 404, undefined when not cached (or expired). */
  story(spaceId: number, fullPath: string, now: number): PublishedStory | null | undefined {
    const e = this.stories.get(this.key(spaceId, fullPath))
    if (!e || e.expiresAt <= now) return undefined
    return e.story
  }

  epoch(spaceId: number): number {
    return this.epochs.get(spaceId) ?? 0
  }

  /** Stores a loaded entry unless the Space was invalidated since `epoch` was read (the load may be stale). */
  storeStory(spaceId: number, fullPath: string, story: PublishedStory | null, epoch: number): boolean {
    if (this.epoch(spaceId) !== epoch) return false
    const key = this.key(spaceId, fullPath)
    this.drop(key)
    if (!story && this.negatives >= MAX_NEGATIVE_ENTRIES) return false
    this.stories.set(key, { story, expiresAt: this.opts.now() + (story ? STORY_TTL_MS : NEGATIVE_TTL_MS) })
    this.bytes += story ? story.bytes : NEGATIVE_ENTRY_BYTES + key.length
    if (!story) this.negatives++
    this.evict()
    return true
  }

  /** Adds a rendered body to a cached Story; bodies count against the byte budget. */
  storeRender(story: PublishedStory, key: string, rendered: Rendered) {
    if (story.renders.size >= MAX_RENDERS_PER_STORY) return
    story.renders.set(key, rendered)
    const size = rendered.body.byteLength + key.length
    story.bytes += size
    // Only a Story that is still in the cache counts; one evicted meanwhile is garbage after this request.
    if (this.stories.get(this.key(story.spaceId, story.fullPath))?.story === story) {
      this.bytes += size
      this.evict()
    }
  }

  private drop(key: string) {
    const old = this.stories.get(key)
    if (old === undefined) return
    this.stories.delete(key)
    this.bytes -= old.story ? old.story.bytes : NEGATIVE_ENTRY_BYTES + key.length
    if (!old.story) this.negatives--
  }

  /** Oldest first: a simple, allocation-free policy; hot entries come straight back on their next read. */
  private evict() {
    while (this.bytes > this.opts.maxBytes && this.stories.size > 0) {
      this.drop(this.stories.keys().next().value!)
    }
  }

  private bump(spaceId: number) {
    this.epochs.set(spaceId, this.epoch(spaceId) + 1)
  }

  // ---- Invalidation ----

  invalidatePaths(spaceId: number, paths: string[]) {
    this.bump(spaceId)
    for (const p of paths) this.drop(this.key(spaceId, p))
  }

  /** Drops every Story of the Space and its settings (moves, locale changes, archive). */
  invalidateSpace(spaceId: number) {
    this.bump(spaceId)
    this.spaceGeneration++
    const prefix = `${spaceId}/`
    for (const key of [...this.stories.keys()]) if (key.startsWith(prefix)) this.drop(key)
    for (const [slug, e] of this.spaces) if (e.settings?.id === spaceId) this.spaces.delete(slug)
  }

  get stats() {
    return { stories: this.stories.size, negatives: this.negatives, spaces: this.spaces.size, bytes: this.bytes }
  }

  // ---- Across processes ----

  /** Subscribes to the NOTIFY channel (idempotent). */
  listen(): Promise<void> {
    this.listening ??= this.database
      .listen(CACHE_CHANNEL, (payload) => this.receive(payload))
      .then((unlisten) => {
        this.unlisten = unlisten
      })
      .catch((err) => {
        this.logger.error('story cache: LISTEN failed; other instances will not invalidate this one', { error: String(err) })
      })
    return this.listening
  }

  private receive(payload: string) {
    let msg: Wire
    try {
      msg = JSON.parse(payload)
    } catch {
      return
    }
    if (msg.i === this.instanceId || typeof msg.s !== 'number') return
    if (Array.isArray(msg.p)) this.invalidatePaths(msg.s, msg.p)
    else this.invalidateSpace(msg.s)
  }

  /** Queues the notification inside `tx`: Postgres delivers it to every listener only when `tx` commits. */
  async announce(tx: Tx, spaceId: number, paths?: string[]) {
    const msg: Wire = { i: this.instanceId, s: spaceId }
    if (paths) msg.p = paths
    let payload = JSON.stringify(msg)
    // NOTIFY payloads stop at 8000 bytes; a long list degrades to invalidating the whole Space.
    if (payload.length > 7900) payload = JSON.stringify({ i: this.instanceId, s: spaceId })
    await tx.execute(sql`select pg_notify(${CACHE_CHANNEL}, ${payload})`)
  }

  async close() {
    await this.listening
    if (this.unlisten) await this.unlisten().catch(() => {})
    this.unlisten = null
  }
}

/** For modules that change what a Space serves publicly as a whole (locales): announce inside the transaction. */
export function announceSpaceChange(tx: Tx, deps: { storyCache: StoryCache }, spaceId: number) {
  return deps.storyCache.announce(tx, spaceId)
}
