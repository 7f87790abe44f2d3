import { Elysia, ValidationError } from 'elysia'
import type { Deps } from '../deps'
import { type Principal, type Role, requirePrincipal, requireSpaceAccess, requireUserToken, type SpaceAccess } from './auth'
import { AppError, type ErrorBody } from './errors'
import { pathOf, requestIdFrom } from './http'
import type { RateLimitDecision } from './rate-limit'

interface RequestInfo {
  id: string
  start: number
  ip: string
  rateHeaders?: Record<string, string>
}

const PUBLIC_PREFIXES = ['/v1/cdn/', '/embed', '/service-admin.js', '/v1/version', '/version']
const ALLOW_HEADERS = 'Authorization, Content-Type, If-None-Match, X-Request-Id, X-Service-Segment'
const PUBLIC_CORS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'ETag, X-Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset',
}

function isPublicPath(pathname: string) {
  return PUBLIC_PREFIXES.some((p) => pathname.startsWith(p))
}

/** Turns Elysia's validation error into `{field: [messages]}` keyed by the JSON path without its leading slash. */
function validationFields(err: ValidationError): Record<string, string[]> {
  const fields: Record<string, string[]> = {}
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

function errorResponse(status: number, body: ErrorBody, headers: Record<string, string> = {}) {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers },
  })
}

/**
 * What every request goes through: request id, client IP, rate limits, CORS, the JSON body parser with its size
 * limit, the one error body, and one log line per request.
 */
export function kernelPlugin(deps: Deps) {
  const info = new WeakMap<Request, RequestInfo>()
  const { config, logger } = deps
  const managementOrigins = new Set(config.corsOrigins)
  const anyManagementOrigin = managementOrigins.has('*')
  const logRequests = config.logLevel === 'debug' || config.logLevel === 'info'

  const corsFor = (pathname: string, origin: string): Record<string, string> | null => {
    // Public content is the same for every origin: `*` keeps shared caches from splitting by Origin.
    if (isPublicPath(pathname) || anyManagementOrigin) return PUBLIC_CORS
    if (!managementOrigins.has(origin)) return null
    return { ...PUBLIC_CORS, 'access-control-allow-origin': origin, vary: 'Origin' }
  }

  /** Request id, client IP and CORS; a preflight is answered here. Returns the rate-limit key parts. */
  const begin = (request: Request, server: { requestIP(r: Request): { address: string } | null } | null, set: { headers: Record<string, unknown> }) => {
    const id = requestIdFrom(request.headers.get('x-request-id'))
    // app.handle() in tests and in-process callers have no socket: they count as loopback.
    const peer = server?.requestIP(request)?.address ?? '127.0.0.1'
    const ip = deps.clientIp.resolve(peer, request.headers.get('x-forwarded-for'))
    const ri: RequestInfo = { id, start: performance.now(), ip }
    info.set(request, ri)
    set.headers['x-request-id'] = id
    const pathname = pathOf(request.url)
    const origin = request.headers.get('origin')
    if (origin !== null) {
      const cors = corsFor(pathname, origin)
      if (cors) Object.assign(set.headers, cors)
    }
    return { ri, pathname }
  }

  const preflight = (set: { headers: Record<string, unknown> }) =>
    new Response(null, {
      status: 204,
      headers: {
        ...(set.headers as Record<string, string>),
        'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
        'access-control-allow-headers': ALLOW_HEADERS,
        'access-control-max-age': '600',
      },
    })

  const limited = (ri: RequestInfo, decision: RateLimitDecision | null, set: { headers: Record<string, unknown> }) => {
    if (!decision) return
    ri.rateHeaders = decision.headers
    Object.assign(set.headers, decision.headers)
    if (!decision.allowed) {
      throw new AppError(429, 'rate_limited', 'Too many requests. Retry after the time given in Retry-After.')
    }
  }

  const app = new Elysia({ name: 'kernel' })
  // Two variants of one hook: with the in-memory store the public read path never awaits; with the Postgres store
  // the check is a query and the hook is async.
  if (config.rateLimitStore === 'memory') {
    app.onRequest(({ request, server, set }) => {
      const { ri, pathname } = begin(request, server, set)
      if (request.method === 'OPTIONS') return preflight(set)
      limited(ri, deps.rateLimiter.check(request.method, pathname, ri.ip) as RateLimitDecision | null, set)
    })
  } else {
    app.onRequest(async ({ request, server, set }) => {
      const { ri, pathname } = begin(request, server, set)
      if (request.method === 'OPTIONS') return preflight(set)
      limited(ri, await deps.rateLimiter.check(request.method, pathname, ri.ip), set)
    })
  }

  return app
    .onParse({ as: 'global' }, async ({ request, contentType }) => {
      const type = (contentType ?? '').split(';')[0].trim().toLowerCase()
      const length = Number(request.headers.get('content-length') ?? '0')
      if (type === 'application/json' || type.endsWith('+json')) {
        if (length > config.jsonBodyLimit) throw bodyTooLarge(config.jsonBodyLimit)
        const buf = await readCapped(request, config.jsonBodyLimit)
        if (buf.byteLength === 0) return undefined
        try {
          return JSON.parse(new TextDecoder().decode(buf))
        } catch {
          throw new AppError(400, 'invalid_json', 'The request body is not valid JSON.')
        }
      }
      if (type === 'multipart/form-data') return // routes that take uploads parse these themselves
      if (request.body !== null || length > 0) {
        throw new AppError(415, 'unsupported_media_type', 'Send the request body as application/json.')
      }
      return undefined
    })
    .onError({ as: 'global' }, ({ code, error, request, set }) => {
      const ri = info.get(request)
      const requestId = ri?.id ?? requestIdFrom(null)
      const base = { 'X-Request-Id': requestId, ...(ri?.rateHeaders ?? {}) }
      // Errors thrown inside a parser reach us wrapped in Elysia's ParseError.
      const appError =
        error instanceof AppError ? error : (error as { cause?: unknown })?.cause instanceof AppError ? (error as { cause: AppError }).cause : null
      if (appError) {
        const body: ErrorBody = { error: appError.code, message: appError.message }
        if (appError.fields) body.errors = appError.fields
        return errorResponse(appError.status, body, { ...base, ...(appError.headers ?? {}) })
      }
      if (code === 'VALIDATION') {
        const v = error as ValidationError
        return errorResponse(
          422,
          { error: 'validation_failed', message: 'The request is not valid.', errors: validationFields(v) },
          base,
        )
      }
      if (code === 'PARSE') {
        return errorResponse(400, { error: 'invalid_json', message: 'The request body is not valid JSON.' }, base)
      }
      if (code === 'NOT_FOUND') {
        return errorResponse(404, { error: 'not_found', message: 'No such route.' }, base)
      }
      logger.error('unhandled error', {
        request_id: requestId,
        method: request.method,
        path: pathOf(request.url),
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        stack: error instanceof Error ? error.stack : undefined,
      })
      set.status = 500
      return errorResponse(
        500,
        { error: 'internal_error', message: 'Something went wrong on our side.', request_id: requestId },
        base,
      )
    })
    .onAfterResponse({ as: 'global' }, ({ request, set, route }) => {
      if (!logRequests) return
      const ri = info.get(request)
      logger.info('request', {
        method: request.method,
        route: route || pathOf(request.url),
        status: typeof set.status === 'number' ? set.status : 200,
        ms: ri ? Math.round((performance.now() - ri.start) * 100) / 100 : undefined,
        request_id: ri?.id,
        ip: ri?.ip,
      })
    })
}

