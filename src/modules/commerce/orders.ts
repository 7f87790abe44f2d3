import { and, asc, count, desc, eq, ilike, inArray, lt, or, sql, type SQL } from 'drizzle-orm'
import { orderItems, orders, products } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import type { DbOrTx, Tx } from '../../kernel/db'
import { AppError, notFound, validationFailed } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import { publicActor } from '../../kernel/filters'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { normalizeEmail } from '../../kernel/email'
import type { PublicSpace } from '../../kernel/public-space'
import type { PaymentExpiredPayload, PaymentSucceededPayload } from '../payments/events'
import type { CheckoutInput as PaymentCheckout } from '../payments/service'
import { getCart } from './carts'
import type { CheckoutBatcher } from './checkout-batch'
import './hooks'
import type { OrderEventPayload } from './events'
import { CommerceErrors, type CheckoutInput, type OrderStatus, type OrderView, UNPAID_RELEASE_MINUTES } from './model'

type OrderRow = typeof orders.$inferSelect
type OrderItemRow = typeof orderItems.$inferSelect

/** What the checkout needs of the payments module (its state, through `use`). */
export interface Payments {
  accountOf(spaceId: number): Promise<'space' | 'instance' | null>
  startCheckout(spaceId: number, input: PaymentCheckout): Promise<{ url: string; sessionId: string }>
}

export const orderNumber = (n: number) => `#${n}`

export function money(amount: number, currency: string): string {
  try {
    const f = new Intl.NumberFormat('en', { style: 'currency', currency })
    const digits = f.resolvedOptions().maximumFractionDigits ?? 2
    return f.format(amount / 10 ** digits)
  } catch {
    return `${amount} ${currency}`
  }
}

export function orderView(row: OrderRow, items: OrderItemRow[]): OrderView {
  return {
    id: row.uuid,
    number: orderNumber(row.number),
    status: row.status,
    email: row.email,
    name: row.name,
    address: (row.address as Record<string, string> | null) ?? null,
    note: row.note,
    currency: row.currency,
    subtotal: row.subtotal,
    total: row.total,
    items: items.map((i) => ({
      product_id: i.productUuid,
      slug: i.slug,
      name: i.name,
      unit_price: i.unitPrice,
      quantity: i.quantity,
      line_total: i.unitPrice * i.quantity,
    })),
    payment_provider: row.paymentAccount ? 'stripe' : null,
    payment_url: row.paymentUrl,
    payment_error: row.paymentError,
    cancel_reason: row.cancelReason,
    created_at: row.createdAt.toISOString(),
    paid_at: row.paidAt?.toISOString() ?? null,
    fulfilled_at: row.fulfilledAt?.toISOString() ?? null,
    cancelled_at: row.cancelledAt?.toISOString() ?? null,
  }
}

export function orderEvent(row: OrderRow, lines: number): OrderEventPayload {
  return {
    order: {
      id: row.uuid,
      number: orderNumber(row.number),
      status: row.status,
      email: row.email,
      name: row.name,
      currency: row.currency,
      total: row.total,
      items: lines,
    },
  }
}

async function itemsOf(db: DbOrTx, orderIds: number[]): Promise<Map<number, OrderItemRow[]>> {
  const out = new Map<number, OrderItemRow[]>()
  if (!orderIds.length) return out
  const rows = await db.select().from(orderItems).where(inArray(orderItems.orderId, orderIds)).orderBy(asc(orderItems.id))
  for (const r of rows) {
    const list = out.get(r.orderId) ?? []
    list.push(r)
    out.set(r.orderId, list)
  }
  return out
}

async function viewOf(db: DbOrTx, row: OrderRow): Promise<OrderView> {
  return orderView(row, (await itemsOf(db, [row.id])).get(row.id) ?? [])
}

