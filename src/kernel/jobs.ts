import { hostname } from 'node:os'
import { Cron } from 'croner'
import { type SQL, sql } from 'drizzle-orm'
import type { Clock } from './clock'
import { type Database, type DbOrTx, rowsOf, type Tx } from './db'
import type { DomainEvent, EventType } from './events'
import type { Logger } from './logger'

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
 */

/**
 * Queue names and their payloads. Each module declares its queues by declaration merging, next to their handlers:
 *
 *   declare module '../../kernel/jobs' {
 *     interface JobMap { 'webhooks.deliver': { deliveryId: string } }
 *   }
 *
 * A declared queue's payload is typed wherever it is defined, enqueued or scheduled.
 */
export interface JobMap {
  'jobs.prune': { olderThanDays?: number }
  'events.prune': { olderThanHours?: number }
}
export type QueueName = keyof JobMap & string

/**
 * A queue name as `define`, `enqueue` and `schedule` take it (the graphile-worker shape): a declared name, whose
 * payload is then checked, or any other string (a queue made at run time, e.g. in tests), whose payload is unknown.
 */
export type AnyQueueName = QueueName | (string & {})
/** The payload of queue `Q`: `JobMap[Q]` for a declared queue, unknown otherwise. */
export type PayloadOf<Q extends string> = Q extends QueueName ? JobMap[Q] : unknown

export const JOBS_CHANNEL = 'cs_jobs'
export const OUTBOX_CHANNEL = 'cs_outbox'

export interface JobRecord<P = unknown> {
  id: number
  queue: string
  payload: P
  /** 1 for the first attempt; a claim counts, so an attempt cut short by a crash counts too. */
  attempt: number
  runAt: Date
  createdAt: Date
  dedupeKey: string | null
}

export type JobResult =
  | { status: 'done' }
  | { status: 'retry'; error: string; /** default: the queue's delay for this attempt, from now */ runAt?: Date }
  | { status: 'failed'; error: string }

export interface JobContext<P = unknown> {
  job: JobRecord<P>
  /** When this job would run again if this attempt failed now with a retryable error; null on the last attempt. */
  nextRetryAt(): Date | null
  /**
   * Settles the job inside the handler's own transaction, so the handler's writes and the job's new state commit
   * together. `retry` without attempts left becomes `failed`. Throws LeaseLostError (rolling the transaction back)
   * when another worker has taken the job over.
   */
  settle(tx: Tx, result: JobResult): Promise<void>
  /**
   * What the row keeps of its payload once the job is done or has failed for good, written by the statement that
   * settles it (a retry keeps the payload as enqueued). For payloads holding secrets, e.g. a rendered mail's confirm
   * link: keep metadata only. Default: the payload as enqueued.
   */
  keepPayload(payload: unknown): void
  /**
   * Aborted when this attempt must stop: it ran past the queue's `timeoutMs` (the job is already failed; a settle
   * now throws LeaseLostError). Pass it to fetches and model calls; check it between steps.
   */
  signal: AbortSignal
}

/** Thrown by a handler for a failure that retrying cannot fix: the job fails at once. */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError'
}

/** The reason of `JobContext.signal` when an attempt ran past its queue's `timeoutMs`. */
export class JobTimeoutError extends Error {
  override name = 'JobTimeoutError'
}

