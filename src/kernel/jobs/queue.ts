import { hostname } from 'node:os'
import { sql } from 'drizzle-orm'
import type { Clock } from '../clock'
import type { Database, DbOrTx } from '../db'
import type { Logger } from '../logger'
import { OutboxRelay } from './outbox'
import { CronSchedules } from './schedules'
import { iso, query } from './sql'
import {
  type AnyQueueName,
  type EnqueueOptions,
  JOBS_CHANNEL,
  type JobContext,
  type JobQueueOptions,
  type JobResult,
  type NewJob,
  OUTBOX_CHANNEL,
  type OutboxHandler,
  type PayloadOf,
  type QueueDefinition,
  type ScheduleDefinition,
  type StartOptions,
} from './types'
import { JobWorker } from './worker'

/** Outbox rows deleted per statement by `events.prune`: short transactions, no long lock on a busy table. */
export const EVENTS_PRUNE_BATCH = 5000

/**
 * The durable job queue on Postgres (graphile-worker / pg-boss style), shared by every feature that works in the
 * background: webhook deliveries, datasource pulls, presence pruning, rollups.
 *
 * - Workers claim due rows with `FOR UPDATE SKIP LOCKED` and hold them under a lease they renew while the job runs;
 *   a job whose process died is claimed again when its lease runs out. Several instances share one table.
 * - A queue may declare `timeoutMs`: an attempt running longer (by the clock) is failed by the queue, its handler's
 *   `signal` aborted and the queue's `onTimeout` called; a lease-expired job of such a queue is failed, not claimed
 *   again, once it is out of attempts or past its time.
 * - A failed attempt is retried after the queue's delays; a queue's schedule is its list of delays.
 * - Recurring schedules are five-field cron expressions (UTC); each tick fires once across all instances.
 * - The outbox relay turns committed events into jobs inside the transaction that marks them handled.
 * - LISTEN/NOTIFY wakes workers (on every instance) as soon as work is enqueued; polling covers the rest.
 * - Time comes only from the injected clock, so tests move it and call `runDueJobs()`.
 *
 * This file is the queue's API and its life (start, poll, stop); the work is done by `worker.ts` (claims, leases,
 * handlers, time limits), `schedules.ts` (cron ticks), `outbox.ts` (the relay), with `cron.ts` parsing expressions.
 */
export class JobQueue {
  readonly workerId = `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`
  readonly leaseMs: number
  readonly pollIntervalMs: number
  private db: Database
  private clock: Clock
  private logger: Logger
  private worker: JobWorker
  private schedules: CronSchedules
  private outbox: OutboxRelay
  private started = false
  private timers: ReturnType<typeof setInterval>[] = []
  private unlisten: (() => Promise<void>)[] = []
  private background = new Set<Promise<unknown>>()

  constructor(opts: JobQueueOptions) {
    this.db = opts.db
    this.clock = opts.clock
    this.logger = opts.logger
    this.leaseMs = opts.leaseMs ?? 30_000
    this.pollIntervalMs = opts.pollIntervalMs ?? 1_000
    const life = { isStarted: () => this.started, track: (p: Promise<unknown>) => this.track(p) }
    this.worker = new JobWorker({ db: this.db, clock: this.clock, logger: this.logger, leaseMs: this.leaseMs, workerId: this.workerId, ...life })
    this.schedules = new CronSchedules({ db: this.db, clock: this.clock, logger: this.logger, enqueueMany: (db, list) => this.enqueueMany(db, list) })
    this.outbox = new OutboxRelay({ db: this.db, clock: this.clock, logger: this.logger, ...life })
    this.define('jobs.prune', {
      handler: async ({ job }) => {
        const cutoff = new Date(this.clock.ms() - (job.payload.olderThanDays ?? 7) * 86_400_000)
        await query(this.db.db, sql`delete from jobs where finished_at is not null and finished_at < ${iso(cutoff)}::timestamptz`)
      },
    })
    this.schedule({ name: 'jobs.prune', cron: '17 * * * *', queue: 'jobs.prune', payload: { olderThanDays: 7 } })
    // The outbox: a relayed event (handled_at set) has become its jobs and reached every instance's bus (which reads a
    // row by id within seconds of its NOTIFY), so after the retention it is only weight. Unrelayed rows stay, however
    // old. Oldest first by primary key, in batches, so no statement holds many row locks or scans the table.
    this.define('events.prune', {
      handler: async ({ job }) => {
        const cutoff = iso(new Date(this.clock.ms() - (job.payload.olderThanHours ?? 24) * 3_600_000))
        for (;;) {
          const [row] = await query<{ n: number | string }>(
            this.db.db,
            sql`with d as (delete from events where id in (
                  select id from events where handled_at is not null and handled_at < ${cutoff}::timestamptz order by id limit ${EVENTS_PRUNE_BATCH}
                ) returning 1) select count(*) as n from d`,
          )
          if (Number(row?.n ?? 0) < EVENTS_PRUNE_BATCH) break
        }
      },
    })
    this.schedule({ name: 'events.prune', cron: '23 * * * *', queue: 'events.prune', payload: { olderThanHours: opts.eventsRetentionHours ?? 24 } })
  }

