import { ScopedMemo } from '../../kernel/memo'
import type { FastRequest, FastRoute } from '../../kernel/module'
import type { PublicSpace, PublicSpaceResolver } from '../../kernel/public-space'
import type { SearchIndex } from './engine'
import type { SearchRegistry } from './registry'
import { checkSearch, type SearchInput, type SearchParamsChecked, searchIn } from './service'

/**
 * The public search on the fast path (kernel/fast-path.ts): a search whose Space is cached and whose index is built and
 * up to date is answered here, before Elysia, with the same rate limit, request id, CORS and RateLimit-* headers
 * (counted and set by the fast path) and the same body and Cache-Control as the Elysia route in routes.ts. Anything
 * else — a parameter the route's schema would refuse or might read differently, an unknown Space, a 422, an index
 * still building (503 `index_warming`) or with updates queued (the route waits for them) — returns undefined and the
 * Elysia route answers, so errors keep the one error shape and its headers.
 *
 * Recent answers are memoised (SearchMemo): keyed by the Space, the normalised parameters and the locale, each holds
 * only while the Space's cached settings and the index it was computed from are the same objects and the index's
 * `revision` has not moved (any document added, replaced or removed, or a compaction). A search issued after a publish
 * has answered finds that Space's update queued (readyIndex: undefined), takes the regular route that waits for it,
 * and the revision has moved by the time the fast path answers again: no stale answer.
 */

const CDN_PREFIX = '/v1/cdn/'
const SEARCH_SUFFIX = '/search'

/** The route's schema (model.ts): q 1–256 characters, lang 1–35, attributes ≤ 200; integers as intString checks them. */
const PER_PAGE = /^(?:[1-9]|[1-4][0-9]|50)$/
const PAGE = /^(?:[1-9][0-9]{0,5}|1000000)$/

/** The 200 answers' own headers (Elysia's for a JSON object, and the route's Cache-Control); cloned per answer. */
const OK_HEADERS = new Headers({ 'content-type': 'application/json;charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' })

/**
 * The query string as the route would see it (Elysia's parser: `+` is a space, then percent-decoding), or null when
 * the fast path should not guess: an unknown, repeated or encoded name, a name without a value, a malformed escape.
 */
function parseSearchQuery(url: string, qi: number): SearchInput | null {
  let q: string | undefined
  let lang: string | undefined
  let perPage: string | undefined
  let page: string | undefined
  let attributes: string | undefined
  let i = qi + 1
  const n = url.length
  while (i <= n) {
    let amp = url.indexOf('&', i)
    if (amp === -1) amp = n
    if (amp === i) {
      i++
      continue
    }
    const eq = url.indexOf('=', i)
    if (eq === -1 || eq > amp) return null
    let value = url.slice(eq + 1, amp)
    if (value.indexOf('+') !== -1) value = value.replaceAll('+', ' ')
    if (value.indexOf('%') !== -1) {
      try {
        value = decodeURIComponent(value)
      } catch {
        return null
      }
    }
    switch (url.slice(i, eq)) {
      case 'q':
        if (q !== undefined) return null
        q = value
        break
      case 'lang':
        if (lang !== undefined) return null
        lang = value
        break
      case 'per_page':
        if (perPage !== undefined) return null
        perPage = value
        break
      case 'page':
        if (page !== undefined) return null
        page = value
        break
      case 'attributes':
        if (attributes !== undefined) return null
        attributes = value
        break
      default:
        return null
    }
    i = amp + 1
  }
  if (q === undefined || q.length < 1 || q.length > 256) return null
  if (lang !== undefined && (lang.length < 1 || lang.length > 35)) return null
  if (attributes !== undefined && attributes.length > 200) return null
  if (perPage !== undefined && !PER_PAGE.test(perPage)) return null
  if (page !== undefined && !PAGE.test(page)) return null
  return {
    q,
    lang,
    per_page: perPage === undefined ? undefined : Number(perPage),
    page: page === undefined ? undefined : Number(page),
    attributes,
  }
}

