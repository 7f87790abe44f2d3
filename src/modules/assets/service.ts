import { and, count, desc, eq, ilike, inArray, like } from 'drizzle-orm'
import { readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { assets } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { hmacSha256Hex, safeEqual } from '../../kernel/crypto'
import { notFound, validationFailed } from '../../kernel/errors'
import { KernelErrors } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import { actorOf } from '../../kernel/filters'
import { pageOf } from '../../kernel/http'
import type { DbOrTx, Tx } from '../../kernel/db'
import type { Kernel } from '../../kernel/kernel'
import { canonicalLocale } from '../../kernel/locale'
import { localeSettings } from '../spaces/locales'
import './events'
import type { ImageService } from './images'
import { TransformError } from './images'
import { AssetErrors, type AssetView, type Crop, type Focus, RASTER_TYPES } from './model'
import { avifLayout, fileReader } from './avif-layout'
import { detectType, svgSize } from './sniff'
import { enqueueObjectDelete, readAllBytes, sharedVariants, storeNewAsset } from './store'
import type { ReceivedUpload } from './upload'

export { CHUNK_BYTES, readAllBytes, streamBytes } from './store'

type AssetRow = typeof assets.$inferSelect

export function uploadTmpDir(kernel: Kernel) {
  return kernel.config.memoryDb ? tmpdir() : join(kernel.config.dataDir, 'tmp')
}

/** Deletes `upload-*` files older than an hour (an upload in flight on another instance sharing the folder is younger). */
export async function removeStaleUploads(dir: string, now: number) {
  const names = await readdir(dir).catch(() => [] as string[])
  const cutoff = now - 3600_000
  for (const name of names) {
    if (!name.startsWith('upload-')) continue
    const path = join(dir, name)
    const st = await stat(path).catch(() => null)
    if (st && st.mtimeMs < cutoff) await rm(path, { force: true })
  }
}

export function assetUrl(origin: string, spaceSlug: string, uuid: string) {
  return `${origin}/v1/cdn/${spaceSlug}/assets/${uuid}`
}

function view(row: AssetRow, spaceSlug: string, origin: string): AssetView {
  return {
    uuid: row.uuid,
    filename: row.filename,
    content_type: row.contentType,
    size: row.size,
    width: row.width,
    height: row.height,
    sha256: row.sha256,
    alt: row.alt,
    focus: row.focus ?? null,
    crop: row.crop ?? null,
    url: assetUrl(origin, spaceSlug, row.uuid),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** A file name as given, reduced to its last path segment, without control characters, at most 255 characters. */
export function cleanFilename(raw: string): string {
  const base = raw.split(/[\\/]/).pop() ?? ''
  // biome-ignore lint: control characters are what this removes
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255)
  return clean || 'file'
}

/** Alt texts keyed by Space locale; unknown locales are refused. */
async function checkAlt(kernel: Kernel, spaceId: number, alt: Record<string, string | null>, field = 'alt', db: DbOrTx = kernel.db.db) {
  const { codes } = await localeSettings(db, spaceId)
  const out: Record<string, string | null> = {}
  const errors: Record<string, string[]> = {}
  for (const [key, text] of Object.entries(alt)) {
    const code = canonicalLocale(key) ?? key
    if (!codes.includes(code)) errors[`${field}.${key}`] = [`is not a locale of this Space (${codes.join(', ')})`]
    else if (text !== null && (typeof text !== 'string' || text.length > 2000)) errors[`${field}.${key}`] = ['must be a string of at most 2000 characters']
    else out[code] = text
  }
  if (Object.keys(errors).length) throw validationFailed(errors)
  return out
}

/** The `alt` of a multipart upload: a JSON map in `alt`, or `alt[<locale>]` parts. */
function altFromFields(fields: Map<string, string>): Record<string, string> {
  const alt: Record<string, string> = {}
  const json = fields.get('alt')
  if (json !== undefined) {
    let parsed: unknown
    try {
      parsed = JSON.parse(json)
    } catch {
      throw validationFailed({ alt: ['must be a JSON object of locale → text'] })
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw validationFailed({ alt: ['must be a JSON object of locale → text'] })
    for (const [k, v] of Object.entries(parsed)) {
      if (typeof v !== 'string') throw validationFailed({ [`alt.${k}`]: ['must be a string'] })
      alt[k] = v
    }
  }
  for (const [name, value] of fields) {
    const m = /^alt\[([^\]]{1,35})\]$/.exec(name)
    if (m) alt[m[1]!] = value
    else if (name !== 'alt' && name !== 'filename') throw validationFailed({ [name]: ['unknown part (file, filename, alt, alt[<locale>])'] })
  }
  return alt
}

/** Dimensions of an image by its header, refusing decompression bombs before any pixel is decoded. */
async function imageSize(kernel: Kernel, upload: ReceivedUpload, type: string): Promise<{ width: number; height: number } | null> {
  const max = kernel.config.imageMaxPixels
  let size: { width: number; height: number } | null
  if (type === 'image/svg+xml') return svgSize(await Bun.file(upload.path).bytes())
  if (type === 'image/avif') {
    // The primary item's own size, and the largest any item of the file declares (the decoder allocates for each).
    const layout = await avifLayout(fileReader(upload.path), upload.size)
    if (!layout.ok) throw AssetErrors.invalidImage()
    if (layout.largestPixels > max) throw AssetErrors.imageTooLarge()
    size = { width: layout.width, height: layout.height }
  } else if (RASTER_TYPES.has(type)) {
    try {
      const meta = await new Bun.Image(Bun.file(upload.path), { maxPixels: max }).metadata()
      size = { width: meta.width, height: meta.height }
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_IMAGE_TOO_MANY_PIXELS') throw AssetErrors.imageTooLarge()
      throw AssetErrors.invalidImage()
    }
  } else return null
  if (!size) throw AssetErrors.invalidImage()
  if (size.width * size.height > max) throw AssetErrors.imageTooLarge()
  return size
}

export async function uploadAsset(kernel: Kernel, access: SpaceAccess, upload: ReceivedUpload, origin: string): Promise<AssetView> {
  try {
    const alt = (await checkAlt(kernel, access.space.id, altFromFields(upload.fields))) as Record<string, string>
    const type = await detectType(upload.head, () => Bun.file(upload.path).bytes(), upload.size)
    if (!type) {
      throw KernelErrors.unsupportedMediaType(
        'The file is not of an allowed type (JPEG, PNG, WebP, GIF, AVIF, SVG, PDF, MP4, WebM, MP3), judged by its content.',
      )
    }
    const dims = await imageSize(kernel, upload, type)
    const filename = cleanFilename(upload.fields.get('filename') ?? upload.partFilename)
    // Filter hook (plugins) before the transaction: may veto the upload.
    await kernel.filters.run(
      'asset.before_upload',
      { asset: { filename, content_type: type, size: upload.size, sha256: upload.sha256, width: dims?.width ?? null, height: dims?.height ?? null, alt } },
      actorOf(access),
    )
    const now = kernel.clock.now()
    const uuid = crypto.randomUUID()
    const row = await storeNewAsset(kernel, { uuid, path: upload.path, size: upload.size, type }, async (tx, emit, store) => {
      const [row] = await tx
        .insert(assets)
        .values({
          uuid,
          spaceId: access.space.id,
          filename,
          contentType: type,
          size: upload.size,
          width: dims?.width ?? null,
          height: dims?.height ?? null,
          sha256: upload.sha256,
          alt,
          createdBy: access.principal.kind === 'user' ? access.principal.userId : null,
          store,
          createdAt: now,
          updatedAt: now,
        })
        .returning()
      emit({
        type: 'asset.uploaded',
        spaceId: access.space.id,
        payload: { asset: { uuid, filename, content_type: type, size: upload.size, alt } },
      })
      return row!
    })
    return view(row, access.space.slug, origin)
  } finally {
    await upload.cleanup()
  }
}

async function rowOf(kernel: Kernel, spaceId: number, uuid: string): Promise<AssetRow> {
  const [row] = await kernel.db.db
    .select()
    .from(assets)
    .where(and(eq(assets.spaceId, spaceId), eq(assets.uuid, uuid.toLowerCase())))
    .limit(1)
  if (!row) throw notFound('Asset')
  return row
}

export async function getAsset(kernel: Kernel, access: SpaceAccess, uuid: string, origin: string): Promise<AssetView> {
  return view(await rowOf(kernel, access.space.id, uuid), access.space.slug, origin)
}

export async function listAssets(
  kernel: Kernel,
  access: SpaceAccess,
  query: { page?: number; per_page?: number; q?: string; content_type?: string },
  origin: string,
) {
  const page = pageOf(query.page, query.per_page)
  const conds = [eq(assets.spaceId, access.space.id)]
  if (query.q) conds.push(ilike(assets.filename, `%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`))
  if (query.content_type) {
    conds.push(
      query.content_type.endsWith('/*')
        ? like(assets.contentType, `${query.content_type.slice(0, -1)}%`)
        : eq(assets.contentType, query.content_type),
    )
  }
  const where = and(...conds)
  const [rows, [total]] = await Promise.all([
    kernel.db.db.select().from(assets).where(where).orderBy(desc(assets.id)).limit(page.perPage).offset(page.offset),
    kernel.db.db.select({ n: count() }).from(assets).where(where),
  ])
  return {
    data: rows.map((r) => view(r, access.space.slug, origin)),
    meta: { total: Number(total?.n ?? 0), page: page.page, per_page: page.perPage },
  }
}

/** A fraction kept to 4 decimals (a ten-thousandth of the image is finer than any crop needs). */
const frac = (n: number) => Math.round(n * 10_000) / 10_000

/** The focal point as stored, or 422 naming the field. */
function checkFocus(f: Focus | null): Focus | null {
  if (f === null) return null
  return { x: frac(f.x), y: frac(f.y) }
}

/** The crop as stored: inside the image, with an area; else 422 naming the field. */
function checkCrop(c: Crop | null): Crop | null {
  if (c === null) return null
  const out = { x: frac(c.x), y: frac(c.y), width: frac(c.width), height: frac(c.height) }
  const errors: Record<string, string[]> = {}
  if (out.width <= 0) errors['crop/width'] = ['must be more than 0']
  if (out.height <= 0) errors['crop/height'] = ['must be more than 0']
  if (out.x + out.width > 1) errors['crop/width'] = ['x + width must be at most 1 (the crop stays inside the image)']
  if (out.y + out.height > 1) errors['crop/height'] = ['y + height must be at most 1 (the crop stays inside the image)']
  if (Object.keys(errors).length) throw validationFailed(errors)
  return out
}

/**
 * A short token of an image's focal point and crop ('' when neither is set): part of the variant cache key and ETag,
 * and the `v=` public answers add to transform URLs, so a change yields new variants under new URLs.
 */
export function focusVersion(focus: Focus | null | undefined, crop: Crop | null | undefined): string {
  if (!focus && !crop) return ''
  const n = (v: number) => Math.round(v * 10_000).toString(36)
  const f = focus ? `${n(focus.x)}_${n(focus.y)}` : ''
  const c = crop ? `${n(crop.x)}_${n(crop.y)}_${n(crop.width)}_${n(crop.height)}` : ''
  return `${f}c${c}`.replace(/_/g, 'z')
}

export async function updateAsset(
  kernel: Kernel,
  access: SpaceAccess,
  uuid: string,
  input: { alt?: Record<string, string | null>; filename?: string; focus?: Focus | null; crop?: Crop | null },
  origin: string,
): Promise<AssetView> {
  const alt = input.alt ? await checkAlt(kernel, access.space.id, input.alt) : null
  const focus = input.focus === undefined ? undefined : checkFocus(input.focus)
  const cropRect = input.crop === undefined ? undefined : checkCrop(input.crop)
  const row = await transact(kernel, async (tx, emit) => {
    const [current] = await tx
      .select()
      .from(assets)
      .where(and(eq(assets.spaceId, access.space.id), eq(assets.uuid, uuid.toLowerCase())))
      .for('update')
    if (!current) throw notFound('Asset')
    if ((focus || cropRect) && !current.contentType.startsWith('image/')) {
      throw validationFailed({ [focus ? 'focus' : 'crop']: [`only images have a focal point or crop (this is ${current.contentType})`] })
    }
    const merged = { ...current.alt }
    if (alt) for (const [k, v] of Object.entries(alt)) v === null ? delete merged[k] : (merged[k] = v)
    const [row] = await tx
      .update(assets)
      .set({
        alt: merged,
        filename: input.filename !== undefined ? cleanFilename(input.filename) : current.filename,
        ...(focus !== undefined ? { focus } : {}),
        ...(cropRect !== undefined ? { crop: cropRect } : {}),
        updatedAt: kernel.clock.now(),
      })
      .where(eq(assets.id, current.id))
      .returning()
    // Story reads resolve asset fields with the alt text and file name: they must see the change.
    emit({ type: 'asset.updated', spaceId: access.space.id, payload: { asset: { uuid: row!.uuid } } })
    return row!
  })
  return view(row, access.space.slug, origin)
}

/**
 * Writes one locale's alt text inside the caller's transaction (an approved AI suggestion commits with its review):
 * the locale must be one of the Space's; 404 when the asset is gone. Emits asset.updated like any alt change.
 */
export async function setAssetAltIn(kernel: Kernel, tx: Tx, emit: Emit, spaceId: number, uuid: string, lang: string, text: string): Promise<void> {
  // Inside the caller's transaction: on the embedded database a query outside it would wait for it forever.
  const alt = await checkAlt(kernel, spaceId, { [lang]: text }, 'alt', tx)
  const [current] = await tx
    .select()
    .from(assets)
    .where(and(eq(assets.spaceId, spaceId), eq(assets.uuid, uuid.toLowerCase())))
    .for('update')
  if (!current) throw notFound('Asset')
  await tx
    .update(assets)
    .set({ alt: { ...current.alt, ...(alt as Record<string, string>) }, updatedAt: kernel.clock.now() })
    .where(eq(assets.id, current.id))
  emit({ type: 'asset.updated', spaceId, payload: { asset: { uuid: current.uuid } } })
}

/** A failed transform as the answer it gets: the source's own problem (422), else the error as it is. */
export function transformRefusal(err: unknown): unknown {
  if (!(err instanceof TransformError)) return err
  if (err.code === 'image_too_large') return AssetErrors.imageTooLarge()
  return AssetErrors.invalidImage('The image cannot be decoded.')
}

/**
 * A raster image asset reduced to fit `max`×`max` pixels (never enlarged) as JPEG, through the same transform Workers
 * and variant cache as the public image URLs: what may be shown to a vision model instead of the original bytes.
 * 404 for an unknown asset, 422 `invalid_image` for a file that is not a raster image or cannot be decoded.
 */
export async function imagePreview(kernel: Kernel, images: ImageService, spaceId: number, uuid: string, max = 1024): Promise<{ mime: 'image/jpeg'; bytes: Uint8Array; filename: string; alt: Record<string, string> }> {
  const [asset] = await kernel.db.db
    .select()
    .from(assets)
    .where(and(eq(assets.spaceId, spaceId), eq(assets.uuid, uuid.toLowerCase())))
    .limit(1)
  if (!asset) throw notFound('Asset')
  if (!RASTER_TYPES.has(asset.contentType)) throw AssetErrors.invalidImage(`The asset is ${asset.contentType}, not a raster image.`)
  const key = `${asset.sha256.slice(0, 16)}-${max}x${max}-inside-q80`
  const name = `${asset.uuid}.${key}.jpg`
  const load = async () => ({
    source: await readAllBytes(kernel, asset),
    sourceType: asset.contentType,
    format: 'jpg' as const,
    w: max,
    h: max,
    fit: 'inside' as const,
    q: 80,
    maxPixels: kernel.config.imageMaxPixels,
  })
  for (let attempt = 0; ; attempt++) {
    const path = await images.variant(name, load).catch((err) => {
      throw transformRefusal(err)
      throw err
    })
    const file = Bun.file(path)
    if (await file.exists()) return { mime: 'image/jpeg', bytes: new Uint8Array(await file.arrayBuffer()), filename: asset.filename, alt: asset.alt }
    if (attempt > 0) throw new Error('variant vanished from the cache twice')
    images.forget(name)
  }
}

export async function deleteAsset(kernel: Kernel, access: SpaceAccess, uuid: string): Promise<void> {
  await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .delete(assets)
      .where(and(eq(assets.spaceId, access.space.id), eq(assets.uuid, uuid.toLowerCase())))
      .returning({ uuid: assets.uuid, size: assets.size, store: assets.store })
    if (!row) throw notFound('Asset')
    // Postgres: the chunk rows go with the row (cascade). S3: a durable job deletes the object after the commit.
    if (row.store === 's3') await enqueueObjectDelete(kernel, tx, row.uuid)
    else if (sharedVariants(kernel)) await enqueueObjectDelete(kernel, tx, row.uuid, { original: false })
    emit({ type: 'asset.deleted', spaceId: access.space.id, payload: { asset: { uuid: row.uuid, size: row.size } } })
  })
}

