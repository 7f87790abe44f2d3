/** The commerce module's job queues (kernel/jobs checks payloads by name). */
declare module '../../kernel/jobs' {
  interface JobMap {
    'commerce.cart-cleanup': Record<string, never>
    'commerce.release-unpaid': Record<string, never>
  }
}

export {}