/** The job was claimed again by another worker (this one's lease had run out); its result must not be written. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError'
}

export interface QueueDefinition<P = unknown> {
  handler(ctx: JobContext<P>): Promise<void>
  /** Delay before each retry; its length is the number of retries. Default: no retries. */
  retryDelaysMs?: number[]
  /** Jobs of this queue one instance runs at once. Default 1. */
  concurrency?: number
  /**
   * The longest an attempt may run, by the queue's clock (checked with the lease renewal, every third of the lease,
   * and by `runDueJobs`/`expireOverdue`). Past it the job is failed ("timed out after …"), `ctx.signal` is aborted
   * and `onTimeout` runs. A job of this queue whose lease ran out (its worker died or stalled) is failed the same
   * way when it has no retries left or started longer ago than this; otherwise it is claimed again. Default: none.
   */
  timeoutMs?: number
  /**
   * Runs (outside any transaction, on the instance that failed the job) after the queue failed a job for its time
   * limit or an expired lease: the owner marks its own record of the work (e.g. an AI job) failed. Runs at most
   * once per failed job; the handler, if still running, can no longer settle it.
   */
  onTimeout?(job: JobRecord<P>, error: string): Promise<void>
  /**
   * The stored form of this queue's payloads, for payloads that must never sit in a row in clear (a rendered mail
   * with its capability links): `seal` runs on every `enqueue`/`enqueueMany` of the queue, whoever calls it, and
   * `open` turns the stored value back before the handler (and `onTimeout`) see it. `open` throwing fails the job
   * for good with its message. Payloads of cron schedules are stored as given. Default: stored as enqueued.
   */
  payloadCodec?: PayloadCodec<P>
}

export interface PayloadCodec<P = unknown> {
  seal(payload: P): unknown
  open(stored: unknown): P
}

export interface EnqueueOptions {
  /** Not before this time (default: now). */
  runAt?: Date
  /** At most one pending-or-running job per (queue, dedupeKey): a second enqueue is skipped (returns null). */
  dedupeKey?: string
}

export interface NewJob<Q extends AnyQueueName = AnyQueueName> {
  queue: Q
  payload: PayloadOf<Q>
  runAt?: Date
  dedupeKey?: string
}

export interface ScheduleDefinition {
  /** Unique name; defining it again (on every start) updates the row, keeping its next tick if the cron is unchanged. */
  name: string
  /** Five fields: minute hour day-of-month month day-of-week, in UTC. */
  cron: string
  queue: string
  payload?: unknown
}

/** Runs inside the relay's transaction for a batch of committed, not yet handled events (in id order). */
export type OutboxHandler = (tx: Tx, events: DomainEvent[]) => Promise<void>

export interface JobQueueOptions {
  db: Database
  clock: Clock
  logger: Logger
  /** How long a claim holds without renewal. Default 30 s. */
  leaseMs?: number
  /** How often idle workers look for due jobs, due cron ticks and unhandled events. Default 1 s. */
  pollIntervalMs?: number
  /** Relayed outbox events older than this are deleted by the hourly `events.prune` (EVENTS_RETENTION_HOURS). Default 24. */
  eventsRetentionHours?: number
}

/** Outbox rows deleted per statement by `events.prune`: short transactions, no long lock on a busy table. */
export const EVENTS_PRUNE_BATCH = 5000

export interface StartOptions {
  /**
   * Treat every running job as abandoned at once. Only right for the embedded database, which one process owns:
   * what is "running" at start-up was running in a process that is gone.
   */
  reclaimAbandoned?: boolean
}

/** Validates a five-field cron expression (UTC); throws an Error saying what is wrong. */
export function parseCron(expression: string): Cron {
  const fields = expression.trim().split(/\s+/)
  if (fields.length !== 5) {
    throw new Error(`a cron expression has five fields (minute hour day month weekday), got ${fields.length}`)
  }
  return new Cron(fields.join(' '), { mode: '5-part', timezone: 'UTC', paused: true })
}

/** The first tick of `expression` strictly after `after`. */
export function nextCronRun(expression: string, after: Date): Date {
  const next = parseCron(expression).nextRun(after)
  if (!next) throw new Error(`the cron expression "${expression}" never fires`)
  return next
}


async function query<T>(db: DbOrTx, q: SQL): Promise<T[]> {
  return rowsOf<T>(await db.execute(q))
}

const iso = (d: Date) => d.toISOString()

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

