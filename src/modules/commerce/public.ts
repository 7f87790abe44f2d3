import { and, asc, count, eq, gt, ilike, or, sql, type SQL } from 'drizzle-orm'
import { products, shopSettings } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { validationFailed } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { ListSeek } from '../../kernel/list-seek'
import { spaceLocaleChain } from '../../kernel/locale'
import type { PublicSpace } from '../../kernel/public-space'
import { RASTER_TYPES } from '../assets/model'
import { assetInfos, assetUrl } from '../assets/service'
import { CommerceErrors, type PublicProductView, type ShopSettingsInput, type ShopSettingsView } from './model'
import { inStock, isCurrency, likeEscape, type ProductRow } from './products'

/**
 * The locales a public read tries, in order: `?lang` (422 when not a tag, like every public read), else the best
 * Accept-Language match, then the Story fallbacks.
 */
export function chainOf(space: PublicSpace, lang: string | undefined, acceptLanguage: string | null): string[] {
  return spaceLocaleChain(space, lang, acceptLanguage)
}

/** The text of a locale map in the first locale of `chain` that has one (else any), and that locale. */
export function pick(map: Record<string, string>, chain: string[]): { lang: string | null; text: string | null } {
  for (const c of chain) if (typeof map[c] === 'string') return { lang: c, text: map[c] }
  const first = Object.keys(map)[0]
  return first ? { lang: first, text: map[first] } : { lang: null, text: null }
}

async function publicViews(kernel: Kernel, space: PublicSpace, rows: ProductRow[], chain: string[], origin: string): Promise<PublicProductView[]> {
  const uuids = [...new Set(rows.flatMap((r) => r.images as string[]))]
  const infos = new Map((await assetInfos(kernel, space.id, uuids)).map((a) => [a.uuid, a]))
  return rows.map((r) => {
    const name = pick(r.name as Record<string, string>, chain)
    const description = pick(r.description as Record<string, string>, name.lang ? [name.lang, ...chain] : chain)
    return {
      id: r.uuid,
      slug: r.slug,
      lang: name.lang ?? space.defaultLang,
      name: name.text ?? r.slug,
      description: description.text,
      price: r.price,
      currency: r.currency,
      in_stock: inStock(r),
      // Assets deleted since the product was saved are left out.
      images: (r.images as string[]).flatMap((u) => {
        const a = infos.get(u)
        if (!a) return []
        const url = assetUrl(origin, space.slug, a.uuid)
        const alt = pick(a.alt ?? {}, chain).text
        return [{ uuid: a.uuid, url, transform_url: RASTER_TYPES.has(a.mime) ? `${url}.webp` : null, width: a.width, height: a.height, alt }]
      }),
      attributes: r.attributes as Record<string, unknown>,
    }
  })
}

/** Totals and page boundaries of the public product list, per Space; any product change of the Space drops them. */
export function productListSeek(kernel: Kernel): ListSeek<string> {
  const bySpace = (e: { spaceId: number | null }) => e.spaceId
  return new ListSeek<string>(kernel, 'commerce.list-seek', { 'product.created': bySpace, 'product.updated': bySpace, 'product.deleted': bySpace })
}

const ALWAYS = { from: 0, to: Number.POSITIVE_INFINITY }

/**
 * The active products of a Space by slug, a page at a time. A page whose previous page was served before reads by
 * keyset (`slug > last slug`, a range of products_space_slug_key) and the total comes from memory (ListSeek); else
 * OFFSET and `count(*)`. The same answer either way.
 */
export async function publicProductList(
  kernel: Kernel,
  seek: ListSeek<string>,
  space: PublicSpace,
  query: { page?: number; per_page?: number; q?: string; lang?: string },
  acceptLanguage: string | null,
  origin: string,
) {
  const page = pageOf(query.page, query.per_page)
  const conds: SQL[] = [eq(products.spaceId, space.id), eq(products.active, true)]
  if (query.q) conds.push(or(ilike(products.slug, likeEscape(query.q)), ilike(sql`${products.name}::text`, likeEscape(query.q)))!)
  const where = and(...conds)
  const list = query.q ?? ''
  const known = seek.lookup(space.id, list, page.perPage, page.page)
  const rowsQuery =
    known.after !== undefined
      ? kernel.db.db.select().from(products).where(and(where, gt(products.slug, known.after))).orderBy(asc(products.slug)).limit(page.perPage)
      : kernel.db.db.select().from(products).where(where).orderBy(asc(products.slug)).limit(page.perPage).offset(page.offset)
  const [rows, total] = await Promise.all([
    rowsQuery,
    known.total ?? kernel.db.db.select({ n: count() }).from(products).where(where).then(([r]) => Number(r?.n ?? 0)),
  ])
  seek.remember(space.id, list, page.perPage, page.page, known.epoch, total, ALWAYS, rows.length === page.perPage ? rows[rows.length - 1]!.slug : undefined)
  const data = await publicViews(kernel, space, rows, chainOf(space, query.lang, acceptLanguage), origin)
  return { data, meta: { total, page: page.page, per_page: page.perPage } }
}

export async function publicProduct(
  kernel: Kernel,
  space: PublicSpace,
  slug: string,
  lang: string | undefined,
  acceptLanguage: string | null,
  origin: string,
): Promise<PublicProductView | null> {
  const [row] = await kernel.db.db
    .select()
    .from(products)
    .where(and(eq(products.spaceId, space.id), eq(products.slug, slug), eq(products.active, true)))
    .limit(1)
  if (!row) return null
  return (await publicViews(kernel, space, [row], chainOf(space, lang, acceptLanguage), origin))[0]!
}

// ---- Shop settings ----

export async function shopSettingsOf(kernel: Kernel, spaceId: number): Promise<ShopSettingsView> {
  const [row] = await kernel.db.db.select().from(shopSettings).where(eq(shopSettings.spaceId, spaceId)).limit(1)
  return {
    currency: row?.currency ?? null,
    success_url: row?.successUrl ?? null,
    cancel_url: row?.cancelUrl ?? null,
    next_order_number: row?.nextOrderNumber ?? 1001,
  }
}

export async function updateShopSettings(kernel: Kernel, access: SpaceAccess, input: ShopSettingsInput): Promise<ShopSettingsView> {
  const spaceId = access.space.id
  await transact(kernel, async (tx) => {
    const set: Partial<typeof shopSettings.$inferInsert> = { updatedAt: kernel.clock.now() }
    if (input.currency !== undefined) {
      if (!isCurrency(input.currency)) throw validationFailed({ currency: ['is not an ISO 4217 currency code'] })
      const [other] = await tx
        .select({ currency: products.currency })
        .from(products)
        .where(and(eq(products.spaceId, spaceId), sql`${products.currency} <> ${input.currency}`))
        .limit(1)
      if (other) throw CommerceErrors.currencyInUse(`The Space has products priced in ${other.currency}: change them first.`)
      set.currency = input.currency
    }
    for (const key of ['success_url', 'cancel_url'] as const) {
      const v = input[key]
      if (v === undefined) continue
      if (v !== null) {
        try {
          new URL(v)
        } catch {
          throw validationFailed({ [key]: ['must be an http(s) URL'] })
        }
      }
      set[key === 'success_url' ? 'successUrl' : 'cancelUrl'] = v
    }
    await tx
      .insert(shopSettings)
      .values({ spaceId, ...set, updatedAt: kernel.clock.now() })
      .onConflictDoUpdate({ target: shopSettings.spaceId, set })
  })
  return shopSettingsOf(kernel, spaceId)
}
