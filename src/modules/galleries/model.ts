import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { Int, pageQuery, SpaceSlug, Timestamp, Uuid } from '../../kernel/schemas'
import { CropModel, FocusModel } from '../assets/model'

export const GALLERY_SLUG_PATTERN = '^[a-z0-9][a-z0-9-]{0,99}$'
/** Items per gallery. */
export const MAX_ITEMS = 500

export const GalleryErrors = {
  slugTaken: defineError('slug_taken', 409, 'Another gallery of the Space has this slug.'),
}

const LocaleMap = (what: string, max: number) =>
  t.Record(t.String({ maxLength: 35 }), t.String({ maxLength: max }), {
    maxProperties: 200,
    description: `${what} per locale of the Space (locale → text, at most ${max.toLocaleString('en-US')} characters)`,
  })

export const GalleryItemBody = t.Object({
  asset_uuid: Uuid,
  caption: t.Optional(LocaleMap('Caption', 2000)),
  alt: t.Optional(LocaleMap('Alt text; a locale left out falls back to the asset’s own alt text', 2000)),
})

export const GalleryBody = t.Object({
  slug: t.String({ pattern: GALLERY_SLUG_PATTERN, error: 'must match ^[a-z0-9][a-z0-9-]{0,99}$' }),
  title: LocaleMap('Title', 500),
  items: t.Array(GalleryItemBody, { maxItems: MAX_ITEMS, error: `must be at most ${MAX_ITEMS} items`, description: `At most ${MAX_ITEMS}, in display order` }),
  // Read-only fields a client may send back from a GET: ignored.
  id: t.Optional(t.String({ maxLength: 64, description: 'Read-only; ignored' })),
  created_at: t.Optional(t.Unknown({ description: 'Read-only; ignored' })),
  updated_at: t.Optional(t.Unknown({ description: 'Read-only; ignored' })),
})
export type GalleryInput = typeof GalleryBody.static

export const GalleryItemModel = t.Object({
  asset_uuid: t.String({ format: 'uuid' }),
  caption: t.Record(t.String(), t.String()),
  alt: t.Record(t.String(), t.String()),
})

export const GalleryModel = t.Object({
  id: t.String({ format: 'uuid' }),
  slug: t.String(),
  title: t.Record(t.String(), t.String()),
  items: t.Array(GalleryItemModel),
  created_at: Timestamp,
  updated_at: Timestamp,
})
export type GalleryView = typeof GalleryModel.static

export const GalleryParams = t.Object({ space: SpaceSlug, id: Uuid })
export const GalleryListQuery = pageQuery(100, 25)

// ---- the public answer ----

export const TransformModel = t.Object({
  width: Int({ description: 'One of IMAGE_WIDTHS' }),
  webp: t.String({ description: 'Transform URL of this width in WebP' }),
  avif: t.String({ description: 'Transform URL of this width in AVIF' }),
})

export const PublicGalleryItem = t.Object({
  asset_uuid: t.String({ format: 'uuid' }),
  url: t.String({ description: 'The original' }),
  mime: t.String(),
  width: t.Union([Int(), t.Null()], { description: 'Pixels of the original' }),
  height: t.Union([Int(), t.Null()]),
  focus: t.Union([FocusModel, t.Null()], { description: 'The image’s focal point (fractions 0..1), null: the centre' }),
  crop: t.Union([CropModel, t.Null()], { description: 'The image’s crop (fractions 0..1), applied by every transform URL; null: none' }),
  alt: t.Union([t.String(), t.Null()], { description: 'The item’s alt text in the served locale chain, else the asset’s' }),
  caption: t.Union([t.String(), t.Null()], { description: 'In the served locale chain' }),
  transforms: t.Array(TransformModel, {
    description: 'Allowed widths up to the original’s (the smallest one for smaller images); empty for SVG. With a focal point or crop the URLs carry `v=`, which changes with them',
  }),
  srcset: t.Object(
    { webp: t.String(), avif: t.String() },
    { description: '`srcset` values (`<url> <width>w, ...`) for `<source type="image/webp|avif">`; empty strings for SVG' },
  ),
})

export const PublicGalleryModel = t.Object({
  data: t.Object({
    id: t.String({ format: 'uuid' }),
    slug: t.String(),
    lang: t.String({ description: 'The first locale of the fallback chain (the requested one, when the Space has it)' }),
    title: t.Union([t.String(), t.Null()], { description: 'In the served locale chain' }),
    items: t.Array(PublicGalleryItem, { description: 'In display order; items whose asset was deleted are left out' }),
  }),
})
export type PublicGallery = typeof PublicGalleryModel.static

export const PublicGalleryParams = t.Object({ space: SpaceSlug, slug: t.String({ pattern: GALLERY_SLUG_PATTERN }) })
export const PublicGalleryQuery = t.Object({ lang: t.Optional(t.String({ maxLength: 35, description: 'BCP-47 tag; a fallback chain applies' })) })