// ---- Public delivery ----

/** An asset of a live Space as the public routes see it. */
export async function publicAsset(kernel: Kernel, spaceId: number, uuid: string): Promise<AssetRow | null> {
  const [row] = await kernel.db.db
    .select()
    .from(assets)
    .where(and(eq(assets.spaceId, spaceId), eq(assets.uuid, uuid.toLowerCase())))
    .limit(1)
  return row ?? null
}

/** What a Story read shows of an asset (an asset field resolved): one query for every uuid a Story references. */
export interface AssetInfo {
  uuid: string
  filename: string
  mime: string
  width: number | null
  height: number | null
  alt: Record<string, string>
  focus: Focus | null
  crop: Crop | null
}

export async function assetInfos(kernel: Kernel, spaceId: number, uuids: string[]): Promise<AssetInfo[]> {
  if (!uuids.length) return []
  return kernel.db.db
    .select({
      uuid: assets.uuid,
      filename: assets.filename,
      mime: assets.contentType,
      width: assets.width,
      height: assets.height,
      alt: assets.alt,
      focus: assets.focus,
      crop: assets.crop,
    })
    .from(assets)
    .where(and(eq(assets.spaceId, spaceId), inArray(assets.uuid, uuids)))
}

// ---- Signed transform URLs ----

