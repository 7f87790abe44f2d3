import type { EventDeclarations } from '../../kernel/events'

/** A gallery as its events name it (and their webhook bodies show it). */
export interface GalleryEventPayload {
  gallery: { id: string; slug: string; items: number }
}

declare module '../../kernel/events' {
  interface EventMap {
    'gallery.created': GalleryEventPayload
    'gallery.updated': GalleryEventPayload
    'gallery.deleted': GalleryEventPayload
  }
}

const webhook = (p: unknown) => {
  const g = (p as Partial<GalleryEventPayload>).gallery
  return { gallery: { id: g?.id ?? null, slug: g?.slug ?? null, items: g?.items ?? null } }
}

export const galleryEvents: EventDeclarations = {
  'gallery.created': { description: 'A gallery was created. Webhook body: `gallery: {id, slug, items}` (items: their count).', webhook },
  'gallery.updated': { description: 'A gallery was changed. Webhook body: `gallery: {id, slug, items}` (the new slug).', webhook },
  'gallery.deleted': { description: 'A gallery was deleted. Webhook body: `gallery: {id, slug, items}`.', webhook },
}
