import type { Kernel } from '../../kernel/kernel'
import type { BeaconMetrics, BeaconRow } from './beacon'
import { insertEvents, insertLateEvents, LATE_MS } from './repo'

/** A flush writes at most this many rows in one statement (and starts at once when this many wait). */
export const FLUSH_BATCH = 1000
export const FLUSH_INTERVAL_MS = 1000
/** While the database refuses writes, at most this many beacons wait in memory; later ones are dropped (counted). */
export const BUFFER_CAP = 100_000

/**
 * Accepted beacons wait here and are written in one multi-row insert every second, or as soon as 1,000 wait. A crash
 * loses what waits (at most about one second of beacons); a shutdown flushes it (the module's `close`). A batch the
 * database held back past LATE_MS (it refused writes for a while) is written through insertLateEvents, so slots
 * rolled up meanwhile still count it; the batches of a healthy database never pay for that.
 */
export class BeaconBuffer {
  private rows: BeaconRow[] = []
  private timer: ReturnType<typeof setInterval> | null = null
  private flushing: Promise<void> | null = null

  constructor(
    private kernel: Pick<Kernel, 'db' | 'logger' | 'clock'>,
    private metrics: BeaconMetrics,
  ) {}

  get pending(): number {
    return this.rows.length
  }

  /** Queues a row; false when the buffer is full (the database has been refusing writes). */
  push(row: BeaconRow): boolean {
    if (this.rows.length >= BUFFER_CAP) return false
    this.rows.push(row)
    if (this.rows.length >= FLUSH_BATCH && !this.flushing) void this.flush()
    return true
  }

  /** The one-second timer (serving processes). */
  start() {
    this.timer ??= setInterval(() => {
      if (this.rows.length && !this.flushing) void this.flush()
    }, FLUSH_INTERVAL_MS)
    this.timer.unref?.()
  }

  /** Stops the timer (rows stay queued; `flush()` writes them). */
  stop() {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }

  private isLate(batch: BeaconRow[]): boolean {
    const before = this.kernel.clock.ms() - LATE_MS
    for (const r of batch) if (r.at.getTime() < before) return true
    return false
  }

  /** Writes everything queued, in batches of FLUSH_BATCH; resolves when done (a flush in progress is joined). */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.rows.length ? this.flush() : undefined))
    if (!this.rows.length) return Promise.resolve()
    this.flushing = (async () => {
      try {
        while (this.rows.length) {
          const batch = this.rows.splice(0, FLUSH_BATCH)
          try {
            if (this.isLate(batch)) await insertLateEvents(this.kernel.db.db, batch)
            else await insertEvents(this.kernel.db, batch)
            this.metrics.written += batch.length
            this.metrics.inserts++
          } catch (err) {
            // Keep the batch for the next tick unless the backlog is at its cap; then it is lost (and counted).
            if (this.rows.length + batch.length <= BUFFER_CAP) this.rows.unshift(...batch)
            else this.metrics.dropped.write_failed += batch.length
            this.kernel.logger.error('writing beacons failed', { rows: batch.length, error: String(err) })
            return
          }
        }
      } finally {
        this.flushing = null
      }
    })()
    return this.flushing
  }
}
