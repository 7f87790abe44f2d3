/** The one error body of the API (spec 7): `{error, message, errors?}`. */
export interface ErrorBody {
  error: string
  message: string
  errors?: Record<string, string[]>
  /** Machine-readable facts of the error beyond its code (plan_limit: `{limit, value, usage}`). */
  details?: Record<string, unknown>
  request_id?: string
}

/** Thrown by services and guards; the app's onError turns it into the error body with its status. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields?: Record<string, string[]>,
    readonly headers?: Record<string, string>,
    readonly details?: Record<string, unknown>,
  ) {
    super(message)
  }
}

/**
 * One machine code with its status, declared once (by the kernel or by the module that throws it) so the OpenAPI
 * description can list every code a route may answer. Calling it makes the AppError to throw.
 */
export interface ErrorDef {
  readonly code: string
  readonly status: number
  /** When it happens, for the OpenAPI description. */
  readonly description: string
  (message?: string, fields?: Record<string, string[]>, headers?: Record<string, string>, details?: Record<string, unknown>): AppError
}

export function defineError(code: string, status: number, description: string): ErrorDef {
  const make = (message = description, fields?: Record<string, string[]>, headers?: Record<string, string>, details?: Record<string, unknown>) =>
    new AppError(status, code, message, fields, headers, details)
  return Object.assign(make, { code, status, description }) as ErrorDef
}

/** The codes the kernel itself answers with, on any route. */
export const KernelErrors = {
  invalidJson: defineError('invalid_json', 400, 'The request body is not valid JSON (or nests too deep).'),
  unauthorized: defineError('unauthorized', 401, 'A valid bearer token is required.'),
  forbidden: defineError('forbidden', 403, 'Your role does not allow this action.'),
  userRequired: defineError('user_required', 403, 'This endpoint needs a user token: a Space-scoped token acts for no person (whatever its role).'),
  notFound: defineError('not_found', 404, 'Unknown route or resource, or a Space the caller cannot access.'),
  conflict: defineError('conflict', 409, 'The change conflicts with the current state.'),
  payloadTooLarge: defineError('payload_too_large', 413, 'The request body is too large.'),
  uriTooLong: defineError('uri_too_long', 414, 'The request URL (path and query) is too long.'),
  unsupportedMediaType: defineError('unsupported_media_type', 415, 'The request body has a media type this route does not take.'),
  validationFailed: defineError('validation_failed', 422, 'The request is not valid; `errors` holds messages per field.'),
  rateLimited: defineError('rate_limited', 429, 'Too many requests; retry after Retry-After seconds.'),
  internal: defineError('internal_error', 500, 'Something went wrong on our side; the body carries a request_id.'),
  insufficientStorage: defineError('insufficient_storage', 507, 'The database has no disk space left for this change; nothing was written. Reads keep working.'),
  databaseUnavailable: defineError('database_unavailable', 503, 'The database cannot be reached right now (restarting, failing over); retry after Retry-After seconds.'),
} as const

const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'Bearer realm="content-service"' }

export const notFound = (what = 'Resource') => KernelErrors.notFound(`${what} not found.`)
export const forbidden = (message = 'Your role does not allow this action.') => KernelErrors.forbidden(message)
export const conflict = (message: string) => KernelErrors.conflict(message)
export const unauthorized = (message = 'A valid bearer token is required.') =>
  KernelErrors.unauthorized(message, undefined, WWW_AUTHENTICATE)
export const validationFailed = (fields: Record<string, string[]>, message = 'The request is not valid.') =>
  KernelErrors.validationFailed(message, fields)

/** Postgres unique violation (SQLSTATE 23505), from either driver. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = findPgError(err)
  if (!e || e.code !== '23505') return false
  return constraint === undefined || e.constraint === constraint || e.constraint_name === constraint
}

/**
 * The one mapping of an expected unique violation to a domain error: a function that throws `error()` when `err` is
 * a unique violation of `constraint` (either driver, through drizzle's wrapping) and rethrows `err` as it is
 * otherwise. Use it as a promise's `catch` (`await transact(...).catch(slugTaken)`) or inside a `catch` block
 * (`catch (err) { slugTaken(err) }`), with the constraint named as the migration names it:
 *   const slugTaken = uniqueAs('forms_space_slug_live_key', () => FormErrors.slugTaken())
 * A violation nobody maps reaches the error handler, which answers a generic 409 and logs a missing check.
 */
export function uniqueAs(constraint: string, error: () => AppError): (err: unknown) => never {
  return (err) => {
    if (isUniqueViolation(err, constraint)) throw error()
    throw err
  }
}

/** The Postgres error inside a driver or drizzle error (SQLSTATE in `code`), or null. */
export function findPgError(err: unknown): { code?: string; constraint?: string; constraint_name?: string; message?: string } | null {
  // drizzle wraps driver errors (DrizzleQueryError) with the original in `cause`.
  let cur: unknown = err
  for (let i = 0; i < 4 && cur && typeof cur === 'object'; i++) {
    const c = cur as { code?: unknown; cause?: unknown }
    if (typeof c.code === 'string' && /^[0-9A-Z]{5}$/.test(c.code)) return c as never
    cur = c.cause
  }
  return null
}

/**
 * Error codes of the drivers (postgres.js, Node's sockets) and SQLSTATEs that mean "the database is not there right
 * now" rather than "this request is wrong": the server is down, restarting, failing over or out of connections.
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, recovering)
  '53300', // too_many_connections
])

/** Whether `err` (or what it wraps) says the database cannot be reached right now (503, not 500). */
export function isDatabaseUnavailable(err: unknown): boolean {
  let cur: unknown = err
  for (let i = 0; i < 5 && cur && typeof cur === 'object'; i++) {
    const c = cur as { code?: unknown; cause?: unknown }
    if (typeof c.code === 'string' && (UNAVAILABLE_CODES.has(c.code) || c.code.startsWith('08'))) return true
    cur = c.cause
  }
  return false
}

/** Whether `err` says the database's disk is full (SQLSTATE 53100 disk_full, or a write refused for lack of space). */
export function isDiskFull(err: unknown): boolean {
  const pg = findPgError(err)
  if (!pg) return false
  return pg.code === '53100' || (pg.code?.startsWith('58') === true && /no space left/i.test(pg.message ?? ''))
}
