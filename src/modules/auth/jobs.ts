import type { PasswordResetJob } from './service'

/**
 * The auth module's job queues and their payloads, declared in one place: `jobs.define`, `jobs.enqueue` and
 * `jobs.schedule` check them by name (kernel/jobs), as `emit` checks events.
 */
declare module '../../kernel/jobs' {
  interface JobMap {
    'auth.password-reset': PasswordResetJob
    /** Daily: deletes pending sign-ups a day past their expiry. */
    'auth.sign-up-prune': Record<string, never>
  }
}
