import { defineModule } from '../../kernel/module'
import { takeScheduledBackup } from './service'

declare module '../../kernel/jobs' {
  interface JobMap {
    'backup.scheduled': Record<string, never>
  }
}

const SCHEDULE = 'backup.scheduled'

/**
 * Scheduled backups (BACKUP_CRON, off by default): a cron tick of the job queue (one instance takes each) writes the
 * same archive as `content-service backup` into BACKUP_DIR and keeps the newest BACKUP_KEEP.
 */
export const backupModule = defineModule({
  name: 'backup',
  jobs: (jobs, _self, kernel) => {
    jobs.define(SCHEDULE, {
      // One retry a few minutes later (a pg_dump that met a restart); the next tick comes anyway.
      retryDelaysMs: [5 * 60_000],
      handler: async () => {
        if (!kernel.config.backupCron) {
          // A schedule left from a start with BACKUP_CRON set: turned off now.
          await jobs.removeSchedule(kernel.db.db, SCHEDULE)
          return
        }
        await takeScheduledBackup(kernel)
      },
    })
    if (kernel.config.backupCron) jobs.schedule({ name: SCHEDULE, cron: kernel.config.backupCron, queue: SCHEDULE, payload: {} })
  },
})
