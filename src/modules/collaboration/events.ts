import type { EventDeclarations } from '../../kernel/events'

/** Internal: a presence session joined, moved to another block, or left (DELETE). Feeds the live stream. */
export interface PresenceChangedPayload {
  story_uuid: string
  session_id: string
  user_id: number
  block_path: string | null
  left: boolean
  /** The whole session (joins and moves): every instance patches its roster from the event, with no query. */
  user_name?: string
  selection?: { anchor: number; head: number }
  last_seen?: string
}

/** Internal: a comment was created, edited, deleted, resolved or reopened. Feeds the live stream. */
export interface CommentChangedPayload {
  story_uuid: string
  comment_id: number
  action: 'created' | 'edited' | 'deleted' | 'resolved' | 'reopened'
}

declare module '../../kernel/events' {
  interface EventMap {
    'presence.changed': PresenceChangedPayload
    'comment.changed': CommentChangedPayload
  }
}

export const collaborationEvents: EventDeclarations = {
  'presence.changed': { description: 'Internal: a presence session joined, moved or left (live stream).' },
  'comment.changed': { description: 'Internal: a comment was created, edited, deleted, resolved or reopened (live stream).' },
}