export class JobQueue {
  readonly workerId = `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`
  readonly leaseMs: number
  readonly pollIntervalMs: number
  private db: Database
  private clock: Clock
  private logger: Logger
  private queues = new Map<string, QueueState>()
  private schedules = new Map<string, ScheduleDefinition>()
  private outboxHandlers: { name: string; handler: OutboxHandler }[] = []
  private running = new Map<number, Running>()
  private claims = new WeakMap<JobContext<any>, Claim>()
  private started = false
  private schedulesSynced = false
  private timers: ReturnType<typeof setInterval>[] = []
  private unlisten: (() => Promise<void>)[] = []
  private relaying: Promise<void> | null = null
  private relayAgain = false
  private notifyTimer: ReturnType<typeof setTimeout> | null = null
  private background = new Set<Promise<unknown>>()

  constructor(opts: JobQueueOptions) {
    this.db = opts.db
    this.clock = opts.clock
    this.logger = opts.logger
    this.leaseMs = opts.leaseMs ?? 30_000
    this.pollIntervalMs = opts.pollIntervalMs ?? 1_000
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

  /** A recurring schedule defined in code; written to the database when workers start. */
  schedule<Q extends AnyQueueName>(def: ScheduleDefinition & { queue: Q; payload?: PayloadOf<Q> }): void {
    parseCron(def.cron)
    this.schedules.set(def.name, def)
    this.schedulesSynced = false
  }

  /** Registers a consumer of committed events; all consumers run in the one transaction that marks events handled. */
  onOutbox(name: string, handler: OutboxHandler): void {
    this.outboxHandlers.push({ name, handler })
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
      payload: this.sealPayload(j.queue, j.payload ?? {}),
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
  async upsertSchedule(db: DbOrTx, def: ScheduleDefinition): Promise<void> {
    const now = this.clock.now()
    const next = nextCronRun(def.cron, now)
    await query(
      db,
      sql`insert into job_schedules (name, cron, queue, payload, next_run_at, created_at, updated_at)
          values (${def.name}, ${def.cron}, ${def.queue}, ${JSON.stringify(def.payload ?? {})}::jsonb,
                  ${iso(next)}::timestamptz, ${iso(now)}::timestamptz, ${iso(now)}::timestamptz)
          on conflict (name) do update set
            queue = excluded.queue,
            payload = excluded.payload,
            updated_at = excluded.updated_at,
            next_run_at = case when job_schedules.cron = excluded.cron then job_schedules.next_run_at
                               else excluded.next_run_at end,
            cron = excluded.cron`,
    )
  }

  async removeSchedule(db: DbOrTx, name: string): Promise<void> {
    await query(db, sql`delete from job_schedules where name = ${name}`)
  }

  /**
   * Called for every event the bus publishes after commit: wakes the relay here, or — when this process runs no
   * workers — tells the instances that do (they also find it by polling).
   */
  outboxWritten(): void {
    if (this.started) {
      this.kickRelay()
      return
    }
    if (this.db.driver !== 'postgres' || this.notifyTimer) return
    // Coalesce a burst of events into one NOTIFY.
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = null
      this.track(this.db.notify(OUTBOX_CHANNEL, '').catch((err) => this.logger.warn('outbox notify failed', { error: String(err) })))
    }, 0)
  }

  // ---- running work ----

