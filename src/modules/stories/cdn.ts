import { Elysia, t } from 'elysia'
import type { FastRequest, FastRoute, RouteContext } from '../../kernel/module'
import { notFound } from '../../kernel/errors'
import { publicOrigin } from '../../kernel/http'
import type { ReadRequest } from '../../kernel/read'
import { intString, oneOf, SpaceSlug, Uuid } from '../../kernel/schemas'
import { headlineOf, type Doc } from './blocks'
import type { DecidedHeaders, Rendered } from './cache'
import { changesModel, publicStoryListModel, publicStoryModel } from './model'
import { ogCardSvg } from './og'
import { type Composed, CHANGES_PER_PAGE, LIST_PER_PAGE, LIST_SORTS, MAX_RELS, type PublicLists, readOptionsOf, rewrites } from './public-list'
import { etagMatches, type Served, type StoryReadPipeline } from './read-pipeline'
import type { ReadMemo } from './read-memo'
import { publishedByUuid } from './repo'

/** The `{path}` of `/cdn/{space}/stories/{path}` straight from the URL: the router's copy is already percent-decoded. */
function rawStoryPath(url: string): string {
  const start = url.indexOf('/stories/') + 9
  const end = url.indexOf('?', start)
  return end === -1 ? url.slice(start) : url.slice(start, end)
}

const CDN_PREFIX = '/v1/cdn/'

/**
 * A served read as a Response: the rendered entry's prebuilt headers (copied once, by the Response constructor), then
 * this request's own (request id, CORS, RateLimit-*) and the steps' decisions set on that copy.
 */
function answer(request: Request, served: Served, info: FastRequest | null): Response {
  const r: Rendered = served.rendered
  const notModified = etagMatches(request.headers.get('if-none-match'), r.etag)
  let ok = r.prebuilt
  let nm = r.prebuiltNotModified
  if (served.headers || served.cacheControl) {
    const d = (served.decided ??= decidedHeaders(r, served.headers, served.cacheControl))
    ok = d.ok
    nm = d.notModified
  }
  const res = notModified ? new Response(null, { status: 304, headers: nm }) : new Response(r.body, { headers: ok })
  if (info !== null) info.addHeaders(res.headers)
  return res
}

/** A composed public answer (the list, the change feed, a read with resolve_* or excluding_fields): 200 or 304. */
function answerComposed(request: Request, c: Composed): Response {
  if (etagMatches(request.headers.get('if-none-match'), c.etag)) return new Response(null, { status: 304, headers: c.notModifiedHeaders })
  return new Response(c.bytes as Uint8Array<ArrayBuffer>, { headers: c.headers })
}

const MAX_DECIDED = 8

/**
 * The rendered entry's prebuilt headers completed with the steps' decisions, built once per distinct decision. Found by
 * the identity of the steps' headers object (a step that keeps one object per decision, as segments does, costs a
 * pointer compare), else by content.
 */
function decidedHeaders(r: Rendered, headers: Record<string, string> | null, cacheControl: string | null): DecidedHeaders {
  const list = (r.decided ??= [])
  for (let i = 0; i < list.length; i++) {
    const d = list[i]
    if (d.headers === headers && d.cacheControl === cacheControl) return d
  }
  let key = cacheControl ?? ''
  if (headers) for (const k in headers) key += `\n${k}:${headers[k]}`
  for (let i = 0; i < list.length; i++) if (list[i].key === key) return list[i]
  const ok = new Headers(r.prebuilt)
  const notModified = new Headers(r.prebuiltNotModified)
  for (const target of [ok, notModified]) {
    if (headers) for (const k in headers) target.set(k, headers[k])
    if (cacheControl) target.set('cache-control', cacheControl)
  }
  const d: DecidedHeaders = { headers, cacheControl, key, ok, notModified }
  if (list.length >= MAX_DECIDED) list.shift()
  list.push(d)
  return d
}

/**
 * The fast path of the public read: a GET without a query string whose Space, Story and body are in memory is
 * answered here, synchronously, before Elysia routes it. Anything else (a miss, `?lang`, `?version=draft`, an error)
 * returns undefined and the Elysia route below answers — the same pipeline, so the same bytes and headers.
 */
