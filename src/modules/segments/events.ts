import type { EventDeclarations } from '../../kernel/events'

/** Internal: an audience segment of the Space was created, changed or deleted (segment caches refresh). */
export interface SegmentChangedPayload {
  segment: { id: number; key: string; action: 'created' | 'updated' | 'deleted' }
}

declare module '../../kernel/events' {
  interface EventMap {
    'audience_segment.changed': SegmentChangedPayload
  }
}

export const segmentEvents: EventDeclarations = {
  'audience_segment.changed': { description: 'Internal: an audience segment was created, changed or deleted (segment caches refresh on every instance).' },
}
