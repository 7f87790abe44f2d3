import { sql } from 'drizzle-orm'
import type { Clock } from '../clock'
import type { Database, DbOrTx } from '../db'
import type { Logger } from '../logger'
import type { JobQueue } from './queue'
import { iso, query } from './sql'
import {
  type AnyQueueName,
  type JobContext,
  type JobRecord,
  type JobResult,
  JobTimeoutError,
  LeaseLostError,
  type PayloadOf,
  PermanentJobError,
  type QueueDefinition,
} from './types'

/**
 * The worker side of the job queue: the queues this process defined, claiming due jobs under a lease
 * (`FOR UPDATE SKIP LOCKED`), running their handlers, settling them (retry delays, keepPayload, the claim token that
 * makes a lost lease harmless), renewing leases, reclaiming expired ones and enforcing `timeoutMs`. The queue
 * (`queue.ts`) owns its life: `isStarted` and `track` are its own. One class of a little over 300 lines, on purpose:
 * claiming, running, settling and expiring share the claim tokens and the map of running attempts, and split apart
 * they would hand each other that state.
 */
interface ClaimedRow {
  id: number | string
  queue: string
  payload: unknown
  attempts: number
  run_at: Date | string
  created_at: Date | string
  dedupe_key: string | null
}

interface QueueState {
  name: string
  def: QueueDefinition<any>
  concurrency: number
  inflight: Map<number, Promise<void>>
  pumping: boolean
  again: boolean
}

interface Running {
  token: string
  job: JobRecord
  q: QueueState
  ctx: JobContext
  controller: AbortController
  /** Epoch ms (the queue's clock) past which the attempt is failed; Infinity without `timeoutMs`. */
  deadline: number
  timedOut: boolean
}

interface Claim {
  q: QueueState
  job: JobRecord
  token: string
  /** Set once a settle statement matched; a fallback settle after it changes nothing (the token is gone). */
  settled: boolean
  /** `keepPayload`'s value: replaces the payload when the job settles as done or failed. */
  kept?: { payload: unknown }
}

export interface JobWorkerDeps {
  db: Database
  clock: Clock
  logger: Logger
  leaseMs: number
  workerId: string
  isStarted(): boolean
  /** Runs a background promise, logging its failure; `stop` waits for it. */
  track(p: Promise<unknown>): void
}

/**
 * Why one class of about 320 lines: claiming, running, settling, renewing leases and expiring overdue attempts share
 * the worker's map of running attempts and their claims (token, deadline, settled flag); each step checks or updates
 * them, and a settle that raced a lease expiry is decided there. The queue's API (queue.ts), cron schedules
 * (schedules.ts), the outbox (outbox.ts) and the SQL (sql.ts) are already apart.
 */
export class JobWorker {
  readonly queues = new Map<string, QueueState>()
  private running = new Map<number, Running>()
  private claims = new WeakMap<JobContext<any>, Claim>()

  constructor(private deps: JobWorkerDeps) {}

  /** Registers the handler of a queue in this process (jobs may be enqueued from anywhere). */
  define<Q extends AnyQueueName>(queue: Q, def: QueueDefinition<PayloadOf<Q>>): void {
    if (this.queues.has(queue)) throw new Error(`job queue "${queue}" is defined twice`)
    this.queues.set(queue, {
      name: queue,
      def,
      concurrency: Math.max(1, def.concurrency ?? 1),
      inflight: new Map(),
      pumping: false,
      again: false,
    })
  }

  /**
   * Keeps `q` at its concurrency while due jobs exist. Re-entrant calls fold into the running one. A finished job
   * refills its slot only once half the slots are free, so that under load jobs are claimed (and their handlers
   * batch their queries) in groups rather than one by one; notifications and polls refill any free slot.
   */
  async pump(q: QueueState): Promise<void> {
    if (!this.deps.isStarted()) return
    if (q.pumping) {
      q.again = true
      return
    }
    q.pumping = true
    try {
      do {
        q.again = false
        while (this.deps.isStarted() && q.inflight.size < q.concurrency) {
          const limit = q.concurrency - q.inflight.size
          const claimed = await this.claim(q, limit)
          for (const row of claimed) {
            const id = Number(row.id)
            const p = this.execute(q, row).finally(() => {
              q.inflight.delete(id)
              if (this.deps.isStarted() && q.inflight.size <= q.concurrency / 2) this.deps.track(this.pump(q))
            })
            q.inflight.set(id, p)
          }
          if (claimed.length < limit) break
        }
      } while (q.again && this.deps.isStarted())
    } finally {
      q.pumping = false
    }
  }

