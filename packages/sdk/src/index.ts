/**
 * @content-service/sdk — the client of a Content Service server: typed published reads (one Story, lists as async
 * iterators over cursor pages, the change feed), search, forms, newsletter, the beacon, audience segments, GraphQL,
 * and `client.api`, the whole management and public API typed from the server's OpenAPI description.
 *
 * Reads go through an ETag cache (memory by default, pluggable) keyed by URL (language included) and segment, with
 * concurrent identical requests sharing one fetch; GETs are retried on 429/502/503/504 honouring Retry-After; every
 * attempt has a timeout; every failure is a ContentServiceError.
 */
import type { Client as ApiClient } from 'openapi-fetch'
import type { paths } from './api/schema'

export type { paths } from './api/schema'

// ---- content types ----

/** A block of a Story document; generated types (`content-service-cli types`) narrow it per blueprint. */
export interface Block {
  component: string
  _uid: string
  [field: string]: unknown
}

/** What `content-service-cli types` generates: the root blocks (and the component map) of a Space. */
export interface ContentSchema {
  RootBlock: { component: string; _uid: string }
}

/** Untyped content: any block. */
export interface AnySchema {
  RootBlock: Block
}

export interface StoryContent<B = Block> {
  type: 'doc'
  blocks: B[]
}

export interface StoryMeta {
  /** The Space content version: changes with every publish, unpublish, move or delete in the Space. */
  cv: number
  served_segment?: string | null
  datasource_refs?: Record<string, number>
  beacon_url?: string
  rel_uuids?: string[]
  [entry: string]: unknown
}

export interface Story<S extends ContentSchema = AnySchema> {
  id: number
  uuid: string
  name: string
  slug: string
  full_path: string
  lang: string
  version_no: number
  published_at: string | null
  content: StoryContent<S['RootBlock']>
}

/** A Story of a list or of `rels`: the read's `data` with its `meta`. */
export type ListedStory<S extends ContentSchema = AnySchema> = Story<S> & { meta: StoryMeta }

export interface StoryResult<S extends ContentSchema = AnySchema> {
  story: Story<S>
  /** With `resolveRelations`: the Stories those fields hold (at most 50; the others in `meta.rel_uuids`). */
  rels: ListedStory<S>[]
  meta: StoryMeta
}

export interface StoriesPage<S extends ContentSchema = AnySchema> {
  stories: ListedStory<S>[]
  rels: ListedStory<S>[]
  cv: number
  /** The cursor of the next page, or null on the last. */
  next: string | null
}

export interface Change {
  kind: 'published' | 'unpublished' | 'moved' | 'deleted'
  uuid: string
  full_path: string
  from_path?: string
  cv: number
  at: string
}

export interface ChangesPage {
  changes: Change[]
  /** Pass it as `since` next time. */
  cursor: string
  cv: number
  hasMore: boolean
}

export type SortBy = `${'full_path' | 'name' | 'published_at' | 'first_published_at'}:${'asc' | 'desc'}`

export interface ReadOptions {
  lang?: string
  /** `draft`: the latest drafts (needs `previewToken` or `token`). */
  version?: 'published' | 'draft'
  /** Links `{story_uuid}` get the target's `full_path` and `name`. */
  resolveLinks?: boolean
  /** `component.field` pairs whose Story uuids are read into `rels`. */
  resolveRelations?: string[]
  excludingFields?: string[]
}

export interface ListOptions extends ReadOptions {
  startsWith?: string
  byUuids?: string[]
  byPaths?: string[]
  contentType?: string
  isFolder?: boolean
  sortBy?: SortBy
  perPage?: number
  /** Start after this cursor (a previous page's `next`). */
  cursor?: string
}

// ---- options, cache, errors ----

export interface CacheEntry {
  etag: string
  body: unknown
}

/** Where ETag'd answers are kept: memory by default; any store with these two methods (sync or async) will do. */
export interface ResponseCache {
  get(key: string): CacheEntry | undefined | Promise<CacheEntry | undefined>
  set(key: string, entry: CacheEntry): void | Promise<void>
}

export interface RetryOptions {
  /** Attempts after the first (default 3); 0 turns retries off. */
  retries?: number
  /** Upper bound of one wait, Retry-After included (default 30 s). */
  maxDelayMs?: number
}