const REGIONS = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' })
const isCountry = (code: string) => {
  try {
    return /^[A-Z]{2}$/.test(code) && code !== 'ZZ' && REGIONS.of(code) !== undefined
  } catch {
    return false
  }
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/

function fillUrl(template: string, order: OrderRow): string {
  return template.replaceAll('{ORDER_ID}', order.uuid).replaceAll('{ORDER_NUMBER}', String(order.number))
}

/**
 * Checkout: the order, its lines, the stock decrement and the closed cart in ONE transaction — shared with the other
 * checkouts of the Space arriving meanwhile (group commit, ./checkout-batch.ts). Lock order — the carts by ascending
 * id, then their products by ascending id (`SELECT … FOR UPDATE`), then the Space's order counter — is the same in
 * every checkout, so two checkouts of the same products in any cart order wait for each other and never deadlock.
 * With Stripe, the Checkout Session is created after the commit (no network inside a transaction).
 */
export async function checkout(
  kernel: Kernel,
  payments: Payments,
  batcher: CheckoutBatcher,
  space: PublicSpace,
  cartUuid: string,
  input: CheckoutInput,
  idempotencyKey: string | null,
): Promise<{ order: OrderView; replay: boolean }> {
  if (idempotencyKey !== null && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
    throw validationFailed({ 'Idempotency-Key': ['must be 1 to 255 visible ASCII characters'] })
  }
  const errors: Record<string, string[]> = {}
  const email = normalizeEmail(input.email)
  if (!email) errors.email = ['must be an e-mail address']
  const name = input.name.trim()
  if (!name) errors.name = ['must not be blank']
  if (input.address && !isCountry(input.address.country)) errors['address/country'] = ['is not an ISO 3166-1 alpha-2 country code']
  if (Object.keys(errors).length) throw validationFailed(errors)

  // Filter hook (plugins) before the transaction: may veto. The cart is read only when a handler wants the call;
  // a checked-out cart skips it (its repeat answers the order already sold, or 409).
  const actor = publicActor(space)
  if (kernel.filters.active('order.before_checkout', actor)) {
    const cart = await getCart(kernel, space, cartUuid)
    if (cart.status === 'open') {
      await kernel.filters.run(
        'order.before_checkout',
        {
          cart: {
            uuid: cart.uuid,
            currency: cart.currency,
            subtotal: cart.subtotal,
            items: cart.items.map((i) => ({ product: i.product, quantity: i.quantity, unit_price: i.unit_price, line_total: i.line_total })),
          },
          buyer: { email: email!, name, address: input.address ?? null, note: input.note ?? null },
        },
        actor,
      )
    }
  }

  const result = await batcher.submit({
    space,
    cartUuid,
    email: email!,
    name,
    address: (input.address as Record<string, string> | undefined) ?? null,
    note: input.note?.trim() || null,
    successUrl: input.success_url ?? null,
    cancelUrl: input.cancel_url ?? null,
    idempotencyKey,
  })

  let row = result.row
  if (!result.replay && row.paymentAccount) {
    const lines = result.items
    try {
      const session = await payments.startCheckout(space.id, {
        orderId: row.uuid,
        orderNumber: orderNumber(row.number),
        currency: row.currency,
        email: row.email,
        lines: lines.map((l) => ({ name: l.name, unitAmount: l.unitPrice, quantity: l.quantity })),
        successUrl: fillUrl(result.successUrl!, row),
        cancelUrl: fillUrl(result.cancelUrl!, row),
        createdAt: row.createdAt,
      })
      ;[row] = await kernel.db.db
        .update(orders)
        .set({ paymentUrl: session.url, paymentRef: session.sessionId, updatedAt: kernel.clock.now() })
        .where(eq(orders.id, row.id))
        .returning()
    } catch (err) {
      // The order stays pending with its stock reserved (until cancelled, or the job releasing unpaid orders).
      const message = err instanceof Error ? err.message.slice(0, 1000) : 'payment provider error'
      await kernel.db.db.update(orders).set({ paymentError: message, updatedAt: kernel.clock.now() }).where(eq(orders.id, row.id))
      if (err instanceof AppError) throw new AppError(err.status, err.code, `${message} The order ${orderNumber(row.number)} is pending; retry the payment later or contact the shop.`, undefined, undefined, { order_id: row.uuid, number: orderNumber(row.number) })
      throw err
    }
  }
  return { order: orderView(row!, result.items), replay: result.replay }
}

export function confirmationMail(space: PublicSpace, order: OrderRow, items: OrderItemRow[]) {
  const lines = items.map((i) => `${i.quantity} × ${i.name} — ${money(i.unitPrice * i.quantity, order.currency)}`)
  const payment = order.paymentAccount
    ? 'You will pay on the secure Stripe page you were sent to; we start as soon as the payment arrives.'
    : `${space.name} will tell you how to pay; the order is reserved for you until then.`
  return {
    to: order.email,
    subject: `Your order ${orderNumber(order.number)} at ${space.name}`,
    text: [
      `Hello ${order.name},`,
      '',
      `thank you for your order ${orderNumber(order.number)} at ${space.name}.`,
      '',
      ...lines,
      '',
      `Total: ${money(order.total, order.currency)}`,
      '',
      payment,
    ].join('\n'),
  }
}

// ---- Management ----

export async function listOrders(
  kernel: Kernel,
  access: SpaceAccess,
  query: { page?: number; per_page?: number; status?: OrderStatus; q?: string },
) {
  const page = pageOf(query.page, query.per_page)
  const conds: SQL[] = [eq(orders.spaceId, access.space.id)]
  if (query.status) conds.push(eq(orders.status, query.status))
  if (query.q) {
    const q = query.q.trim()
    const n = /^#?\d{1,9}$/.test(q) ? Number(q.replace('#', '')) : null
    conds.push(n !== null ? or(eq(orders.number, n), ilike(orders.email, `%${q}%`))! : ilike(orders.email, `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`))
  }
  const where = and(...conds)
  const [rows, [total]] = await Promise.all([
    kernel.db.db.select().from(orders).where(where).orderBy(desc(orders.number)).limit(page.perPage).offset(page.offset),
    kernel.db.db.select({ n: count() }).from(orders).where(where),
  ])
  const items = await itemsOf(kernel.db.db, rows.map((r) => r.id))
  return { data: rows.map((r) => orderView(r, items.get(r.id) ?? [])), meta: { total: Number(total?.n ?? 0), page: page.page, per_page: page.perPage } }
}

async function orderRow(db: DbOrTx, spaceId: number, uuid: string, lock = false): Promise<OrderRow> {
  const q = db
    .select()
    .from(orders)
    .where(and(eq(orders.spaceId, spaceId), eq(orders.uuid, uuid.toLowerCase())))
    .limit(1)
  const [row] = lock ? await q.for('update') : await q
  if (!row) throw notFound('Order')
  return row
}

export async function getOrder(kernel: Kernel, access: SpaceAccess, uuid: string): Promise<OrderView> {
  return viewOf(kernel.db.db, await orderRow(kernel.db.db, access.space.id, uuid))
}

const TRANSITIONS: Record<OrderStatus, OrderStatus[]> = {
  pending: ['paid', 'cancelled'],
  paid: ['fulfilled', 'cancelled'],
  fulfilled: [],
  cancelled: [],
}

/** Returns the stock of a cancelled order's lines (products locked in id order, like the checkout). */
async function releaseStock(tx: Tx, order: OrderRow): Promise<void> {
  if (!order.stockReserved) return
  const lines = await tx.select().from(orderItems).where(eq(orderItems.orderId, order.id)).orderBy(asc(orderItems.productId))
  const ids = lines.flatMap((l) => (l.productId === null ? [] : [l.productId]))
  if (ids.length) {
    await tx.select({ id: products.id }).from(products).where(inArray(products.id, ids)).orderBy(asc(products.id)).for('update')
    for (const l of lines) {
      if (l.productId === null) continue
      await tx
        .update(products)
        .set({ stock: sql`${products.stock} + ${l.quantity}` })
        .where(and(eq(products.id, l.productId), sql`${products.stock} is not null`))
    }
  }
}

async function moveOrder(kernel: Kernel, tx: Tx, emit: Emit, order: OrderRow, to: OrderStatus, extra: Partial<OrderRow> = {}): Promise<OrderRow> {
  const now = kernel.clock.now()
  const set: Partial<typeof orders.$inferInsert> = { status: to, updatedAt: now, ...extra }
  if (to === 'paid') set.paidAt = now
  if (to === 'fulfilled') set.fulfilledAt = now
  if (to === 'cancelled') {
    set.cancelledAt = now
    set.stockReserved = false
    await releaseStock(tx, order)
  }
  const [row] = await tx.update(orders).set(set).where(eq(orders.id, order.id)).returning()
  const [n] = await tx.select({ n: count() }).from(orderItems).where(eq(orderItems.orderId, order.id))
  emit({ type: `order.${to}` as 'order.paid', spaceId: order.spaceId, payload: orderEvent(row!, Number(n?.n ?? 0)) })
  return row!
}

/** `pending → paid → fulfilled`, `pending|paid → cancelled` (the stock comes back); anything else 409 invalid_transition. */
export async function setOrderStatus(kernel: Kernel, access: SpaceAccess, uuid: string, to: OrderStatus): Promise<OrderView> {
  const row = await transact(kernel, async (tx, emit) => {
    const order = await orderRow(tx, access.space.id, uuid, true)
    if (!TRANSITIONS[order.status].includes(to)) {
      throw CommerceErrors.invalidTransition(`An order that is ${order.status} cannot become ${to}.`, undefined, undefined, { from: order.status, to })
    }
    return moveOrder(kernel, tx, emit, order, to, to === 'cancelled' ? { cancelReason: 'cancelled by the shop' } : {})
  })
  return viewOf(kernel.db.db, row)
}

/**
 * `payment.succeeded`, in the payments module's transaction: the order becomes paid. Only the account that took the
 * order's payment can confirm it (a Space's own Stripe account pays only that Space's orders). An amount that does
 * not match, or a payment for an order cancelled meanwhile, is recorded in `payment_error` for the shop to see.
 */
export async function applyPayment(kernel: Kernel, tx: Tx, emit: Emit, spaceId: number | null, p: PaymentSucceededPayload): Promise<void> {
  if (!p || typeof p.order_id !== 'string' || !/^[0-9a-f-]{36}$/i.test(p.order_id)) return
  const [order] = await tx.select().from(orders).where(eq(orders.uuid, p.order_id.toLowerCase())).limit(1).for('update')
  if (!order || order.paymentAccount !== p.account || (p.account === 'space' && order.spaceId !== spaceId)) {
    kernel.logger.warn('commerce: a payment names no order of its account; ignored', { order_id: p.order_id, provider_event_id: p.provider_event_id })
    return
  }
  const note = (message: string) =>
    tx.update(orders).set({ paymentError: message, paymentRef: p.session_id || order.paymentRef, updatedAt: kernel.clock.now() }).where(eq(orders.id, order.id))
  if (p.amount_total !== null && (p.amount_total !== order.total || (p.currency && p.currency.toUpperCase() !== order.currency))) {
    await note(`Stripe reports ${p.amount_total} ${p.currency ?? ''} paid (event ${p.provider_event_id}); the order is ${order.total} ${order.currency}. Check the payment in Stripe.`)
    return
  }
  if (order.status !== 'pending') {
    if (order.status === 'cancelled') await note(`Paid after the order was cancelled (event ${p.provider_event_id}): refund it in Stripe.`)
    return
  }
  await moveOrder(kernel, tx, emit, order, 'paid', { paymentError: null, paymentRef: p.session_id || order.paymentRef })
}

/**
 * `payment.expired` (Stripe `checkout.session.expired`), in the payments module's transaction: the buyer never paid
 * on that page, so the order's reservation is released — a pending order becomes `cancelled` (`cancel_reason:
 * payment_expired`) and its stock returns, as the 30-minute job would do. Only the account that took the order's
 * payment can expire it; a session other than the order's current one, or an order no longer pending, is left alone.
 */
export async function expirePayment(kernel: Kernel, tx: Tx, emit: Emit, spaceId: number | null, p: PaymentExpiredPayload): Promise<void> {
  if (!p || typeof p.order_id !== 'string' || !/^[0-9a-f-]{36}$/i.test(p.order_id)) return
  const [order] = await tx.select().from(orders).where(eq(orders.uuid, p.order_id.toLowerCase())).limit(1).for('update')
  if (!order || order.paymentAccount !== p.account || (p.account === 'space' && order.spaceId !== spaceId)) {
    kernel.logger.warn('commerce: an expired payment names no order of its account; ignored', { order_id: p.order_id, provider_event_id: p.provider_event_id })
    return
  }
  if (order.status !== 'pending' || !order.stockReserved) return
  if (order.paymentRef && p.session_id && order.paymentRef !== p.session_id) return
  await moveOrder(kernel, tx, emit, order, 'cancelled', { cancelReason: 'payment_expired' })
}

/**
 * The job releasing unpaid reservations: Stripe orders still pending 30 minutes after the checkout are cancelled
 * (`cancel_reason: payment_timeout`) and their stock returned. Manual-payment orders wait for the shop.
 */
export async function releaseUnpaid(kernel: Kernel): Promise<number> {
  const cutoff = new Date(kernel.clock.ms() - UNPAID_RELEASE_MINUTES * 60_000)
  const due = await kernel.db.db
    .select({ id: orders.id })
    .from(orders)
    .where(and(eq(orders.status, 'pending'), eq(orders.stockReserved, true), sql`${orders.paymentAccount} is not null`, lt(orders.createdAt, cutoff)))
    .orderBy(asc(orders.id))
    .limit(500)
  let released = 0
  for (const { id } of due) {
    await transact(kernel, async (tx, emit) => {
      const [order] = await tx.select().from(orders).where(eq(orders.id, id)).limit(1).for('update')
      if (!order || order.status !== 'pending' || !order.stockReserved) return
      await moveOrder(kernel, tx, emit, order, 'cancelled', { cancelReason: 'payment_timeout' })
      released++
    })
  }
  return released
}
