// A real HTTP receiver for webhook tests: Bun.serve on 127.0.0.1, port 0. It records every request exactly as it
// arrived (raw body bytes, headers) and answers with whatever the test's responder says.

export interface ReceivedRequest {
  method: string
  path: string
  headers: Record<string, string>
  /** The raw body exactly as received. */
  raw: Uint8Array
  text: string
  json: any
  receivedAt: number
}

export type Responder = (req: ReceivedRequest, index: number) => Response | Promise<Response>

export interface Receiver {
  url: string
  port: number
  requests: ReceivedRequest[]
  /** Requests whose response has not been sent yet. */
  readonly open: number
  respond(fn: Responder): void
  /** Resolves when at least `n` requests have arrived; rejects after `timeoutMs`. */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>
  clear(): void
  stop(): Promise<void>
}

export function startReceiver(responder: Responder = () => new Response('ok')): Receiver {
  const requests: ReceivedRequest[] = []
  let current = responder
  let open = 0
  const waiters: { n: number; resolve: () => void }[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 60,
    async fetch(request) {
      const raw = new Uint8Array(await request.arrayBuffer())
      const text = new TextDecoder().decode(raw)
      let json: unknown = null
      try {
        json = JSON.parse(text)
      } catch {}
      const rec: ReceivedRequest = {
        method: request.method,
        path: new URL(request.url).pathname,
        headers: Object.fromEntries(request.headers),
        raw,
        text,
        json,
        receivedAt: performance.now(),
      }
      const index = requests.push(rec) - 1
      for (const w of [...waiters]) {
        if (requests.length >= w.n) {
          waiters.splice(waiters.indexOf(w), 1)
          w.resolve()
        }
      }
      open++
      try {
        return await current(rec, index)
      } finally {
        open--
      }
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port!,
    requests,
    get open() {
      return open
    },
    respond(fn) {
      current = fn
    },
    waitFor(n, timeoutMs = 5000) {
      if (requests.length >= n) return Promise.resolve(requests)
      return new Promise((resolve, reject) => {
        const w = { n, resolve: () => (clearTimeout(timer), resolve(requests)) }
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1)
          reject(new Error(`receiver: expected ${n} requests within ${timeoutMs} ms, got ${requests.length}`))
        }, timeoutMs)
        waiters.push(w)
      })
    },
    clear() {
      requests.length = 0
    },
    async stop() {
      await server.stop(true)
    },
  }
}