  private async claim(q: QueueState, limit: number): Promise<(ClaimedRow & { token: string })[]> {
    if (limit <= 0) return []
    const now = this.deps.clock.now()
    const token = crypto.randomUUID()
    const rows = await query<ClaimedRow>(
      this.deps.db.db,
      sql`with due as (
            select id from jobs
            where queue = ${q.name} and status = 'pending' and run_at <= ${iso(now)}::timestamptz
            order by run_at, id
            limit ${limit}
            for update skip locked
          )
          update jobs as j set status = 'running', attempts = j.attempts + 1, claim_token = ${token},
            locked_by = ${this.deps.workerId}, locked_until = ${iso(new Date(now.getTime() + this.deps.leaseMs))}::timestamptz,
            updated_at = ${iso(now)}::timestamptz
          from due where j.id = due.id
          returning j.id, j.queue, j.payload, j.attempts, j.run_at, j.created_at, j.dedupe_key`,
    )
    return rows.map((r) => ({ ...r, token }))
  }

  /**
   * Puts running jobs whose lease has run out (their worker died or stalled) back to pending, due at once. Their
   * claim token goes, so a stalled worker that wakes up cannot settle them; the lost attempt still counts.
   */
  async reclaimExpired(): Promise<number> {
    await this.failExpiredTimed()
    const now = iso(this.deps.clock.now())
    const rows = await query<{ id: number; queue: string }>(
      this.deps.db.db,
      sql`update jobs set status = 'pending', run_at = ${now}::timestamptz, claim_token = null, locked_by = null,
            locked_until = null, last_error = 'lease expired (worker stopped or stalled)', updated_at = ${now}::timestamptz
          where status = 'running' and locked_until <= ${now}::timestamptz
          returning id, queue`,
    )
    if (rows.length) this.deps.logger.warn('reclaimed jobs with expired leases', { jobs: rows.length })
    return rows.length
  }

  /**
   * Lease-expired jobs of queues with `timeoutMs` that are out of attempts or started (claimed: `updated_at` of a
   * running row) longer ago than their time: failed, not claimed again, and their queue's `onTimeout` runs here.
   */
  private async failExpiredTimed(): Promise<number> {
    const timed = [...this.queues.values()]
      .filter((q) => q.def.timeoutMs !== undefined)
      .map((q) => ({ queue: q.name, timeout_ms: q.def.timeoutMs!, max_attempts: (q.def.retryDelaysMs?.length ?? 0) + 1 }))
    if (!timed.length) return 0
    const now = this.deps.clock.now()
    const rows = await query<ClaimedRow>(
      this.deps.db.db,
      sql`with limits as (
            select * from jsonb_to_recordset(${JSON.stringify(timed)}::jsonb) as l(queue text, timeout_ms bigint, max_attempts int)
          )
          update jobs as j set status = 'failed', finished_at = ${iso(now)}::timestamptz, claim_token = null, locked_by = null,
            locked_until = null, updated_at = ${iso(now)}::timestamptz,
            last_error = case when j.attempts >= l.max_attempts then 'lease expired (worker stopped or stalled), no attempts left'
                              else 'timed out after ' || (l.timeout_ms / 1000) || ' s (lease expired)' end
          from limits as l
          where j.queue = l.queue and j.status = 'running' and j.locked_until <= ${iso(now)}::timestamptz
            and (j.attempts >= l.max_attempts or j.updated_at + l.timeout_ms * interval '1 millisecond' <= ${iso(now)}::timestamptz)
          returning j.id, j.queue, j.payload, j.attempts, j.run_at, j.created_at, j.dedupe_key, j.last_error`,
    )
    for (const row of rows) {
      this.deps.logger.warn('failed a job whose lease expired', { queue: row.queue, job: Number(row.id) })
      const q = this.queues.get(row.queue)
      let job = this.recordOf(row)
      try {
        job = this.opened(q?.def, job)
      } catch {} // onTimeout then sees the payload as stored
      await this.notifyTimeout(q, job, String((row as { last_error?: string }).last_error ?? 'timed out'))
    }
    return rows.length
  }

