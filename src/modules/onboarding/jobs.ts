/**
 * The onboarding module's job queues and their payloads: `jobs.define`, `jobs.enqueue` and `jobs.schedule` check
 * them by name (kernel/jobs), as `emit` checks events.
 */
declare module '../../kernel/jobs' {
  interface JobMap {
    /** Daily: closes pitch demos whose PITCH_TTL_DAYS ran out. */
    'onboarding.pitch-expiry': Record<string, never>
  }
}
export const PITCH_EXPIRY_QUEUE = 'onboarding.pitch-expiry' as const
