/**
 * @content-service/sdk/image — image URLs from asset fields (as reads resolve them: `{url, transform_url, width, height,
 * alt, ...}`) that snap to the widths the server serves (`IMAGE_WIDTHS`, listed by `GET /v1/version` as
 * `images.widths`): every URL built here resolves, none is refused as `size_not_allowed`.
 */

/** The server's default IMAGE_WIDTHS; pass the `images.widths` of `/v1/version` when the operator changed them. */
export const DEFAULT_WIDTHS = [16, 32, 48, 64, 96, 128, 256, 384, 640, 750, 828, 1080, 1200, 1920, 2048, 3840]

export type ImageFormat = 'webp' | 'avif' | 'jpg' | 'png'

export interface ImageAsset {
  url?: string | null
  transform_url?: string | null
  width?: number | null
  height?: number | null
  alt?: string | null
}

export interface ImageOptions {
  width?: number
  height?: number
  format?: ImageFormat
  fit?: 'cover' | 'contain' | 'inside'
  quality?: number
  /** The allowed widths (default DEFAULT_WIDTHS). */
  widths?: readonly number[]
}

/** The smallest allowed width at least `w` (the largest when none is). */
export function snapWidth(w: number, widths: readonly number[] = DEFAULT_WIDTHS): number {
  const sorted = [...widths].sort((a, b) => a - b)
  return sorted.find((x) => x >= w) ?? sorted[sorted.length - 1]
}

const original = (a: ImageAsset | string) => (typeof a === 'string' ? a : (a.url ?? ''))
const transformable = (a: ImageAsset | string) => typeof a === 'string' || !!a.transform_url

/** A transform URL (`{url}.{format}?w=…`), or the original for assets that are not raster images (SVG, PDF). */
export function imageUrl(asset: ImageAsset | string, o: ImageOptions = {}): string {
  const url = original(asset)
  if (!url || !transformable(asset)) return url
  const q = new URLSearchParams()
  if (o.width) q.set('w', String(snapWidth(o.width, o.widths)))
  if (o.height) q.set('h', String(snapWidth(o.height, o.widths)))
  if (o.fit) q.set('fit', o.fit)
  if (o.quality) q.set('q', String(Math.min(100, Math.max(1, Math.round(o.quality)))))
  const s = q.toString()
  return `${url}.${o.format ?? 'webp'}${s ? `?${s}` : ''}`
}

/** `srcset` over the allowed widths up to the image's own width (no upscaling): `… 640w, … 750w`. */
export function srcset(asset: ImageAsset | string, o: Omit<ImageOptions, 'width' | 'height'> & { maxWidth?: number } = {}): string {
  if (!transformable(asset)) return ''
  const cap = o.maxWidth ?? (typeof asset === 'string' ? undefined : asset.width) ?? Number.POSITIVE_INFINITY
  const widths = [...(o.widths ?? DEFAULT_WIDTHS)].sort((a, b) => a - b)
  const use = widths.filter((w) => w <= cap)
  if (!use.length) use.push(widths[0])
  return use.map((w) => `${imageUrl(asset, { ...o, width: w })} ${w}w`).join(', ')
}

/** The attributes of an `<img>`: src (at `width`), srcset, sizes, intrinsic size, alt, lazy loading. */
export function imgAttrs(asset: ImageAsset, o: ImageOptions & { sizes?: string; alt?: string } = {}) {
  const width = o.width ?? (asset.width ? Math.min(asset.width, 1200) : 1200)
  const ratio = asset.width && asset.height ? asset.height / asset.width : null
  return {
    src: imageUrl(asset, { ...o, width }),
    srcset: srcset(asset, o) || undefined,
    sizes: o.sizes ?? `(max-width: ${width}px) 100vw, ${width}px`,
    width,
    height: ratio ? Math.round(width * ratio) : undefined,
    alt: o.alt ?? asset.alt ?? '',
    loading: 'lazy' as const,
    decoding: 'async' as const,
  }
}
