import { Cron } from 'croner'

/*
 * Cron expressions of the job queue's schedules, apart from the queue so that config.ts (JOB schedules in the
 * environment) can check one without loading the queue, the database or the logger.
 */

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
