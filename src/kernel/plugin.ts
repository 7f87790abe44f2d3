import { Elysia, ValidationError } from 'elysia'
import { type Admission, type Principal, type Role, requireBearerSpaceAccess, requirePrincipal, requireUserToken, type SpaceAccess, type SpaceRef } from './auth'
import { randomBytes, sha256Hex } from './crypto'
import { AppError, type ErrorBody, findPgError, isDatabaseUnavailable, isDiskFull, KernelErrors } from './errors'
import { bytesText, pathOf, publicOrigin, readBodyCapped, requestIdFrom } from './http'
import { MAX_JSON_DEPTH, readJson, stringProblem } from './json'
import type { Kernel } from './kernel'
import { type PublicSpace, type PublicSpaceOptions, type PublicSpaceResolver, publicSpaceMissing } from './public-space'
import { pathRegex, type RateLimitDecision } from './rate-limit'


/** Retry-After of a 503 `database_unavailable`: a Postgres restart or fail-over takes seconds. */
const DATABASE_RETRY_AFTER_SECONDS = 5

const LOGGED_ERROR_CHARS = 2_000
const capped = (text: string) => (text.length > LOGGED_ERROR_CHARS ? `${text.slice(0, LOGGED_ERROR_CHARS)}… (${text.length} characters)` : text)
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
const JSON_TYPE = 'application/json; charset=utf-8'

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

