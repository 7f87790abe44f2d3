import { Elysia, t } from 'elysia'
import type { FastRequest, FastRoute } from '../../kernel/module'
import { acceptedContentType, type BeaconLimiter, type BeaconMetrics, type BeaconPipeline, readBody } from './beacon'

const PREFIX = '/v1/cdn/'
const SUFFIX = '/_beacon'

export interface BeaconDeps {
  limiter: BeaconLimiter
  pipeline: BeaconPipeline
  metrics: BeaconMetrics
  /** Pipelines still running (shutdown waits for them before the last flush). */
  inflight: Set<Promise<unknown>>
}

function noContent(info: Pick<FastRequest, 'addHeaders'> | null): Response {
  const res = new Response(null, { status: 204 })
  const h = res.headers
  info?.addHeaders(h)
  h.set('cache-control', 'no-store')
  // sendBeacon and no-cors fetches are cross-origin subresource loads: a page served with
  // `Cross-Origin-Embedder-Policy: require-corp` blocks (and logs) any answer that does not opt in.
  h.set('cross-origin-resource-policy', 'cross-origin')
  return res
}

/**
 * The beacon (spec 4.3): whatever arrives, 204 with no body, no cookie, and nothing that tells whether the Space or
 * the Story exists. The request is counted against the beacon's own in-memory limiter (600/min/IP; over it, the
 * beacon is dropped — still 204), the body read up to 4 KB, the answer sent, and the pipeline runs on its own.
 */
export async function takeBeacon(deps: BeaconDeps, request: Request, spaceSlug: string, clientIp: string, info: Pick<FastRequest, 'addHeaders'> | null): Promise<Response> {
  deps.metrics.received++
  if (!deps.limiter.allow(clientIp)) {
    deps.metrics.dropped.rate_limited++
    return noContent(info)
  }
  if (!acceptedContentType(request.headers.get('content-type'))) {
    deps.metrics.dropped.content_type++
    return noContent(info)
  }
  let bytes: Uint8Array | null
  try {
    bytes = await readBody(request)
  } catch {
    bytes = null // the client went away mid-body
  }
  if (!bytes) {
    deps.metrics.dropped.too_large++
    return noContent(info)
  }
  const run = deps.pipeline.run(spaceSlug, bytes, request.headers.get('user-agent'))
  deps.inflight.add(run)
  void run.finally(() => deps.inflight.delete(run))
  return noContent(info)
}

/** `/v1/cdn/{space}/_beacon` → `{space}` (any text: the pipeline checks it), or null. */
export function beaconSpace(pathname: string): string | null {
  if (!pathname.startsWith(PREFIX) || !pathname.endsWith(SUFFIX)) return null
  const slug = pathname.slice(PREFIX.length, pathname.length - SUFFIX.length)
  return slug.length > 0 && slug.indexOf('/') === -1 ? slug : null
}

/**
 * The beacon on the fast path: every POST to it is answered here, before Elysia (which would answer 415/413/429) and
 * before the HTTP layer's 414 (URL) and 413 (body) — `anyInput` — so an oversized request is a dropped beacon, 204.
 */
export function beaconFastRoute(deps: BeaconDeps): FastRoute {
  return {
    route: '/v1/cdn/:space/_beacon',
    method: 'POST',
    selfLimited: true,
    anyInput: true,
    matches: (pathname) => beaconSpace(pathname) !== null,
    answer: (request: Request, info: FastRequest) => takeBeacon(deps, request, beaconSpace(info.pathname)!, info.clientIp, info),
  }
}

/**
 * The same route in Elysia, for the OpenAPI description (and any caller that bypasses the fast path). The handler
 * touches no `body`, so Elysia parses none: text/plain and oversize bodies reach takeBeacon as they came.
 */
export function beaconCdnRoutes(deps: BeaconDeps, requestIp: (request: Request) => string) {
  return new Elysia({ tags: ['Public read'] }).post(
    '/cdn/:space/_beacon',
    ({ request, params }) => takeBeacon(deps, request, params.space, requestIp(request), null),
    {
      params: t.Object({ space: t.String() }),
      detail: {
        summary: 'Count a Story mount (privacy-first beacon; always 204)',
        description:
          'Body (`application/json`, or `text/plain` as `navigator.sendBeacon` sends a string), all fields optional: `story_uuid`, `segment_key`, `lang` (BCP-47), `referrer` (kept as scheme and host only), `device` (`desktop`, `mobile` or `tablet`; else derived from the User-Agent). ' +
          'Always answers 204 with an empty body — bad JSON, an unknown Space or Story, a body over 4 KB, a bot, or more than 600 beacons per minute from one IP are dropped silently, so the answer never tells whether a Story exists. ' +
          'Answers carry `Cross-Origin-Resource-Policy: cross-origin`, so pages with `COEP: require-corp` may send it. No cookie is set; the IP is only a key of the in-memory rate limiter (forgotten within about two minutes) and is not stored or logged. CORS: any origin; OPTIONS answers 204. ' +
          'Writes are batched (every second or 1,000 beacons): a crash may lose about the last second of beacons.',
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  story_uuid: { type: 'string', format: 'uuid' },
                  segment_key: { type: 'string' },
                  lang: { type: 'string', description: 'BCP-47' },
                  referrer: { type: 'string', description: 'Truncated to scheme and host before storage' },
                  device: { type: 'string', enum: ['desktop', 'mobile', 'tablet'] },
                },
              },
            },
            'text/plain': { schema: { type: 'string', description: 'The same object as JSON text' } },
          },
        },
        responses: { 204: { description: 'Always (the beacon was taken or silently dropped)' } },
      },
    },
  )
}

