import { Elysia } from 'elysia'
import { randomBytes, sha256Hex } from './crypto'
import { type AppError, type ErrorBody, KernelErrors } from './errors'
import { errorAnswer } from './error-answer'
import { pathOf, requestIdFrom } from './http'
import { stringProblem } from './json'
import type { Kernel } from './kernel'
import { pathRegex, type RateLimitDecision } from './rate-limit'
import { jsonBodyParser, RouteBodyTypes } from './request-body'

/** What the kernel knows of a request before any route runs; shared by the fast path and the Elysia hooks. */
export interface RequestInfo {
  id: string
  start: number
  /** The kernel clock at the start (epoch ms): what rate limits and cache expiries of this request compare against. */
  now: number
  pathname: string
  /** The client address: the socket peer, or X-Forwarded-For behind a trusted proxy. */
  ip: string
  viaTrustedProxy: boolean
  /** The rate-limit decision once the request was counted (undefined: not counted yet; null: route not limited). */
  rate?: RateLimitDecision | null
  /** The exact bytes of a JSON request body, once parsed: what a signature over the raw body is checked against. */
  rawBody?: Uint8Array
}

/** Anything with Bun's `requestIP` (the server); absent for in-process calls (tests), which count as loopback. */
export interface PeerSource {
  requestIP(request: Request): { address: string } | null
}

