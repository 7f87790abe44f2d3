/** The plugins module's job queues and their payloads (kernel/jobs). */
declare module '../../kernel/jobs' {
  interface JobMap {
    'plugins.prune-log': Record<string, never>
  }
}

export {}
