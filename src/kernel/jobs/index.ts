/**
 * The job queue (`kernel.jobs`): its public names, from the files that hold them. Modules import from here
 * (`'../../kernel/jobs'`) and declare their queues by merging into `JobMap` (types.ts) through this path.
 *   types.ts      JobMap, the queue's contract (definitions, contexts, results, errors, options)
 *   queue.ts      JobQueue: define, schedule, enqueue, cancel, runDueJobs, start/stop and the poll
 *   worker.ts     claims, leases, handlers, settling, time limits; startWorkers
 *   schedules.ts  cron schedules in `job_schedules` and their ticks
 *   outbox.ts     the outbox relay (committed events → durable consumers)
 *   cron.ts       cron expressions (config.ts imports it alone)
 */
export { nextCronRun, parseCron } from './cron'
export { EVENTS_PRUNE_BATCH, JobQueue } from './queue'
export * from './types'
export { startWorkers, type Workers } from './worker'
