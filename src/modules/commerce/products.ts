import { and, asc, count, eq, ilike, or, sql, type SQL } from 'drizzle-orm'
import { products, shopSettings } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import type { DbOrTx, Tx } from '../../kernel/db'
import { notFound, uniqueAs, validationFailed } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { canonicalLocale } from '../../kernel/locale'
import { isUuid } from '../../kernel/schemas'
import { assetInfos } from '../assets/service'
import { localeSettings } from '../spaces/locales'
import type { ProductEventPayload } from './events'
import { CommerceErrors, type ProductInput, type ProductPatchInput, type ProductView } from './model'

export type ProductRow = typeof products.$inferSelect

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'))
export const isCurrency = (c: string) => CURRENCIES.has(c)
const MAX_ATTRIBUTES_BYTES = 10_000

export const inStock = (row: Pick<ProductRow, 'stock' | 'active'>) => row.stock === null || row.stock > 0

export function productView(row: ProductRow): ProductView {
  return {
    id: row.uuid,
    slug: row.slug,
    name: row.name as Record<string, string>,
    description: row.description as Record<string, string>,
    price: row.price,
    currency: row.currency,
    stock: row.stock,
    in_stock: inStock(row),
    active: row.active,
    images: row.images as string[],
    attributes: row.attributes as Record<string, unknown>,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

export function productEvent(row: ProductRow): ProductEventPayload {
  return {
    product: {
      id: row.uuid,
      slug: row.slug,
      name: row.name as Record<string, string>,
      price: row.price,
      currency: row.currency,
      active: row.active,
      in_stock: inStock(row),
    },
  }
}

/** `%` and `_` taken literally in an ILIKE pattern. */
export const likeEscape = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

export async function spaceCurrency(db: DbOrTx, spaceId: number): Promise<string | null> {
  const [row] = await db.select({ currency: shopSettings.currency }).from(shopSettings).where(eq(shopSettings.spaceId, spaceId)).limit(1)
  return row?.currency ?? null
}

/** Locale maps keyed by the Space's locales (canonical tags); every problem at once, under `<field>/<key>`. */
async function checkLocaleMap(
  db: DbOrTx,
  spaceId: number,
  field: string,
  map: Record<string, string>,
  errors: Record<string, string[]>,
  required: boolean,
): Promise<Record<string, string>> {
  const { codes } = await localeSettings(db, spaceId)
  const out: Record<string, string> = {}
  for (const [code, text] of Object.entries(map)) {
    const c = canonicalLocale(code)
    if (!c || !codes.includes(c)) (errors[`${field}/${code}`] ??= []).push(`is not a locale of the Space (${codes.join(', ')})`)
    else if (text.trim()) out[c] = text.trim()
  }
  if (required && !Object.keys(out).length && !Object.keys(errors).some((k) => k.startsWith(`${field}/`))) {
    ;(errors[field] ??= []).push('needs a non-empty text in at least one locale of the Space')
  }
  return out
}

/** Every rule beyond the body schema, 422 with every problem at once. Returns the values to store. */
async function checkProduct(kernel: Kernel, tx: Tx, spaceId: number, input: ProductPatchInput, current: ProductRow | null, assets: Set<string>) {
  const errors: Record<string, string[]> = {}
  const out: Partial<typeof products.$inferInsert> = {}
  if (input.name !== undefined) out.name = await checkLocaleMap(tx, spaceId, 'name', input.name, errors, true)
  if (input.description !== undefined) out.description = await checkLocaleMap(tx, spaceId, 'description', input.description, errors, false)
  if (input.attributes !== undefined) {
    if (new TextEncoder().encode(JSON.stringify(input.attributes)).byteLength > MAX_ATTRIBUTES_BYTES) {
      errors.attributes = ['must be at most 10,000 bytes of JSON']
    } else out.attributes = input.attributes
  }
  if (input.images !== undefined) {
    const uuids = [...new Set(input.images.map((u) => u.toLowerCase()))]
    if (uuids.length !== input.images.length) errors.images = ['must not repeat an asset']
    else {
      uuids.forEach((u, i) => {
        if (!assets.has(u)) (errors[`images/${i}`] ??= []).push('is not an asset of this Space')
      })
      out.images = uuids
    }
  }
  // One currency per Space: the Space setting, else the first product's.
  const fixed = await spaceCurrency(tx, spaceId)
  if (input.currency !== undefined) {
    if (!isCurrency(input.currency)) errors.currency = ['is not an ISO 4217 currency code']
    else if (fixed && fixed !== input.currency) errors.currency = [`must be ${fixed}: the Space sells in ${fixed}`]
    out.currency = input.currency
  } else if (!current) {
    if (!fixed) errors.currency = ['is required for the Space’s first product (it sets the Space’s currency)']
    out.currency = fixed ?? undefined
  }
  if (Object.keys(errors).length) throw validationFailed(errors)
  if (!fixed && out.currency) {
    await tx
      .insert(shopSettings)
      .values({ spaceId, currency: out.currency, updatedAt: kernel.clock.now() })
      .onConflictDoUpdate({ target: shopSettings.spaceId, set: { currency: out.currency, updatedAt: kernel.clock.now() } })
  }
  return out
}

async function productRow(db: DbOrTx, spaceId: number, uuid: string, lock = false): Promise<ProductRow> {
  const q = db
    .select()
    .from(products)
    .where(and(eq(products.spaceId, spaceId), eq(products.uuid, uuid.toLowerCase())))
    .limit(1)
  const [row] = lock ? await q.for('update') : await q
  if (!row) throw notFound('Product')
  return row
}

/** A product of the Space by slug or id (uuid): what a cart line names. */
export async function productByRef(db: DbOrTx, spaceId: number, ref: string): Promise<ProductRow | null> {
  const cond = isUuid(ref) ? or(eq(products.uuid, ref.toLowerCase()), eq(products.slug, ref)) : eq(products.slug, ref)
  const [row] = await db
    .select()
    .from(products)
    .where(and(eq(products.spaceId, spaceId), cond))
    .limit(1)
  return row ?? null
}

/**
 * The assets module's own answer (before the transaction: its service reads outside ours, and the embedded database
 * has one connection): which of the images are assets of this Space.
 */
async function knownAssets(kernel: Kernel, spaceId: number, images: string[] | undefined): Promise<Set<string>> {
  if (!images?.length) return new Set()
  return new Set((await assetInfos(kernel, spaceId, [...new Set(images.map((u) => u.toLowerCase()))])).map((a) => a.uuid))
}

function slugConflict(err: unknown, slug: string | undefined): never {
  return uniqueAs('products_space_slug_key', () => CommerceErrors.slugTaken(`Another product of this Space has the slug "${slug}".`))(err)
}

export async function createProduct(kernel: Kernel, access: SpaceAccess, input: ProductInput): Promise<ProductView> {
  const assets = await knownAssets(kernel, access.space.id, input.images)
  try {
    return await transact(kernel, async (tx, emit) => {
      const v = await checkProduct(kernel, tx, access.space.id, input, null, assets)
      const now = kernel.clock.now()
      const [row] = await tx
        .insert(products)
        .values({
          uuid: crypto.randomUUID(),
          spaceId: access.space.id,
          slug: input.slug,
          name: v.name!,
          description: v.description ?? {},
          price: input.price,
          currency: v.currency!,
          stock: input.stock ?? null,
          active: input.active ?? true,
          images: v.images ?? [],
          attributes: v.attributes ?? {},
          createdAt: now,
          updatedAt: now,
        })
        .returning()
      emit({ type: 'product.created', spaceId: access.space.id, payload: productEvent(row) })
      return productView(row)
    })
  } catch (err) {
    slugConflict(err, input.slug)
  }
}

export async function getProduct(kernel: Kernel, access: SpaceAccess, uuid: string): Promise<ProductView> {
  return productView(await productRow(kernel.db.db, access.space.id, uuid))
}

export async function listProducts(
  kernel: Kernel,
  access: SpaceAccess,
  query: { page?: number; per_page?: number; q?: string; active?: 'true' | 'false' },
) {
  const page = pageOf(query.page, query.per_page)
  const conds: SQL[] = [eq(products.spaceId, access.space.id)]
  if (query.active) conds.push(eq(products.active, query.active === 'true'))
  if (query.q) conds.push(or(ilike(products.slug, likeEscape(query.q)), ilike(sql`${products.name}::text`, likeEscape(query.q)))!)
  const where = and(...conds)
  const [rows, [total]] = await Promise.all([
    kernel.db.db.select().from(products).where(where).orderBy(asc(products.slug)).limit(page.perPage).offset(page.offset),
    kernel.db.db.select({ n: count() }).from(products).where(where),
  ])
  return { data: rows.map(productView), meta: { total: Number(total?.n ?? 0), page: page.page, per_page: page.perPage } }
}

export async function updateProduct(kernel: Kernel, access: SpaceAccess, uuid: string, input: ProductPatchInput): Promise<ProductView> {
  const assets = await knownAssets(kernel, access.space.id, input.images)
  try {
    return await transact(kernel, async (tx, emit) => {
      const current = await productRow(tx, access.space.id, uuid, true)
      const v = await checkProduct(kernel, tx, access.space.id, input, current, assets)
      const set: Partial<typeof products.$inferInsert> = { ...v, updatedAt: kernel.clock.now() }
      if (input.slug !== undefined) set.slug = input.slug
      if (input.price !== undefined) set.price = input.price
      if (input.stock !== undefined) set.stock = input.stock
      if (input.active !== undefined) set.active = input.active
      const [row] = await tx.update(products).set(set).where(eq(products.id, current.id)).returning()
      emit({ type: 'product.updated', spaceId: access.space.id, payload: productEvent(row) })
      return productView(row)
    })
  } catch (err) {
    slugConflict(err, input.slug)
  }
}

/** Deletes a product: its cart lines go with it; orders keep their copy of the line. */
export async function deleteProduct(kernel: Kernel, access: SpaceAccess, uuid: string): Promise<void> {
  await transact(kernel, async (tx, emit) => {
    const row = await productRow(tx, access.space.id, uuid, true)
    await tx.delete(products).where(eq(products.id, row.id))
    emit({ type: 'product.deleted', spaceId: access.space.id, payload: productEvent(row) })
  })
}
