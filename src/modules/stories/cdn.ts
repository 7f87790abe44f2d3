import { Elysia } from 'elysia'
import type { Deps } from '../../deps'
import { notFound, validationFailed } from '../../kernel/errors'
import { headlineOf, type Doc } from './blocks'
import { ogCardSvg } from './og'
import { etagMatches, type ReadRequest, type StoryReadPipeline } from './read-pipeline'
import { publishedByUuid } from './repo'

/** `scheme://host[:port]` of a request URL without allocating a URL object. */
function originOf(url: string): string {
  const start = url.indexOf('//') + 2
  const end = url.indexOf('/', start)
  return end === -1 ? url : url.slice(0, end)
}

/** The `{path}` of `/cdn/{space}/stories/{path}` straight from the URL: the router's copy is already percent-decoded. */
function rawStoryPath(url: string): string {
  const start = url.indexOf('/stories/') + 9
  const end = url.indexOf('?', start)
  return end === -1 ? url.slice(start) : url.slice(start, end)
}

/** 304 carries the validators and caching headers of the 200 it stands for, and no body. */
function notModified(headers: Record<string, string>) {
  const { 'Content-Type': _t, ...rest } = headers
  return new Response(null, { status: 304, headers: rest })
}

/** The public Story routes (spec 4.2, 4.5): anonymous, rate limited per IP by the kernel. */
export function storyCdnRoutes(deps: Deps, pipeline: StoryReadPipeline) {
  const publicUrl = deps.config.publicUrl
  return new Elysia({ prefix: '/cdn/:space/stories', tags: ['Public read'] })
    .get(
      '/:uuid/og.svg',
      async ({ params, query, request }) => {
        let space = pipeline.space(params.space)
        if (space instanceof Promise) space = await space
        if (!space) throw notFound('Story')
        const lang = query.lang
        const chain = pipeline.chain(space, typeof lang === 'string' ? lang : undefined, request.headers.get('accept-language'))
        const rows = await publishedByUuid(deps.db.db, space.id, params.uuid)
        if (!rows.length) throw notFound('Story')
        const byLang = new Map(rows.map((r) => [r.lang, r]))
        const row = byLang.get(chain.find((c) => byLang.has(c)) ?? rows[0].storyLang) ?? rows[0]
        const svg = ogCardSvg({ title: headlineOf(row.content as Doc) ?? row.name, spaceName: space.name, lang: row.lang })
        const etag = `"${new Bun.CryptoHasher('sha256').update(svg).digest('base64url').slice(0, 27)}"`
        const headers = {
          'Content-Type': 'image/svg+xml; charset=utf-8',
          ETag: etag,
          'Cache-Control': `public, max-age=${deps.config.cdnMaxAge}, stale-while-revalidate=${deps.config.cdnStaleWhileRevalidate}`,
          Vary: 'Accept-Language',
          // The card is an image: it must never run script when opened directly.
          'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
          'X-Content-Type-Options': 'nosniff',
        }
        if (etagMatches(request.headers.get('if-none-match'), etag)) return notModified(headers)
        return new Response(svg, { headers })
      },
      { detail: { summary: 'Open Graph card of a published Story (1200×630 SVG)' } },
    )
    .get(
      '/*',
      async ({ params, query, request, set }) => {
        const url = request.url
        const version = query.version
        if (version !== undefined && version !== 'published' && version !== 'draft') {
          throw validationFailed({ version: ['must be published or draft'] })
        }
        const lang = query.lang
        if (lang !== undefined && typeof lang !== 'string') throw validationFailed({ lang: ['must be one BCP-47 tag'] })
        const req: ReadRequest = {
          spaceSlug: params.space,
          rawPath: rawStoryPath(url),
          lang,
          acceptLanguage: request.headers.get('accept-language'),
          origin: publicUrl ?? originOf(url),
          request,
        }
        const rendered =
          version === 'draft'
            ? await pipeline.preview(req, request.headers.get('authorization'))
            : await pipeline.read(req)
        if (etagMatches(request.headers.get('if-none-match'), rendered.etag)) {
          Object.assign(set.headers, rendered.notModifiedHeaders)
          set.status = 304
          return null
        }
        // Into `set` rather than a Response of our own: Elysia then builds one Response with the kernel's headers
        // (request id, rate limit, CORS) instead of copying them into ours one by one.
        Object.assign(set.headers, rendered.headers)
        return rendered.body
      },
      { detail: { summary: 'A published Story by full path, with locale fallback (spec 4.5)' } },
    )
}
