import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import { cartItems, carts, orderItems, orders, products, shopSettings } from './tables'
import type { Tx } from '../../kernel/db'
import { notFound, validationFailed } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import { failed, GroupCommit } from '../../kernel/group-commit'
import type { Kernel } from '../../kernel/kernel'
import { MAIL_QUEUE } from '../../kernel/mail'
import type { PublicSpace } from '../../kernel/public-space'
import { CART_IDLE_DAYS, CommerceErrors } from './model'
import { confirmationMail, orderEvent, type Payments } from './orders'
import { pick } from './public'

type OrderRow = typeof orders.$inferSelect
type OrderItemRow = typeof orderItems.$inferSelect
type CartRow = typeof carts.$inferSelect
type ProductRow = typeof products.$inferSelect

/** One checkout, checked already for its own input (e-mail, name, country, Idempotency-Key). */
export interface CheckoutRequest {
  space: PublicSpace
  cartUuid: string
  email: string
  name: string
  address: Record<string, string> | null
  note: string | null
  successUrl: string | null
  cancelUrl: string | null
  idempotencyKey: string | null
}

/** What the checkout's transaction decided for one request: its order (new or the replayed one) and the return URLs. */
export interface CheckoutOutcome {
  row: OrderRow
  items: OrderItemRow[]
  replay: boolean
  successUrl: string | null
  cancelUrl: string | null
}

/** Most checkouts one transaction takes (a bound on the statement sizes; the rest wait for the next commit). */
export const MAX_BATCH = 250
const IDLE_MS = CART_IDLE_DAYS * 86_400_000

/** A batch's transaction: the Tx, its emit, and whose payment keys take the Space's payments (read before it opened). */
interface BatchContext {
  tx: Tx
  emit: Emit
  account: 'space' | 'instance' | null
}

/**
 * Group commit of checkouts (kernel/group-commit.ts; docs/commerce.md): the checkouts of one Space arriving while its
 * previous transaction runs are written together, in ONE transaction, as soon as it commits. With no transaction
 * running, a checkout starts at once (no timer, no added latency on a quiet shop). In the transaction: the carts of
 * the batch locked by ascending id, then their products by ascending id (`SELECT … FOR UPDATE`), then the Space's
 * order counter — the lock order of every checkout, so batches of other processes wait for it and never deadlock.
 * Stock is allocated to the checkouts in arrival order; each gets its own answer (an order, an idempotent replay, or
 * its own 404/409/422) and one bad checkout fails no other. Should the transaction itself fail (a database error),
 * its checkouts are written again one per transaction, so the error reaches only the checkout it belongs to.
 *
 * One writer per Space: shops do not wait for each other's commits; a batch touches one Space's rows only. A Space's
 * writer is dropped when its queue is empty (a later one is a new writer; two of them for one Space would only batch
 * less — the row locks keep them correct, as between processes).
 */
export class CheckoutBatcher {
  private writers = new Map<number, GroupCommit<CheckoutRequest, CheckoutOutcome, BatchContext>>()
  /** Transactions written and checkouts in them (the tests read these). */
  readonly stats = { batches: 0, checkouts: 0, largest: 0 }

  constructor(
    private kernel: Kernel,
    private payments: Payments,
  ) {}

  async submit(req: CheckoutRequest): Promise<CheckoutOutcome> {
    const spaceId = req.space.id
    let writer = this.writers.get(spaceId)
    if (!writer) {
      writer = new GroupCommit<CheckoutRequest, CheckoutOutcome, BatchContext>({
        maxBatch: MAX_BATCH,
        // Whose payment keys: a read of the payments module's state, once per batch and before the transaction (the
        // embedded database has one connection).
        transaction: async (fn) => {
          const account = await this.payments.accountOf(spaceId)
          return transact(this.kernel, (tx, emit) => fn({ tx, emit, account }))
        },
        batch: async (ctx, items) => {
          const out = await this.commit(ctx, items)
          this.stats.batches++
          this.stats.checkouts += items.length
          this.stats.largest = Math.max(this.stats.largest, items.length)
          return out.map((r) => ('error' in r ? failed(r.error) : r))
        },
      })
      this.writers.set(spaceId, writer)
    }
    const w = writer
    try {
      return await w.submit(req)
    } finally {
      if (w.pending === 0 && this.writers.get(spaceId) === w) this.writers.delete(spaceId)
    }
  }

