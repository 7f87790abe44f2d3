import type { EventDeclarations } from '../../kernel/events'

/** Internal: a form was created, changed or archived. Drops the public submit's cached definition on every instance. */
export interface FormChangedPayload {
  space_id: number
  slug: string
}

declare module '../../kernel/events' {
  interface EventMap {
    'form.changed': FormChangedPayload
  }
}

export const formEvents: EventDeclarations = {
  'form.changed': { description: 'Internal: a form was created, changed or archived (public submit cache).' },
}
