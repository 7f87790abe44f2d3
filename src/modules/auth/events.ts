import type { EventDeclarations } from '../../kernel/events'

/**
 * Internal: bearer tokens were signed out — a logout (of a login session, or of a Space token that logs itself out),
 * or every other login session of a user after a password change or reset. Open live streams of these tokens end on
 * every instance.
 */
export interface SessionsRevokedPayload {
  /** The user of the sessions; for a Space token, its creator (null when unknown). */
  user_id: number | null
  token_ids: string[]
}

declare module '../../kernel/events' {
  interface EventMap {
    'session.revoked': SessionsRevokedPayload
  }
}

export const authEvents: EventDeclarations = {
  'session.revoked': { description: 'Internal: login sessions were signed out (logout, password change or reset); their open live streams end.' },
}
