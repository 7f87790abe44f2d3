import { edenGC } from 'bun:jsc'

/**
 * Keeps young-generation garbage collections small while the server is busy.
 *
 * JavaScriptCore sizes the allocation budget between two young collections from the heap size, and the heap size it
 * sees includes memory held outside JavaScript objects — above all embedded PGlite's WebAssembly memory (hundreds of
 * MB). Left alone, a busy server therefore collects only two or three times a second, each time with the garbage of
 * some 20,000 requests, and sweeping that garbage runs in 10 ms slices on the event loop: every request in flight
 * waits (measured: loop stalls of 10–13 ms several times a second, p99 of cached reads 7.6 ms against 3.4 ms with this
 * pacer, and no loss of throughput; see docs/bench-read.md).
 *
 * The pacer counts requests and, every `everyMs`, runs a young collection if at least `minRequests` were served since
 * the last one. An idle or quiet server is never collected by it; JavaScriptCore's own schedule still runs.
 */
export class GcPacer {
  private served = 0
  private timer: ReturnType<typeof setInterval> | null = null

  constructor(
    private everyMs = 100,
    private minRequests = 1000,
    private collect: () => unknown = edenGC,
  ) {}

  /** One request served (a counter increment: the only cost on the request path). */
  count() {
    this.served++
  }

  start() {
    if (this.timer) return
    this.timer = setInterval(() => this.tick(), this.everyMs)
    this.timer.unref?.()
  }

  /** Collects when enough requests were served since the last collection; true when it did. */
  tick(): boolean {
    if (this.served < this.minRequests) return false
    this.served = 0
    this.collect()
    return true
  }

  stop() {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }
}
