import { avifLayout, bytesReader } from './avif-layout'
import { crop, decodePng, encodePng, pad, type Rgba } from './pixels'

/**
 * One image transform, start to finish: decode (Bun.Image; AVIF through @jsquash/avif), orient, resize with a
 * Lanczos-3 filter from the fully decoded pixels, crop or pad for `cover`/`contain`, encode. Runs inside a transform
 * Worker (transform-worker.ts); pure apart from the codecs, so tests may also call it directly.
 */
export type OutputFormat = 'webp' | 'jpg' | 'png' | 'avif'
export type Fit = 'cover' | 'contain' | 'inside'

export interface TransformRequest {
  source: Uint8Array
  sourceType: string
  format: OutputFormat
  w: number | null
  h: number | null
  fit: Fit
  q: number
  maxPixels: number
  /** Focal point, fractions 0..1 of the whole (oriented) image: a cover cut centres on it, clamped inside; null: the centre. */
  focus?: { x: number; y: number } | null
  /** Crop, fractions 0..1 of the oriented source, cut before anything else; null: the whole image. */
  crop?: { x: number; y: number; width: number; height: number } | null
}

/** Where a `size`-long window starts inside `total` so that its centre is at `at` (0..1), clamped inside. */
export function windowStart(total: number, size: number, at: number): number {
  const start = Math.round(at * total - size / 2)
  return Math.max(0, Math.min(total - size, start))
}

/** A focal point of the whole image as a fraction of the crop (clamped to its edges). */
export function focusIn(f: { x: number; y: number }, c: { x: number; y: number; width: number; height: number } | null) {
  if (!c) return f
  const clamp = (v: number) => Math.max(0, Math.min(1, v))
  return { x: clamp((f.x - c.x) / c.width), y: clamp((f.y - c.y) / c.height) }
}

/** The pixel rectangle of a crop of fractions on a `w`×`h` image: at least 1×1, inside the image. */
export function cropRect(w: number, h: number, c: { x: number; y: number; width: number; height: number }) {
  const x = Math.max(0, Math.min(w - 1, Math.round(c.x * w)))
  const y = Math.max(0, Math.min(h - 1, Math.round(c.y * h)))
  const cw = Math.max(1, Math.min(w - x, Math.round(c.width * w)))
  const ch = Math.max(1, Math.min(h - y, Math.round(c.height * h)))
  return { x, y, w: cw, h: ch }
}

export interface AvifCodec {
  encode(img: Rgba, quality: number): Promise<Uint8Array>
  /** Refuses (throws) an image of more than `maxPixels`, and runs in a bounded memory of its own. */
  decode(bytes: Uint8Array, maxPixels: number): Promise<Rgba>
}

/** A transform refused for what the source is; `code` says why (the route answers it). */
export class SourceError extends Error {
  constructor(
    readonly code: 'image_too_large' | 'invalid_image',
    message: string,
  ) {
    super(message)
  }
}

/** The output size and the steps to get there, from the source size and the request; never larger than the source. */
export function plan(ow: number, oh: number, w: number | null, h: number | null, fit: Fit) {
  if (w === null && h === null) return { resize: [ow, oh] as const, crop: null, canvas: null }
  if (w === null || h === null) {
    const s = Math.min(1, w !== null ? w / ow : h! / oh)
    return { resize: [Math.max(1, Math.round(ow * s)), Math.max(1, Math.round(oh * s))] as const, crop: null, canvas: null }
  }
  if (fit === 'inside') {
    const s = Math.min(1, w / ow, h / oh)
    return { resize: [Math.max(1, Math.round(ow * s)), Math.max(1, Math.round(oh * s))] as const, crop: null, canvas: null }
  }
  if (fit === 'cover') {
    // Fill the box, cut the overflow. A source smaller than the box: the largest centre cut of the box's shape, 1:1.
    const s = Math.max(w / ow, h / oh)
    if (s >= 1) {
      const c = Math.min(ow / w, oh / h)
      const cw = Math.max(1, Math.min(ow, Math.round(w * c)))
      const ch = Math.max(1, Math.min(oh, Math.round(h * c)))
      return { resize: [ow, oh] as const, crop: [cw, ch] as const, canvas: null }
    }
    const rw = Math.max(w, Math.round(ow * s))
    const rh = Math.max(h, Math.round(oh * s))
    return { resize: [rw, rh] as const, crop: [w, h] as const, canvas: null }
  }
  // contain: fit inside the box and pad to its shape. A source smaller than the box: padded 1:1 to the box's shape.
  const s = Math.min(w / ow, h / oh)
  if (s >= 1) {
    const c = Math.max(ow / w, oh / h)
    return { resize: [ow, oh] as const, crop: null, canvas: [Math.max(ow, Math.round(w * c)), Math.max(oh, Math.round(h * c))] as const }
  }
  const rw = Math.max(1, Math.min(w, Math.round(ow * s)))
  const rh = Math.max(1, Math.min(h, Math.round(oh * s)))
  return { resize: [rw, rh] as const, crop: null, canvas: [w, h] as const }
}