/** Turns Elysia's validation error into `{field: [messages]}` keyed by the JSON path without its leading slash. */
function validationFields(err: ValidationError): Record<string, string[]> {
  // Keys come from the request (property names such as `constructor`): no prototype to collide with.
  const fields: Record<string, string[]> = Object.create(null)
  const seen = new Set<string>()
  for (const e of err.all as { path?: string; message?: string; summary?: string; schema?: { error?: unknown } }[]) {
    const key = (e.path ?? '').replace(/^\//, '') || (err.type === 'body' ? 'body' : err.type)
    const custom = typeof e.schema?.error === 'string' ? e.schema.error : undefined
    const msg = custom ?? e.summary ?? e.message ?? 'is invalid'
    const dedupe = `${key}\u0000${msg}`
    if (seen.has(dedupe)) continue
    seen.add(dedupe)
    ;(fields[key] ??= []).push(msg)
  }
  return fields
}

function errorResponse(status: number, body: ErrorBody, headers: Record<string, string>) {
  headers['Content-Type'] = JSON_TYPE
  headers['X-Content-Type-Options'] = 'nosniff'
  // An error is about this request: no shared cache may keep it (a cached 404 would outlive the publish that fixes it).
  if (!headers['Cache-Control'] && !headers['cache-control']) headers['Cache-Control'] = 'no-store'
  return new Response(JSON.stringify(body), { status, headers })
}

/** The parsed body of a request in a media type its route reads itself (an upload): nothing is read. */
export const MULTIPART_UNREAD: Record<string, never> = Object.freeze({}) as Record<string, never>

/**
 * The media types each route takes. JSON is the default: every route with a body takes `application/json` (and
 * `+json` types) only. A route that declares its own `detail.requestBody.content` (the asset upload: multipart; the
 * beacon: JSON or text/plain) takes the types it lists besides JSON, and reads those bodies from `request` itself.
 * Learned from the mounted routes once (`learn`), so the declaration that documents a route is the one enforced.
 */
export class RouteBodyTypes {
  private byRoute = new Map<string, ReadonlySet<string>>()

  learn(routes: readonly { method: string; path: string; hooks?: { detail?: unknown } }[]) {
    for (const r of routes) {
      const content = (r.hooks?.detail as { requestBody?: { content?: Record<string, unknown> } } | undefined)?.requestBody?.content
      if (!content) continue
      const types = new Set(Object.keys(content).map((k) => k.toLowerCase()))
      types.delete('application/json')
      if (types.size > 0) this.byRoute.set(`${r.method} ${r.path}`, types)
    }
  }

  /** Whether `method route` reads a body of this (non-JSON) media type itself. */
  takes(method: string, route: string | undefined, type: string): boolean {
    return route !== undefined && (this.byRoute.get(`${method} ${route}`)?.has(type) ?? false)
  }
}

/**
 * What every Elysia-routed request goes through: the front (request id, client IP, CORS, rate limit), the JSON body
 * parser with its size limit, the one error body, and one log line per request. The hooks are synchronous (with the
 * in-memory rate-limit store), so Elysia compiles no await into the route lifecycle.
 */
export function kernelPlugin(kernel: Kernel, front: RequestFront, bodyTypes: RouteBodyTypes = new RouteBodyTypes()) {
  const { config, logger } = kernel

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
    .onParse({ as: 'global' }, async ({ request, contentType, route }) => {
      const type = (contentType ?? '').split(';')[0].trim().toLowerCase()
      const length = Number(request.headers.get('content-length') ?? '0')
      if (type === 'application/json' || type.endsWith('+json')) {
        if (length > config.jsonBodyLimit) throw bodyTooLarge(config.jsonBodyLimit)
        // Stops (413) as soon as the body passes the limit, also when no Content-Length was sent.
        const buf = await readBodyCapped(request, config.jsonBodyLimit)
        if (!buf) throw bodyTooLarge(config.jsonBodyLimit)
        const ri = front.info.get(request)
        if (ri) ri.rawBody = buf
        if (buf.byteLength === 0) return undefined
        const read = readJson(buf)
        if ('value' in read) return read.value
        switch (read.kind) {
          case 'encoding':
            throw KernelErrors.invalidJson('The request body is not valid UTF-8.')
          case 'depth':
            throw KernelErrors.invalidJson(`The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`)
          case 'size':
            throw KernelErrors.payloadTooLarge('The request body has too many values.')
          case 'string':
            throw KernelErrors.validationFailed('The request is not valid.', { [read.path || 'body']: [read.reason] })
          default:
            throw KernelErrors.invalidJson('The request body is not valid JSON.')
        }
      }
      // Routes that declare another type read such bodies themselves (modules/assets/upload.ts streams multipart).
      // Returning a value stops Elysia from running its own parser, which would buffer the whole body first. Any
      // other route takes JSON only: a form or text body is refused, never read as an empty object.
      if (bodyTypes.takes(request.method, route, type)) return MULTIPART_UNREAD
      if (request.body !== null || length > 0) {
        throw KernelErrors.unsupportedMediaType('Send the request body as application/json.')
      }
      return undefined
    })
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
    .onError({ as: 'global' }, ({ code, error, request, set }) => {
      const ri = front.info.get(request)
      const requestId = ri?.id ?? requestIdFrom(null)
      const headers: Record<string, string> = { 'X-Request-Id': requestId, ...(ri?.rate?.headers ?? {}) }
      // CORS headers set by the request hook also belong on error answers.
      for (const [k, v] of Object.entries(set.headers)) if (k.startsWith('access-control-') || k === 'vary') headers[k] = String(v)
      try {
        // Errors thrown inside a parser reach us wrapped in Elysia's ParseError.
        const appError =
          error instanceof AppError ? error : (error as { cause?: unknown })?.cause instanceof AppError ? (error as { cause: AppError }).cause : null
        if (appError) {
          const body: ErrorBody = { error: appError.code, message: appError.message }
          if (appError.fields) body.errors = appError.fields
          if (appError.details) body.details = appError.details
          if (appError.headers) Object.assign(headers, appError.headers)
          return errorResponse(appError.status, body, headers)
        }
        if (code === 'VALIDATION') {
          const v = error as ValidationError
          // A path parameter that cannot be valid names nothing: 404, like an unknown id.
          if (v.type === 'params') return errorResponse(404, { error: 'not_found', message: 'Not found.' }, headers)
          if (v.type !== 'response') {
            return errorResponse(422, { error: 'validation_failed', message: 'The request is not valid.', errors: validationFields(v) }, headers)
          }
          // A response that does not match its declared schema is our bug: a 500 below, logged.
        }
        if (code === 'PARSE') return errorResponse(400, { error: 'invalid_json', message: 'The request body is not valid JSON.' }, headers)
        if (code === 'NOT_FOUND') return errorResponse(404, { error: 'not_found', message: 'No such route.' }, headers)
        // Postgres is restarting or failing over: say so, and when to come back, instead of a 500. The pool
        // reconnects by itself on a later request.
        if (isDatabaseUnavailable(error)) {
          logger.warn('database unavailable', { request_id: requestId, method: request.method, path: ri?.pathname ?? pathOf(request.url), error: String((error as Error)?.message ?? error) })
          headers['Retry-After'] = String(DATABASE_RETRY_AFTER_SECONDS)
          return errorResponse(503, { error: 'database_unavailable', message: 'The database cannot be reached right now. Retry in a few seconds.' }, headers)
        }
        // The disk under the database is full: the transaction rolled back, nothing is half-written. Say so (507),
        // loudly in the log: an operator must free space or grow the volume.
        if (isDiskFull(error)) {
          logger.error('database disk full: writes are refused until space is freed', { request_id: requestId, method: request.method, path: ri?.pathname ?? pathOf(request.url) })
          return errorResponse(507, { error: 'insufficient_storage', message: 'The server has no disk space left for this change; nothing was written. Try again later.' }, headers)
        }
        // The last line of defence: a value the database refuses means a boundary check is missing. Answer as the
        // check would have (never 500), and log it so the check gets written.
        const pg = findPgError(error)
        if (pg?.code && (pg.code.startsWith('22') || pg.code.startsWith('23') || pg.code === '54000')) {
          logger.warn('database refused a value: a boundary check is missing', {
            request_id: requestId,
            method: request.method,
            path: ri?.pathname ?? pathOf(request.url),
            sqlstate: pg.code,
            error: pg.message,
          })
          if (pg.code === '23505') return errorResponse(409, { error: 'conflict', message: 'The change conflicts with existing data.' }, headers)
          if (pg.code.startsWith('23')) return errorResponse(409, { error: 'conflict', message: 'The change conflicts with the current state.' }, headers)
          return errorResponse(422, { error: 'validation_failed', message: 'A value in the request cannot be stored as given.' }, headers)
        }
        logger.error('unhandled error', {
          request_id: requestId,
          method: request.method,
          path: ri?.pathname ?? pathOf(request.url),
          // drizzle's message carries the query's parameters (user content, maybe megabytes): the start is enough.
          error: capped(error instanceof Error ? `${error.name}: ${error.message}` : String(error)),
          sqlstate: findPgError(error)?.code,
          stack: error instanceof Error ? capped(error.stack ?? '') : undefined,
        })
      } catch (inner) {
        logger.error('error while answering an error', { request_id: requestId, error: String(inner) })
      }
      set.status = 500
      return errorResponse(500, { error: 'internal_error', message: 'Something went wrong on our side.', request_id: requestId }, headers)
    })

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

/**
 * The guards every module route declares: `authenticated`, `userToken`, `spaceRole: '<min role>'`, `spaceUser: '<min
 * role>'` (the Space guard for routes that act as a person: Space-scoped tokens get 403 user_required), and for
 * anonymous routes `publicSpace` (the live Space of `{space}` through `publicSpaces`, the resolver the module owning
 * Spaces provides). Modules `.use()` this (macros only, no hooks), so using it in several modules registers nothing
 * twice.
 */
export function guardPlugin(kernel: Kernel, publicSpaces: PublicSpaceResolver | null = null) {
  // Guards run in `transform`, before body validation: an anonymous or under-privileged caller learns 401/403/404,
  // never whether its body would have been valid. `resolve` then hands the result to the handler.
  const resolved = new WeakMap<Request, Principal | SpaceAccess>()
  const take = <T,>(request: Request) => resolved.get(request) as T
  // The modules' admission hooks (billing counts requests): nothing is allocated when no module has one.
  const admit = async (request: Request, principal: Principal, space: SpaceRef | null) => {
    const hooks = kernel.admissions
    if (!hooks.length) return
    const admission: Admission = { method: request.method, pathname: new URL(request.url).pathname, principal, space }
    for (const h of hooks) await h.admit(admission)
  }
  return new Elysia({ name: 'guards' }).macro({
    /** Any valid bearer token (user or Space-scoped); resolves `principal`. */
    authenticated: {
      detail: { security: [{ bearer: [] }], 'x-guard': 'any bearer token (user or Space-scoped)' },
      async transform({ request }) {
        const principal = await requirePrincipal(kernel, request.headers.get('authorization'))
        await admit(request, principal, null)
        resolved.set(request, principal)
      },
      resolve: ({ request }) => ({ principal: take<Principal>(request) }),
    },
    /** A user token (not Space-scoped); resolves `principal`. */
    userToken: {
      detail: { security: [{ bearer: [] }], 'x-guard': 'a user token (Space-scoped tokens get 403 user_required)' },
      async transform({ request }) {
        const principal = await requirePrincipal(kernel, request.headers.get('authorization'))
        requireUserToken(principal)
        await admit(request, principal, null)
        resolved.set(request, principal)
      },
      resolve: ({ request }) => ({ principal: take<Extract<Principal, { kind: 'user' }>>(request) }),
    },
    /** The Space guard for `/spaces/:space/...`: resolves `access` = {principal, space, role}. */
    spaceRole: (min: Role) => ({
      detail: { security: [{ bearer: [] }], 'x-guard': `role ${min} or higher in the Space (no access: 404; a lower role: 403)`, 'x-min-role': min },
      async transform({ request, params }) {
        const slug = String((params as Record<string, unknown>).space ?? '')
        const access = await requireBearerSpaceAccess(kernel, request.headers.get('authorization'), slug, min)
        await admit(request, access.principal, access.space)
        resolved.set(request, access)
      },
      resolve: ({ request }) => ({ access: take<SpaceAccess>(request) }),
    }),
    /** `spaceRole` for routes that act as a person (comments, presence): Space-scoped tokens get 403 user_required. */
    spaceUser: (min: Role) => ({
      detail: {
        security: [{ bearer: [] }],
        'x-guard': `role ${min} or higher in the Space, with a user token (no access: 404; a Space-scoped token: 403 user_required; a lower role: 403)`,
        // The minimum role as `spaceRole` declares it: the roles table and the admin app (api/min-roles.ts) read it.
        'x-min-role': min,
      },
      async transform({ request, params }) {
        const slug = String((params as Record<string, unknown>).space ?? '')
        const access = await requireBearerSpaceAccess(kernel, request.headers.get('authorization'), slug, min, { user: true })
        await admit(request, access.principal, access.space)
        resolved.set(request, access)
      },
      resolve: ({ request }) => ({ access: take<SpaceAccess & { principal: Extract<Principal, { kind: 'user' }> }>(request) }),
    }),
    /**
     * An anonymous route whose path names a Space (`/cdn/:space/...`, the signed datasource push): resolves `space`
     * (the live Space, from the resolver's cache: no query when cached) and `origin` (`publicOrigin`: the base of every
     * URL the route hands out). An unknown, archived or malformed Space is 404 in the shared shape (see
     * PublicSpaceOptions). Runs as `resolve`, after the route's params, query and body are validated: invalid input is
     * 422 whichever Space it names, as when the handlers looked the Space up themselves.
     */
    publicSpace: (opts: PublicSpaceOptions) => {
      if (!publicSpaces) throw new Error('a route declares publicSpace, but no module provides publicSpaceResolver (list the spaces module)')
      const missing = publicSpaceMissing(opts)
      const config = kernel.config
      return {
        async resolve({ request, params }): Promise<{ space: PublicSpace; origin: string }> {
          const space = await publicSpaces.get(String((params as Record<string, unknown>).space ?? ''))
          if (!space) throw missing()
          return { space, origin: publicOrigin(config, request.url) }
        },
      }
    },
  })
}
export type Guards = ReturnType<typeof guardPlugin>

function bodyTooLarge(limit: number) {
  return KernelErrors.payloadTooLarge(`The request body is larger than ${bytesText(limit)}.`)
}
