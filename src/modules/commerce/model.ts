import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { Int, NullableTimestamp, oneOf, pageQuery, SpaceSlug, Timestamp, Uuid } from '../../kernel/schemas'
import { intString } from '../../kernel/schemas'

export const CommerceErrors = {
  slugTaken: defineError('product_slug_taken', 409, 'Another product of this Space has this slug.'),
  insufficientStock: defineError('insufficient_stock', 409, 'Not enough stock: `details` says which product and how many are left.'),
  cartClosed: defineError('cart_closed', 409, 'The cart was checked out and cannot change.'),
  cartFull: defineError('cart_full', 422, 'A cart holds at most 100 lines.'),
  invalidTransition: defineError('invalid_transition', 409, 'The order cannot move to that status from its current one.'),
  currencyInUse: defineError('currency_in_use', 409, 'The Space has products in another currency.'),
}

export const MAX_CART_LINES = 100
export const MAX_PRICE = 100_000_000
export const CART_IDLE_DAYS = 30
export const UNPAID_RELEASE_MINUTES = 30

const LocaleMap = (maxLength: number, description: string) =>
  t.Record(t.String({ maxLength: 35 }), t.String({ maxLength }), { description, maxProperties: 100 })

export const PRODUCT_SLUG_PATTERN = '^[a-z0-9][a-z0-9-]{0,99}$'
const ProductSlug = t.String({ pattern: PRODUCT_SLUG_PATTERN, error: 'must match ^[a-z0-9][a-z0-9-]*$ (at most 100 characters)' })
const Price = Int({ minimum: 0, maximum: MAX_PRICE, description: 'Integer minor units (cents), 0 to 100,000,000', error: 'must be an integer from 0 to 100000000 (minor units)' })
const Currency = t.String({ pattern: '^[A-Z]{3}$', error: 'must be an ISO 4217 code such as EUR', description: 'ISO 4217 code; one currency per Space' })
const Stock = t.Union([Int({ minimum: 0, maximum: 1_000_000_000 }), t.Null()], {
  description: 'Units on hand (integer ≥ 0), or null for unlimited',
  error: 'must be an integer ≥ 0 or null',
})

const productFields = {
  slug: ProductSlug,
  name: LocaleMap(200, 'Name per locale of the Space (like Story fields); at least one'),
  description: t.Optional(LocaleMap(10_000, 'Description per locale of the Space')),
  price: Price,
  currency: t.Optional(Currency),
  stock: t.Optional(Stock),
  active: t.Optional(t.Boolean({ description: 'Shown in the public list and sold (default true)' })),
  images: t.Optional(t.Array(Uuid, { maxItems: 20, description: 'Asset uuids of the same Space, at most 20' })),
  attributes: t.Optional(t.Record(t.String({ maxLength: 100 }), t.Unknown(), { description: 'Free-form facts (JSON object, at most 10,000 bytes)', maxProperties: 100 })),
}
export const ProductBody = t.Object(productFields)
export const ProductPatch = t.Partial(t.Object(productFields))
export type ProductInput = typeof ProductBody.static
export type ProductPatchInput = typeof ProductPatch.static

export const ProductModel = t.Object({
  id: t.String({ description: 'uuid' }),
  slug: t.String(),
  name: t.Record(t.String(), t.String()),
  description: t.Record(t.String(), t.String()),
  price: Int(),
  currency: t.String(),
  stock: t.Union([Int(), t.Null()]),
  in_stock: t.Boolean(),
  active: t.Boolean(),
  images: t.Array(t.String()),
  attributes: t.Record(t.String(), t.Unknown()),
  created_at: Timestamp,
  updated_at: Timestamp,
})
export type ProductView = typeof ProductModel.static

export const ProductParams = t.Object({ space: SpaceSlug, id: Uuid })
export const ProductListQuery = t.Object({
  ...pageQuery().properties,
  q: t.Optional(t.String({ maxLength: 200, description: 'Case-insensitive match in slug or name' })),
  active: t.Optional(oneOf(['true', 'false'], { error: 'must be true or false' })),
})

export const PublicImage = t.Object({
  uuid: t.String(),
  url: t.String(),
  transform_url: t.Union([t.String(), t.Null()], { description: 'Base of image variants: add ?w= (IMAGE_WIDTHS); null for non-raster files' }),
  width: t.Union([Int(), t.Null()]),
  height: t.Union([Int(), t.Null()]),
  alt: t.Union([t.String(), t.Null()]),
})
export const PublicProductModel = t.Object({
  id: t.String(),
  slug: t.String(),
  lang: t.String({ description: 'The locale `name` and `description` were taken from' }),
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  price: Int(),
  currency: t.String(),
  in_stock: t.Boolean({ description: 'Whether at least one unit can be bought (the exact stock is not public)' }),
  images: t.Array(PublicImage),
  attributes: t.Record(t.String(), t.Unknown()),
})
export type PublicProductView = typeof PublicProductModel.static
export const PublicProductParams = t.Object({ space: SpaceSlug, slug: ProductSlug })
export const PublicProductQuery = t.Object({
  ...pageQuery().properties,
  q: t.Optional(t.String({ maxLength: 200, description: 'Case-insensitive match in slug or name' })),
  lang: t.Optional(t.String({ maxLength: 35, description: 'BCP-47 tag; the Story locale fallback applies' })),
})
export const LangQuery = t.Object({ lang: t.Optional(t.String({ maxLength: 35, description: 'BCP-47 tag; the Story locale fallback applies' })) })

