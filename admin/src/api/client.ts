import createClient, { type Middleware } from 'openapi-fetch'
import { getToken } from '../auth'
import type { components, paths } from './schema'

export type Schemas = components['schemas']

/** The one error body of every answer (`{error, message, errors?}`). */
export interface ApiError {
  error: string
  message: string
  errors?: Record<string, string[]>
  /** Facts beyond the code, e.g. with 402 plan_limit: {limit, value, usage}. */
  details?: Record<string, unknown>
  request_id?: string
}

/** Thrown by `unwrap` for any answer that is not a success; `status` 0 is a network failure. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiError,
  ) {
    super(body.message)
  }
}

let onUnauthorized: () => void = () => {}
/** What a 401 on an authenticated request does (the router sends the user to sign-in and back). */
export function handleUnauthorized(fn: () => void) {
  onUnauthorized = fn
}
let onAccessRefused: () => void = () => {}
/** What a 403 or 404 from a Space's route does (the caller's role may have changed: whoami is read again). */
export function handleAccessRefused(fn: () => void) {
  onAccessRefused = fn
}

/** For requests made outside the typed client (uploads through XMLHttpRequest): run the same 401 handling. */
export const notifyUnauthorized = () => onUnauthorized()

const auth: Middleware = {
  onRequest({ request }) {
    const token = getToken()
    if (token) request.headers.set('Authorization', `Bearer ${token}`)
    return request
  },
  onResponse({ request, response }) {
    if (response.status === 401 && request.headers.has('Authorization')) onUnauthorized()
    else if ((response.status === 403 || response.status === 404) && new URL(request.url).pathname.startsWith('/v1/spaces/')) onAccessRefused()
    return response
  },
}

/** The typed client of this service's API: same origin, paths and bodies checked against schema.d.ts. */
export const api = createClient<paths>({ baseUrl: '' })
api.use(auth)

/** The data of a success, or an ApiFailure carrying the error body. */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response }
  try {
    result = await call
  } catch {
    throw new ApiFailure(0, { error: 'network', message: 'The server cannot be reached. Check your connection and try again.' })
  }
  if (result.response.ok) return result.data as T
  const body = (result.error ?? {}) as Partial<ApiError>
  throw new ApiFailure(result.response.status, {
    error: body.error ?? 'error',
    message: body.message ?? `The server answered ${result.response.status}.`,
    errors: body.errors,
    details: body.details,
    request_id: body.request_id,
  })
}
