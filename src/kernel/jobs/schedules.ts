import { sql } from 'drizzle-orm'
import type { Clock } from '../clock'
import type { Database, DbOrTx } from '../db'
import type { Logger } from '../logger'
import { nextCronRun, parseCron } from './cron'
import { iso, query } from './sql'
import type { NewJob, ScheduleDefinition } from './types'

/**
 * The job queue's recurring schedules (`job_schedules`): the ones defined in code, written to the database when
 * workers start, and those made at run time (a datasource's own cron). Each due tick is won by one instance, through
 * a conditional update of `next_run_at`, which enqueues its job; missed ticks are not caught up.
 */
export interface CronSchedulesDeps {
  db: Database
  clock: Clock
  logger: Logger
  enqueueMany(db: DbOrTx, list: readonly NewJob[]): Promise<number[]>
}

export class CronSchedules {
  private schedules = new Map<string, ScheduleDefinition>()
  private schedulesSynced = false

  constructor(private deps: CronSchedulesDeps) {}

  /** A recurring schedule defined in code; written to the database when workers start. */
  schedule(def: ScheduleDefinition): void {
    parseCron(def.cron)
    this.schedules.set(def.name, def)
    this.schedulesSynced = false
  }

  /** Creates or updates a recurring schedule (also at run time, e.g. a datasource's own cron). */
  async upsertSchedule(db: DbOrTx, def: ScheduleDefinition): Promise<void> {
    const now = this.deps.clock.now()
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

  async syncSchedules() {
    if (this.schedulesSynced) return
    for (const def of this.schedules.values()) await this.upsertSchedule(this.deps.db.db, def)
    this.schedulesSynced = true
  }

  /** Enqueues the job of every due schedule tick this instance wins. Returns how many it enqueued. */
  async tickSchedules(): Promise<number> {
    const now = this.deps.clock.now()
    const due = await query<{ name: string; cron: string; queue: string; payload: unknown; next_run_at: Date | string }>(
      this.deps.db.db,
      sql`select name, cron, queue, payload, next_run_at from job_schedules where next_run_at <= ${iso(now)}::timestamptz`,
    )
    let fired = 0
    for (const s of due) {
      const tick = new Date(s.next_run_at)
      let next: Date
      try {
        next = nextCronRun(s.cron, now)
      } catch (err) {
        this.deps.logger.error('invalid cron schedule', { schedule: s.name, error: String(err) })
        continue
      }
      const won = await this.deps.db.db.transaction(async (tx) => {
        // Only one instance moves next_run_at from this tick: that one enqueues. Missed ticks are not caught up.
        const rows = await query(
          tx,
          sql`update job_schedules set next_run_at = ${iso(next)}::timestamptz, last_run_at = ${iso(tick)}::timestamptz,
                updated_at = ${iso(now)}::timestamptz
              where name = ${s.name} and next_run_at = ${iso(tick)}::timestamptz
              returning name`,
        )
        if (!rows.length) return false
        await this.deps.enqueueMany(tx, [{ queue: s.queue, payload: s.payload, runAt: tick, dedupeKey: `cron:${s.name}:${iso(tick)}` }])
        return true
      })
      if (won) fired++
    }
    return fired
  }
}
