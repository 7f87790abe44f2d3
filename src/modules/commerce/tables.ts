import { sql } from 'drizzle-orm'
import { boolean, index, integer, jsonb, pgTable, serial, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { spaces } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * A Space's shop: its one currency (set by the first product or here), the Stripe return URLs, and the next order
 * number (sequential per Space from #1001; the row is the counter, taken under its row lock in the checkout).
 */
export const shopSettings = pgTable('shop_settings', {
  spaceId: integer('space_id')
    .primaryKey()
    .references(() => spaces.id, { onDelete: 'cascade' }),
  currency: text('currency'),
  successUrl: text('success_url'),
  cancelUrl: text('cancel_url'),
  nextOrderNumber: integer('next_order_number').notNull().default(1001),
  updatedAt: ts('updated_at').notNull(),
})

/**
 * A product. `price` in integer minor units of `currency`; `stock` null = unlimited. `name`/`description` are locale
 * maps; `images` asset uuids of the same Space.
 */
export const products = pgTable(
  'products',
  {
    id: serial('id').primaryKey(),
    uuid: uuid('uuid').notNull(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    name: jsonb('name').notNull(),
    description: jsonb('description').notNull(),
    price: integer('price').notNull(),
    currency: text('currency').notNull(),
    stock: integer('stock'),
    active: boolean('active').notNull(),
    images: jsonb('images').notNull(),
    attributes: jsonb('attributes').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('products_uuid_key').on(t.uuid), uniqueIndex('products_space_slug_key').on(t.spaceId, t.slug)],
)

/** An anonymous cart: its uuid is the capability. Idle for 30 days (`touched_at`) it is gone. */
export const carts = pgTable(
  'carts',
  {
    id: serial('id').primaryKey(),
    uuid: uuid('uuid').notNull(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    status: text('status', { enum: ['open', 'checked_out'] }).notNull(),
    createdAt: ts('created_at').notNull(),
    touchedAt: ts('touched_at').notNull(),
  },
  (t) => [uniqueIndex('carts_uuid_key').on(t.uuid), index('carts_touched_at_idx').on(t.touchedAt)],
)

/** One line of a cart; `price_at_add` tells the buyer when the price changed since. */
export const cartItems = pgTable(
  'cart_items',
  {
    id: serial('id').primaryKey(),
    cartId: integer('cart_id')
      .notNull()
      .references(() => carts.id, { onDelete: 'cascade' }),
    productId: integer('product_id')
      .notNull()
      .references(() => products.id, { onDelete: 'cascade' }),
    quantity: integer('quantity').notNull(),
    priceAtAdd: integer('price_at_add').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [uniqueIndex('cart_items_cart_product_key').on(t.cartId, t.productId)],
)

/**
 * An order: written with its lines and the stock decrement in one transaction. `number` is sequential per Space.
 * `stock_reserved`: its lines still hold stock (false once cancelled). `payment_account`: whose Stripe keys took the
 * payment (`instance`, `space`), null for manual payment.
 */
export const orders = pgTable(
  'orders',
  {
    id: serial('id').primaryKey(),
    uuid: uuid('uuid').notNull(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    number: integer('number').notNull(),
    status: text('status', { enum: ['pending', 'paid', 'fulfilled', 'cancelled'] }).notNull(),
    email: text('email').notNull(),
    name: text('name').notNull(),
    address: jsonb('address'),
    note: text('note'),
    currency: text('currency').notNull(),
    subtotal: integer('subtotal').notNull(),
    total: integer('total').notNull(),
    cartId: integer('cart_id').references(() => carts.id, { onDelete: 'set null' }),
    idempotencyKey: text('idempotency_key'),
    stockReserved: boolean('stock_reserved').notNull(),
    paymentAccount: text('payment_account', { enum: ['instance', 'space'] }),
    paymentUrl: text('payment_url'),
    paymentRef: text('payment_ref'),
    paymentError: text('payment_error'),
    cancelReason: text('cancel_reason'),
    paidAt: ts('paid_at'),
    fulfilledAt: ts('fulfilled_at'),
    cancelledAt: ts('cancelled_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('orders_uuid_key').on(t.uuid),
    uniqueIndex('orders_space_number_key').on(t.spaceId, t.number),
    uniqueIndex('orders_cart_key').on(t.cartId),
    index('orders_space_created_idx').on(t.spaceId, t.createdAt),
    index('orders_unpaid_idx').on(t.createdAt).where(sql`status = 'pending' and stock_reserved and payment_account is not null`),
  ],
)

/** A line of an order: what was bought at what price (kept when the product is deleted). */
export const orderItems = pgTable(
  'order_items',
  {
    id: serial('id').primaryKey(),
    orderId: integer('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'cascade' }),
    productId: integer('product_id'),
    productUuid: uuid('product_uuid').notNull(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    unitPrice: integer('unit_price').notNull(),
    quantity: integer('quantity').notNull(),
  },
  (t) => [index('order_items_order_idx').on(t.orderId)],
)