export function storyFastRoute(ctx: RouteContext<unknown>, pipeline: StoryReadPipeline, memo: ReadMemo): FastRoute {
  const config = ctx.kernel.config
  return {
    route: '/v1/cdn/:space/stories/*',
    matches(pathname) {
      if (!pathname.startsWith(CDN_PREFIX)) return false
      const slash = pathname.indexOf('/', CDN_PREFIX.length)
      return slash !== -1 && pathname.startsWith('/stories/', slash) && !pathname.endsWith('.svg')
    },
    answer(request: Request, info: FastRequest) {
      const url = request.url
      if (url.indexOf('?') !== -1) return undefined
      const acceptLanguage = request.headers.get('accept-language')
      const memoised = memo.get(url, request, acceptLanguage, info.viaTrustedProxy, info.now)
      if (memoised !== undefined) return answer(request, memoised, info)
      const slash = info.pathname.indexOf('/', CDN_PREFIX.length)
      const req: ReadRequest = {
        spaceSlug: info.pathname.slice(CDN_PREFIX.length, slash),
        rawPath: info.pathname.slice(slash + 9),
        lang: undefined,
        acceptLanguage,
        origin: publicOrigin(config, url),
        request,
        clientIp: info.clientIp,
        viaTrustedProxy: info.viaTrustedProxy,
        preview: false,
      }
      let served: Served | Promise<Served>
      try {
        served = pipeline.read(req)
      } catch {
        return undefined // 404/422: the Elysia route answers errors, in the one error shape
      }
      if (served instanceof Promise) {
        return served.then(
          (s) => answer(request, s, info),
          () => undefined,
        )
      }
      const source = pipeline.readSource(req)
      if (source) memo.set(url, request, acceptLanguage, info.viaTrustedProxy, source.space, info.now, source.expiresAt, served)
      return answer(request, served, info)
    },
  }
}

/** The read's own part of its OpenAPI description; the read steps add theirs (ReadStep.description). */
const READ_DESCRIPTION =
  'Query: `lang` (BCP-47; fallback chain: the tag, its explicit fallback, its language, the Space default; without it the best Accept-Language match), `version=draft` (a bearer token with access to the Space: the latest drafts, `Cache-Control: private, no-store`). ' +
  'Headers: strong `ETag` (If-None-Match → 304), `Cache-Control: public, max-age=CDN_MAX_AGE, stale-while-revalidate=CDN_STALE_WHILE_REVALIDATE`, `Vary: Accept-Language, X-Service-Segment`. ' +
  '`meta.cv`: the Space content version (moves with every publish, unpublish, move or delete in the Space; a cache key, and a cursor of `GET /cdn/{space}/changes`). ' +
  `\`resolve_links=story\`: link fields \`{story_uuid}\` get the target's current \`full_path\` and \`name\` (null when it is not published). ` +
  `\`resolve_relations=component.field,...\`: the published Stories those fields hold (a uuid, a list of uuids, or links) are read like this one into \`rels\` (at most ${MAX_RELS}; the others' uuids in \`meta.rel_uuids\`), never inline. ` +
  '`excluding_fields=a,b`: those fields are left out of the top-level blocks.'

/** The list's and feed's own part of their OpenAPI descriptions. */
const LIST_DESCRIPTION =
  'Published Stories, each read exactly as `GET /cdn/{space}/stories/{path}` serves it (locale chain per Story, segment, datasource markers, assets; its `meta` inside each item), from the same in-memory cache. ' +
  'Filters: `starts_with` (a plain prefix of `full_path`: `blog/` for the folder), `by_uuids`, `by_paths` (comma-separated, at most 100), `content_type` (the component of the first top-level block), `is_folder`. ' +
  '`sort_by` (`full_path:asc` by default; `name`, `published_at`, `first_published_at`, asc or desc; ties by full path). ' +
  `Paging by cursor (keyset, no offset): \`per_page\` 1 to ${LIST_PER_PAGE.max} (default ${LIST_PER_PAGE.def}), then \`cursor=<meta.next_cursor>\` until it is null; a Story that stays published and keeps its sort key is on exactly one page whatever else changes meanwhile. ` +
  '`resolve_links`, `resolve_relations`, `excluding_fields` as on the single read (relations collected over the page, `rels` at the top). ' +
  '`version=draft` with a preview token or a bearer with viewer access: every Story not archived, drafts, `Cache-Control: private, no-store`. ' +
  'Headers as the single read: strong ETag (304), Cache-Control, `Vary: Accept-Language, X-Service-Segment`.'

const CHANGES_DESCRIPTION =
  'What happened to public Stories after a cursor, oldest first: `published`, `unpublished`, `moved` (`from_path` → `full_path`, each published Story of a moved subtree), `deleted` (archived or deleted). ' +
  'Only the latest change of each Story is kept: a sync applies them by `uuid` and ends with the current state. ' +
  '`since`: `meta.next_cursor` of the previous call (or `meta.cv` of a read made before a full sync); without it, from the start. ' +
  `\`per_page\` 1 to ${CHANGES_PER_PAGE.max} (default ${CHANGES_PER_PAGE.def}); \`meta.has_more\`: call again at once. Cursors are numbers of the Space kept in the database: they survive restarts and hold across instances.`

