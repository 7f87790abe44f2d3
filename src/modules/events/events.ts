import type { EventDeclarations } from '../../kernel/events'

/**
 * What receivers learn about an event (no database ids). Payloads carry it as `calendar_event`: in webhook bodies
 * `event` is the envelope's event name.
 */
export interface EventRef {
  id: string
  slug: string
  title: Record<string, string>
  starts_at: string
  ends_at: string
  timezone: string
}

export interface RegistrationRef {
  id: string
  name: string
  email: string
  status: 'confirmed' | 'waitlisted' | 'cancelled'
}

export interface EventChangedPayload {
  calendar_event: EventRef
}

export interface EventRegisteredPayload {
  calendar_event: EventRef
  registration: RegistrationRef
  /** true when a waitlisted registration moved up to confirmed. */
  promoted: boolean
}

export interface EventRegistrationCancelledPayload {
  calendar_event: EventRef
  registration: RegistrationRef
  /** Who cancelled: the attendee (cancel link) or an editor. */
  by: 'attendee' | 'editor'
}

declare module '../../kernel/events' {
  interface EventMap {
    'event.created': EventChangedPayload
    'event.updated': EventChangedPayload
    'event.deleted': EventChangedPayload
    'event.registered': EventRegisteredPayload
    'event.registration_cancelled': EventRegistrationCancelledPayload
  }
}

const EVENT = '`calendar_event: {id, slug, title, starts_at, ends_at, timezone}`'
const REGISTRATION = '`registration: {id, name, email, status}`'

export const eventEvents: EventDeclarations = {
  'event.created': { description: 'An event was created.', webhook: (p) => ({ calendar_event: p.calendar_event }), body: EVENT },
  'event.updated': { description: 'An event was changed (its ICS SEQUENCE went up).', webhook: (p) => ({ calendar_event: p.calendar_event }), body: EVENT },
  'event.deleted': { description: 'An event was deleted with its registrations.', webhook: (p) => ({ calendar_event: p.calendar_event }), body: EVENT },
  'event.registered': {
    description: 'Someone registered for an event (confirmed or waitlisted), or a waitlisted registration was promoted (`promoted: true`).',
    webhook: (p) => ({ calendar_event: p.calendar_event, registration: p.registration, promoted: p.promoted }),
    body: `${EVENT}, ${REGISTRATION}, \`promoted\``,
  },
  'event.registration_cancelled': {
    description: 'A registration was cancelled, by the attendee’s cancel link or by an editor (`by`).',
    webhook: (p) => ({ calendar_event: p.calendar_event, registration: p.registration, by: p.by }),
    body: `${EVENT}, ${REGISTRATION}, \`by\` (\`attendee\` or \`editor\`)`,
  },
}
