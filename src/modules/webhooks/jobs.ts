/**
 * The webhooks module's job queues and their payloads, declared in one place: `jobs.define`, `jobs.enqueue` and
 * `jobs.schedule` check them by name (kernel/jobs), as `emit` checks events.
 */
declare module '../../kernel/jobs' {
  interface JobMap {
    'webhooks.deliver': { deliveryId: string }
    'webhooks.prune': { olderThanDays: number }
  }
}

export {}