const ListQuery = t.Object(
  {
    starts_with: t.Optional(t.String({ maxLength: 1200, description: 'A prefix of full_path (leading slash optional): `blog/`' })),
    by_uuids: t.Optional(t.String({ maxLength: 4000, description: 'Comma-separated uuids (at most 100)' })),
    by_paths: t.Optional(t.String({ maxLength: 20000, description: 'Comma-separated full paths (at most 100)' })),
    lang: t.Optional(t.String({ maxLength: 35, description: 'BCP-47 tag; a fallback chain applies per Story' })),
    sort_by: t.Optional(oneOf(LIST_SORTS as [string, ...string[]], { description: 'Default full_path:asc' })),
    per_page: t.Optional(intString(1, LIST_PER_PAGE.max, { description: `Stories per page, 1 to ${LIST_PER_PAGE.max} (default ${LIST_PER_PAGE.def})` })),
    cursor: t.Optional(t.String({ maxLength: 4096, description: 'meta.next_cursor of the previous page' })),
    excluding_fields: t.Optional(t.String({ maxLength: 4000, description: 'Comma-separated field names left out of the top-level blocks' })),
    content_type: t.Optional(t.String({ maxLength: 64, description: 'The component of the first top-level block' })),
    is_folder: t.Optional(oneOf(['true', 'false'])),
    version: t.Optional(oneOf(['published', 'draft'], { error: 'must be published or draft' })),
    resolve_links: t.Optional(oneOf(['story'])),
    resolve_relations: t.Optional(t.String({ maxLength: 2000, description: 'Comma-separated component.field pairs' })),
  },
  { additionalProperties: true },
)

/** `GET /cdn/{space}/stories` and `GET /cdn/{space}/changes` (issue 47): the public list and the change feed. */
export function storyListRoutes(ctx: RouteContext<unknown>, lists: PublicLists) {
  const { kernel } = ctx
  const config = kernel.config
  return new Elysia({ prefix: '/cdn/:space', tags: ['Public read'] })
    .get(
      '/stories',
      async ({ params, query, request }) => {
        const url = request.url
        const info = ctx.requestInfo(request)
        const base: ReadRequest = {
          spaceSlug: params.space,
          rawPath: '',
          lang: query.lang,
          acceptLanguage: request.headers.get('accept-language'),
          origin: publicOrigin(config, url),
          request,
          clientIp: info.ip,
          viaTrustedProxy: info.viaTrustedProxy,
          preview: query.version === 'draft',
        }
        return answerComposed(request, await lists.list(base, query as never, request.headers.get('authorization')))
      },
      {
        params: t.Object({ space: SpaceSlug }),
        query: ListQuery,
        detail: {
          operationId: 'listPublishedStories',
          summary: 'Published Stories: filtered, sorted, paged by cursor',
          description: LIST_DESCRIPTION,
          responses: {
            200: { description: 'A page of Stories', content: { 'application/json': { schema: publicStoryListModel(kernel.readSteps) as never } } },
            304: { description: 'Not modified (If-None-Match matched the ETag)' },
          },
        },
      },
    )
    .get(
      '/changes',
      async ({ params, query, request }) => answerComposed(request, await lists.changes(params.space, query.since, query.per_page ?? CHANGES_PER_PAGE.def)),
      {
        params: t.Object({ space: SpaceSlug }),
        query: t.Object({
          since: t.Optional(t.String({ maxLength: 20, description: 'meta.next_cursor of the previous call; without it, from the start' })),
          per_page: t.Optional(intString(1, CHANGES_PER_PAGE.max, { description: `Changes per call, 1 to ${CHANGES_PER_PAGE.max} (default ${CHANGES_PER_PAGE.def})` })),
        }),
        detail: {
          operationId: 'listStoryChanges',
          summary: 'Changes of public Stories since a cursor (incremental sync)',
          description: CHANGES_DESCRIPTION,
          responses: {
            200: { description: 'Changes after the cursor', content: { 'application/json': { schema: changesModel as never } } },
            304: { description: 'Not modified (If-None-Match matched the ETag)' },
          },
        },
      },
    )
}

