import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { Int, oneOf, pageQuery, SpaceSlug, Timestamp, Uuid, intString } from '../../kernel/schemas'

export const AssetErrors = {
  imageTooLarge: defineError('image_too_large', 422, 'The image has more than 50 megapixels (a decompression bomb guard).'),
  invalidImage: defineError('invalid_image', 422, 'The file starts like an image but cannot be decoded.'),
  sizeNotAllowed: defineError(
    'size_not_allowed',
    422,
    'The transform asks for a width or height outside IMAGE_WIDTHS and carries no valid `s=` signature.',
  ),
}

/** What an upload may be, by its leading bytes (SVG: by parsing it). */
export const ALLOWED_TYPES = [
  'image/jpeg',
  'image/png',
  'image/webp',
  'image/gif',
  'image/avif',
  'image/svg+xml',
  'application/pdf',
  'video/mp4',
  'video/webm',
  'audio/mpeg',
] as const
/** The types the transform route decodes (SVG is served as is, never rasterised). */
export const RASTER_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif'])

export const AssetParams = t.Object({ space: SpaceSlug, asset: Uuid })

export const AltMap = t.Record(t.String({ maxLength: 35 }), t.String({ maxLength: 2000 }), {
  description: 'Alt text per Space locale (locale → text)',
})

const Fraction = (description?: string) =>
  t.Number({ minimum: 0, maximum: 1, error: 'must be a number from 0 to 1', ...(description ? { description } : {}) })

export const FocusModel = t.Object(
  { x: Fraction('From the left edge'), y: Fraction('From the top edge') },
  { description: 'Focal point, fractions of the image (0..1): crops that change the aspect ratio centre on it' },
)
export const CropModel = t.Object(
  { x: Fraction('Left edge'), y: Fraction('Top edge'), width: Fraction('Width'), height: Fraction('Height') },
  { description: 'Crop rectangle, fractions of the image (0..1): applied before every transform' },
)
export type Focus = typeof FocusModel.static
export type Crop = typeof CropModel.static

export const AssetModel = t.Object({
  uuid: t.String({ format: 'uuid' }),
  filename: t.String(),
  content_type: t.String({ description: 'From the leading bytes, never from the client' }),
  size: Int({ description: 'Bytes' }),
  width: t.Union([Int(), t.Null()], { description: 'Pixels (images; SVG when it states a size)' }),
  height: t.Union([Int(), t.Null()]),
  sha256: t.String({ description: 'Hex SHA-256 of the bytes' }),
  alt: AltMap,
  focus: t.Union([FocusModel, t.Null()], { description: 'Focal point (null: the centre)' }),
  crop: t.Union([CropModel, t.Null()], { description: 'Crop applied to transforms (null: none; the original stays whole)' }),
  url: t.String({ description: 'Public URL of the original' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Asset' })
export type AssetView = typeof AssetModel.static

export const AssetListQuery = t.Composite([
  pageQuery(100, 25),
  t.Object({
    q: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'Substring of the filename (case-insensitive)' })),
    content_type: t.Optional(
      t.String({
        maxLength: 100,
        pattern: '^[a-z]+/(?:[a-z0-9.+-]+|\\*)$',
        error: 'must be a media type such as image/png or image/*',
        description: 'Exact media type, or a family such as `image/*`',
      }),
    ),
  }),
])

export const UpdateAssetBody = t.Object({
  alt: t.Optional(
    t.Record(t.String({ maxLength: 35 }), t.Union([t.String({ maxLength: 2000 }), t.Null()]), {
      description: 'Merged per locale into the stored map; a null removes that locale',
    }),
  ),
  filename: t.Optional(t.String({ minLength: 1, maxLength: 255, error: 'must be 1 to 255 characters' })),
  focus: t.Optional(t.Union([FocusModel, t.Null()], { description: 'Focal point of an image; null clears it' })),
  crop: t.Optional(t.Union([CropModel, t.Null()], { description: 'Crop of an image (inside the image, width and height over 0); null clears it' })),
})

export const FORMATS = ['webp', 'jpg', 'png', 'avif'] as const
export const FITS = ['cover', 'contain', 'inside'] as const

const Dimension = intString(1, 8192, { description: 'Pixels: one of IMAGE_WIDTHS, or any 1–8192 with a valid `s`' })

export const TransformQuery = t.Object({
  w: t.Optional(Dimension),
  h: t.Optional(Dimension),
  fit: t.Optional(oneOf(FITS, { error: 'must be cover, contain or inside', description: 'Default inside' })),
  q: t.Optional(intString(1, 100, { description: 'Quality 1–100 (default 80; ignored by png)' })),
  s: t.Optional(t.String({ maxLength: 128, description: 'Signature from the management API (sizes outside IMAGE_WIDTHS)' })),
  v: t.Optional(
    t.String({ maxLength: 32, pattern: '^[0-9a-z]*$', description: 'Version of the focal point and crop (public answers add it); ignored by the transform, it only makes the URL new when they change' }),
  ),
})

export const SignBody = t.Object({
  format: oneOf(FORMATS, { error: 'must be webp, jpg, png or avif' }),
  w: t.Optional(Int({ minimum: 1, maximum: 8192, error: 'must be an integer from 1 to 8192' })),
  h: t.Optional(Int({ minimum: 1, maximum: 8192, error: 'must be an integer from 1 to 8192' })),
  fit: t.Optional(oneOf(FITS, { error: 'must be cover, contain or inside' })),
  q: t.Optional(Int({ minimum: 1, maximum: 100, error: 'must be an integer from 1 to 100' })),
})
export const SignedUrlModel = t.Object({ url: t.String({ description: 'The transform URL with its `s=` signature' }) })