export interface TransformParams {
  format: string
  w: number | null
  h: number | null
  fit: string
  q: number | null
}

function canonicalParams(uuid: string, p: TransformParams) {
  return `${uuid.toLowerCase()}.${p.format}?w=${p.w ?? ''}&h=${p.h ?? ''}&fit=${p.fit}&q=${p.q ?? ''}`
}

export function signature(kernel: Kernel, uuid: string, p: TransformParams): string {
  return hmacSha256Hex(kernel.secrets.derive('asset-url'), canonicalParams(uuid, p)).slice(0, 32)
}

export function verifySignature(kernel: Kernel, uuid: string, p: TransformParams, s: string): boolean {
  return safeEqual(signature(kernel, uuid, p), s)
}

export async function signTransformUrl(
  kernel: Kernel,
  access: SpaceAccess,
  uuid: string,
  input: { format: string; w?: number; h?: number; fit?: string; q?: number },
  origin: string,
): Promise<{ url: string }> {
  const row = await rowOf(kernel, access.space.id, uuid)
  if (!RASTER_TYPES.has(row.contentType)) throw notFound('Asset')
  const p: TransformParams = { format: input.format, w: input.w ?? null, h: input.h ?? null, fit: input.fit ?? 'inside', q: input.q ?? null }
  const qs = new URLSearchParams()
  if (p.w !== null) qs.set('w', String(p.w))
  if (p.h !== null) qs.set('h', String(p.h))
  if (input.fit) qs.set('fit', p.fit)
  if (p.q !== null) qs.set('q', String(p.q))
  qs.set('s', signature(kernel, row.uuid, p))
  return { url: `${assetUrl(origin, access.space.slug, row.uuid)}.${p.format}?${qs}` }
}

