import type { ValidationError } from 'elysia'
import { AppError, type ErrorBody, findPgError, isDatabaseUnavailable, isDiskFull } from './errors'
import { pathOf, requestIdFrom } from './http'
import type { Logger } from './logger'
import { JSON_TYPE, type RequestFront } from './request-front'

/*
 * The error mapping: every error a route, a guard, a hook or the parser throws becomes one answer in the shared
 * shape `{error, message, errors?, details?, request_id?}` with its status — an AppError as it says, Elysia's
 * validation (422; a path parameter: 404) and parse errors, a database that is down (503) or full (507), a value the
 * database refused (409/422: a missing boundary check, logged), and anything else a logged 500 with the request id.
 */

/** Retry-After of a 503 `database_unavailable`: a Postgres restart or fail-over takes seconds. */
const DATABASE_RETRY_AFTER_SECONDS = 5

const LOGGED_ERROR_CHARS = 2_000
const capped = (text: string) => (text.length > LOGGED_ERROR_CHARS ? `${text.slice(0, LOGGED_ERROR_CHARS)}… (${text.length} characters)` : text)

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

/** What Elysia hands the error hook (the fields the mapping reads). */
export interface ErrorContext {
  code: string | number
  error: unknown
  request: Request
  set: { headers: Record<string, unknown>; status?: number | string }
}

/** The kernel's `onError` hook: the answer of any error, with the request id, rate-limit and CORS headers. */
export function errorAnswer(front: RequestFront, logger: Logger) {
  return ({ code, error, request, set }: ErrorContext): Response => {
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
  }
}