  // ---- definitions ----

  /** Registers the handler of a queue in this process (jobs may be enqueued from anywhere). */
  define<Q extends AnyQueueName>(queue: Q, def: QueueDefinition<PayloadOf<Q>>): void {
    this.worker.define(queue, def)
  }

  /** A recurring schedule defined in code; written to the database when workers start. */
  schedule<Q extends AnyQueueName>(def: ScheduleDefinition & { queue: Q; payload?: PayloadOf<Q> }): void {
    this.schedules.schedule(def)
  }

  /** Registers a consumer of committed events; all consumers run in the one transaction that marks events handled. */
  onOutbox(name: string, handler: OutboxHandler): void {
    this.outbox.onOutbox(name, handler)
  }

  // ---- producing work ----

  /** Adds one job; inside `tx` it exists (and wakes workers) only if that transaction commits. Null when deduped. */
  async enqueue<Q extends AnyQueueName>(queue: Q, payload: PayloadOf<Q>, opts: EnqueueOptions & { tx?: DbOrTx } = {}): Promise<number | null> {
    const [id] = await this.enqueueMany(opts.tx ?? this.db.db, [{ queue, payload, runAt: opts.runAt, dedupeKey: opts.dedupeKey }])
    return id ?? null
  }

  /** Adds jobs in one statement and wakes their queues' workers on every instance (at commit). Returns new ids. */
  async enqueueMany<Q extends AnyQueueName>(db: DbOrTx, list: readonly NewJob<Q>[]): Promise<number[]> {
    if (!list.length) return []
    const now = iso(this.clock.now())
    const rows = list.map((j) => ({
      queue: j.queue,
      payload: this.worker.sealPayload(j.queue, j.payload ?? {}),
      run_at: j.runAt ? iso(j.runAt) : now,
      dedupe_key: j.dedupeKey ?? null,
    }))
    // One statement, one parameter: the rows travel as JSON (cheap for the embedded database, which pays per
    // parameter), and NOTIFY rides along. NOTIFY inside a transaction is delivered at commit and dropped on rollback.
    const inserted = await query<{ id: number | string }>(
      db,
      sql`with ins as (
            insert into jobs (queue, payload, status, run_at, dedupe_key, created_at, updated_at)
            select r.queue, r.payload, 'pending', r.run_at, r.dedupe_key, ${now}::timestamptz, ${now}::timestamptz
            from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(queue text, payload jsonb, run_at timestamptz, dedupe_key text)
            on conflict (queue, dedupe_key) where status in ('pending', 'running') do nothing
            returning id, queue
          ),
          woken as (select count(pg_notify(${JOBS_CHANNEL}, q)) as n from (select distinct queue as q from ins) as queues)
          select ins.id, woken.n from ins, woken`,
    )
    return inserted.map((r) => Number(r.id))
  }

  /** Cancels pending jobs of `queue` with these dedupe keys (a running one finishes its attempt). Returns the count. */
  async cancel(db: DbOrTx, queue: string, dedupeKeys: string[]): Promise<number> {
    if (!dedupeKeys.length) return 0
    const now = iso(this.clock.now())
    const rows = await query<{ id: number }>(
      db,
      sql`update jobs set status = 'cancelled', finished_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
          where queue = ${queue} and status = 'pending'
            and dedupe_key in (${sql.join(
              dedupeKeys.map((k) => sql`${k}`),
              sql`, `,
            )})
          returning id`,
    )
    return rows.length
  }

  /** Creates or updates a recurring schedule (also at run time, e.g. a datasource's own cron). */
  upsertSchedule(db: DbOrTx, def: ScheduleDefinition): Promise<void> {
    return this.schedules.upsertSchedule(db, def)
  }

  removeSchedule(db: DbOrTx, name: string): Promise<void> {
    return this.schedules.removeSchedule(db, name)
  }

  /**
   * Called for every event the bus publishes after commit: wakes the relay here, or — when this process runs no
   * workers — tells the instances that do (they also find it by polling).
   */
  outboxWritten(): void {
    this.outbox.outboxWritten()
  }

  // ---- running work ----

  /**
   * Runs everything due at the clock's current time to completion: unhandled events, due cron ticks and due jobs,
   * again and again until nothing is left. The background loop does the same continuously; tests call this after
   * moving the clock. Returns the number of jobs run.
   */
  async runDueJobs(): Promise<number> {
    await this.schedules.syncSchedules()
    let total = 0
    for (;;) {
      await this.expireOverdue()
      await this.reclaimExpired()
      let progressed = await this.outbox.relayUntilEmpty()
      progressed += await this.schedules.tickSchedules()
      const ran = await this.worker.runClaimedOnce()
      progressed += ran
      total += ran
      if (!progressed) return total
    }
  }