export interface ClientOptions {
  /** The server, e.g. `https://cms.example.com` (the `/v1` prefix is added). */
  baseUrl: string
  /** The Space slug. */
  space: string
  /** A bearer token: management calls (`client.api`) and draft reads. */
  token?: string
  /** A preview token (`p_…`): draft reads. */
  previewToken?: string
  /** The default `lang` of reads. */
  lang?: string
  /** A resolved audience segment key, sent as X-Service-Segment (see `segment()`). */
  segment?: string
  fetch?: typeof fetch
  /** An ETag cache; `false` turns it off. */
  cache?: ResponseCache | false
  retry?: RetryOptions
  /** Per attempt, in ms (default 10 s). */
  timeout?: number
}

/** Every failure: an error answer of the server (its status and code), a timeout or a network error (status 0). */
export class ContentServiceError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly errors: Record<string, string[]> = {},
    readonly requestId: string | null = null,
    readonly url = '',
  ) {
    super(message)
    this.name = 'ContentServiceError'
  }
}

/** The default cache: the newest `max` answers in memory. */
export function memoryCache(max = 500): ResponseCache {
  const map = new Map<string, CacheEntry>()
  return {
    get: (k) => map.get(k),
    set(k, e) {
      map.delete(k)
      map.set(k, e)
      if (map.size > max) map.delete(map.keys().next().value!)
    },
  }
}

const RETRY = new Set([429, 502, 503, 504])
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const list = (v: string[] | undefined) => (v?.length ? v.join(',') : undefined)

/** Retry-After: seconds or an HTTP date; null when absent or unreadable. */
function retryAfter(h: string | null): number | null {
  if (!h) return null
  const s = Number(h)
  const ms = Number.isFinite(s) ? s * 1000 : Date.parse(h) - Date.now()
  return Number.isFinite(ms) ? Math.max(0, ms) : null
}

type Query = Record<string, string | number | boolean | undefined>

interface Call {
  method?: string
  query?: Query
  body?: unknown
  /** Send the token (management, drafts). */
  auth?: boolean
}

// ---- the client ----