/** The kernel's own public paths and CORS headers; modules add theirs (`publicCors` in kernel/module.ts). */
const PUBLIC_PREFIXES = ['/v1/cdn/']
const ALLOW_HEADERS = ['Authorization', 'Content-Type', 'If-None-Match', 'X-Request-Id']
const EXPOSE_HEADERS = ['ETag', 'X-Request-Id', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']
export const JSON_TYPE = 'application/json; charset=utf-8'

/** What the modules declare of the public surface's CORS (kernel/module.ts `publicCors`), merged by the runtime. */
export interface PublicCors {
  /** Path prefixes outside /v1/cdn/ that answer any origin like public content. */
  paths?: readonly string[]
  /** Request headers browsers may send (preflight). */
  allowHeaders?: readonly string[]
  /** Response headers browsers may read. */
  exposeHeaders?: readonly string[]
}

const DAY_MS = 86_400_000
/** Hashes remembered per day (an address seen again costs no hash); cleared when full. */
const HASH_MEMO_LIMIT = 10_000

/**
 * The client address as the request log writes it (LOG_CLIENT_IP). The hash is SHA-256 of a random salt of the UTC
 * day and the address, cut to 16 hex characters: lines of one day and one process can be told apart and grouped
 * (abuse), but the salt lives only in memory and is replaced at midnight, so no hash can be traced back to an address
 * once its day is over (the same promise as the forms' `ip_hash`, whose salts are deleted after two days).
 */
export class LogAddress {
  private privateRoute: RegExp | null
  private patterns: { path: string; regex: RegExp }[]
  private day = -1
  private salt = ''
  private memo = new Map<string, string>()

  constructor(
    private mode: 'full' | 'hash' | 'off',
    privatePaths: readonly string[],
  ) {
    this.privateRoute = privatePaths.length ? pathRegex(privatePaths) : null
    this.patterns = privatePaths.map((path) => ({ path, regex: pathRegex([path]) }))
  }

  /**
   * The route a line names for a request no route pattern was matched for (a 429, a 404): a private path's own
   * pattern rather than the path itself, which may carry a secret (an unsubscribe token).
   */
  route(route: string, pathname: string): string {
    if (route !== pathname || this.privateRoute === null || !this.privateRoute.test(pathname)) return route
    return this.patterns.find((p) => p.regex.test(pathname))?.path ?? route
  }

  /** What the line of a request to `pathname` from `ip` at `now` (epoch ms) carries. */
  of(pathname: string, ip: string, now: number): string {
    if (this.mode === 'off') return '-'
    if (this.mode === 'full' && (this.privateRoute === null || !this.privateRoute.test(pathname))) return ip
    return this.hash(ip, now)
  }

  private hash(ip: string, now: number): string {
    const day = Math.floor(now / DAY_MS)
    if (day !== this.day) {
      this.day = day
      this.salt = Buffer.from(randomBytes(32)).toString('hex')
      this.memo.clear()
    }
    let h = this.memo.get(ip)
    if (h === undefined) {
      if (this.memo.size >= HASH_MEMO_LIMIT) this.memo.clear()
      h = sha256Hex(`${this.salt}:${ip}`).slice(0, 16)
      this.memo.set(ip, h)
    }
    return h
  }
}

/**
 * The request front: request id, client IP, CORS, rate limiting and the request log, done once per request whichever
 * path answers it (the fast path of src/app.ts or Elysia).
 */
export class RequestFront {
  readonly info = new WeakMap<Request, RequestInfo>()
  private managementOrigins: Set<string>
  private anyManagementOrigin: boolean
  /** Request lines are written: only then is a start time taken. */
  private timed: boolean
  private address: LogAddress

  private publicPrefixes: readonly string[]
  private allowHeaders: string
  private exposeHeaders: string
  /** The CORS headers of public content (shared, never mutated). */
  private publicCors: readonly (readonly [string, string])[]

  /**
   * `privatePaths`: the modules' private routes, whose log lines never carry the address as seen. `declared`: the
   * modules' public CORS paths and headers (`publicCors`).
   */
  constructor(
    private kernel: Kernel,
    privatePaths: readonly string[] = [],
    declared: readonly PublicCors[] = [],
  ) {
    const merged = (own: readonly string[], more: (c: PublicCors) => readonly string[] | undefined) => [...new Set([...own, ...declared.flatMap((c) => more(c) ?? [])])]
    this.publicPrefixes = merged(PUBLIC_PREFIXES, (c) => c.paths)
    this.allowHeaders = merged(ALLOW_HEADERS, (c) => c.allowHeaders).join(', ')
    this.exposeHeaders = merged(EXPOSE_HEADERS, (c) => c.exposeHeaders).join(', ')
    this.publicCors = [
      ['access-control-allow-origin', '*'],
      ['access-control-expose-headers', this.exposeHeaders],
    ]
    this.managementOrigins = new Set(kernel.config.corsOrigins)
    this.anyManagementOrigin = this.managementOrigins.has('*')
    this.timed = kernel.logger.logsRequests || kernel.metrics !== null
    this.address = new LogAddress(kernel.config.logClientIp ?? 'full', privatePaths)
  }

  /**
   * The request's id, client address and start time. `remember: false` (the fast path) skips the WeakMap entry — an
   * ephemeron per request is GC work — and calls `remember(request, ri)` only when it passes the request on.
   */
  begin(request: Request, server: PeerSource | null | undefined, pathname = pathOf(request.url), remember = true): RequestInfo {
    if (remember) {
      const known = this.info.get(request)
      if (known) return known
    }
    const peer = server?.requestIP(request)?.address ?? '127.0.0.1'
    const xff = request.headers.get('x-forwarded-for')
    const clientIp = this.kernel.clientIp
    const viaTrustedProxy = clientIp.isTrusted(peer)
    const ri: RequestInfo = {
      id: requestIdFrom(request.headers.get('x-request-id')),
      start: this.timed ? performance.now() : 0,
      now: this.kernel.clock.ms(),
      pathname,
      ip: xff && viaTrustedProxy ? clientIp.resolve(peer, xff) : peer,
      viaTrustedProxy,
    }
    if (remember) this.info.set(request, ri)
    return ri
  }

  private isPublicPath(pathname: string) {
    const prefixes = this.publicPrefixes
    for (let i = 0; i < prefixes.length; i++) if (pathname.startsWith(prefixes[i])) return true
    return false
  }

  remember(request: Request, ri: RequestInfo) {
    this.info.set(request, ri)
  }

  /** CORS response headers for a request from `origin` (public content: `*`, so shared caches never split by Origin). */
  cors(pathname: string, origin: string): readonly (readonly [string, string])[] | null {
    if (this.anyManagementOrigin || this.isPublicPath(pathname)) return this.publicCors
    if (!this.managementOrigins.has(origin)) return null
    return [
      ['access-control-allow-origin', origin],
      ['access-control-expose-headers', this.exposeHeaders],
      ['vary', 'Origin'],
    ]
  }

  preflight(ri: RequestInfo, cors: readonly (readonly [string, string])[] | null): Response {
    const headers = new Headers((cors ?? undefined) as [string, string][] | undefined)
    headers.set('x-request-id', ri.id)
    headers.set('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS')
    headers.set('access-control-allow-headers', this.allowHeaders)
    headers.set('access-control-max-age', '600')
    return new Response(null, { status: 204, headers })
  }

  /** Counts the request once (a request the fast path counted and passed on is not counted again). */
  count(method: string, ri: RequestInfo): RateLimitDecision | null | Promise<RateLimitDecision | null> {
    if (ri.rate !== undefined) return ri.rate
    const d = this.kernel.rateLimiter.check(method, ri.pathname, ri.ip, ri.now)
    if (d instanceof Promise) return d.then((x) => (ri.rate = x))
    ri.rate = d
    return d
  }

  /**
   * The answer of a limit the server enforces before any route runs (an over-long URL, a Content-Length above every
   * route's limit), in the one error shape with the request id, CORS and `Cache-Control: no-store`, as every error
   * carries. `Connection: close`: a body that is refused is not read, and the server does not wait for it.
   */
  refuse(request: Request, server: PeerSource | null | undefined, error: AppError): Response {
    const ri = this.begin(request, server, pathOf(request.url), false)
    const headers = new Headers({ 'content-type': JSON_TYPE, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'x-request-id': ri.id, connection: 'close' })
    const origin = request.headers.get('origin')
    const cors = origin === null ? null : this.cors(ri.pathname, origin)
    if (cors !== null) for (const [k, v] of cors) headers.set(k, v)
    if (this.timed) this.log(request.method, '-', error.status, ri, false, false)
    const body: ErrorBody = { error: error.code, message: error.message }
    return new Response(JSON.stringify(body), { status: error.status, headers })
  }

  /**
   * The request line and the request metrics of an answered request. `anonymous`: the route keeps no address at all,
   * not even hashed (the beacon); `matched`: `route` is a route template (not a raw path).
   */
  log(method: string, route: string, status: number, ri: RequestInfo, anonymous = false, matched = true) {
    const ms = performance.now() - ri.start
    this.kernel.metrics?.request(method, matched ? route : null, status, ms)
    if (!this.kernel.logger.logsRequests) return
    this.kernel.logger.request({
      method,
      route: this.address.route(route, ri.pathname),
      status,
      ms: Math.round(ms * 100) / 100,
      requestId: ri.id,
      ip: anonymous ? '-' : this.address.of(ri.pathname, ri.ip, ri.now),
    })
  }
}

/**
 * What every Elysia-routed request goes through: the front (request id, client IP, CORS, rate limit), the JSON body
 * parser with its size limit (`request-body.ts`), the one error body (`error-answer.ts`), and one log line per
 * request. The hooks are synchronous (with the in-memory rate-limit store), so Elysia compiles no await into the
 * route lifecycle.
 */
export function kernelPlugin(kernel: Kernel, front: RequestFront, bodyTypes: RouteBodyTypes = new RouteBodyTypes()) {
  const { logger } = kernel

  const begin = (request: Request, server: PeerSource | null, set: { headers: Record<string, unknown> }) => {
    const ri = front.begin(request, server)
    set.headers['x-request-id'] = ri.id
    // Every answer: a browser never sniffs a JSON (or any) body into HTML or script.
    set.headers['x-content-type-options'] = 'nosniff'
    const origin = request.headers.get('origin')
    const cors = origin === null ? null : front.cors(ri.pathname, origin)
    if (cors) for (const [k, v] of cors) set.headers[k] = v
    return { ri, cors }
  }

  const limited = (decision: RateLimitDecision | null, set: { headers: Record<string, unknown> }) => {
    if (!decision) return
    Object.assign(set.headers, decision.headers)
    if (!decision.allowed) throw KernelErrors.rateLimited('Too many requests. Retry after the time given in Retry-After.')
  }

  const app = new Elysia({ name: 'kernel' })
  if (kernel.rateLimiter.synchronous) {
    app.onRequest(({ request, server, set }) => {
      const { ri, cors } = begin(request, server, set)
      if (request.method === 'OPTIONS') return front.preflight(ri, cors)
      limited(front.count(request.method, ri) as RateLimitDecision | null, set)
    })
  } else {
    app.onRequest(async ({ request, server, set }) => {
      const { ri, cors } = begin(request, server, set)
      if (request.method === 'OPTIONS') return front.preflight(ri, cors)
      limited(await front.count(request.method, ri), set)
    })
  }

  app
    .onParse({ as: 'global' }, jsonBodyParser(kernel, front, bodyTypes))
    // Path and query values are text too: a NUL or a lone surrogate in one names nothing (404) or is invalid (422).
    .onTransform({ as: 'global' }, ({ params, query }) => {
      for (const k in params) {
        const v = (params as Record<string, unknown>)[k]
        if (typeof v === 'string' && stringProblem(v)) throw KernelErrors.notFound('Not found.')
      }
      for (const k in query) {
        const v = (query as Record<string, unknown>)[k]
        for (const item of Array.isArray(v) ? v : [v]) {
          const problem = typeof item === 'string' ? stringProblem(item) : null
          if (problem) throw KernelErrors.validationFailed('The request is not valid.', { [k]: [problem] })
        }
      }
    })
    .onError({ as: 'global' }, errorAnswer(front, logger))

  // Registered only when request lines are written: an after-response hook costs every request a callback.
  if (logger.logsRequests || kernel.metrics) {
    app.onAfterResponse({ as: 'global' }, ({ request, set, route, responseValue }) => {
      const ri = front.info.get(request)
      // A Response returned by a hook carries its own status; no route matched: Elysia's NOT_FOUND leaves set.status 200.
      const status =
        responseValue instanceof Response ? responseValue.status : typeof set.status === 'number' ? (!route && set.status === 200 ? 404 : set.status) : 200
      if (ri) front.log(request.method, route || ri.pathname, status, ri, false, !!route)
    })
  }
  return app
}