/** The public Story routes (spec 4.2, 4.5): anonymous, rate limited per IP by the kernel. */
export function storyCdnRoutes(ctx: RouteContext<unknown>, pipeline: StoryReadPipeline, lists: PublicLists) {
  const { kernel } = ctx
  const config = kernel.config
  // The body's model and the description, from what the registered read steps declare (once, at start-up).
  const model = publicStoryModel(kernel.readSteps)
  const description = [READ_DESCRIPTION, ...kernel.readSteps.flatMap((s) => (s.description ? [s.description] : []))].join(' ')
  return new Elysia({ prefix: '/cdn/:space/stories', tags: ['Public read'] })
    .get(
      '/:uuid/og.svg',
      async ({ params, query, request }) => {
        const space = await pipeline.space(params.space)
        if (!space) throw notFound('Story')
        const chain = pipeline.chain(space, query.lang, request.headers.get('accept-language'))
        const rows = await kernel.replicas.read(space.id, (db) => publishedByUuid(db, space.id, params.uuid))
        if (!rows.length) throw notFound('Story')
        const byLang = new Map(rows.map((r) => [r.lang, r]))
        const row = byLang.get(chain.find((c) => byLang.has(c)) ?? rows[0].storyLang) ?? rows[0]
        const svg = ogCardSvg({ title: headlineOf(row.content as Doc) ?? row.name, spaceName: space.name, lang: row.lang })
        const etag = `"${new Bun.CryptoHasher('sha256').update(svg).digest('base64url').slice(0, 27)}"`
        const headers: Record<string, string> = {
          'Content-Type': 'image/svg+xml; charset=utf-8',
          ETag: etag,
          'Cache-Control': `public, max-age=${kernel.config.cdnMaxAge}, stale-while-revalidate=${kernel.config.cdnStaleWhileRevalidate}`,
          Vary: 'Accept-Language',
          // The card is an image: it must never run script when opened directly.
          'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
          'X-Content-Type-Options': 'nosniff',
          // Shown as an <img> by other sites, also by pages with `Cross-Origin-Embedder-Policy: require-corp`.
          'Cross-Origin-Resource-Policy': 'cross-origin',
        }
        if (etagMatches(request.headers.get('if-none-match'), etag)) {
          delete headers['Content-Type']
          return new Response(null, { status: 304, headers })
        }
        return new Response(svg, { headers })
      },
      {
        params: t.Object({ space: SpaceSlug, uuid: Uuid }),
        query: t.Object({ lang: t.Optional(t.String({ maxLength: 35 })) }),
        detail: {
          summary: 'Open Graph card of a published Story (1200×630 SVG)',
          responses: { 200: { description: 'The card', content: { 'image/svg+xml': { schema: { type: 'string' } } } }, 304: { description: 'Not modified' } },
        },
      },
    )
    .get(
      '/*',
      async ({ params, query, request }) => {
        const url = request.url
        const { version, lang } = query
        const info = ctx.requestInfo(request)
        const req: ReadRequest = {
          spaceSlug: params.space,
          rawPath: rawStoryPath(url),
          lang,
          acceptLanguage: request.headers.get('accept-language'),
          origin: publicOrigin(config, url),
          request,
          clientIp: info.ip,
          viaTrustedProxy: info.viaTrustedProxy,
          preview: version === 'draft',
        }
        const opts = readOptionsOf(query)
        const authorization = request.headers.get('authorization')
        const served = version === 'draft' ? await pipeline.preview(req, authorization) : await pipeline.read(req)
        // The request hook put the request id, CORS and RateLimit-* into `set`; Elysia adds them to this Response.
        if (rewrites(opts)) return answerComposed(request, await lists.single(req, served, opts, authorization))
        return answer(request, served, null)
      },
      {
        // No params schema: Elysia cannot mirror a `*` key; the pipeline checks the slug and the path itself.
        // Other parameters are let through: read steps may read them (audience-segment query and utm rules).
        query: t.Object(
          {
            lang: t.Optional(t.String({ maxLength: 35, description: 'BCP-47 tag; a fallback chain applies' })),
            version: t.Optional(t.Union([t.Literal('published'), t.Literal('draft')], { error: 'must be published or draft' })),
            resolve_links: t.Optional(oneOf(['story'])),
            resolve_relations: t.Optional(t.String({ maxLength: 2000, description: 'Comma-separated component.field pairs' })),
            excluding_fields: t.Optional(t.String({ maxLength: 4000, description: 'Comma-separated field names left out of the top-level blocks' })),
          },
          { additionalProperties: true },
        ),
        detail: {
          operationId: 'getPublishedStory',
          summary: 'A published Story by full path, with locale fallback (spec 4.5)',
          description,
          responses: {
            200: { description: 'The published Story', content: { 'application/json': { schema: model as never } } },
            304: { description: 'Not modified (If-None-Match matched the ETag)' },
          },
        },
      },
    )
}
