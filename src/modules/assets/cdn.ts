import { Elysia, t } from 'elysia'
import { stat } from 'node:fs/promises'
import { notFound } from '../../kernel/errors'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { notModified } from '../../kernel/public-answer'
import { SpaceSlug, isUuid } from '../../kernel/schemas'
import type { ImageService } from './images'
import { AssetErrors, FORMATS, RASTER_TYPES, TransformQuery } from './model'
import { focusVersion, publicAsset, transformRefusal, verifySignature } from './service'
import { bucket, readAllBytes, streamAsset } from './store'
import type { Fit, OutputFormat } from './transform'

const IMMUTABLE = 'public, max-age=31536000, immutable'
/** Public bytes are embedded by other sites (`<img>`, `<video>`): pages with `COEP: require-corp` need this opt-in. */
const CORP = { 'Cross-Origin-Resource-Policy': 'cross-origin' }
const OUTPUT_TYPES: Record<OutputFormat, string> = { webp: 'image/webp', jpg: 'image/jpeg', png: 'image/png', avif: 'image/avif' }
/** An SVG opened directly must never run script or load anything. */
const SVG_HEADERS = { 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'", 'X-Content-Type-Options': 'nosniff' }

/** `attachment`-free disposition with the stored name: plain ASCII fallback plus RFC 5987 UTF-8. */
function disposition(filename: string) {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_')
  return `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`
}

/** One `bytes=` range against `size`: [from, to] inclusive, 'unsatisfiable', or null (ignore the header). */
function parseRange(header: string | null, size: number): [number, number] | 'unsatisfiable' | null {
  if (!header) return null
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (!m || (m[1] === '' && m[2] === '')) return null // multiple or malformed ranges: serve the whole file
  if (m[1] === '') {
    const n = Number(m[2])
    if (n === 0) return 'unsatisfiable'
    return [Math.max(0, size - n), size - 1]
  }
  const from = Number(m[1])
  const to = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)
  if (from >= size || to < from) return 'unsatisfiable'
  return [from, to]
}

/**
 * ASSET_DELIVERY=redirect, for an original kept in S3: 302 to a presigned GET of the object, valid for
 * s3PresignSeconds and answering with the asset's type and disposition; the client sends its Range to the store.
 * The redirect itself may be cached only for a fraction of the URL's life.
 */
function redirectToObject(kernel: Kernel, asset: { uuid: string; contentType: string; filename: string }, headers: Record<string, string>) {
  const s3 = bucket(kernel)
  const seconds = kernel.config.s3PresignSeconds
  const location = s3.presign(s3.key(asset.uuid), seconds, asset.contentType, disposition(asset.filename))
  return new Response(null, {
    status: 302,
    headers: { ...headers, Location: location, 'Cache-Control': `public, max-age=${Math.floor(seconds / 5)}` },
  })
}

