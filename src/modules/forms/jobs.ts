/**
 * The forms module's job queues and their payloads, declared in one place: `jobs.define`, `jobs.enqueue` and
 * `jobs.schedule` check them by name (kernel/jobs), as `emit` checks events.
 */
declare module '../../kernel/jobs' {
  interface JobMap {
    'forms.action': { submissionId: number; base: string }
    'forms.prune-salts': Record<string, never>
  }
}

export {}
