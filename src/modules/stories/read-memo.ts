import type { ReadSpace, ReadStep } from '../../kernel/read'
import type { Served } from './read-pipeline'

/**
 * The fast path's memo of whole public reads: URL → the Space it names and, per Accept-Language and the steps' `vary`
 * keys, what the last full read of it served. A hit skips path parsing, the Space, locale and Story lookups, the steps'
 * `select` and the render key — the JavaScript of a cached read shrinks to the rate limit and the response.
 *
 * It stays exact because an entry holds only while nothing it was built from can have changed:
 * - every event the bus delivers (any module's change, on this instance or another) and every resync drop it all
 *   (`dropAll`); the caches the read consults change in their own `on` handlers, synchronously;
 * - so does every change of the Story cache (a drop, an eviction, an invalidation: its `generation`), so the memo
 *   never keeps alive a body the cache let go;
 * - it expires with the Story and Space entries it was built from (their safety-net TTLs);
 * - only synchronous reads are memoised: a body being rendered, a step loading its state, a read that is not
 *   cacheable never enter it.
 * Bounded: URLs (the Host header is part of the URL) and keys per URL are capped by count and cleared when full, and
 * a key longer than MAX_KEY_LENGTH (a large Cookie header) is not memoised.
 */

const MAX_URLS = 50_000
const MAX_KEYS_PER_URL = 32
/** Longer keys (a large Cookie or Accept-Language header) are not memoised: memory stays bounded by the counts. */
const MAX_KEY_LENGTH = 512

interface UrlMemo {
  expiresAt: number
  space: ReadSpace
  /** What the empty key served (no Accept-Language, no step varying): the common read, without a second lookup. */
  plain: Served | undefined
  byKey: Map<string, Served>
}

export class ReadMemo {
  private byUrl = new Map<string, UrlMemo>()
  /** The Story cache's generation the entries were built at: when it moves, they all go (nothing it dropped stays alive here). */
  private cacheSeen = -1
  private varying: ReadStep[] | null = null
  /** A step with `select` and no `vary`: memoising would be wrong, so the memo stays off. */
  private off = false

  constructor(
    private steps: () => ReadStep[],
    private cacheGeneration: () => number,
  ) {}

  /** Something changed somewhere: every memoised read is dropped. */
  dropAll() {
    this.byUrl.clear()
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

  private sync() {
    const g = this.cacheGeneration()
    if (g !== this.cacheSeen) {
      this.cacheSeen = g
      this.dropAll()
    }
  }

  get(url: string, request: Request, acceptLanguage: string | null, viaTrustedProxy: boolean, now: number): Served | undefined {
    this.sync()
    const m = this.byUrl.get(url)
    if (m === undefined) return undefined
    if (m.expiresAt <= now) {
      this.byUrl.delete(url)
      return undefined
    }
    const key = this.keyOf(request, m.space, acceptLanguage, viaTrustedProxy)
    return key === null ? undefined : key === '' ? m.plain : m.byKey.get(key)
  }

  /** Remembers what a synchronous full read of `url` served; `expiresAt` is the earliest expiry of what it used. */
  set(url: string, request: Request, acceptLanguage: string | null, viaTrustedProxy: boolean, space: ReadSpace, now: number, expiresAt: number, served: Served) {
    const key = this.keyOf(request, space, acceptLanguage, viaTrustedProxy)
    if (key === null) return
    this.sync()
    let m = this.byUrl.get(url)
    if (m === undefined || m.space !== space || m.expiresAt <= now) {
      if (this.byUrl.size >= MAX_URLS) this.byUrl.clear()
      m = { expiresAt, space, plain: undefined, byKey: new Map() }
      this.byUrl.set(url, m)
    } else if (key !== '' && m.byKey.size >= MAX_KEYS_PER_URL) {
      m.byKey.clear()
    }
    m.expiresAt = Math.min(m.expiresAt, expiresAt)
    if (key === '') m.plain = served
    else m.byKey.set(key, served)
  }

  get size() {
    return this.byUrl.size
  }
}
