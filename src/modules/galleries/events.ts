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

const GALLERY = '`gallery: {id, slug, items}`'

const webhook = (p: unknown) => {
  const g = (p as Partial<GalleryEventPayload>).gallery
  return { gallery: { id: g?.id ?? null, slug: g?.slug ?? null, items: g?.items ?? null } }
}

export const galleryEvents: EventDeclarations = {
  'gallery.created': { description: 'A gallery was created.', webhook, body: `${GALLERY} (\`items\`: their count)` },
  'gallery.updated': { description: 'A gallery was changed.', webhook, body: `${GALLERY} (the new slug)` },
  'gallery.deleted': { description: 'A gallery was deleted.', webhook, body: GALLERY },
}
