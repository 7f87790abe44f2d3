import { ScopedCache, cacheShare, plainSize } from '../../kernel/cache'
import type { Kernel } from '../../kernel/kernel'
import { addRequests, periodAt, type Plan, planLimitError, planOfTenant, recordedRequests } from './service'

/** What the request limit of a Tenant is checked against: its plan, and the requests on record when it was read. */
interface TenantRequests {
  plan: Plan
  period: string
  recorded: number
}

interface Pending {
  tenantId: number
  period: string
  n: number
}

/**
 * API requests per Tenant per month, counted in memory and written in batches (every BILLING_FLUSH_SECONDS and at
 * shutdown): counting a request costs a Map update, never a query. A write is refused (402) once the requests on
 * record (read through a cache that lives one flush interval) plus this instance's unwritten ones reach the limit;
 * with several instances each sees the others' requests one flush late, so a limit can be passed by at most what the
 * other instances count in one interval. Reads are counted and never refused.
 */
export class RequestCounter {
  readonly cache: ScopedCache<number, TenantRequests>
  private pending = new Map<string, Pending>()
  /** Taken from `pending` by a flush that has not committed yet: still counted by checks. */
  private inFlight = new Map<string, number>()
  private period = { key: '', start: 0, end: 0 }
  private flushing: Promise<void> | null = null
  private timer: ReturnType<typeof setInterval> | null = null

  constructor(private kernel: Kernel) {
    this.cache = new ScopedCache<number, TenantRequests>({
      name: 'billing.requests',
      scopeOf: (tenantId) => tenantId,
      idOf: (tenantId) => String(tenantId),
      load: async (tenantId) => {
        const period = this.periodNow()
        const [plan, recorded] = await Promise.all([planOfTenant(kernel, tenantId), recordedRequests(kernel, tenantId, period)])
        return { plan, period, recorded }
      },
      now: () => kernel.clock.ms(),
      ttlMs: kernel.config.billingFlushSeconds * 1000,
      maxEntries: 10_000,
      maxBytes: cacheShare(kernel.config, 1 / 128),
      sizeOf: plainSize,
      invalidateOn: { 'billing.plan_changed': (e) => e.payload.tenant_id },
    })
  }

  /** The current period's key (`YYYY-MM`); a Date is made only when the month changes. */
  periodNow(): string {
    const ms = this.kernel.clock.ms()
    if (ms < this.period.start || ms >= this.period.end) this.period = periodAt(ms)
    return this.period.key
  }

  /** Requests this instance counted for the Tenant and period that are not on record yet. */
  unwritten(tenantId: number, period: string): number {
    const key = `${tenantId} ${period}`
    return (this.pending.get(key)?.n ?? 0) + (this.inFlight.get(key) ?? 0)
  }

  count(tenantId: number, period: string): void {
    const key = `${tenantId} ${period}`
    const entry = this.pending.get(key)
    if (entry) entry.n++
    else this.pending.set(key, { tenantId, period, n: 1 })
  }

  /** Throws 402 plan_limit when the Tenant's requests this period have reached its plan's limit. */
  async check(tenantId: number, period: string): Promise<void> {
    const cached = this.cache.get(tenantId)
    const t = cached instanceof Promise ? await cached : cached
    const limit = t.plan.limits.requests_per_month
    if (limit === null) return
    const used = (t.period === period ? t.recorded : 0) + this.unwritten(tenantId, period)
    if (used >= limit) throw planLimitError(t.plan, 'requests_per_month', used)
  }

  /** Writes what was counted (one flush at a time); on failure the counts go back to be written next time. */
  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => {
      this.flushing = null
    })
    return this.flushing
  }

  private async write() {
    if (!this.pending.size) return
    const batch = [...this.pending.values()]
    this.pending.clear()
    for (const b of batch) this.inFlight.set(`${b.tenantId} ${b.period}`, (this.inFlight.get(`${b.tenantId} ${b.period}`) ?? 0) + b.n)
    let written = false
    try {
      await addRequests(this.kernel, batch)
      written = true
    } catch (err) {
      this.kernel.logger.error('billing: counted requests could not be written; retrying at the next flush', { error: String(err) })
    } finally {
      for (const b of batch) {
        const key = `${b.tenantId} ${b.period}`
        const left = (this.inFlight.get(key) ?? 0) - b.n
        if (left > 0) this.inFlight.set(key, left)
        else this.inFlight.delete(key)
        if (!written) {
          const entry = this.pending.get(key)
          if (entry) entry.n += b.n
          else this.pending.set(key, { ...b })
        }
        // The record moved: the next check reads it anew.
        else this.cache.invalidateFor(b.tenantId)
      }
    }
  }

  start() {
    this.timer ??= setInterval(() => void this.flush(), this.kernel.config.billingFlushSeconds * 1000)
    this.timer.unref?.()
  }

  async close() {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.flush()
  }
}
