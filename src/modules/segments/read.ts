import { t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { ReadContext, ReadStep, ReadStepHeader, ReadStepMeta } from '../../kernel/read'
import { cacheControls } from '../../kernel/public-answer'
import { type LiveSegment, matchSegment, type SegmentCache, type SegmentSet, segmentFromHeader } from './cache'
import { RequestSignals } from './rules'
import { variantContentJson } from './service'

export const SEGMENT_HEADER = 'x-service-segment'

/** A segment key as a request names one (header or GraphQL argument): visible ASCII. */
const SEGMENT_KEY = /^[\x21-\x7e]{1,100}$/

/**
 * The header the step reads, declared for the public surfaces (kernel/read.ts `ReadStepHeader`): `Vary` of the Story
 * read, GraphQL and the overlay, and the GraphQL `segment` argument that stands in for it.
 */
export const SEGMENT_READ_HEADER: ReadStepHeader = {
  name: 'X-Service-Segment',
  argument: {
    name: 'segment',
    description: 'A previously resolved segment key (as the X-Service-Segment header)',
    check: (v) => (SEGMENT_KEY.test(v) ? null : 'must be a segment key: 1 to 100 visible ASCII characters'),
  },
}

/** What a request resolves to in a Space. */
export interface Resolution {
  segment: LiveSegment | null
  /** Chosen from the request's own signals (no usable X-Service-Segment) in a Space with active segments. */
  fromSignals: boolean
}

const NONE: Resolution = { segment: null, fromSignals: false }

/** §4.9 on one request: the X-Service-Segment short-cut, else the first active segment whose rules all match. */
export function resolve(set: SegmentSet, request: Request, viaTrustedProxy: boolean, countryHeader: string, lang: string | undefined): Resolution {
  if (!set.active.length) return NONE
  const named = segmentFromHeader(set, request.headers.get(SEGMENT_HEADER))
  if (named) return { segment: named, fromSignals: false }
  return { segment: matchSegment(set, new RequestSignals(request, viaTrustedProxy, countryHeader, lang)), fromSignals: true }
}

/** `meta.served_segment`: the segment whose variant was served, or null (the default content). */
const SEGMENT_META: ReadStepMeta = {
  schema: {
    served_segment: t.Union([t.String(), t.Null()], { description: 'Key of the audience segment whose variant was served' }),
  },
  graphql: (f) => ({
    served_segment: f.string({
      nullable: true,
      description: 'Key of the audience segment whose variant was served (null: the default content).',
      resolve: (m) => (m.served_segment as string | null | undefined) ?? null,
    }),
  }),
}

/** Personalisation in the OpenAPI description of the public read. */
const SEGMENT_READ_DESCRIPTION =
  'Personalisation (spec 4.9): the request resolves to an audience segment — the one named by the `X-Service-Segment` request header when it is an active segment of the Space, else the first active segment (by priority) whose rules match the request (Accept-Language and `lang`, the country header through trusted proxies, Referer, cookies, query and utm parameters; other query parameters are accepted for these rules). ' +
  "The segment's variant for the served locale replaces the content when there is one; `meta.served_segment` and the `X-Service-Segment` response header name the segment, and the ETag covers it. " +
  'A segment chosen from the request’s own signals in a Space with active segments answers `Cache-Control: private, max-age=CDN_MAX_AGE`; to keep reads publicly cacheable, resolve once with `GET /cdn/{space}/segment` and send the key as `X-Service-Segment`.'

/**
 * The personalisation step of the public Story read. `select` decides from memory (the Space's segments are cached),
 * so cached reads stay on the fast path; the served segment goes into the render key (so into the body's
 * `meta.served_segment` and its ETag) and into X-Service-Segment. A segment picked from per-visitor signals makes the
 * response `private` — a shared cache must not hand it to others — unless the Space has no active segments at all.
 * `transform` (only when the body is not cached) swaps in the segment's variant for the served locale.
 */
export function segmentReadStep(kernel: Kernel, cache: SegmentCache): ReadStep {
  const privateCacheControl = cacheControls(kernel.config).private
  const countryHeader = kernel.config.segmentCountryHeader
  const decide = (ctx: ReadContext, set: SegmentSet) => {
    const r = resolve(set, ctx.req.request, ctx.req.viaTrustedProxy, countryHeader, ctx.req.lang)
    if (r.fromSignals && !ctx.req.preview) ctx.cacheControl = privateCacheControl
    const s = r.segment
    if (!s) return
    ctx.decisions.segment = s
    ctx.keyParts.push(s.part)
    ctx.headers = ctx.headers ? { ...ctx.headers, ...s.headers } : s.headers
  }
  return {
    name: 'segment',
    headers: [SEGMENT_READ_HEADER],
    meta: SEGMENT_META,
    description: SEGMENT_READ_DESCRIPTION,
    // The header short-cut varies on the named segment; a resolution from signals on the raw headers its rules read
    // (Accept-Language and the URL are the memo's own key). The country header counts only through a trusted proxy.
    vary(request, space, viaTrustedProxy) {
      const set = cache.get(space.id)
      if (set instanceof Promise) return null
      if (!set.active.length) return ''
      const named = segmentFromHeader(set, request.headers.get(SEGMENT_HEADER))
      if (named) return named.vary
      const h = request.headers
      const country = set.reads.country && viaTrustedProxy ? (h.get(countryHeader) ?? '') : ''
      const referer = set.reads.referer ? (h.get('referer') ?? '') : ''
      const cookie = set.reads.cookie ? (h.get('cookie') ?? '') : ''
      return country === '' && referer === '' && cookie === '' ? 's' : `s${country}\u0000${referer}\u0000${cookie}`
    },
    select(ctx) {
      const set = cache.get(ctx.space.id)
      if (set instanceof Promise) return set.then((s) => decide(ctx, s))
      decide(ctx, set)
    },
    async transform(ctx, draft) {
      const s = ctx.decisions.segment as LiveSegment | undefined
      draft.meta.served_segment = s ? s.key : null
      if (!s) return
      const json = await variantContentJson(kernel, ctx.req.preview, ctx.story.id, s.id, ctx.lang)
      if (json !== null) draft.contentJson = json
    },
  }
}
