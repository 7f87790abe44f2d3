/** The one error body of the API (spec 7): `{error, message, errors?}`. */
export interface ErrorBody {
  error: string
  message: string
  errors?: Record<string, string[]>
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
  ) {
    super(message)
  }
}

export const notFound = (what = 'Resource') => new AppError(404, 'not_found', `${what} not found.`)
export const forbidden = (message = 'Your role does not allow this action.') => new AppError(403, 'forbidden', message)
export const conflict = (message: string, code = 'conflict') => new AppError(409, code, message)
export const unauthorized = (message = 'A valid bearer token is required.') =>
  new AppError(401, 'unauthorized', message, undefined, { 'WWW-Authenticate': 'Bearer realm="content-service"' })
export const validationFailed = (fields: Record<string, string[]>, message = 'The request is not valid.') =>
  new AppError(422, 'validation_failed', message, fields)

/** Postgres unique violation (SQLSTATE 23505), from either driver. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = findPgError(err)
  if (!e || e.code !== '23505') return false
  return constraint === undefined || e.constraint === constraint || e.constraint_name === constraint
}

function findPgError(err: unknown): { code?: string; constraint?: string; constraint_name?: string } | null {
  // drizzle wraps driver errors (DrizzleQueryError) with the original in `cause`.
  let cur: unknown = err
  for (let i = 0; i < 4 && cur && typeof cur === 'object'; i++) {
    const c = cur as { code?: unknown; cause?: unknown }
    if (typeof c.code === 'string' && /^[0-9A-Z]{5}$/.test(c.code)) return c as never
    cur = c.cause
  }
  return null
}