  /**
   * Fails this instance's running jobs that ran past their queue's `timeoutMs` (by the clock), aborts their
   * handlers' signals and runs `onTimeout`. Called with the lease renewal and by `runDueJobs`; tests call it after
   * moving the clock while a handler runs. Returns how many it failed.
   */
  async expireOverdue(): Promise<number> {
    const now = this.deps.clock.ms()
    let failed = 0
    for (const r of [...this.running.values()]) {
      if (r.timedOut || r.deadline > now) continue
      r.timedOut = true
      const error = `timed out after ${Math.round(r.q.def.timeoutMs! / 1000)} s`
      const lost = await this.settleMany(this.deps.db.db, [{ ctx: r.ctx, result: { status: 'failed', error } }]).catch((e) => {
        this.deps.logger.error('could not fail a timed-out job', { queue: r.q.name, job: r.job.id, error: String(e) })
        r.timedOut = false
        return null
      })
      if (lost === null) continue
      if (!lost.length) {
        failed++
        this.deps.logger.warn('job timed out', { queue: r.q.name, job: r.job.id, timeout_ms: r.q.def.timeoutMs })
        await this.notifyTimeout(r.q, r.job, error)
      }
      r.controller.abort(new JobTimeoutError(`job ${r.job.id} ${error}`))
    }
    return failed
  }

  private async notifyTimeout(q: QueueState | undefined, job: JobRecord, error: string) {
    if (!q?.def.onTimeout) return
    await q.def.onTimeout(job, error).catch((e) => this.deps.logger.error('onTimeout failed', { queue: q.name, job: job.id, error: String(e) }))
  }

  /** The payload as the queue stores it (its `payloadCodec`'s seal), or as given. */
  sealPayload(queue: string, payload: unknown): unknown {
    const codec = this.queues.get(queue)?.def.payloadCodec
    return codec ? codec.seal(payload) : payload
  }

  /** The job with its payload opened by its queue's codec; throws what the codec's `open` throws. */
  private opened(def: QueueDefinition<any> | undefined, job: JobRecord): JobRecord {
    return def?.payloadCodec ? { ...job, payload: def.payloadCodec.open(job.payload) } : job
  }

  /** The job as its row stores it. */
  private recordOf(row: ClaimedRow): JobRecord {
    return {
      id: Number(row.id),
      queue: row.queue,
      payload: row.payload,
      attempt: Number(row.attempts),
      runAt: new Date(row.run_at),
      createdAt: new Date(row.created_at),
      dedupeKey: row.dedupe_key,
    }
  }

  private retryAt(q: QueueState, attempt: number): Date | null {
    const delays = q.def.retryDelaysMs ?? []
    if (attempt > delays.length) return null
    return new Date(this.deps.clock.ms() + delays[attempt - 1])
  }

  private async execute(q: QueueState, row: ClaimedRow & { token: string }): Promise<void> {
    const stored = this.recordOf(row)
    let job: JobRecord
    try {
      job = this.opened(q.def, stored)
    } catch (err) {
      // The stored payload does not open (e.g. sealed under another SERVICE_SECRET_KEY): no attempt can succeed.
      const error = `the stored payload cannot be opened: ${err instanceof Error ? err.message : String(err)}`
      this.deps.logger.error('job payload cannot be opened', { queue: q.name, job: stored.id, error })
      const ctx = { job: stored } as JobContext
      this.claims.set(ctx, { q, job: stored, token: row.token, settled: false })
      await this.settleMany(this.deps.db.db, [{ ctx, result: { status: 'failed', error } }]).catch((e) =>
        this.deps.logger.error('could not settle job', { queue: q.name, job: stored.id, error: String(e) }),
      )
      return
    }
    const controller = new AbortController()
    const claim: Claim = { q, job, token: row.token, settled: false }
    const ctx: JobContext = {
      signal: controller.signal,
      job,
      nextRetryAt: () => this.retryAt(q, job.attempt),
      settle: async (tx, result) => {
        const lost = await this.settleMany(tx, [{ ctx, result }])
        if (lost.length) throw new LeaseLostError(`job ${job.id} was claimed by another worker`)
      },
      keepPayload: (payload) => {
        claim.kept = { payload }
      },
    }
    this.claims.set(ctx, claim)
    const deadline = q.def.timeoutMs === undefined ? Number.POSITIVE_INFINITY : this.deps.clock.ms() + q.def.timeoutMs
    const running: Running = { token: row.token, job, q, ctx, controller, deadline, timedOut: false }
    this.running.set(job.id, running)
    try {
      await q.def.handler(ctx)
      if (!claim.settled) await this.settleMany(this.deps.db.db, [{ ctx, result: { status: 'done' } }])
    } catch (err) {
      const error = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
      if (running.timedOut) {
        // Failed by expireOverdue already; whatever the handler did after that is void.
      } else if (err instanceof LeaseLostError) {
        this.deps.logger.warn('job lease lost', { queue: q.name, job: job.id })
      } else {
        this.deps.logger.warn('job attempt failed', { queue: q.name, job: job.id, attempt: job.attempt, error })
        // If the handler settled inside a transaction that then rolled back, the token still matches and this
        // settles the job; if that transaction committed, the token is gone and this changes nothing.
        const result: JobResult = err instanceof PermanentJobError ? { status: 'failed', error } : { status: 'retry', error }
        await this.settleMany(this.deps.db.db, [{ ctx, result }]).catch((e) =>
          this.deps.logger.error('could not settle job', { queue: q.name, job: job.id, error: String(e) }),
        )
      }
    } finally {
      this.running.delete(job.id)
    }
  }