// ---- Shop settings ----

export const ShopSettingsModel = t.Object({
  currency: t.Union([t.String(), t.Null()], { description: 'The Space’s one currency (set by its first product, or here)' }),
  success_url: t.Union([t.String(), t.Null()], { description: 'Where Stripe sends the buyer after paying ({ORDER_ID}, {ORDER_NUMBER} are filled in)' }),
  cancel_url: t.Union([t.String(), t.Null()], { description: 'Where Stripe sends a buyer who gives up' }),
  next_order_number: Int(),
})
export type ShopSettingsView = typeof ShopSettingsModel.static
const HttpUrl = t.String({ maxLength: 2000, pattern: '^https?://', error: 'must be an http(s) URL' })
export const ShopSettingsPatch = t.Partial(
  t.Object({ currency: Currency, success_url: t.Union([HttpUrl, t.Null()]), cancel_url: t.Union([HttpUrl, t.Null()]) }),
)
export type ShopSettingsInput = typeof ShopSettingsPatch.static

// ---- Carts ----

export const CartItemModel = t.Object({
  id: Int(),
  product: t.Object({ id: t.String(), slug: t.String(), name: t.String() }),
  quantity: Int(),
  unit_price: Int({ description: 'The product’s current price' }),
  price_at_add: Int({ description: 'The price when the item was added' }),
  price_changed: t.Boolean({ description: 'The price changed since the item was added' }),
  line_total: Int(),
  available: t.Boolean({ description: 'The product is active and has stock for this quantity' }),
})
export const CartModel = t.Object({
  uuid: t.String(),
  status: t.Union([t.Literal('open'), t.Literal('checked_out')]),
  items: t.Array(CartItemModel),
  currency: t.Union([t.String(), t.Null()]),
  subtotal: Int(),
  total: Int(),
  price_changed: t.Boolean({ description: 'Some item’s price changed since it was added' }),
  expires_at: Timestamp,
})
export type CartView = typeof CartModel.static
export type CartItemView = typeof CartItemModel.static

export const CartParams = t.Object({ space: SpaceSlug, uuid: Uuid })
export const CartItemParams = t.Object({ space: SpaceSlug, uuid: Uuid, itemId: intString(1, 2_147_483_647, { description: 'Cart item id' }) })
export const AddItemBody = t.Object({
  product: t.String({ minLength: 1, maxLength: 100, description: 'The product’s slug or id (uuid)' }),
  quantity: Int({ minimum: 1, maximum: 99, error: 'must be an integer from 1 to 99' }),
})

export const CheckoutBody = t.Object({
  email: t.String({ maxLength: 254, description: 'The buyer’s e-mail address (the confirmation goes there)' }),
  name: t.String({ minLength: 1, maxLength: 200 }),
  address: t.Optional(
    t.Object({
      line1: t.String({ minLength: 1, maxLength: 200 }),
      line2: t.Optional(t.String({ maxLength: 200 })),
      city: t.String({ minLength: 1, maxLength: 100 }),
      postal_code: t.String({ minLength: 1, maxLength: 20 }),
      country: t.String({ pattern: '^[A-Z]{2}$', error: 'must be an ISO 3166-1 alpha-2 code such as DE' }),
    }),
  ),
  note: t.Optional(t.String({ maxLength: 1000 })),
  success_url: t.Optional(HttpUrl),
  cancel_url: t.Optional(HttpUrl),
})
export type CheckoutInput = typeof CheckoutBody.static

// ---- Orders ----

export const ORDER_STATUSES = ['pending', 'paid', 'fulfilled', 'cancelled'] as const
export type OrderStatus = (typeof ORDER_STATUSES)[number]

export const OrderModel = t.Object({
  id: t.String({ description: 'uuid' }),
  number: t.String({ description: 'Sequential per Space: #1001, #1002, …' }),
  status: oneOf(ORDER_STATUSES),
  email: t.String(),
  name: t.String(),
  address: t.Union([t.Record(t.String(), t.String()), t.Null()]),
  note: t.Union([t.String(), t.Null()]),
  currency: t.String(),
  subtotal: Int(),
  total: Int(),
  items: t.Array(
    t.Object({ product_id: t.String(), slug: t.String(), name: t.String(), unit_price: Int(), quantity: Int(), line_total: Int() }),
  ),
  payment_provider: t.Union([t.Literal('stripe'), t.Null()], { description: 'null: manual payment (an admin marks the order paid)' }),
  payment_url: t.Union([t.String(), t.Null()], { description: 'Stripe Checkout page for the buyer' }),
  payment_error: t.Union([t.String(), t.Null()]),
  cancel_reason: t.Union([t.String(), t.Null()]),
  created_at: Timestamp,
  paid_at: NullableTimestamp,
  fulfilled_at: NullableTimestamp,
  cancelled_at: NullableTimestamp,
})
export type OrderView = typeof OrderModel.static

export const OrderParams = t.Object({ space: SpaceSlug, id: Uuid })
export const OrderListQuery = t.Object({
  ...pageQuery().properties,
  status: t.Optional(oneOf(ORDER_STATUSES, { error: 'must be pending, paid, fulfilled or cancelled' })),
  q: t.Optional(t.String({ maxLength: 200, description: 'Matches the e-mail (part) or the number (#1001 or 1001)' })),
})
export const OrderPatch = t.Object({
  status: oneOf(['paid', 'fulfilled', 'cancelled'], { error: 'must be paid, fulfilled or cancelled' }),
})
