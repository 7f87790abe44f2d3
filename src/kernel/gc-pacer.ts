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
 * the last one — or if the process was busy for at least `minBusy` of the interval (CPU time): a few heavy requests
 * allocate as much as thousands of light ones. A cold search loads a Space's index from its rows (Story JSON parsed,
 * words split, arrays filled) and a walk over thousands of cold Spaces serves a few hundred requests a second: without
 * this the young generation grew to ~0.75 × the heap between collections, and JavaScriptCore keeps the blocks it
 * grew to (measured, a walk over 3,000 cold Spaces with the search budget full: 16 KB collector blocks 118 → 83 MB,
 * peak RSS 443 → 381 MB, ~6% more CPU; docs/performance.md). An idle or quiet server is never collected by it;
 * JavaScriptCore's own schedule still runs.
 */
export class GcPacer {
  private served = 0
  private timer: ReturnType<typeof setInterval> | null = null
  private cpuAtLastTick: number

  constructor(
    private everyMs = 100,
    private minRequests = 1000,
    private collect: () => unknown = edenGC,
    /** Share of the interval the process must have been on a CPU (user + system time) to collect without requests. */
    private minBusy = 0.3,
    /** The process's CPU time so far, in microseconds. */
    private cpuMicros: () => number = () => {
      const u = process.cpuUsage()
      return u.user + u.system
    },
  ) {
    this.cpuAtLastTick = cpuMicros()
  }

  /** One request served (a counter increment: the only cost on the request path). */
  count() {
    this.served++
  }

  start() {
    if (this.timer) return
    this.timer = setInterval(() => this.tick(), this.everyMs)
    this.timer.unref?.()
  }

  /** Collects when enough requests were served, or CPU time spent, since the last tick; true when it did. */
  tick(): boolean {
    const cpu = this.cpuMicros()
    const busy = cpu - this.cpuAtLastTick >= this.minBusy * this.everyMs * 1000
    this.cpuAtLastTick = cpu
    if (this.served < this.minRequests && !busy) return false
    this.served = 0
    this.collect()
    // The collection's own time does not count towards the next tick.
    this.cpuAtLastTick = this.cpuMicros()
    return true
  }

  stop() {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }
}
