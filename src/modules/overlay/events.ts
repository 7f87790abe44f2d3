import type { EventDeclarations } from '../../kernel/events'

/** A DOM overlay rule as its events name it (and their webhook bodies show it). */
export interface OverlayEventPayload {
  dom_overlay: { id: string; name: string; path_pattern: string; action: string; active: boolean }
}

declare module '../../kernel/events' {
  interface EventMap {
    'dom_overlay.created': OverlayEventPayload
    'dom_overlay.updated': OverlayEventPayload
    'dom_overlay.deleted': OverlayEventPayload
  }
}

const FIELDS = ['id', 'name', 'path_pattern', 'action', 'active'] as const
const OVERLAY = `\`dom_overlay: {${FIELDS.join(', ')}}\``

const webhook = (p: unknown) => {
  const o = (p as Partial<OverlayEventPayload>).dom_overlay
  return { dom_overlay: Object.fromEntries(FIELDS.map((f) => [f, o?.[f] ?? null])) }
}

export const overlayEvents: EventDeclarations = {
  'dom_overlay.created': { description: 'A DOM overlay rule was created.', webhook, body: OVERLAY },
  'dom_overlay.updated': { description: 'A DOM overlay rule was changed.', webhook, body: OVERLAY },
  'dom_overlay.deleted': { description: 'A DOM overlay rule was deleted.', webhook, body: OVERLAY },
}