  /** One transaction for the batch (one Space); the outcome of each request in its order. Settles nothing itself. */
  private async commit({ tx, emit, account }: BatchContext, batch: CheckoutRequest[]): Promise<(CheckoutOutcome | { error: unknown })[]> {
    const kernel = this.kernel
    const space = batch[0]!.space
    const now = kernel.clock.now()
    const uuids = [...new Set(batch.map((w) => w.cartUuid.toLowerCase()))]
    const cartRows = await tx
      .select()
      .from(carts)
      .where(and(eq(carts.spaceId, space.id), inArray(carts.uuid, uuids)))
      .orderBy(asc(carts.id))
      .for('update')
    const cutoff = kernel.clock.ms() - IDLE_MS
    const cartOf = new Map<string, CartRow>(cartRows.filter((c) => c.touchedAt.getTime() > cutoff).map((c) => [c.uuid, c]))
    const live = [...cartOf.values()]
    const closedIds = live.filter((c) => c.status !== 'open').map((c) => c.id)
    const openIds = live.filter((c) => c.status === 'open').map((c) => c.id)

    // Orders of carts checked out before this batch (repeats: idempotent replay or cart_closed).
    const priorByCart = new Map<number, { row: OrderRow; items: OrderItemRow[] }>()
    if (closedIds.length) {
      const prior = await tx.select().from(orders).where(inArray(orders.cartId, closedIds))
      const items = await itemsByOrder(tx, prior.map((o) => o.id))
      for (const o of prior) priorByCart.set(o.cartId!, { row: o, items: items.get(o.id) ?? [] })
    }
    const linesOf = new Map<number, (typeof cartItems.$inferSelect)[]>()
    if (openIds.length) {
      const lines = await tx.select().from(cartItems).where(inArray(cartItems.cartId, openIds)).orderBy(asc(cartItems.cartId), asc(cartItems.productId))
      for (const l of lines) {
        const list = linesOf.get(l.cartId) ?? []
        list.push(l)
        linesOf.set(l.cartId, list)
      }
    }
    const productIds = [...new Set([...linesOf.values()].flatMap((ls) => ls.map((l) => l.productId)))]
    const locked: ProductRow[] = productIds.length
      ? await tx.select().from(products).where(inArray(products.id, productIds)).orderBy(asc(products.id)).for('update')
      : []
    const byId = new Map(locked.map((p) => [p.id, p]))
    const left = new Map(locked.map((p) => [p.id, p.stock]))
    const [settings] = await tx.select().from(shopSettings).where(eq(shopSettings.spaceId, space.id)).limit(1)

    // Allocation in arrival order.
    type Sale = { i: number; cart: CartRow; lines: (typeof cartItems.$inferSelect)[]; currency: string; subtotal: number }
    const results: (CheckoutOutcome | { error: unknown } | { sameAs: number } | null)[] = batch.map(() => null)
    const sales: Sale[] = []
    const soldHere = new Map<number, number>() // cart id → index of the sale in `sales`
    const urls = batch.map((w) => {
      const successUrl = w.successUrl ?? settings?.successUrl ?? null
      return { successUrl, cancelUrl: w.cancelUrl ?? settings?.cancelUrl ?? successUrl }
    })
    batch.forEach((w, i) => {
      const fail = (error: unknown) => void (results[i] = { error })
      const cart = cartOf.get(w.cartUuid.toLowerCase())
      if (!cart) return fail(notFound('Cart'))
      const repeat = (prior: { idempotencyKey: string | null } | undefined) =>
        prior !== undefined && w.idempotencyKey !== null && prior.idempotencyKey === w.idempotencyKey
      if (cart.status !== 'open') {
        const prior = priorByCart.get(cart.id)
        if (prior && repeat(prior.row)) return void (results[i] = { row: prior.row, items: prior.items, replay: true, ...urls[i]! })
        return fail(CommerceErrors.cartClosed('This cart was checked out already.'))
      }
      const earlier = soldHere.get(cart.id)
      if (earlier !== undefined) {
        if (repeat(batch[sales[earlier]!.i]!)) return void (results[i] = { sameAs: sales[earlier]!.i })
        return fail(CommerceErrors.cartClosed('This cart was checked out already.'))
      }
      if (account && !urls[i]!.successUrl) {
        return fail(validationFailed({ success_url: ['is required: the shop takes payments through Stripe and has no success_url in its settings'] }))
      }
      const lines = linesOf.get(cart.id) ?? []
      if (!lines.length) return fail(validationFailed({ cart: ['is empty: add items before checking out'] }))
      for (const l of lines) {
        const p = byId.get(l.productId)!
        if (!p.active) return fail(validationFailed({ cart: [`"${p.slug}" is no longer on sale: remove it from the cart`] }))
        const stock = left.get(p.id)!
        if (stock !== null && stock < l.quantity) {
          return fail(CommerceErrors.insufficientStock(`Only ${stock} of "${p.slug}" left.`, undefined, undefined, { product: p.slug, available: stock }))
        }
      }
      const currency = byId.get(lines[0]!.productId)!.currency
      if (lines.some((l) => byId.get(l.productId)!.currency !== currency)) return fail(validationFailed({ cart: ['mixes currencies'] }))
      for (const l of lines) {
        const stock = left.get(l.productId)!
        if (stock !== null) left.set(l.productId, stock - l.quantity)
      }
      soldHere.set(cart.id, sales.length)
      sales.push({ i, cart, lines, currency, subtotal: lines.reduce((s, l) => s + byId.get(l.productId)!.price * l.quantity, 0) })
    })

    if (sales.length) {
      for (const p of locked) {
        const stock = left.get(p.id)!
        if (stock !== null && stock !== p.stock) await tx.update(products).set({ stock: sql`${products.stock} - ${p.stock! - stock}` }).where(eq(products.id, p.id))
      }
      const [counter] = await tx
        .insert(shopSettings)
        .values({ spaceId: space.id, nextOrderNumber: 1001 + sales.length, updatedAt: now })
        .onConflictDoUpdate({ target: shopSettings.spaceId, set: { nextOrderNumber: sql`${shopSettings.nextOrderNumber} + ${sales.length}` } })
        .returning({ next: shopSettings.nextOrderNumber })
      const first = counter!.next - sales.length
      const values = sales.map((s, n) => {
        const w = batch[s.i]!
        return {
          uuid: crypto.randomUUID(),
          spaceId: space.id,
          number: first + n,
          status: 'pending' as const,
          email: w.email,
          name: w.name,
          address: w.address,
          note: w.note,
          currency: s.currency,
          subtotal: s.subtotal,
          total: s.subtotal,
          cartId: s.cart.id,
          idempotencyKey: w.idempotencyKey,
          stockReserved: true,
          paymentAccount: account,
          createdAt: now,
          updatedAt: now,
        }
      })
      const inserted = await tx.insert(orders).values(values).returning()
      const rowByUuid = new Map(inserted.map((r) => [r.uuid, r]))
      const rows = values.map((v) => rowByUuid.get(v.uuid)!)
      const chain = [space.defaultLang]
      const itemRows = await tx
        .insert(orderItems)
        .values(
          sales.flatMap((s, n) =>
            s.lines.map((l) => {
              const p = byId.get(l.productId)!
              return {
                orderId: rows[n]!.id,
                productId: p.id,
                productUuid: p.uuid,
                slug: p.slug,
                name: pick(p.name as Record<string, string>, chain).text ?? p.slug,
                unitPrice: p.price,
                quantity: l.quantity,
              }
            }),
          ),
        )
        .returning()
      const items = new Map<number, OrderItemRow[]>()
      for (const it of itemRows.sort((a, b) => a.id - b.id)) {
        const list = items.get(it.orderId) ?? []
        list.push(it)
        items.set(it.orderId, list)
      }
      await tx
        .update(carts)
        .set({ status: 'checked_out', touchedAt: now })
        .where(inArray(carts.id, sales.map((s) => s.cart.id)))
      sales.forEach((s, n) => {
        const row = rows[n]!
        const its = items.get(row.id) ?? []
        emit({ type: 'order.created', spaceId: space.id, payload: orderEvent(row, its.length) })
        results[s.i] = { row, items: its, replay: false, ...urls[s.i]! }
      })
      await kernel.jobs.enqueueMany(
        tx,
        sales.map((s) => {
          const r = results[s.i] as CheckoutOutcome
          return { queue: MAIL_QUEUE, payload: { message: confirmationMail(space, r.row, r.items) } }
        }),
      )
    }
    return results.map((r, i) => {
      if (r && 'sameAs' in r) return { ...(results[r.sameAs] as CheckoutOutcome), replay: true, ...urls[i]! }
      return r!
    })
  }
}

async function itemsByOrder(tx: Tx, orderIds: number[]): Promise<Map<number, OrderItemRow[]>> {
  const out = new Map<number, OrderItemRow[]>()
  if (!orderIds.length) return out
  const rows = await tx.select().from(orderItems).where(inArray(orderItems.orderId, orderIds)).orderBy(asc(orderItems.id))
  for (const r of rows) {
    const list = out.get(r.orderId) ?? []
    list.push(r)
    out.set(r.orderId, list)
  }
  return out
}