interface MemoEntry {
  space: PublicSpace
  /** The index's serial, not the index: an entry must not keep an index evicted from memory (SEARCH_MEMORY_MB) alive. */
  index: number | null
  revision: number
  body: Blob
  bytes: number
}

/**
 * Recent search answers in a kernel memo (kernel/memo.ts): bounded in bytes and count, SIEVE eviction (a cycle longer
 * than the memo costs the lookup, not the hot answers), dropped per Space by the runtime on that Space's events and
 * all on resync (the search module's `memos`). An entry is also served only while `space`, `index` and
 * `index.revision` are what they were when it was computed.
 */
export class SearchMemo {
  readonly memo: ScopedMemo<MemoEntry>
  hits = 0
  misses = 0

  constructor(
    readonly maxEntries = 2048,
    readonly maxBytes = 4 * 1024 * 1024,
  ) {
    this.memo = new ScopedMemo<MemoEntry>({ name: 'search.memo', maxBytes, maxEntries, sizeOf: (e) => e.bytes })
  }

  get size() {
    return this.memo.stats.entries
  }

  get byteSize() {
    return this.memo.stats.bytes
  }

  clear() {
    this.memo.clear()
  }

  get(key: string, space: PublicSpace, index: SearchIndex | null): Blob | undefined {
    const e = this.memo.get(key, 0)
    if (e === undefined) {
      this.misses++
      return undefined
    }
    if (e.space !== space || e.index !== (index === null ? null : index.serial) || (index !== null && e.revision !== index.revision)) {
      this.memo.delete(key)
      this.misses++
      return undefined
    }
    this.hits++
    return e.body
  }

  set(key: string, space: PublicSpace, index: SearchIndex | null, revision: number, body: Blob) {
    const bytes = body.size + key.length * 2 + 64
    if (bytes > this.maxBytes >>> 4) return // one answer never takes more than a sixteenth of the budget
    this.memo.set(space.id, key, { space, index: index === null ? null : index.serial, revision, body, bytes })
  }
}

/** The memo key of a checked search: Space, locale, page, fields and the query as typed (its spaces matter). */
function keyOf(spaceId: number, p: SearchParamsChecked): string {
  return `${spaceId}\u0001${p.lang}\u0001${p.perPage}\u0001${p.page}\u0001${p.fields.length === 6 ? '*' : p.fields.join(',')}\u0001${p.q}`
}

function respond(body: Blob, info: FastRequest): Response {
  const res = new Response(body, { headers: OK_HEADERS })
  info.addHeaders(res.headers)
  return res
}

export function searchFastRoute(registry: SearchRegistry, spaces: PublicSpaceResolver, memo: SearchMemo): FastRoute {
  return {
    route: '/v1/cdn/:space/search',
    matches(pathname) {
      if (!pathname.startsWith(CDN_PREFIX) || !pathname.endsWith(SEARCH_SUFFIX)) return false
      const slash = pathname.indexOf('/', CDN_PREFIX.length)
      return slash > CDN_PREFIX.length && slash === pathname.length - SEARCH_SUFFIX.length
    },
    answer(request: Request, info: FastRequest) {
      const t0 = performance.now()
      const url = request.url
      const qi = url.indexOf('?')
      if (qi === -1) return undefined
      const input = parseSearchQuery(url, qi)
      if (input === null) return undefined
      const slug = info.pathname.slice(CDN_PREFIX.length, info.pathname.length - SEARCH_SUFFIX.length)
      const space = spaces.get(slug)
      if (space === null || space instanceof Promise) return undefined
      let p: SearchParamsChecked
      try {
        p = checkSearch(space, input)
      } catch {
        return undefined // 422: the Elysia route answers it, in the one error shape
      }
      const index = registry.readyIndex(space.id, p.lang)
      if (index === undefined) return undefined
      const key = keyOf(space.id, p)
      const memoised = memo.get(key, space, index)
      if (memoised !== undefined) return respond(memoised, info)
      const result = searchIn(index, p, t0)
      const body = new Blob([JSON.stringify(result)])
      // Read after the search: a search may finish a pending compaction, which moves the revision.
      memo.set(key, space, index, index === null ? 0 : index.revision, body)
      return respond(body, info)
    },
  }
}
