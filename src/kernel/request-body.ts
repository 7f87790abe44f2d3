import { KernelErrors } from './errors'
import { bytesText, readBodyCapped } from './http'
import { MAX_JSON_DEPTH, readJson } from './json'
import type { Kernel } from './kernel'
import type { RequestFront } from './request-front'

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

/** What Elysia hands the parse hook (the fields the parser reads). */
export interface ParseContext {
  request: Request
  contentType?: string | null
  route?: string
}

/**
 * The kernel's `onParse` hook: JSON bodies only (or `+json`), bounded by JSON_BODY_LIMIT and read through
 * `kernel/json.ts`; their exact bytes stay on `front.info(request).rawBody`. A type the route declares
 * (`RouteBodyTypes`) is left unread for the route; any other body is 415.
 */
export function jsonBodyParser(kernel: Kernel, front: RequestFront, bodyTypes: RouteBodyTypes) {
  const { config } = kernel
  return async ({ request, contentType, route }: ParseContext): Promise<unknown> => {
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
  }
}

function bodyTooLarge(limit: number) {
  return KernelErrors.payloadTooLarge(`The request body is larger than ${bytesText(limit)}.`)
}
