/** The AI module's job queue: a translation, run block by block in a worker. */
declare module '../../kernel/jobs' {
  interface JobMap {
    /** `source`: the Story's name and content in the source locale at the version the job started from. */
    'ai.translate': { aiJobId: number; source?: { name: string; content: unknown } }
  }
}

export {}
