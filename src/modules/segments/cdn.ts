import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { langParam } from '../../kernel/locale'
import type { RequestInfo } from '../../kernel/request-front'
import { SpaceSlug } from '../../kernel/schemas'
import type { SegmentCache } from './cache'
import { ResolvedSegmentModel } from './model'
import { resolve } from './read'

const NO_STORE = { 'Cache-Control': 'private, no-store' }

export const CACHING_PATTERN =
  'Caching pattern: resolve once per visitor with `GET /cdn/{space}/segment` (answered `private, no-store`), keep the key (a cookie, an edge KV), then send it as `X-Service-Segment` on Story reads. ' +
  'A read carrying `X-Service-Segment` that names an active segment skips rule evaluation and stays publicly cacheable (`Vary: Accept-Language, X-Service-Segment`); ' +
  'a read without it, in a Space with active segments, is resolved from its own signals and answered `Cache-Control: private, max-age=CDN_MAX_AGE`. A Space without active segments keeps public caching.'

/** `GET /cdn/{space}/segment`: which segment this request resolves to, for an edge or a page to remember. */
export function segmentCdnRoutes(kernel: Kernel, guards: Guards, cache: SegmentCache, requestInfo: (r: Request) => RequestInfo) {
  const countryHeader = kernel.config.segmentCountryHeader
  return new Elysia({ prefix: '/cdn/:space', tags: ['Public read'] }).use(guards).get(
    '/segment',
    async ({ space, query, request, set }) => {
      langParam(query.lang) // a bad tag is 422, as on every public read
      const set_ = await cache.get(space.id)
      const r = resolve(set_, request, requestInfo(request).viaTrustedProxy, countryHeader, query.lang)
      set.headers['cache-control'] = 'private, no-store'
      return { data: { segment: r.segment?.key ?? null } }
    },
    {
      publicSpace: { headers: NO_STORE },
      params: t.Object({ space: SpaceSlug }),
      // Rules may read any query parameter (query and utm rules): unknown parameters are allowed.
      query: t.Object(
        { lang: t.Optional(t.String({ maxLength: 35, description: 'Counts as a language signal (its primary subtag)' })) },
        { additionalProperties: true },
      ),
      response: { 200: ResolvedSegmentModel },
      detail: {
        summary: 'Resolve the audience segment of this request (spec 4.9)',
        description:
          'Evaluates the Space’s active segments against this request’s signals (Accept-Language and `?lang`, the country header through trusted proxies, Referer, cookies, query and utm parameters) exactly as a Story read does: the first in priority order whose rules all match. ' +
          'An `X-Service-Segment` header naming an active segment is answered as is. Anonymous, 600/min/IP, `Cache-Control: private, no-store`. ' +
          CACHING_PATTERN,
      },
    },
  )
}