/**
 * The guards every module route declares: `authenticated`, `userToken`, `spaceRole: '<min role>'`. Modules `.use()`
 * this (macros only, no hooks), so using it in several modules registers nothing twice.
 */
export function guardPlugin(deps: Deps) {
  // Guards run in `transform`, before body validation: an anonymous or under-privileged caller learns 401/403/404,
  // never whether its body would have been valid. `resolve` then hands the result to the handler.
  const resolved = new WeakMap<Request, Principal | SpaceAccess>()
  const take = <T,>(request: Request) => resolved.get(request) as T
  return new Elysia({ name: 'guards' }).macro({
    /** Any valid bearer token (user or Space-scoped); resolves `principal`. */
    authenticated: {
      async transform({ request }) {
        resolved.set(request, await requirePrincipal(deps, request.headers.get('authorization')))
      },
      resolve: ({ request }) => ({ principal: take<Principal>(request) }),
    },
    /** A user token (not Space-scoped); resolves `principal`. */
    userToken: {
      async transform({ request }) {
        const principal = await requirePrincipal(deps, request.headers.get('authorization'))
        requireUserToken(principal)
        resolved.set(request, principal)
      },
      resolve: ({ request }) => ({ principal: take<Extract<Principal, { kind: 'user' }>>(request) }),
    },
    /** The Space guard for `/spaces/:space/...`: resolves `access` = {principal, space, role}. */
    spaceRole: (min: Role) => ({
      async transform({ request, params }) {
        const principal = await requirePrincipal(deps, request.headers.get('authorization'))
        const slug = String((params as Record<string, unknown>).space ?? '')
        resolved.set(request, await requireSpaceAccess(deps, principal, slug, min))
      },
      resolve: ({ request }) => ({ access: take<SpaceAccess>(request) }),
    }),
  })
}

/** Reads a body but stops (413) as soon as it passes `limit`, also when no Content-Length was sent. */
async function readCapped(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0)
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw bodyTooLarge(limit)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}

function bodyTooLarge(limit: number) {
  return new AppError(413, 'payload_too_large', `The request body is larger than ${Math.round(limit / 1024)} KB.`)
}
export type Guards = ReturnType<typeof guardPlugin>