/** Spec 4.2: the original, and transformed variants of images. Anonymous; 600/min per IP. */
export function assetCdnRoutes(kernel: Kernel, guards: Guards, images: ImageService) {
  const widths = new Set(kernel.config.imageWidths)
  return new Elysia({ prefix: '/cdn/:space/assets', tags: ['Public read'] }).use(guards).get(
    '/:file',
    async ({ space, params, query, request }) => {
      const dot = params.file.indexOf('.')
      const uuid = dot === -1 ? params.file : params.file.slice(0, dot)
      const format = dot === -1 ? null : params.file.slice(dot + 1)
      if (!isUuid(uuid) || (format !== null && !(FORMATS as readonly string[]).includes(format))) throw notFound('Asset')
      const asset = await publicAsset(kernel, space.id, uuid)
      if (!asset) throw notFound('Asset')

      if (format === null) {
        // The original: strong ETag from the content hash; bytes never change under a uuid.
        const etag = `"${asset.sha256}"`
        const headers: Record<string, string> = {
          ETag: etag,
          'Cache-Control': IMMUTABLE,
          'Accept-Ranges': 'bytes',
          'Content-Disposition': disposition(asset.filename),
          ...CORP,
          ...(asset.contentType === 'image/svg+xml' ? SVG_HEADERS : {}),
        }
        const unchanged = notModified(request, etag, headers)
        if (unchanged) return unchanged
        if (asset.store === 's3' && kernel.config.assetDelivery === 'redirect') return redirectToObject(kernel, asset, headers)
        headers['Content-Type'] = asset.contentType
        const ifRange = request.headers.get('if-range')
        const range = ifRange && ifRange !== etag ? null : parseRange(request.headers.get('range'), asset.size)
        if (range === 'unsatisfiable') {
          return new Response(null, { status: 416, headers: { ...headers, 'Content-Range': `bytes */${asset.size}` } })
        }
        if (asset.size === 0) return new Response(new Uint8Array(0), { headers: { ...headers, 'Content-Length': '0' } })
        const [from, to] = range ?? [0, asset.size - 1]
        headers['Content-Length'] = String(to - from + 1)
        if (range) headers['Content-Range'] = `bytes ${from}-${to}/${asset.size}`
        return new Response(streamAsset(kernel, asset, from, to), { status: range ? 206 : 200, headers })
      }

      // A transformed variant of an image.
      if (!RASTER_TYPES.has(asset.contentType)) throw notFound('Asset')
      const w = query.w ?? null
      const h = query.h ?? null
      const fit = (query.fit ?? 'inside') as Fit
      const q = query.q ?? null
      const p = { format, w, h, fit, q }
      const inAllowlist = (w === null || widths.has(w)) && (h === null || widths.has(h))
      if (query.s !== undefined ? !verifySignature(kernel, asset.uuid, p, query.s) : !inAllowlist) {
        throw AssetErrors.sizeNotAllowed(
          query.s !== undefined ? 'The signature does not match these parameters.' : `w and h must be one of ${kernel.config.imageWidths.join(', ')}, or the URL must be signed.`,
          { [query.s !== undefined ? 's' : w !== null && !widths.has(w) ? 'w' : 'h']: ['not allowed'] },
        )
      }
      const quality = q ?? 80
      // The focal point matters only to a cover cut of both sides; the crop to every variant. Either is in the key.
      const focus = fit === 'cover' && w !== null && h !== null ? (asset.focus ?? null) : null
      const shaped = focusVersion(focus, asset.crop ?? null)
      const key = `${asset.sha256.slice(0, 16)}-${w ?? ''}x${h ?? ''}-${fit}-q${format === 'png' ? '' : quality}${shaped ? `-${shaped}` : ''}`
      const name = `${asset.uuid}.${key}.${format}`
      const etag = `"${key}.${format}"`
      // Immutable when the URL names the current focal point and crop (`v`, as public answers give it), or when the
      // image has neither and the URL names none; otherwise the answer may change with them: an hour, then revalidate.
      const version = focusVersion(asset.focus, asset.crop)
      const current = (query.v ?? '') === version
      const headers: Record<string, string> = { ETag: etag, 'Cache-Control': current ? IMMUTABLE : 'public, max-age=3600', ...CORP }
      const unchanged = notModified(request, etag, headers)
      if (unchanged) return unchanged
      headers['Content-Type'] = OUTPUT_TYPES[format as OutputFormat]
      const load = async () => ({
        source: await readAllBytes(kernel, asset),
        sourceType: asset.contentType,
        format: format as OutputFormat,
        w,
        h,
        fit,
        q: quality,
        maxPixels: kernel.config.imageMaxPixels,
        focus,
        crop: asset.crop ?? null,
      })
      for (let attempt = 0; ; attempt++) {
        const path = await images.variant(name, load).catch((err) => {
          // The bytes passed the upload checks but the codec refuses them (a damaged file): no variant to give.
          throw transformRefusal(err)
        })
        // Evicted between the lookup and the read (a full cache under load): transform again, once.
        const size = await stat(path).then((s) => s.size, () => -1)
        if (size >= 0) return new Response(Bun.file(path), { headers: { ...headers, 'Content-Length': String(size) } })
        if (attempt > 0) throw new Error('variant vanished from the cache twice')
        images.forget(name)
      }
    },
    {
      // An unknown Space reads like an unknown asset.
      publicSpace: { notFound: 'Asset' },
      params: t.Object({ space: SpaceSlug, file: t.String({ maxLength: 64, description: '`{uuid}` (the original) or `{uuid}.{webp|jpg|png|avif}`' }) }),
      query: TransformQuery,
      detail: {
        summary: 'An asset: the original, or an image variant (`{uuid}.{webp|jpg|png|avif}`)',
        description:
          'Original (`{uuid}`): Range requests (206/416), strong ETag (If-None-Match → 304), `Content-Disposition` with the filename, `Cache-Control: public, max-age=31536000, immutable`; SVG carries `Content-Security-Policy: default-src \'none\'; style-src \'unsafe-inline\'` and `X-Content-Type-Options: nosniff`. ' +
          'Variant (`{uuid}.{format}`, images only, else 404): `w`/`h` from IMAGE_WIDTHS or any size with a valid `s` (422 `size_not_allowed`), `fit` cover | contain | inside (default), `q` 1–100 (default 80), `v` the focal point and crop version public answers add (immutable caching only while it is current). ' +
          'An image’s crop (PATCH the asset) is cut first; `fit=cover` with `w` and `h` centres its cut on the focal point, clamped inside the image. ' +
          'Never enlarged; EXIF orientation applied; metadata stripped; an animated GIF gives its first frame. Resized with Lanczos-3 from the decoded image, in Workers; results are cached on disk (IMAGE_CACHE_MB, least recently used go first). ' +
          'Originals and variants carry `Cross-Origin-Resource-Policy: cross-origin`: pages with `Cross-Origin-Embedder-Policy: require-corp` may embed them.',
        responses: {
          200: { description: 'The bytes', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
          206: { description: 'A byte range of the original', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
          302: { description: 'ASSET_DELIVERY=redirect and the original is kept in S3: `Location` is a presigned URL of the object, valid a few minutes' },
          304: { description: 'Not modified' },
          416: { description: 'Range not satisfiable' },
        },
      },
    },
  )
}
