import type { Kernel } from '../../kernel/kernel'

const HEARTBEAT_MS = 25_000
const RETRY_MS = 3000
const encoder = new TextEncoder()
const SHUTDOWN_EVENT = encoder.encode(`event: shutdown\ndata: ${JSON.stringify({ reason: 'server_shutdown', retry_ms: RETRY_MS })}\n\n`)
const CONNECTED = encoder.encode(`retry: ${RETRY_MS}\n: connected\n\n`)
const KEEP_ALIVE = encoder.encode(': keep-alive\n\n')

interface Listener {
  send(chunk: Uint8Array): void
  close(): void
}

/**
 * The live stream of a Story (Server-Sent Events): who is present, comment changes, new versions. Listeners are per
 * process; events reach them from this instance at commit and from the others through LISTEN/NOTIFY (the module's
 * `on` handlers), so a client connected to any instance sees every change.
 */
export class LiveHub {
  private byStory = new Map<string, Set<Listener>>()
  private timer: ReturnType<typeof setInterval> | null = null

  get listeners(): number {
    let n = 0
    for (const s of this.byStory.values()) n += s.size
    return n
  }

  /** A `text/event-stream` Response that stays open until the client leaves or the process shuts down. */
  open(storyUuid: string, headers: Record<string, string>): Response {
    let listener: Listener | null = null
    const hub = this
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        let open = true
        listener = {
          send(chunk) {
            if (!open) return
            try {
              controller.enqueue(chunk)
            } catch {
              this.close()
            }
          },
          close() {
            if (!open) return
            open = false
            hub.remove(storyUuid, listener!)
            try {
              controller.close()
            } catch {}
          },
        }
        hub.add(storyUuid, listener)
        listener.send(CONNECTED)
      },
      cancel() {
        listener?.close()
      },
    })
    return new Response(stream, {
      headers: { ...headers, 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' },
    })
  }

  publish(storyUuid: string, event: string, data: unknown) {
    const set = this.byStory.get(storyUuid)
    if (!set?.size) return
    // Serialized and encoded once per event, not once per listener (the bytes are never written to).
    const chunk = encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    for (const l of [...set]) l.send(chunk)
  }

  private add(storyUuid: string, l: Listener) {
    let set = this.byStory.get(storyUuid)
    if (!set) this.byStory.set(storyUuid, (set = new Set()))
    set.add(l)
    // Comment lines keep proxies from closing an idle stream.
    this.timer ??= setInterval(() => {
      for (const s of this.byStory.values()) for (const x of [...s]) x.send(KEEP_ALIVE)
    }, HEARTBEAT_MS)
  }

  private remove(storyUuid: string, l: Listener) {
    const set = this.byStory.get(storyUuid)
    set?.delete(l)
    if (set && !set.size) this.byStory.delete(storyUuid)
    if (!this.byStory.size && this.timer) {
      clearInterval(this.timer)
      this.timer = null
    }
  }

  /**
   * Ends every stream (shutdown): a last `shutdown` event tells the client this instance is going away, then the
   * stream closes and EventSource reconnects after `retry` — through the load balancer, to an instance still running.
   */
  closeAll() {
    for (const s of [...this.byStory.values()]) {
      for (const l of [...s]) {
        l.send(SHUTDOWN_EVENT)
        l.close()
      }
    }
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }
}

export function createLiveHub(_kernel: Kernel) {
  return new LiveHub()
}
