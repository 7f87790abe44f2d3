import { sql } from 'drizzle-orm'
import { bigserial, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * The durable job queue (src/kernel/jobs/). A worker claims due rows with `FOR UPDATE SKIP LOCKED`, sets
 * status 'running' with a lease (`locked_until`) and a fresh `claim_token`; only the holder of that token may settle
 * the job. A running job whose lease ran out (its process died) is claimed again.
 * status: pending → running → done | failed | pending (retry) ; pending → cancelled.
 */
export const jobs = pgTable(
  'jobs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    queue: text('queue').notNull(),
    payload: jsonb('payload').notNull(),
    status: text('status', { enum: ['pending', 'running', 'done', 'failed', 'cancelled'] }).notNull(),
    runAt: ts('run_at').notNull(),
    /** Attempts started so far (a claim counts, so a job that kills its process cannot loop forever). */
    attempts: integer('attempts').notNull().default(0),
    /** At most one live (pending or running) job per (queue, dedupe_key). */
    dedupeKey: text('dedupe_key'),
    claimToken: text('claim_token'),
    lockedBy: text('locked_by'),
    lockedUntil: ts('locked_until'),
    lastError: text('last_error'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    // The claim reads this index in ORDER BY order and stops at LIMIT, however many jobs are due.
    index('jobs_claim_idx').on(t.queue, t.runAt, t.id).where(sql`status = 'pending'`),
    index('jobs_lease_expiry_idx').on(t.lockedUntil).where(sql`status = 'running'`),
    uniqueIndex('jobs_dedupe_key').on(t.queue, t.dedupeKey).where(sql`status in ('pending', 'running')`),
    index('jobs_finished_idx').on(t.finishedAt).where(sql`finished_at is not null`),
  ],
)

/**
 * Recurring schedules (five-field cron, UTC). Every worker looks for due rows; the one whose conditional
 * `UPDATE ... WHERE next_run_at = <the tick>` succeeds enqueues that tick's job, so each tick fires once in total.
 */
export const jobSchedules = pgTable('job_schedules', {
  name: text('name').primaryKey(),
  cron: text('cron').notNull(),
  queue: text('queue').notNull(),
  payload: jsonb('payload').notNull(),
  nextRunAt: ts('next_run_at').notNull(),
  lastRunAt: ts('last_run_at'),
  createdAt: ts('created_at').notNull(),
  updatedAt: ts('updated_at').notNull(),
})