function encodeWith(img: Bun.Image, format: OutputFormat, q: number): Bun.Image {
  if (format === 'webp') return img.webp({ quality: q })
  if (format === 'jpg') return img.jpeg({ quality: q })
  return img.png({ compressionLevel: 6 })
}

export async function transform(req: TransformRequest, avif: () => Promise<AvifCodec>): Promise<Uint8Array> {
  // 1. The source as Bun.Image reads it best. A JPEG scaled to half its size or less would be decoded at a reduced
  //    IDCT scale, which rings (28–31 dB against a Lanczos reference): decode it to an uncompressed image first and
  //    resize that (54 dB). Other sources resize straight from their bytes. EXIF orientation is applied either way.
  let input: Uint8Array
  let meta: { width: number; height: number }
  if (req.sourceType === 'image/avif') {
    // Checked again here (the upload checked it): an asset stored before the check, or bytes changed since, must not
    // reach the decoder with a size the cap never saw.
    const layout = await avifLayout(bytesReader(req.source), req.source.length)
    if (!layout.ok) throw new SourceError('invalid_image', `not a readable AVIF image: ${layout.reason}`)
    if (layout.largestPixels > req.maxPixels) throw new SourceError('image_too_large', `the AVIF image has more than ${req.maxPixels} pixels`)
    input = encodePng(await (await avif()).decode(req.source, req.maxPixels))
    meta = await new Bun.Image(input, { maxPixels: req.maxPixels }).metadata()
  } else {
    meta = await new Bun.Image(req.source, { maxPixels: req.maxPixels }).metadata()
    input = req.source
  }
  if (req.crop) {
    // An explicit crop comes first: the oriented image, cut in JavaScript, becomes the source of everything below.
    const whole = decodePng(await new Bun.Image(input, { maxPixels: req.maxPixels, autoOrient: true }).png({ compressionLevel: 0 }).bytes())
    const r = cropRect(whole.width, whole.height, req.crop)
    input = encodePng(crop(whole, r.x, r.y, r.w, r.h))
    meta = { width: r.w, height: r.h }
  }
  let p = plan(meta.width, meta.height, req.w, req.h, req.fit)
  if (req.sourceType === 'image/jpeg' && !req.crop) {
    // metadata() reads the stored size; EXIF orientation may swap the axes. A tiny oriented probe tells.
    const probe = new Bun.Image(req.source, { maxPixels: req.maxPixels, autoOrient: true }).resize(64)
    await probe.bytes()
    if (meta.width !== meta.height && probe.width !== probe.height && probe.width > probe.height !== meta.width > meta.height) {
      meta = { width: meta.height, height: meta.width }
      p = plan(meta.width, meta.height, req.w, req.h, req.fit)
    }
    if (p.resize[0] * 2 <= meta.width || p.resize[1] * 2 <= meta.height) {
      input = await new Bun.Image(req.source, { maxPixels: req.maxPixels, autoOrient: true }).png({ compressionLevel: 0 }).bytes()
      meta = await new Bun.Image(input).metadata()
      p = plan(meta.width, meta.height, req.w, req.h, req.fit)
    }
  }
  const opts = { maxPixels: req.maxPixels, autoOrient: true }
  const resized =
    p.resize[0] === meta.width && p.resize[1] === meta.height
      ? new Bun.Image(input, opts)
      : new Bun.Image(input, opts).resize(p.resize[0], p.resize[1], { fit: 'fill', filter: 'lanczos3' })
  // 2. Plain resize into a Bun.Image format: one more pass, no pixels in JavaScript.
  if (!p.crop && !p.canvas && req.format !== 'avif') return encodeWith(resized, req.format, req.q).bytes()
  // 3. Crop or pad in JavaScript, then encode.
  let pixels = decodePng(await resized.png({ compressionLevel: 0 }).bytes())
  if (p.crop) {
    const [cw, ch] = p.crop
    // The window centres on the focal point (the image's centre without one), clamped inside the image.
    // The focal point is a fraction of the whole image: inside a crop it is taken relative to the crop.
    const f = req.focus ? focusIn(req.focus, req.crop ?? null) : null
    const x = f ? windowStart(pixels.width, cw, f.x) : Math.floor((pixels.width - cw) / 2)
    const y = f ? windowStart(pixels.height, ch, f.y) : Math.floor((pixels.height - ch) / 2)
    pixels = crop(pixels, x, y, cw, ch)
  }
  if (p.canvas) {
    const bg: [number, number, number, number] = req.format === 'jpg' ? [255, 255, 255, 255] : [0, 0, 0, 0]
    pixels = pad(pixels, p.canvas[0], p.canvas[1], bg)
  }
  if (req.format === 'avif') return (await avif()).encode(pixels, req.q)
  return encodeWith(new Bun.Image(encodePng(pixels)), req.format, req.q).bytes()
}
