import { GcPacer } from './kernel/gc-pacer'
import { KernelErrors } from './kernel/errors'
import { createFastPath, type ModuleFastRoute } from './kernel/fast-path'
import { bytesText, MAX_URL_BYTES, pathOf } from './kernel/http'
import type { Kernel } from './kernel/kernel'
import type { PeerSource, RequestFront } from './kernel/request-front'

/**
 * The HTTP front of the runtime: what the server's `fetch` does with a request before (and instead of) Elysia — the
 * limits Bun would otherwise answer bare (a URL over MAX_URL_BYTES: 414; a Content-Length over the server's body
 * limit: 413), the fast path's public reads and beacon, `GET /metrics` with METRICS=on, and the GC pacer's count.
 */
export interface HttpFront {
  fetch(request: Request, server?: PeerSource | null): Response | Promise<Response>
  /** The largest Content-Length taken (ListenOptions.maxRequestBodySize), set when the server listens. */
  setBodyLimit(bytes: number): void
  pacer: GcPacer
}

export function createHttpFront(
  kernel: Kernel,
  front: RequestFront,
  fastRoutes: ModuleFastRoute[],
  elysiaFetch: (request: Request) => Response | Promise<Response>,
): HttpFront {
  const metrics = kernel.metrics
  // The fast path (kernel/fast-path.ts): public reads answered from memory, and the beacon, before Elysia.
  const { get: fastGet, post: fastPost, dispatch: fast } = createFastPath(kernel, front, fastRoutes, elysiaFetch)

  /** The limits of the HTTP layer, answered in the shared error shape before any route (see ListenOptions). */
  let bodyLimit = Number.POSITIVE_INFINITY
  const urlTooLong = (request: Request, server: PeerSource | null | undefined) => {
    const url = request.url
    const target = url.length - url.indexOf('/', url.indexOf('//') + 2)
    if (target <= MAX_URL_BYTES) return undefined
    return front.refuse(
      request,
      server,
      KernelErrors.uriTooLong(`The request URL (path and query) is longer than ${bytesText(MAX_URL_BYTES)}. Send long GraphQL queries with POST.`),
    )
  }
  const bodyTooLarge = (request: Request, server: PeerSource | null | undefined) => {
    const length = request.headers.get('content-length')
    if (length === null || !(Number(length) > bodyLimit)) return undefined
    return front.refuse(
      request,
      server,
      KernelErrors.payloadTooLarge(
        `The request body is larger than ${bytesText(bodyLimit)}, the most this server takes (an asset upload: a file of at most ${bytesText(kernel.config.assetMaxBytes)} and its multipart envelope).`,
      ),
    )
  }

  const pacer = new GcPacer()
  // POST routes that take any input (the beacon: 204 whatever arrives) are offered the request before the HTTP
  // layer's own 414/413; the others after them.
  const anyInputPost = fastPost.filter((r) => r.anyInput)
  const boundedPost = fastPost.filter((r) => !r.anyInput)
  const serve = (request: Request, server?: PeerSource | null): Response | Promise<Response> => {
    pacer.count()
    const method = request.method
    if (anyInputPost.length && method === 'POST') {
      const r = fast(request, server, 'POST', anyInputPost)
      if (r !== undefined) return r
    }
    // One length comparison on the hot path; the exact request target is measured only for a long URL.
    if (request.url.length > MAX_URL_BYTES) {
      const refused = urlTooLong(request, server)
      if (refused !== undefined) return refused
    }
    if (method === 'GET') {
      if (fastGet.length) {
        const r = fast(request, server, 'GET', fastGet)
        if (r !== undefined) return r
      }
    } else {
      // A GET's body is never read (Bun discards it): only methods that carry one are checked.
      const refused = bodyTooLarge(request, server)
      if (refused !== undefined) return refused
      if (method === 'POST' && boundedPost.length) {
        const r = fast(request, server, 'POST', boundedPost)
        if (r !== undefined) return r
      }
    }
    return elysiaFetch(request)
  }
  // GET /metrics on the main listener only with METRICS=on (not with METRICS_PORT alone): otherwise no check at all.
  const fetch =
    metrics !== null && kernel.config.metrics
      ? (request: Request, server?: PeerSource | null): Response | Promise<Response> =>
          request.method === 'GET' && pathOf(request.url) === '/metrics' ? metrics.response() : serve(request, server)
      : serve
  return { fetch, setBodyLimit: (bytes) => (bodyLimit = bytes), pacer }
}
