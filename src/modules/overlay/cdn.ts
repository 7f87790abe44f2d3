import { Elysia, t } from 'elysia'
import type { FastRequest, FastRoute, RouteContext } from '../../kernel/module'
import { readVary } from '../../kernel/read'
import { SpaceSlug } from '../../kernel/schemas'
import { PublicOverlayModel, PublicOverlayQuery } from './model'
import { type OverlayReader, overlayResponse } from './public'

const PREFIX = '/v1/cdn/'
const SUFFIX = '/dom-overlay'

/** The read's OpenAPI description: `vary` and the segment header from the declarations (kernel/read.ts). */
const publicDescription = (vary: string, segmentHeader: string) =>
  'The active rules for the page at `path`, in priority order (lower first; embed.js applies them in that order), for embed.js to apply. Anonymous, 600/min/IP. ' +
  'A rule is served when its `path_pattern` glob matches `path` (percent-escapes decoded), its `segment_key` is empty or names the segment this request resolves to, and it has content in the locale chain of `lang` (else the best Accept-Language match; then the explicit fallback, the language, the Space default) — `hide` needs none. `content` is the text of the first locale of the chain that has one. ' +
  `Audience segments resolve as on Story reads: an \`${segmentHeader}\` header naming an active segment is taken as is (publicly cacheable), else the request’s own signals decide and, in a Space with active segments, the answer is \`Cache-Control: private, max-age=CDN_MAX_AGE\`; the resolved key is \`data.segment\` and the \`${segmentHeader}\` response header. ` +
  `Strong \`ETag\` (If-None-Match → 304), \`Cache-Control: public, max-age=CDN_MAX_AGE, stale-while-revalidate=CDN_STALE_WHILE_REVALIDATE\`, \`Vary: ${vary}\`.`

/** Valid query text: no NUL, no lone surrogate (the Elysia path answers those 422, as every route does). */
const clean = (v: string) => v.indexOf('\u0000') === -1 && v.isWellFormed()

/**
 * The fast path of the overlay read: `GET /v1/cdn/{space}/dom-overlay?path=&lang=` answered before Elysia when it can
 * be answered from memory (or with one load). Anything unusual (a bad query, an unknown Space, an error) returns
 * undefined and the Elysia route below answers it — the same reader, so the same bytes and headers.
 */
export function overlayFastRoute(reader: OverlayReader): FastRoute {
  return {
    route: '/v1/cdn/:space/dom-overlay',
    matches(pathname) {
      return pathname.startsWith(PREFIX) && pathname.endsWith(SUFFIX) && pathname.indexOf('/', PREFIX.length) === pathname.length - SUFFIX.length
    },
    answer(request: Request, info: FastRequest) {
      const url = request.url
      const key = reader.memoKey(url, request)
      const hit = key === null ? undefined : reader.memoised(key, info.now)
      if (hit !== undefined) {
        const res = overlayResponse(request, hit)
        info.addHeaders(res.headers)
        return res
      }
      const q = url.indexOf('?')
      if (q === -1) return undefined
      const params = new URLSearchParams(url.slice(q + 1))
      const path = params.get('path')
      const lang = params.get('lang') ?? undefined
      if (path === null || path.length > 2048 || path[0] !== '/' || !clean(path)) return undefined
      if (lang !== undefined && (lang.length > 35 || !clean(lang))) return undefined
      const spaceSlug = info.pathname.slice(PREFIX.length, info.pathname.length - SUFFIX.length)
      let served
      try {
        served = reader.read({ spaceSlug, path, lang, request, viaTrustedProxy: info.viaTrustedProxy })
      } catch {
        return undefined // 404/422: the Elysia route answers errors, in the one error shape
      }
      if (served instanceof Promise) {
        return served.then(
          (s) => {
            const res = overlayResponse(request, s)
            info.addHeaders(res.headers)
            return res
          },
          () => undefined,
        )
      }
      if (key !== null) reader.remember(key, served, info.now)
      const res = overlayResponse(request, served)
      info.addHeaders(res.headers)
      return res
    },
  }
}

/** `GET /cdn/{space}/dom-overlay` through Elysia: validation errors, unknown Spaces, and the Postgres rate-limit store. */
export function overlayCdnRoutes(ctx: RouteContext<unknown>, reader: OverlayReader, segmentHeader: string) {
  return new Elysia({ prefix: '/cdn/:space', tags: ['Public read'] }).use(ctx.guards).get(
    '/dom-overlay',
    async ({ space, query, request }) => {
      const served = await reader.read({ spaceSlug: space.slug, path: query.path, lang: query.lang, request, viaTrustedProxy: ctx.requestInfo(request).viaTrustedProxy })
      return overlayResponse(request, served)
    },
    {
      publicSpace: true,
      params: t.Object({ space: SpaceSlug }),
      query: PublicOverlayQuery,
      response: { 200: PublicOverlayModel },
      detail: {
        summary: 'DOM overlay rules for a page (applied by embed.js)',
        description: publicDescription(readVary(ctx.kernel.readSteps), segmentHeader),
        responses: { 304: { description: 'Not modified (If-None-Match matched the ETag)' } },
      },
    },
  )
}
