import { and, asc, count, eq, gt, lt } from 'drizzle-orm'
import { cartItems, carts, products } from './tables'
import type { DbOrTx, Tx } from '../../kernel/db'
import { notFound, validationFailed } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import type { PublicSpace } from '../../kernel/public-space'
import { CART_IDLE_DAYS, type CartView, CommerceErrors, MAX_CART_LINES } from './model'
import { productByRef, spaceCurrency } from './products'
import { pick } from './public'

type CartRow = typeof carts.$inferSelect
const IDLE_MS = CART_IDLE_DAYS * 86_400_000

/** The one answer for an unknown, foreign-Space or expired cart: the uuid tells nothing. */
const missing = () => notFound('Cart')

function liveCartWhere(kernel: Kernel, spaceId: number, uuid: string) {
  return and(eq(carts.uuid, uuid.toLowerCase()), eq(carts.spaceId, spaceId), gt(carts.touchedAt, new Date(kernel.clock.ms() - IDLE_MS)))
}

/** The cart row, locked for the rest of the transaction (adds, removals and the checkout of one cart queue up). */
export async function lockCart(kernel: Kernel, tx: Tx, spaceId: number, uuid: string): Promise<CartRow> {
  const [row] = await tx.select().from(carts).where(liveCartWhere(kernel, spaceId, uuid)).limit(1).for('update')
  if (!row) throw missing()
  return row
}

async function cartView(kernel: Kernel, db: DbOrTx, space: PublicSpace, cart: CartRow): Promise<CartView> {
  const rows = await db
    .select({ item: cartItems, product: products })
    .from(cartItems)
    .innerJoin(products, eq(products.id, cartItems.productId))
    .where(eq(cartItems.cartId, cart.id))
    .orderBy(asc(cartItems.id))
  const chain = [space.defaultLang]
  const items = rows.map(({ item, product }) => ({
    id: item.id,
    product: { id: product.uuid, slug: product.slug, name: pick(product.name as Record<string, string>, chain).text ?? product.slug },
    quantity: item.quantity,
    unit_price: product.price,
    price_at_add: item.priceAtAdd,
    price_changed: product.price !== item.priceAtAdd,
    line_total: product.price * item.quantity,
    available: product.active && (product.stock === null || product.stock >= item.quantity),
  }))
  const subtotal = items.reduce((s, i) => s + i.line_total, 0)
  return {
    uuid: cart.uuid,
    status: cart.status,
    items,
    currency: rows[0]?.product.currency ?? (await spaceCurrency(db, space.id)),
    subtotal,
    total: subtotal,
    price_changed: items.some((i) => i.price_changed),
    expires_at: new Date(cart.touchedAt.getTime() + IDLE_MS).toISOString(),
  }
}

export async function createCart(kernel: Kernel, space: PublicSpace): Promise<CartView> {
  const now = kernel.clock.now()
  const [row] = await kernel.db.db
    .insert(carts)
    .values({ uuid: crypto.randomUUID(), spaceId: space.id, status: 'open', createdAt: now, touchedAt: now })
    .returning()
  return cartView(kernel, kernel.db.db, space, row!)
}

export async function getCart(kernel: Kernel, space: PublicSpace, uuid: string): Promise<CartView> {
  const [row] = await kernel.db.db.select().from(carts).where(liveCartWhere(kernel, space.id, uuid)).limit(1)
  if (!row) throw missing()
  return cartView(kernel, kernel.db.db, space, row)
}

/**
 * Adds a product (by slug or id); the same product again raises its quantity (at most 99 per line). Stock is checked,
 * not reserved: the checkout takes it. Prices are the server's, never the client's.
 */
export async function addCartItem(kernel: Kernel, space: PublicSpace, uuid: string, input: { product: string; quantity: number }): Promise<CartView> {
  return transact(kernel, async (tx) => {
    const cart = await lockCart(kernel, tx, space.id, uuid)
    if (cart.status !== 'open') throw CommerceErrors.cartClosed('This cart was checked out and cannot change.')
    const product = await productByRef(tx, space.id, input.product)
    if (!product || !product.active) throw validationFailed({ product: ['is not a product on sale in this shop'] })
    const [existing] = await tx
      .select()
      .from(cartItems)
      .where(and(eq(cartItems.cartId, cart.id), eq(cartItems.productId, product.id)))
      .limit(1)
    if (!existing) {
      const [lines] = await tx.select({ n: count() }).from(cartItems).where(eq(cartItems.cartId, cart.id))
      if (Number(lines?.n ?? 0) >= MAX_CART_LINES) throw CommerceErrors.cartFull(`A cart holds at most ${MAX_CART_LINES} lines.`)
    }
    const quantity = (existing?.quantity ?? 0) + input.quantity
    if (quantity > 99) throw validationFailed({ quantity: [`would make ${quantity} of this product; a line holds at most 99`] })
    if (product.stock !== null && quantity > product.stock) {
      throw CommerceErrors.insufficientStock(`Only ${product.stock} of "${product.slug}" left.`, undefined, undefined, {
        product: product.slug,
        available: product.stock,
      })
    }
    const now = kernel.clock.now()
    if (existing) await tx.update(cartItems).set({ quantity, priceAtAdd: product.price }).where(eq(cartItems.id, existing.id))
    else await tx.insert(cartItems).values({ cartId: cart.id, productId: product.id, quantity, priceAtAdd: product.price, createdAt: now })
    const [row] = await tx.update(carts).set({ touchedAt: now }).where(eq(carts.id, cart.id)).returning()
    return cartView(kernel, tx, space, row!)
  })
}

export async function removeCartItem(kernel: Kernel, space: PublicSpace, uuid: string, itemId: number): Promise<void> {
  await transact(kernel, async (tx) => {
    const cart = await lockCart(kernel, tx, space.id, uuid)
    if (cart.status !== 'open') throw CommerceErrors.cartClosed('This cart was checked out and cannot change.')
    const gone = await tx
      .delete(cartItems)
      .where(and(eq(cartItems.id, itemId), eq(cartItems.cartId, cart.id)))
      .returning({ id: cartItems.id })
    if (!gone.length) throw notFound('Cart item')
    await tx.update(carts).set({ touchedAt: kernel.clock.now() }).where(eq(carts.id, cart.id))
  })
}

/** The daily job: carts idle for 30 days are deleted with their lines (orders keep their own copy). */
export async function deleteIdleCarts(kernel: Kernel): Promise<number> {
  const gone = await kernel.db.db
    .delete(carts)
    .where(lt(carts.touchedAt, new Date(kernel.clock.ms() - IDLE_MS)))
    .returning({ id: carts.id })
  return gone.length
}