  /** Starts the background workers of this process: LISTEN, polling, lease renewal. */
  async start(opts: StartOptions = {}): Promise<void> {
    if (this.started) return
    this.started = true
    if (opts.reclaimAbandoned) {
      const now = iso(this.clock.now())
      await query(this.db.db, sql`update jobs set locked_until = ${now}::timestamptz where status = 'running'`)
    }
    await this.reclaimExpired()
    await this.schedules.syncSchedules()
    this.unlisten.push(
      await this.db.listen(JOBS_CHANNEL, (queue) => {
        const q = this.worker.queues.get(queue)
        if (q) this.track(this.worker.pump(q))
      }),
      await this.db.listen(OUTBOX_CHANNEL, () => this.outbox.kickRelay()),
    )
    this.timers.push(
      setInterval(() => this.track(this.poll()), this.pollIntervalMs),
      // A third of the lease: renew ours well before they run out, and reclaim those of dead workers soon after.
      setInterval(
        () => this.track(this.expireOverdue().then(() => this.worker.renewLeases().then(() => this.reclaimExpired()))),
        Math.max(250, Math.floor(this.leaseMs / 3)),
      ),
    )
    this.track(this.poll())
    this.logger.info('job workers started', { worker: this.workerId, queues: [...this.worker.queues.keys()] })
  }

  /** Stops claiming, waits for running jobs to settle, stops listening. */
  async stop(): Promise<void> {
    this.outbox.stop()
    const wasStarted = this.started
    this.started = false
    for (const t of this.timers) clearInterval(t)
    this.timers = []
    while (this.background.size) await Promise.allSettled([...this.background])
    if (!wasStarted) return
    await Promise.allSettled(this.worker.inflight())
    for (const u of this.unlisten.splice(0)) await u().catch(() => {})
    this.logger.info('job workers stopped', { worker: this.workerId })
  }

  get isRunning(): boolean {
    return this.started
  }

  private track(p: Promise<unknown>) {
    const tracked = p
      .catch((err) => this.logger.error('job worker error', { error: String(err) }))
      .finally(() => this.background.delete(tracked))
    this.background.add(tracked)
  }

  /**
   * One statement asks what is due (unrelayed events, a schedule tick, pending jobs per queue); only that work then
   * touches the database. An idle poll is one cheap read instead of a transaction per concern and a claim per queue —
   * on embedded PGlite every statement runs on the event loop, so idle polling showed up as read-latency spikes.
   */
  private async poll() {
    if (!this.started) return
    const now = iso(this.clock.now())
    const [due] = await query<{ events: boolean; schedules: boolean; queues: string[] | null }>(
      this.db.db,
      sql`select exists(select 1 from events where handled_at is null) as events,
                 exists(select 1 from job_schedules where next_run_at <= ${now}::timestamptz) as schedules,
                 (select array_agg(distinct queue) from jobs where status = 'pending' and run_at <= ${now}::timestamptz) as queues`,
    )
    if (!due || !this.started) return
    if (due.events) this.outbox.kickRelay()
    if (due.schedules) await this.schedules.tickSchedules()
    // A tick just enqueued its job and notified; a pump already running for that queue folds the call in.
    for (const name of due.schedules ? this.worker.queues.keys() : (due.queues ?? [])) {
      const q = this.worker.queues.get(name)
      if (q) await this.worker.pump(q)
    }
  }


  /**
   * Puts running jobs whose lease has run out (their worker died or stalled) back to pending, due at once (failing
   * those of queues with `timeoutMs` that are out of time or attempts). See JobWorker.reclaimExpired.
   */
  reclaimExpired(): Promise<number> {
    return this.worker.reclaimExpired()
  }

  /**
   * Fails this instance's running jobs that ran past their queue's `timeoutMs` (by the clock), aborts their
   * handlers' signals and runs `onTimeout`. Called with the lease renewal and by `runDueJobs`; tests call it after
   * moving the clock while a handler runs. Returns how many it failed.
   */
  expireOverdue(): Promise<number> {
    return this.worker.expireOverdue()
  }

  /**
   * Settles several running jobs in one statement, inside `db` (usually the transaction that also writes their
   * handlers' results). Returns the contexts whose lease was lost — another worker holds them now — whose results
   * the caller must not write.
   */
  settleMany(db: DbOrTx, items: { ctx: JobContext<any>; result: JobResult }[]): Promise<JobContext<any>[]> {
    return this.worker.settleMany(db, items)
  }

  /**
   * Claims up to `limit` unhandled events, hands them to every outbox consumer and marks them handled — all in one
   * transaction, so a crash leaves them unhandled (and relayed again) and a consumer's failure keeps them too.
   */
  relayBatch(limit = 200): Promise<number> {
    return this.outbox.relayBatch(limit)
  }
}