export function createClient<S extends ContentSchema = AnySchema>(opts: ClientOptions) {
  const base = `${opts.baseUrl.replace(/\/+$/, '')}/v1`
  const f = opts.fetch ?? ((...a: Parameters<typeof fetch>) => fetch(...a))
  const cache = opts.cache === false ? null : (opts.cache ?? memoryCache())
  const retries = opts.retry?.retries ?? 3
  const maxDelay = opts.retry?.maxDelayMs ?? 30_000
  const timeout = opts.timeout ?? 10_000
  const inflight = new Map<string, Promise<unknown>>()
  let segment = opts.segment ?? null
  const cdn = `/cdn/${encodeURIComponent(opts.space)}`

  function urlOf(path: string, query: Query = {}) {
    const qs = new URLSearchParams()
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') qs.set(k, String(v))
    const s = qs.toString()
    return `${base}${path}${s ? `?${s}` : ''}`
  }

  async function attempt(url: string, init: RequestInit): Promise<Response> {
    const ac = new AbortController()
    const timer = setTimeout(() => ac.abort(), timeout)
    try {
      return await f(url, { ...init, signal: ac.signal })
    } catch (err) {
      const timedOut = ac.signal.aborted
      throw new ContentServiceError(timedOut ? `Timed out after ${timeout} ms` : `Network error: ${(err as Error)?.message}`, 0, timedOut ? 'timeout' : 'network_error', {}, null, url)
    } finally {
      clearTimeout(timer)
    }
  }

  /** One call: retries (GET), the ETag cache and de-duplication (cacheable GETs), the error class. */
  async function call<T>(path: string, c: Call = {}): Promise<T> {
    const method = c.method ?? 'GET'
    const url = urlOf(path, c.query)
    const headers: Record<string, string> = { Accept: 'application/json' }
    const bearer = c.auth ? (c.query?.version === 'draft' ? (opts.previewToken ?? opts.token) : (opts.token ?? opts.previewToken)) : undefined
    if (bearer) headers.Authorization = `Bearer ${bearer}`
    if (segment) headers['X-Service-Segment'] = segment
    if (c.body !== undefined) headers['Content-Type'] = 'application/json'
    const get = method === 'GET'
    const key = get && !bearer && cache ? `${url}\u0000${segment ?? ''}` : null
    if (key) {
      const running = inflight.get(key)
      if (running) return running as Promise<T>
    }
    const run = (async () => {
      const cached = key ? await cache!.get(key) : undefined
      if (cached) headers['If-None-Match'] = cached.etag
      for (let n = 0; ; n++) {
        let res: Response
        try {
          res = await attempt(url, { method, headers, body: c.body === undefined ? undefined : JSON.stringify(c.body) })
        } catch (err) {
          if (!get || n >= retries) throw err
          await sleep(Math.min(maxDelay, 250 * 2 ** n))
          continue
        }
        if (res.status === 304 && cached) return cached.body as T
        if (get && RETRY.has(res.status) && n < retries) {
          await res.body?.cancel()
          await sleep(Math.min(maxDelay, retryAfter(res.headers.get('retry-after')) ?? 250 * 2 ** n * (1 + Math.random())))
          continue
        }
        const text = await res.text()
        let body: any = null
        try {
          body = text ? JSON.parse(text) : null
        } catch {}
        if (!res.ok) {
          throw new ContentServiceError(
            body?.message ?? `HTTP ${res.status}`,
            res.status,
            body?.error ?? 'http_error',
            body?.errors,
            body?.request_id ?? res.headers.get('x-request-id'),
            url,
          )
        }
        const etag = res.headers.get('etag')
        if (key && etag && !/no-store/.test(res.headers.get('cache-control') ?? '')) await cache!.set(key, { etag, body })
        return body as T
      }
    })()
    if (key) {
      inflight.set(key, run)
      run.then(
        () => inflight.delete(key),
        () => inflight.delete(key),
      )
    }
    return run
  }

  const readQuery = (o: ReadOptions = {}): Query => ({
    lang: o.lang ?? opts.lang,
    version: o.version,
    resolve_links: o.resolveLinks ? 'story' : undefined,
    resolve_relations: list(o.resolveRelations),
    excluding_fields: list(o.excludingFields),
  })

  async function page(o: ListOptions, cursor: string | undefined): Promise<StoriesPage<S>> {
    const body = await call<{ data: ListedStory<S>[]; rels?: ListedStory<S>[]; meta: { cv: number; next_cursor: string | null } }>(`${cdn}/stories`, {
      auth: o.version === 'draft',
      query: {
        ...readQuery(o),
        starts_with: o.startsWith,
        by_uuids: list(o.byUuids),
        by_paths: list(o.byPaths),
        content_type: o.contentType,
        is_folder: o.isFolder,
        sort_by: o.sortBy,
        per_page: o.perPage,
        cursor,
      },
    })
    return { stories: body.data, rels: body.rels ?? [], cv: body.meta.cv, next: body.meta.next_cursor }
  }

  let api: ApiClient<paths> | undefined
  let apiLoading: Promise<ApiClient<paths>> | undefined
  // openapi-fetch is loaded on the first `client.api` call: sites that only read content never download it.
  const apiProxy = new Proxy({} as ApiClient<paths>, {
    get:
      (_t, method: string) =>
      (...args: unknown[]) =>
        (api
          ? Promise.resolve(api)
          : (apiLoading ??= import('openapi-fetch').then((m) => (api = m.default<paths>({ baseUrl: opts.baseUrl.replace(/\/+$/, ''), fetch: f, headers: opts.token ? { Authorization: `Bearer ${opts.token}` } : {} }))))
        ).then((c) => (c as any)[method](...args)),
  })

  return {
    /** The published Story at a full path (`blog/hello` or `/blog/hello`), or its drafts with `version: 'draft'`. */
    async story(path: string, o: ReadOptions = {}): Promise<StoryResult<S>> {
      const p = path.replace(/^\/+/, '')
      const body = await call<{ data: Story<S>; rels?: ListedStory<S>[]; meta: StoryMeta }>(`${cdn}/stories/${p.split('/').map(encodeURIComponent).join('/')}`, {
        auth: o.version === 'draft',
        query: readQuery(o),
      })
      return { story: body.data, rels: body.rels ?? [], meta: body.meta }
    },

    /** Pages of Stories, following the cursor: `for await (const page of client.stories({startsWith: 'blog/'}))`. */
    async *stories(o: ListOptions = {}): AsyncGenerator<StoriesPage<S>, void, undefined> {
      let cursor = o.cursor
      do {
        const p = await page(o, cursor)
        yield p
        cursor = p.next ?? undefined
      } while (cursor)
    },

    /** Every Story of a list, all pages read. */
    async allStories(o: ListOptions = {}): Promise<ListedStory<S>[]> {
      const out: ListedStory<S>[] = []
      for await (const p of this.stories(o)) out.push(...p.stories)
      return out
    },

    /** Public changes after `since` (a previous `cursor`, or `meta.cv` of a read made before a full sync). */
    async changes(since?: string, perPage?: number): Promise<ChangesPage> {
      const b = await call<{ data: Change[]; meta: { cv: number; next_cursor: string; has_more: boolean } }>(`${cdn}/changes`, {
        query: { since, per_page: perPage },
      })
      return { changes: b.data, cursor: b.meta.next_cursor, cv: b.meta.cv, hasMore: b.meta.has_more }
    },

    /** Full-text search over published Stories. */
    search(q: string, o: { lang?: string; page?: number; perPage?: number; attributes?: string[] } = {}) {
      return call<{ data: Record<string, unknown>[]; meta: { total: number; query_time_ms: number } }>(`${cdn}/search`, {
        query: { q, lang: o.lang ?? opts.lang, page: o.page, per_page: o.perPage, attributes: list(o.attributes) },
      })
    },

    /** Submits a form; `data` keyed by the form's field keys. */
    submitForm(slug: string, data: Record<string, unknown>) {
      return call<{ data?: { ok: true; submission_uuid: string; success_message: string | null; redirect_url: string | null }; ok?: true }>(
        `${cdn}/forms/${encodeURIComponent(slug)}`,
        { method: 'POST', body: { _hp: '', data } },
      )
    },

    /** Subscribes an address to the Space's newsletter (a confirmation mail follows). */
    subscribe(email: string, o: { name?: string; lang?: string } = {}) {
      return call<unknown>(`${cdn}/subscribe`, { method: 'POST', body: { email, ...o } })
    },

    /** Counts a view (fire and forget: never throws, never waits on the network in browsers). */
    beacon(storyUuid: string, o: { lang?: string; device?: 'desktop' | 'mobile' | 'tablet'; referrer?: string } = {}): void {
      const url = urlOf(`${cdn}/_beacon`)
      const body = JSON.stringify({ story_uuid: storyUuid, segment_key: segment ?? undefined, lang: o.lang ?? opts.lang, ...o })
      try {
        const nav = (globalThis as { navigator?: { sendBeacon?(u: string, b: string): boolean } }).navigator
        if (nav?.sendBeacon?.(url, body)) return
        f(url, { method: 'POST', body, headers: { 'Content-Type': 'application/json' }, keepalive: true }).catch(() => {})
      } catch {}
    },

    /** Resolves this visitor's audience segment once; later reads send it as X-Service-Segment (publicly cacheable). */
    async segment(o: { lang?: string } = {}): Promise<string | null> {
      const b = await call<{ data: { segment: string | null } }>(`${cdn}/segment`, { query: { lang: o.lang ?? opts.lang } })
      segment = b.data.segment
      return segment
    },

    /** A read-only GraphQL query; GraphQL errors throw. */
    async graphql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<T> {
      const b = await call<{ data?: T; errors?: { message: string }[] }>('/graphql', { method: 'POST', body: { query, variables } })
      if (b.errors?.length) throw new ContentServiceError(b.errors[0].message, 200, 'graphql_error')
      return b.data as T
    },

    /** The whole API, typed from the OpenAPI description (openapi-fetch): `client.api.GET('/v1/spaces/{space}/stories', …)`. */
    api: apiProxy,
  }
}

export type ContentClient<S extends ContentSchema = AnySchema> = ReturnType<typeof createClient<S>>
