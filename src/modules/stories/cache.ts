/**
 * The in-memory cache of the public Story read, one per process (the stories module's state).
 *
 * Stories: (Space id, full path) → the published snapshot of every locale plus the rendered response bodies, or a
 * negative entry for a path that has no published Story. Every change that can alter what a path serves invalidates
 * it — the stories module's event handlers (src/modules/stories/index.ts) run on this instance at commit and on the
 * others through the kernel's event bus: publish, unpublish, archive and delete by path; moves, locale changes and
 * Space archiving by Space. Negative entries included: a cached 404 is dropped when a Story is published or moved onto
 * its path. Entries still expire (STORY_TTL_MS, NEGATIVE_TTL_MS) as a safety net for a notification lost while the
 * LISTEN connection was down (the bus also reports reconnects: onResync clears everything).
 *
 * A fill that raced with an invalidation is dropped: loads note the Space's epoch before reading and store only if no
 * invalidation happened meanwhile (and requests that arrive after an invalidation never join a load that started
 * before it).
 */

const STORY_TTL_MS = 10 * 60_000
const NEGATIVE_TTL_MS = 60_000

export interface Snapshot {
  lang: string
  name: string
  /** The content as JSON text, exactly as it goes into the body: rendering does no JSON.stringify of it. */
  contentJson: string
  versionNo: number
  publishedAt: string
}

export interface Rendered {
  /**
   * The response body as a Blob: immutable, so every Response shares its bytes. A Uint8Array body is copied into each
   * Response (a typed array can change under it), which cost ~3 µs and a GC-visible allocation per cached read.
   */
  body: Blob
  etag: string
  headers: Record<string, string>
  /** The same without Content-Type/Content-Language, for 304. */
  notModifiedHeaders: Record<string, string>
  /** `headers` and `notModifiedHeaders` as prebuilt Headers: the fast path clones them instead of building anew. */
  prebuilt: Headers
  prebuiltNotModified: Headers
  /**
   * `prebuilt` / `prebuiltNotModified` completed with a read step's decisions (e.g. X-Service-Segment, a private
   * Cache-Control), keyed by the identity of the step's headers object and the Cache-Control string: a personalised
   * cached read copies one Headers instead of setting headers one by one. A few entries at most; the oldest goes.
   */
  decided?: DecidedHeaders[]
}

/** One read-step decision's response headers on a rendered entry (see `Rendered.decided`). */
export interface DecidedHeaders {
  headers: Record<string, string> | null
  cacheControl: string | null
  key: string
  ok: Headers
  notModified: Headers
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

// Locales × served segments (+1 for none): 64 covers e.g. 3 locales × 20 segments; bodies count against maxBytes.
const MAX_RENDERS_PER_STORY = 64
const NEGATIVE_ENTRY_BYTES = 64
/** Past this many cached 404s a miss is not cached: random paths must not push published Stories out. */
const MAX_NEGATIVE_ENTRIES = 100_000

type StoryEntry = { story: PublishedStory | null; expiresAt: number }

export interface StoryCacheOptions {
  maxBytes: number
  now: () => number
}

export class StoryCache {
  private stories = new Map<string, StoryEntry>()
  private epochs = new Map<number, number>()
  private bytes = 0
  private negatives = 0
  /**
   * Bumped by every change of a live entry (a drop, an eviction, an invalidation): a memo of lookups (the fast path's
   * read memo) is valid while it stays the same. Replacing an entry whose TTL ran out does not bump it: a memo of that
   * path expired with it.
   */
  generation = 0

  constructor(private opts: StoryCacheOptions) {}

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

  /** When the cached entry of a path expires (epoch ms), or 0 when none is cached. */
  expiresAt(spaceId: number, fullPath: string): number {
    return this.stories.get(this.key(spaceId, fullPath))?.expiresAt ?? 0
  }

  epoch(spaceId: number): number {
    return this.epochs.get(spaceId) ?? 0
  }

  /** Stores a loaded entry unless the Space was invalidated since `epoch` was read (the load may be stale). */
  storeStory(spaceId: number, fullPath: string, story: PublishedStory | null, epoch: number): boolean {
    if (this.epoch(spaceId) !== epoch) return false
    const key = this.key(spaceId, fullPath)
    // Replacing an expired entry (its safety TTL ran out) changes nothing a live memo of another path relies on.
    const old = this.stories.get(key)
    this.drop(key, old !== undefined && old.expiresAt <= this.opts.now())
    if (!story && this.negatives >= MAX_NEGATIVE_ENTRIES) return false
    this.stories.set(key, { story, expiresAt: this.opts.now() + (story ? STORY_TTL_MS : NEGATIVE_TTL_MS) })
    this.bytes += story ? story.bytes : NEGATIVE_ENTRY_BYTES + key.length
    if (!story) this.negatives++
    this.evict()
    return true
  }

  /** Adds a rendered body to a cached Story; bodies count against the byte budget. */
  storeRender(story: PublishedStory, key: string, rendered: Rendered) {
    let size = rendered.body.size + key.length
    const old = story.renders.get(key)
    if (old) {
      story.renders.delete(key)
      size -= old.body.size + key.length
    } else if (story.renders.size >= MAX_RENDERS_PER_STORY) {
      // Oldest first: render keys that carry data revisions (datasource markers) go stale with every push, so the
      // newest bodies are the ones worth keeping.
      const [oldKey, oldRendered] = story.renders.entries().next().value!
      story.renders.delete(oldKey)
      size -= oldRendered.body.size + oldKey.length
    }
    story.renders.set(key, rendered)
    story.bytes += size
    // Only a Story that is still in the cache counts; one evicted meanwhile is garbage after this request.
    if (this.stories.get(this.key(story.spaceId, story.fullPath))?.story === story) {
      this.bytes += size
      this.evict()
    }
  }

  private drop(key: string, expired = false) {
    const old = this.stories.get(key)
    if (old === undefined) return
    if (!expired) this.generation++
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
    this.generation++
  }

  // ---- Invalidation ----

  invalidatePaths(spaceId: number, paths: string[]) {
    this.bump(spaceId)
    for (const p of paths) this.drop(this.key(spaceId, p))
  }

  /** Drops every Story of the Space (moves, locale changes, archive). */
  invalidateSpace(spaceId: number) {
    this.bump(spaceId)
    const prefix = `${spaceId}/`
    for (const key of [...this.stories.keys()]) if (key.startsWith(prefix)) this.drop(key)
  }

  get stats() {
    return { stories: this.stories.size, negatives: this.negatives, bytes: this.bytes }
  }

  clear() {
    for (const spaceId of [...this.epochs.keys()]) this.bump(spaceId)
    this.stories.clear()
    this.bytes = 0
    this.negatives = 0
    this.generation++
  }
}