  /**
   * Settles several running jobs in one statement, inside `db` (usually the transaction that also writes their
   * handlers' results). Returns the contexts whose lease was lost — another worker holds them now — whose results
   * the caller must not write.
   */
  async settleMany(db: DbOrTx, items: { ctx: JobContext<any>; result: JobResult }[]): Promise<JobContext<any>[]> {
    if (!items.length) return []
    const now = this.deps.clock.now()
    const claims = items.map(({ ctx, result }) => {
      const claim = this.claims.get(ctx)
      if (!claim) throw new Error('settleMany: not a context of this queue')
      let status: 'done' | 'failed' | 'pending' = result.status === 'done' ? 'done' : 'failed'
      let runAt: Date | null = null
      if (result.status === 'retry' && this.retryAt(claim.q, claim.job.attempt)) {
        runAt = result.runAt ?? this.retryAt(claim.q, claim.job.attempt)
        status = 'pending'
      }
      const error = result.status === 'done' ? null : result.error.slice(0, 2000)
      const kept = status !== 'pending' && claim.kept ? JSON.stringify(claim.kept.payload ?? {}) : null
      return { claim, status, runAt, error, kept }
    })
    const values = sql.join(
      claims.map(
        (c) =>
          sql`(${c.claim.job.id}::bigint, ${c.claim.token}::text, ${c.status}::text, ${c.runAt ? iso(c.runAt) : null}::timestamptz,
               ${c.error}::text, ${c.status === 'pending' ? null : iso(now)}::timestamptz, ${c.kept}::jsonb)`,
      ),
      sql`, `,
    )
    const rows = await query<{ id: number | string }>(
      db,
      sql`update jobs as j set status = v.status, run_at = coalesce(v.run_at, j.run_at), last_error = v.error,
            finished_at = v.finished_at, claim_token = null, locked_by = null, locked_until = null,
            updated_at = ${iso(now)}::timestamptz, payload = coalesce(v.kept, j.payload)
          from (values ${values}) as v(id, token, status, run_at, error, finished_at, kept)
          where j.id = v.id and j.claim_token = v.token and j.status = 'running'
          returning j.id`,
    )
    const done = new Set(rows.map((r) => Number(r.id)))
    const lost: JobContext<any>[] = []
    for (const [i, c] of claims.entries()) {
      if (done.has(c.claim.job.id)) c.claim.settled = true
      else lost.push(items[i].ctx)
    }
    return lost
  }

  async renewLeases() {
    if (!this.running.size) return
    const now = this.deps.clock.now()
    const ids = `{${[...this.running.keys()].join(',')}}`
    await query(
      this.deps.db.db,
      sql`update jobs set locked_until = ${iso(new Date(now.getTime() + this.deps.leaseMs))}::timestamptz
          where id = any(${ids}::bigint[]) and locked_by = ${this.deps.workerId} and status = 'running'`,
    )
  }

  /** One round of `runDueJobs`: up to 50 due jobs of every queue, claimed and run. Returns how many ran. */
  async runClaimedOnce(): Promise<number> {
    let total = 0
    for (const q of this.queues.values()) {
      const claimed = await this.claim(q, 50)
      await Promise.all(claimed.map((r) => this.execute(q, r)))
      total += claimed.length
    }
    return total
  }

  /** Every handler running now, for `stop` to wait on. */
  inflight(): Promise<void>[] {
    return [...this.queues.values()].flatMap((q) => [...q.inflight.values()])
  }
}

export interface Workers {
  stop(): Promise<void>
}

/**
 * Starts this process's job workers (`content-service serve` without --no-worker, and `content-service worker`).
 * The queues, schedules and outbox consumers are the ones the modules registered on `kernel.jobs` (createRuntime).
 */
export async function startWorkers(kernel: { jobs: JobQueue; db: Database }): Promise<Workers> {
  await kernel.jobs.start({ reclaimAbandoned: kernel.db.driver === 'pglite' })
  return { stop: () => kernel.jobs.stop() }
}