  /**
   * Runs everything due at the clock's current time to completion: unhandled events, due cron ticks and due jobs,
   * again and again until nothing is left. The background loop does the same continuously; tests call this after
   * moving the clock. Returns the number of jobs run.
   */
  async runDueJobs(): Promise<number> {
    await this.syncSchedules()
    let total = 0
    for (;;) {
      await this.expireOverdue()
      await this.reclaimExpired()
      let progressed = await this.relayUntilEmpty()
      progressed += await this.tickSchedules()
      for (const q of this.queues.values()) {
        const claimed = await this.claim(q, 50)
        await Promise.all(claimed.map((r) => this.execute(q, r)))
        progressed += claimed.length
        total += claimed.length
      }
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
    await this.syncSchedules()
    this.unlisten.push(
      await this.db.listen(JOBS_CHANNEL, (queue) => {
        const q = this.queues.get(queue)
        if (q) this.track(this.pump(q))
      }),
      await this.db.listen(OUTBOX_CHANNEL, () => this.kickRelay()),
    )
    this.timers.push(
      setInterval(() => this.track(this.poll()), this.pollIntervalMs),
      // A third of the lease: renew ours well before they run out, and reclaim those of dead workers soon after.
      setInterval(
        () => this.track(this.expireOverdue().then(() => this.renewLeases().then(() => this.reclaimExpired()))),
        Math.max(250, Math.floor(this.leaseMs / 3)),
      ),
    )
    this.track(this.poll())
    this.logger.info('job workers started', { worker: this.workerId, queues: [...this.queues.keys()] })
  }

  /** Stops claiming, waits for running jobs to settle, stops listening. */
  async stop(): Promise<void> {
    if (this.notifyTimer) clearTimeout(this.notifyTimer)
    this.notifyTimer = null
    const wasStarted = this.started
    this.started = false
    for (const t of this.timers) clearInterval(t)
    this.timers = []
    while (this.background.size) await Promise.allSettled([...this.background])
    if (!wasStarted) return
    await Promise.allSettled([...this.queues.values()].flatMap((q) => [...q.inflight.values()]))
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
    if (due.events) this.kickRelay()
    if (due.schedules) await this.tickSchedules()
    // A tick just enqueued its job and notified; a pump already running for that queue folds the call in.
    for (const name of due.schedules ? this.queues.keys() : (due.queues ?? [])) {
      const q = this.queues.get(name)
      if (q) await this.pump(q)
    }
  }

  private async syncSchedules() {
    if (this.schedulesSynced) return
    for (const def of this.schedules.values()) await this.upsertSchedule(this.db.db, def)
    this.schedulesSynced = true
  }

  /**
   * Keeps `q` at its concurrency while due jobs exist. Re-entrant calls fold into the running one. A finished job
   * refills its slot only once half the slots are free, so that under load jobs are claimed (and their handlers
   * batch their queries) in groups rather than one by one; notifications and polls refill any free slot.
   */
  private async pump(q: QueueState): Promise<void> {
    if (!this.started) return
    if (q.pumping) {
      q.again = true
      return
    }
    q.pumping = true
    try {
      do {
        q.again = false
        while (this.started && q.inflight.size < q.concurrency) {
          const limit = q.concurrency - q.inflight.size
          const claimed = await this.claim(q, limit)
          for (const row of claimed) {
            const id = Number(row.id)
            const p = this.execute(q, row).finally(() => {
              q.inflight.delete(id)
              if (this.started && q.inflight.size <= q.concurrency / 2) this.track(this.pump(q))
            })
            q.inflight.set(id, p)
          }
          if (claimed.length < limit) break
        }
      } while (q.again && this.started)
    } finally {
      q.pumping = false
    }
  }

  private async claim(q: QueueState, limit: number): Promise<(ClaimedRow & { token: string })[]> {
    if (limit <= 0) return []
    const now = this.clock.now()
    const token = crypto.randomUUID()
    const rows = await query<ClaimedRow>(
      this.db.db,
      sql`with due as (
            select id from jobs
            where queue = ${q.name} and status = 'pending' and run_at <= ${iso(now)}::timestamptz
            order by run_at, id
            limit ${limit}
            for update skip locked
          )
          update jobs as j set status = 'running', attempts = j.attempts + 1, claim_token = ${token},
            locked_by = ${this.workerId}, locked_until = ${iso(new Date(now.getTime() + this.leaseMs))}::timestamptz,
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
    const now = iso(this.clock.now())
    const rows = await query<{ id: number; queue: string }>(
      this.db.db,
      sql`update jobs set status = 'pending', run_at = ${now}::timestamptz, claim_token = null, locked_by = null,
            locked_until = null, last_error = 'lease expired (worker stopped or stalled)', updated_at = ${now}::timestamptz
          where status = 'running' and locked_until <= ${now}::timestamptz
          returning id, queue`,
    )
    if (rows.length) this.logger.warn('reclaimed jobs with expired leases', { jobs: rows.length })
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
    const now = this.clock.now()
    const rows = await query<ClaimedRow>(
      this.db.db,
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
      this.logger.warn('failed a job whose lease expired', { queue: row.queue, job: Number(row.id) })
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
    const now = this.clock.ms()
    let failed = 0
    for (const r of [...this.running.values()]) {
      if (r.timedOut || r.deadline > now) continue
      r.timedOut = true
      const error = `timed out after ${Math.round(r.q.def.timeoutMs! / 1000)} s`
      const lost = await this.settleMany(this.db.db, [{ ctx: r.ctx, result: { status: 'failed', error } }]).catch((e) => {
        this.logger.error('could not fail a timed-out job', { queue: r.q.name, job: r.job.id, error: String(e) })
        r.timedOut = false
        return null
      })
      if (lost === null) continue
      if (!lost.length) {
        failed++
        this.logger.warn('job timed out', { queue: r.q.name, job: r.job.id, timeout_ms: r.q.def.timeoutMs })
        await this.notifyTimeout(r.q, r.job, error)
      }
      r.controller.abort(new JobTimeoutError(`job ${r.job.id} ${error}`))
    }
    return failed
  }

  private async notifyTimeout(q: QueueState | undefined, job: JobRecord, error: string) {
    if (!q?.def.onTimeout) return
    await q.def.onTimeout(job, error).catch((e) => this.logger.error('onTimeout failed', { queue: q.name, job: job.id, error: String(e) }))
  }

  /** The payload as the queue stores it (its `payloadCodec`'s seal), or as given. */
  private sealPayload(queue: string, payload: unknown): unknown {
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
    return new Date(this.clock.ms() + delays[attempt - 1])
  }

  private async execute(q: QueueState, row: ClaimedRow & { token: string }): Promise<void> {
    const stored = this.recordOf(row)
    let job: JobRecord
    try {
      job = this.opened(q.def, stored)
    } catch (err) {
      // The stored payload does not open (e.g. sealed under another SERVICE_SECRET_KEY): no attempt can succeed.
      const error = `the stored payload cannot be opened: ${err instanceof Error ? err.message : String(err)}`
      this.logger.error('job payload cannot be opened', { queue: q.name, job: stored.id, error })
      const ctx = { job: stored } as JobContext
      this.claims.set(ctx, { q, job: stored, token: row.token, settled: false })
      await this.settleMany(this.db.db, [{ ctx, result: { status: 'failed', error } }]).catch((e) =>
        this.logger.error('could not settle job', { queue: q.name, job: stored.id, error: String(e) }),
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
    const deadline = q.def.timeoutMs === undefined ? Number.POSITIVE_INFINITY : this.clock.ms() + q.def.timeoutMs
    const running: Running = { token: row.token, job, q, ctx, controller, deadline, timedOut: false }
    this.running.set(job.id, running)
    try {
      await q.def.handler(ctx)
      if (!claim.settled) await this.settleMany(this.db.db, [{ ctx, result: { status: 'done' } }])
    } catch (err) {
      const error = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
      if (running.timedOut) {
        // Failed by expireOverdue already; whatever the handler did after that is void.
      } else if (err instanceof LeaseLostError) {
        this.logger.warn('job lease lost', { queue: q.name, job: job.id })
      } else {
        this.logger.warn('job attempt failed', { queue: q.name, job: job.id, attempt: job.attempt, error })
        // If the handler settled inside a transaction that then rolled back, the token still matches and this
        // settles the job; if that transaction committed, the token is gone and this changes nothing.
        const result: JobResult = err instanceof PermanentJobError ? { status: 'failed', error } : { status: 'retry', error }
        await this.settleMany(this.db.db, [{ ctx, result }]).catch((e) =>
          this.logger.error('could not settle job', { queue: q.name, job: job.id, error: String(e) }),
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
    const now = this.clock.now()
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

  private async renewLeases() {
    if (!this.running.size) return
    const now = this.clock.now()
    const ids = `{${[...this.running.keys()].join(',')}}`
    await query(
      this.db.db,
      sql`update jobs set locked_until = ${iso(new Date(now.getTime() + this.leaseMs))}::timestamptz
          where id = any(${ids}::bigint[]) and locked_by = ${this.workerId} and status = 'running'`,
    )
  }

  // ---- cron ----

  /** Enqueues the job of every due schedule tick this instance wins. Returns how many it enqueued. */
  private async tickSchedules(): Promise<number> {
    const now = this.clock.now()
    const due = await query<{ name: string; cron: string; queue: string; payload: unknown; next_run_at: Date | string }>(
      this.db.db,
      sql`select name, cron, queue, payload, next_run_at from job_schedules where next_run_at <= ${iso(now)}::timestamptz`,
    )
    let fired = 0
    for (const s of due) {
      const tick = new Date(s.next_run_at)
      let next: Date
      try {
        next = nextCronRun(s.cron, now)
      } catch (err) {
        this.logger.error('invalid cron schedule', { schedule: s.name, error: String(err) })
        continue
      }
      const won = await this.db.db.transaction(async (tx) => {
        // Only one instance moves next_run_at from this tick: that one enqueues. Missed ticks are not caught up.
        const rows = await query(
          tx,
          sql`update job_schedules set next_run_at = ${iso(next)}::timestamptz, last_run_at = ${iso(tick)}::timestamptz,
                updated_at = ${iso(now)}::timestamptz
              where name = ${s.name} and next_run_at = ${iso(tick)}::timestamptz
              returning name`,
        )
        if (!rows.length) return false
        await this.enqueueMany(tx, [{ queue: s.queue, payload: s.payload, runAt: tick, dedupeKey: `cron:${s.name}:${iso(tick)}` }])
        return true
      })
      if (won) fired++
    }
    return fired
  }

  // ---- outbox relay ----

  private kickRelay() {
    if (this.relaying) {
      this.relayAgain = true
      return
    }
    this.relaying = (async () => {
      try {
        do {
          this.relayAgain = false
          await this.relayUntilEmpty()
        } while (this.relayAgain && this.started)
      } catch (err) {
        this.logger.error('outbox relay failed', { error: String(err) })
      } finally {
        this.relaying = null
      }
    })()
    this.track(this.relaying)
  }

  private async relayUntilEmpty(): Promise<number> {
    let total = 0
    for (;;) {
      const n = await this.relayBatch(200)
      total += n
      if (n < 200) return total
    }
  }

  /**
   * Claims up to `limit` unhandled events, hands them to every outbox consumer and marks them handled — all in one
   * transaction, so a crash leaves them unhandled (and relayed again) and a consumer's failure keeps them too.
   */
  async relayBatch(limit = 200): Promise<number> {
    return this.db.db.transaction(async (tx) => {
      const rows = await query<{ id: number | string; type: string; space_id: number | null; payload: unknown; created_at: Date | string }>(
        tx,
        sql`select id, type, space_id, payload, created_at from events where handled_at is null
            order by id limit ${limit} for update skip locked`,
      )
      if (!rows.length) return 0
      const list: DomainEvent[] = rows.map((r) => ({
        id: Number(r.id),
        type: r.type as EventType,
        spaceId: r.space_id === null ? null : Number(r.space_id),
        // Stored by transact() from a typed event: read back as the JSON it was.
        payload: (r.payload ?? {}) as never,
        createdAt: new Date(r.created_at),
      }))
      for (const h of this.outboxHandlers) await h.handler(tx, list)
      const ids = `{${list.map((e) => e.id).join(',')}}`
      await query(tx, sql`update events set handled_at = ${iso(this.clock.now())}::timestamptz where id = any(${ids}::bigint[])`)
      return list.length
    })
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
