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
 * before it). The single-flight loads, epochs, byte budget, TTLs and the resync are the kernel's cache
 * (kernel/cache.ts); what is the Story read's own is here: keys by (Space, path), rendered bodies counted against the
 * budget, the events that invalidate, and the `generation` the read memo checks.
 */
import { ScopedCache } from '../../kernel/cache'

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
  /** Bytes of the body's `data` value (it starts at byte 8, after `{"data":`; `,"meta":` follows it). */
  dataBytes: number
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
  /** The Space content version (`meta.cv`) the bodies in `renders` carry; when the Space's moves on, they go. */
  rendersCv?: number
  bytes: number
  /** The URLs of the read memo's entries that serve this Story's bodies (read-memo.ts), while there are any. */
  memoUrls?: Set<string>
}

// Locales × served segments (+1 for none): 64 covers e.g. 3 locales × 20 segments; bodies count against maxBytes.
const MAX_RENDERS_PER_STORY = 64
const NEGATIVE_ENTRY_BYTES = 64
/**
 * What a rendered body holds besides its bytes: the entry object, its two header records and their two prebuilt
 * Headers (native, ~1.2 KB together) and the Blob's own object. Measured at ~1.4 KB per entry (Bun 1.4); counted so
 * the budget bounds what the cache really keeps, not only its bodies.
 */
export const RENDER_OVERHEAD_BYTES = 1400
/** Past this many cached 404s a miss is not cached: random paths must not push published Stories out. */
const MAX_NEGATIVE_ENTRIES = 100_000

export interface StoryCacheOptions {
  maxBytes: number
  now: () => number
  /** Reads the published Story of a path from the database (null: none); the cache stores it. */
  load?: (spaceId: number, fullPath: string) => Promise<PublishedStory | null>
}

type StoryKey = { spaceId: number; fullPath: string }

const keyOf = (spaceId: number, fullPath: string) => `${spaceId}${fullPath}`

export class StoryCache {
  readonly entries: ScopedCache<StoryKey, PublishedStory | null>
  /**
   * Told when a Story leaves the cache or loses a rendered body (the read memo, which keeps references to the bodies
   * and must hold none that the cache no longer counts).
   */
  onBodiesDropped: ((story: PublishedStory) => void) | null = null

  constructor(private opts: StoryCacheOptions) {
    const path = (e: { spaceId: number | null; payload: { story: { full_path: string } } }) =>
      e.spaceId === null ? null : { scope: e.spaceId, ids: [keyOf(e.spaceId, e.payload.story.full_path)] }
    const space = (e: { spaceId: number | null }) => e.spaceId
    this.entries = new ScopedCache<StoryKey, PublishedStory | null>({
      name: 'stories.read',
      scopeOf: (k) => k.spaceId,
      idOf: (k) => keyOf(k.spaceId, k.fullPath),
      load: (k) => (opts.load ? opts.load(k.spaceId, k.fullPath) : Promise.reject(new Error('StoryCache: no loader'))),
      now: opts.now,
      ttlMs: STORY_TTL_MS,
      negativeTtlMs: NEGATIVE_TTL_MS,
      maxNegatives: MAX_NEGATIVE_ENTRIES,
      maxBytes: opts.maxBytes,
      sizeOf: (story, id) => (story ? story.bytes : NEGATIVE_ENTRY_BYTES + id.length),
      onDrop: (story) => {
        if (story !== null && story.memoUrls !== undefined) this.onBodiesDropped?.(story)
      },
      invalidateOn: {
        'story.published': path,
        'story.unpublished': path,
        'story.deleted': path,
        'story.moved': space,
        'space.locales_changed': space,
        'space.archived': space,
      },
    })
  }

  /**
   * Moves with every change of a live entry (a drop, an eviction, an invalidation): a memo of lookups (the fast path's
   * read memo) is valid while it stays the same. Replacing an entry whose TTL ran out does not move it: a memo of that
   * path expired with it.
   */
  get generation(): number {
    return this.entries.changes
  }

  // ---- Stories ----

  /** The cached entry: a Story, null for a cached 404, undefined when not cached (or expired). One Map lookup. */
  story(spaceId: number, fullPath: string, now: number): PublishedStory | null | undefined {
    return this.entries.peek(keyOf(spaceId, fullPath), now)
  }

  /** The published Story of a path: from memory, else one load shared by every read of the same epoch. */
  load(spaceId: number, fullPath: string): Promise<PublishedStory | null> {
    return this.entries.load({ spaceId, fullPath })
  }

  /** When the cached entry of a path expires (epoch ms), or 0 when none is cached. */
  expiresAt(spaceId: number, fullPath: string): number {
    return this.entries.expiresAt(keyOf(spaceId, fullPath))
  }

  epoch(spaceId: number): number {
    return this.entries.epoch(spaceId)
  }

  /** Stores a loaded entry unless the Space was invalidated since `epoch` was read (the load may be stale). */
  storeStory(spaceId: number, fullPath: string, story: PublishedStory | null, epoch: number): boolean {
    return this.entries.store(spaceId, keyOf(spaceId, fullPath), story, epoch)
  }

  /** Adds a rendered body to a cached Story; bodies count against the byte budget. */
  storeRender(story: PublishedStory, key: string, rendered: Rendered) {
    let size = rendered.body.size + key.length + RENDER_OVERHEAD_BYTES
    const old = story.renders.get(key)
    const dropsOne = old !== undefined || story.renders.size >= MAX_RENDERS_PER_STORY
    if (old) {
      story.renders.delete(key)
      size -= old.body.size + key.length + RENDER_OVERHEAD_BYTES
    } else if (story.renders.size >= MAX_RENDERS_PER_STORY) {
      // Oldest first: render keys that carry data revisions (datasource markers) go stale with every push, so the
      // newest bodies are the ones worth keeping.
      const [oldKey, oldRendered] = story.renders.entries().next().value!
      story.renders.delete(oldKey)
      size -= oldRendered.body.size + oldKey.length + RENDER_OVERHEAD_BYTES
    }
    story.renders.set(key, rendered)
    story.bytes += size
    if (dropsOne && story.memoUrls !== undefined) this.onBodiesDropped?.(story)
    // Only a Story that is still in the cache counts; one evicted meanwhile is garbage after this request.
    this.entries.resize(keyOf(story.spaceId, story.fullPath), story, size)
  }

  /** Drops a cached Story's rendered bodies (they carry an older Space content version); the snapshots stay. */
  dropRenders(story: PublishedStory) {
    let size = 0
    for (const [key, r] of story.renders) size -= r.body.size + key.length + RENDER_OVERHEAD_BYTES
    story.renders.clear()
    story.bytes += size
    if (story.memoUrls !== undefined) this.onBodiesDropped?.(story)
    this.entries.resize(keyOf(story.spaceId, story.fullPath), story, size)
  }

  // ---- Invalidation (the events in the constructor's `invalidateOn`, wired by the runtime) ----

  invalidatePaths(spaceId: number, paths: string[]) {
    this.entries.invalidate(
      spaceId,
      paths.map((p) => keyOf(spaceId, p)),
    )
  }

  /** Drops every Story of the Space (moves, locale changes, archive). */
  invalidateSpace(spaceId: number) {
    this.entries.invalidate(spaceId)
  }

  get stats() {
    const s = this.entries.stats
    return { stories: s.entries, negatives: s.negatives, bytes: s.bytes }
  }

  clear() {
    this.entries.clear()
  }
}
