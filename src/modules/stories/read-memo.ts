import type { ReadSpace, ReadStep } from '../../kernel/read'
import type { PublishedStory, StoryCache } from './cache'
import type { Served } from './read-pipeline'
import { ScopedMemo } from '../../kernel/memo'

/**
 * The fast path's memo of whole public reads: URL → the Space it names and, per Accept-Language and the steps' `vary`
 * keys, what the last full read of it served. A hit skips path parsing, the Space, locale and Story lookups, the steps'
 * `select` and the render key — the JavaScript of a cached read shrinks to the rate limit and the response.
 *
 * It stays exact because an entry holds only while nothing it was built from can have changed:
 * - every event the bus delivers (any module's change, on this instance or another) drops the entries of its Space
 *   (every entry for an event of no Space), and a resync drops them all: the memo is in the module's `memos` slot
 *   (kernel/memo.ts), so the runtime does it; the caches the read consults change in their own handlers of the same
 *   events, synchronously;
 * - it expires with the Story and Space entries it was built from (their safety-net TTLs);
 * - only synchronous reads are memoised: a body being rendered, a step loading its state, a read that is not
 *   cacheable never enter it.
 * Bounded in bytes (its share of CDN_CACHE_MB) by what it adds itself: an entry counts its URL, its keys, its link
 * to the Story and a fixed size per read it holds (~500 bytes for a plain read), and SIEVE evicts past the budget;
 * keys per URL are capped, and a key longer than MAX_KEY_LENGTH (a large Cookie header) is not memoised. The bodies
 * it serves are the Story cache's (cache.ts), counted there: an entry is made only from a read served from that cache,
 * links to the cached Story, and goes when the Story leaves the cache or loses a body (`StoryCache.onBodiesDropped`).
 * So the memo never keeps a body alive that the Story cache's budget does not count, and its own budget is spent on
 * URLs, not on copies of the bodies' size (with bodies of a few KB it holds every URL whose Story is cached).
 */

const MAX_KEYS_PER_URL = 32
/** Longer keys (a large Cookie or Accept-Language header) are not memoised: memory stays bounded by the counts. */
const MAX_KEY_LENGTH = 512
/** An entry, its slot in the SIEVE store and its link in the Story's `memoUrls` (the Set, when it is the first). */
const ENTRY_BYTES = 160 + 96
/** What one memoised read holds besides its key: the Served object and its slot in the entry. */
const SERVED_BYTES = 96

interface UrlMemo {
  expiresAt: number
  space: ReadSpace
  /** The cached Story whose bodies the entry serves (every read of one URL names one Story). */
  story: PublishedStory
  /** What the empty key served (no Accept-Language, no step varying): the common read, without a second lookup. */
  plain: Served | undefined
  byKey: Map<string, Served>
}

const servedBytes = (key: string) => key.length * 2 + SERVED_BYTES

export class ReadMemo {
  readonly memo: ScopedMemo<UrlMemo>
  private varying: ReadStep[] | null = null
  /** A step with `select` and no `vary`: memoising would be wrong, so the memo stays off. */
  private off = false

  constructor(
    private steps: () => ReadStep[],
    maxBytes: number,
    cache: StoryCache,
  ) {
    this.memo = new ScopedMemo<UrlMemo>({
      name: 'stories.read-memo',
      maxBytes,
      // The entry as stored; what is added later is counted by `resize`.
      sizeOf: (m, url) => {
        let n = ENTRY_BYTES + url.length * 2
        if (m.plain) n += servedBytes('')
        for (const k of m.byKey.keys()) n += servedBytes(k)
        return n
      },
      onDrop: (m, url) => {
        const urls = m.story.memoUrls
        if (urls === undefined) return
        urls.delete(url)
        if (urls.size === 0) m.story.memoUrls = undefined
      },
    })
    cache.onBodiesDropped = (story) => this.dropStory(story)
  }

  /** The Story left the Story cache or lost a body: the entries serving its bodies go. */
  private dropStory(story: PublishedStory) {
    const urls = story.memoUrls
    if (urls === undefined) return
    story.memoUrls = undefined
    for (const url of urls) {
      const e = this.memo.peekEntry(url)
      if (e !== undefined && e.value.story === story) this.memo.delete(url)
    }
  }

  private varyingSteps(): ReadStep[] | null {
    if (this.varying === null) {
      const steps = this.steps()
      this.off = steps.some((s) => s.select && !s.vary)
      this.varying = steps.filter((s) => s.vary)
    }
    return this.off ? null : this.varying
  }

  /** The memo key of this request in `space`: Accept-Language and the steps' keys; null when not memoisable. */
  private keyOf(request: Request, space: ReadSpace, acceptLanguage: string | null, viaTrustedProxy: boolean): string | null {
    const steps = this.varyingSteps()
    if (steps === null) return null
    let key = acceptLanguage ?? ''
    for (let i = 0; i < steps.length; i++) {
      const v = steps[i].vary!(request, space, viaTrustedProxy)
      if (v === null) return null
      if (v !== '') key += `\u0001${steps[i].name}\u0002${v}`
    }
    return key.length > MAX_KEY_LENGTH ? null : key
  }

  get(url: string, request: Request, acceptLanguage: string | null, viaTrustedProxy: boolean, now: number): Served | undefined {
    const m = this.memo.get(url, now)
    if (m === undefined) return undefined
    if (m.expiresAt <= now) {
      this.memo.delete(url)
      return undefined
    }
    const key = this.keyOf(request, m.space, acceptLanguage, viaTrustedProxy)
    return key === null ? undefined : key === '' ? m.plain : m.byKey.get(key)
  }

  /**
   * Remembers what a synchronous full read of `url` served; `expiresAt` is the earliest expiry of what it used. Only a
   * read served from the Story cache (`served.story`) is memoised.
   */
  set(url: string, request: Request, acceptLanguage: string | null, viaTrustedProxy: boolean, space: ReadSpace, now: number, expiresAt: number, served: Served) {
    const story = served.story
    if (story === undefined) return
    const key = this.keyOf(request, space, acceptLanguage, viaTrustedProxy)
    if (key === null) return
    let m = this.memo.peekEntry(url)?.value
    if (m === undefined || m.space !== space || m.story !== story || m.expiresAt <= now) {
      m = { expiresAt, space, story, plain: key === '' ? served : undefined, byKey: key === '' ? new Map() : new Map([[key, served]]) }
      // The old entry goes first (its URL leaves its Story's list); the new one is linked before it is stored, so an
      // eviction while storing unlinks it again.
      this.memo.delete(url)
      ;(story.memoUrls ??= new Set()).add(url)
      if (!this.memo.set(space.id, url, m)) this.memo.options.onDrop!(m, url)
      return
    }
    let delta = servedBytes(key)
    if (key === '') {
      if (m.plain) delta -= servedBytes('')
      m.plain = served
    } else {
      if (m.byKey.size >= MAX_KEYS_PER_URL) {
        for (const k of m.byKey.keys()) delta -= servedBytes(k)
        m.byKey.clear()
      }
      if (m.byKey.has(key)) delta -= servedBytes(key)
      m.byKey.set(key, served)
    }
    m.expiresAt = Math.min(m.expiresAt, expiresAt)
    this.memo.resize(url, m, delta)
  }

  get size() {
    return this.memo.stats.entries
  }
}
