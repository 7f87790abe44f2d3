/**
 * Every request of the CLI goes through `@content-service/sdk` (its `client.api`, bundled into the command): one
 * client per server and token, with a fetch that retries what is safe to retry — a GET whose connection failed (twice
 * more), and any call answered 429 or 503 (honouring Retry-After, at most 10 s) — and gives each attempt 30 s.
 * Failures are `ApiError`s: the server's status, error code, message and field errors, or status 0 when unreachable.
 */
import { createClient } from '@content-service/sdk'

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly errors?: Record<string, string[]>,
  ) {
    super(message)
  }
}

export interface CallOptions {
  /** Extra request headers. */
  headers?: Record<string, string>
  /** The body is sent as it is (FormData, or a string whose bytes are signed), not as JSON. */
  raw?: boolean
  /** The answer's bytes instead of its JSON. */
  bytes?: boolean
}

export interface Api {
  server: string
  token: string | null
  /** `path` below /v1, e.g. `/spaces/demo/stories?page=2`. */
  call<T = any>(method: string, path: string, body?: unknown, o?: CallOptions): Promise<T>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function retryingFetch(server: string) {
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const method = (input instanceof Request ? input.method : init?.method) ?? 'GET'
    for (let attempt = 0; ; attempt++) {
      const req = input instanceof Request ? input.clone() : input
      let res: Response
      try {
        res = await fetch(req, { ...init, signal: AbortSignal.timeout(30_000) })
      } catch (err) {
        if (attempt < 2 && method === 'GET') continue
        throw new ApiError(`${server} cannot be reached: ${(err as Error).message}`, 0, 'network_error')
      }
      if ((res.status === 429 || res.status === 503) && attempt < 3) {
        await res.body?.cancel()
        await sleep(Math.min(10_000, Number(res.headers.get('retry-after') ?? 1) * 1000))
        continue
      }
      return res
    }
  }
}

/** The API of one server, with one token (or none). */
export function connect(server: string, token: string | null): Api {
  const client = createClient({ baseUrl: server, space: '-', token: token ?? undefined, cache: false, fetch: retryingFetch(server) as typeof fetch })
  const api = client.api as unknown as {
    request(method: string, url: string, init: Record<string, unknown>): Promise<{ data?: unknown; error?: any; response: Response }>
  }
  return {
    server,
    token,
    async call<T>(method: string, path: string, body?: unknown, o: CallOptions = {}): Promise<T> {
      const r = await api.request(method, `/v1${path}`, {
        headers: { Accept: 'application/json', ...o.headers },
        ...(body === undefined ? {} : { body }),
        ...(o.raw ? { bodySerializer: (b: unknown) => b } : {}),
        ...(o.bytes ? { parseAs: 'arrayBuffer' } : {}),
      })
      if (!r.response.ok) {
        const e = r.error && typeof r.error === 'object' ? r.error : null
        throw new ApiError(e?.message ?? `HTTP ${r.response.status}`, r.response.status, e?.error ?? 'http_error', e?.errors)
      }
      return (o.bytes ? new Uint8Array(r.data as ArrayBuffer) : r.data) as T
    },
  }
}
