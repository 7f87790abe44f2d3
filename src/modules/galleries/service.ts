import { and, count, desc, eq } from 'drizzle-orm'
import { galleries, type GalleryItem } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { notFound, uniqueAs, validationFailed } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { canonicalLocale } from '../../kernel/locale'
import { assetInfos } from '../assets/service'
import { localeSettings } from '../spaces/locales'
import type { GalleryEventPayload } from './events'
import { GalleryErrors, type GalleryInput, type GalleryView } from './model'

export type GalleryRow = typeof galleries.$inferSelect

export function galleryView(row: GalleryRow): GalleryView {
  return {
    id: row.uuid,
    slug: row.slug,
    title: row.title,
    items: row.items.map((i) => ({ asset_uuid: i.asset_uuid, caption: i.caption ?? {}, alt: i.alt ?? {} })),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

const payloadOf = (row: GalleryRow): GalleryEventPayload => ({ gallery: { id: row.uuid, slug: row.slug, items: row.items.length } })

/**
 * A locale map keyed by the Space's locales (canonical form); unknown or malformed keys are reported under
 * `<field>/<key>`. Empty texts are dropped (an absent locale falls back along the chain).
 */
function localeMap(input: Record<string, string> | undefined, codes: string[], field: string, add: (k: string, m: string) => void) {
  const out: Record<string, string> = {}
  for (const [code, text] of Object.entries(input ?? {})) {
    const c = canonicalLocale(code)
    if (!c || !codes.includes(c)) add(`${field}/${code}`, `is not a locale of the Space (${codes.join(', ')})`)
    else if (text.trim() !== '') out[c] = text
  }
  return out
}

/**
 * Every rule of a gallery beyond the body schema; 422 with all problems at once. Assets are checked through the
 * assets module's service: each must be an image of this Space (`items/<index>/asset_uuid` otherwise).
 */
async function checkGallery(kernel: Kernel, access: SpaceAccess, input: GalleryInput) {
  const errors: Record<string, string[]> = {}
  const add = (k: string, m: string) => (errors[k] ??= []).push(m)
  const { codes } = await localeSettings(kernel.db.db, access.space.id)
  const title = localeMap(input.title, codes, 'title', add)
  const uuids = [...new Set(input.items.map((i) => i.asset_uuid.toLowerCase()))]
  const infos = new Map((await assetInfos(kernel, access.space.id, uuids)).map((a) => [a.uuid.toLowerCase(), a]))
  const items: GalleryItem[] = input.items.map((item, i) => {
    const uuid = item.asset_uuid.toLowerCase()
    const info = infos.get(uuid)
    if (!info) add(`items/${i}/asset_uuid`, 'is not an asset of this Space')
    else if (!info.mime.startsWith('image/')) add(`items/${i}/asset_uuid`, `is not an image (${info.mime})`)
    const out: GalleryItem = { asset_uuid: uuid, caption: localeMap(item.caption, codes, `items/${i}/caption`, add) }
    const alt = localeMap(item.alt, codes, `items/${i}/alt`, add)
    if (Object.keys(alt).length) out.alt = alt
    return out
  })
  if (Object.keys(errors).length) throw validationFailed(errors)
  return { slug: input.slug, title, items }
}

const slugTaken = uniqueAs('galleries_space_slug_key', () => GalleryErrors.slugTaken())

export async function createGallery(kernel: Kernel, access: SpaceAccess, input: GalleryInput): Promise<GalleryView> {
  const values = await checkGallery(kernel, access, input)
  const now = kernel.clock.now()
  const row = await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .insert(galleries)
      .values({ ...values, uuid: crypto.randomUUID(), spaceId: access.space.id, createdAt: now, updatedAt: now })
      .returning()
    emit({ type: 'gallery.created', spaceId: access.space.id, payload: payloadOf(row) })
    return row
  }).catch(slugTaken)
  return galleryView(row)
}

export async function listGalleries(kernel: Kernel, access: SpaceAccess, q: { page?: number; per_page?: number }) {
  const page = pageOf(q.page, q.per_page)
  const where = eq(galleries.spaceId, access.space.id)
  const [rows, [{ total }]] = await Promise.all([
    kernel.db.db.select().from(galleries).where(where).orderBy(desc(galleries.createdAt), desc(galleries.id)).limit(page.perPage).offset(page.offset),
    kernel.db.db.select({ total: count() }).from(galleries).where(where),
  ])
  return { data: rows.map(galleryView), meta: { total: Number(total), page: page.page, per_page: page.perPage } }
}

async function requireGallery(kernel: Kernel, access: SpaceAccess, id: string): Promise<GalleryRow> {
  const [row] = await kernel.db.db
    .select()
    .from(galleries)
    .where(and(eq(galleries.uuid, id.toLowerCase()), eq(galleries.spaceId, access.space.id)))
    .limit(1)
  if (!row) throw notFound('Gallery')
  return row
}

export async function getGallery(kernel: Kernel, access: SpaceAccess, id: string): Promise<GalleryView> {
  return galleryView(await requireGallery(kernel, access, id))
}

/** Replaces a gallery (PUT): slug, title and the whole item list. */
export async function updateGallery(kernel: Kernel, access: SpaceAccess, id: string, input: GalleryInput): Promise<GalleryView> {
  const current = await requireGallery(kernel, access, id)
  const values = await checkGallery(kernel, access, input)
  const row = await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .update(galleries)
      .set({ ...values, updatedAt: kernel.clock.now() })
      .where(eq(galleries.id, current.id))
      .returning()
    if (!row) throw notFound('Gallery')
    emit({ type: 'gallery.updated', spaceId: access.space.id, payload: payloadOf(row) })
    return row
  }).catch(slugTaken)
  return galleryView(row)
}

export async function deleteGallery(kernel: Kernel, access: SpaceAccess, id: string): Promise<void> {
  const current = await requireGallery(kernel, access, id)
  await transact(kernel, async (tx, emit) => {
    const gone = await tx.delete(galleries).where(eq(galleries.id, current.id)).returning({ id: galleries.id })
    if (!gone.length) throw notFound('Gallery')
    emit({ type: 'gallery.deleted', spaceId: access.space.id, payload: payloadOf(current) })
  })
}

/** The gallery of a slug in a Space, for the public read (null: none). */
export async function galleryBySlug(kernel: Kernel, spaceId: number, slug: string): Promise<GalleryRow | null> {
  const [row] = await kernel.db.db
    .select()
    .from(galleries)
    .where(and(eq(galleries.spaceId, spaceId), eq(galleries.slug, slug)))
    .limit(1)
  return row ?? null
}
