import type { Clock } from '../clock'
import type { Database, Tx } from '../db'
import type { DomainEvent } from '../events'
import type { Logger } from '../logger'

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

export interface StartOptions {
  /**
   * Treat every running job as abandoned at once. Only right for the embedded database, which one process owns:
   * what is "running" at start-up was running in a process that is gone.
   */
  reclaimAbandoned?: boolean
}
