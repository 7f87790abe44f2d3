import { pathOf } from './http'
import type { Kernel } from './kernel'
import type { FastRequest, FastRoute } from './module'
import type { PeerSource, RequestFront, RequestInfo } from './request-front'
import type { RateLimitDecision } from './rate-limit'

/**
 * The fast path: a public GET a module can answer from memory (the Story read), or a self-limited public POST (the
 * beacon), skips Elysia's lifecycle. The runtime (src/app.ts) collects the modules' `fast` routes and calls the
 * dispatcher before Elysia; everything here runs on the hottest path we have: no allocation per request beyond the
 * one FastInfo, no Promise unless a route returns one, no header pair lists.
 */

/** A module's fast route, with the module that declared it. */
export type ModuleFastRoute = FastRoute & { module: string }

/**
 * Offers a request to the fast routes of its method, in order: the answer, a Promise of it, or undefined to let
 * Elysia answer (no route matched, a Postgres rate-limit store, a 429, or the route declined).
 */
export type FastDispatch = (
  request: Request,
  server: PeerSource | null | undefined,
  method: 'GET' | 'POST',
  routes: readonly ModuleFastRoute[],
) => Response | Promise<Response> | undefined

/**
 * What a fast route learns of its request, and the headers every answer carries. One object per request; the
 * headers are set straight onto the response (no list of pairs is built).
 */
class FastInfo implements FastRequest {
  readonly requestId: string
  readonly clientIp: string
  readonly viaTrustedProxy: boolean
  readonly now: number

  constructor(
    readonly pathname: string,
    ri: RequestInfo,
    private cors: readonly (readonly [string, string])[] | null,
    private decision: RateLimitDecision | null,
  ) {
    this.requestId = ri.id
    this.clientIp = ri.ip
    this.viaTrustedProxy = ri.viaTrustedProxy
    this.now = ri.now
  }

  addHeaders(target: Headers) {
    target.set('x-request-id', this.requestId)
    const cors = this.cors
    if (cors !== null) for (let i = 0; i < cors.length; i++) target.set(cors[i][0], cors[i][1])
    const d = this.decision
    if (d !== null) {
      target.set('ratelimit-limit', d.rule.limitText)
      target.set('ratelimit-remaining', String(d.remaining))
      target.set('ratelimit-reset', String(d.resetIn))
      target.set('ratelimit-policy', d.rule.policy)
    }
  }
}

/**
 * The request line of a fast-path answer. A self-limited route's line carries no client address (the beacon keeps no
 * IP, not even in logs).
 */
function logFast(front: RequestFront, method: string, route: FastRoute, status: number, ri: RequestInfo) {
  front.log(method, route.route, status, ri, route.selfLimited === true)
}

/**
 * The fast path of one runtime: the modules' fast routes split by method, and the dispatcher that offers a request to
 * them. `fallback` is Elysia's fetch: a route that declines asynchronously (its Promise resolves to undefined) is
 * answered there. The request front (request id, client IP, CORS, rate limit, request log) is the same one the
 * Elysia hooks use, so a request passed on is counted once.
 */
export function createFastPath(
  kernel: Pick<Kernel, 'rateLimiter' | 'metrics' | 'logger'>,
  front: RequestFront,
  routes: readonly ModuleFastRoute[],
  fallback: (request: Request) => Response | Promise<Response>,
): { get: readonly ModuleFastRoute[]; post: readonly ModuleFastRoute[]; dispatch: FastDispatch } {
  const limiter = kernel.rateLimiter
  const metrics = kernel.metrics
  // Request lines and metrics share one after-response step (RequestFront.log); with both off it does not run.
  const logRequests = kernel.logger.logsRequests || metrics !== null

  const dispatch: FastDispatch = (request, server, method, routes) => {
    const pathname = pathOf(request.url)
    for (let i = 0; i < routes.length; i++) {
      const route = routes[i]
      if (!route.matches(pathname)) continue
      // Counting a small rule on the Postgres store needs an await: such requests take the Elysia path.
      if (!route.selfLimited && !limiter.synchronousFor(method, pathname)) return undefined
      const ri = front.begin(request, server, pathname, false)
      const decision = route.selfLimited ? null : (front.count(method, ri) as RateLimitDecision | null)
      if (decision && !decision.allowed) {
        front.remember(request, ri) // counted once: the Elysia path answers the 429, in the one error shape
        return undefined
      }
      const origin = request.headers.get('origin')
      const info = new FastInfo(pathname, ri, origin === null ? null : front.cors(pathname, origin), decision)
      const res = route.answer(request, info)
      if (metrics !== null) metrics.fastRead(route.route, res !== undefined && !(res instanceof Promise))
      if (res === undefined) {
        front.remember(request, ri)
        return undefined
      }
      if (res instanceof Promise) {
        return res.then((r) => {
          if (r === undefined) {
            front.remember(request, ri)
            return fallback(request)
          }
          if (logRequests) logFast(front, method, route, r.status, ri)
          return r
        })
      }
      if (logRequests) logFast(front, method, route, res.status, ri)
      return res
    }
    return undefined
  }

  return {
    get: routes.filter((r) => (r.method ?? 'GET') === 'GET'),
    post: routes.filter((r) => r.method === 'POST'),
    dispatch,
  }
}
