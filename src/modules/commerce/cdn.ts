import { Elysia, t } from 'elysia'
import { KernelErrors } from '../../kernel/errors'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { cacheControls, jsonAnswer } from '../../kernel/public-answer'
import { Data, ErrorBody, PageMeta } from '../../kernel/schemas'
import { addCartItem, createCart, getCart, removeCartItem } from './carts'
import {
  AddItemBody,
  CartItemParams,
  CartModel,
  CartParams,
  CheckoutBody,
  LangQuery,
  OrderModel,
  PublicProductModel,
  PublicProductParams,
  PublicProductQuery,
} from './model'
import type { CheckoutBatcher } from './checkout-batch'
import { checkout, type Payments } from './orders'
import { publicProduct, publicProductList } from './public'
import type { ListSeek } from '../../kernel/list-seek'
import { SpaceSlug } from '../../kernel/schemas'

const NoContent = t.Void({ description: 'No content' })
const NO_STORE = { 'Cache-Control': 'no-store' }

const CACHE_NOTE =
  'Cacheable like a Story read: strong `ETag` (If-None-Match → 304), `Cache-Control: public, max-age=CDN_MAX_AGE, stale-while-revalidate=CDN_STALE_WHILE_REVALIDATE`, `Vary: Accept-Language`. `lang` (else the best Accept-Language match) picks the locale with the Story fallback chain. Images carry `url` and `transform_url` (add `?w=` from IMAGE_WIDTHS). `in_stock` only: the stock count is not public.'

/** The public shop: products (cacheable) and anonymous carts whose uuid is the capability. */
export function commerceCdnRoutes(kernel: Kernel, guards: Guards, payments: Payments, checkouts: CheckoutBatcher, listSeek: ListSeek<string>) {
  // Cacheable like a Story read: strong ETag, 304, Vary: Accept-Language, public Cache-Control.
  const cacheable = { cacheControl: cacheControls(kernel.config).public, vary: 'Accept-Language' }
  return new Elysia({ prefix: '/cdn/:space', tags: ['Public shop'] })
    .use(guards)
    .get(
      '/products',
      async ({ space, origin, query, request }) =>
        jsonAnswer(request, await publicProductList(kernel, listSeek, space, query, request.headers.get('accept-language'), origin), cacheable),
      {
        publicSpace: true,
        params: t.Object({ space: SpaceSlug }),
        query: PublicProductQuery,
        response: { 200: t.Object({ data: t.Array(PublicProductModel), meta: PageMeta }), 304: NoContent },
        detail: { summary: 'Active products of a shop, by slug', description: `\`q\` matches slug or name; \`page\`, \`per_page\` (1–100, default 25). ${CACHE_NOTE}` },
      },
    )
    .get(
      '/products/:slug',
      async ({ space, origin, params, query, request }) => {
        const p = await publicProduct(kernel, space, params.slug, query.lang, request.headers.get('accept-language'), origin)
        if (!p) throw KernelErrors.notFound('Product not found.')
        return jsonAnswer(request, { data: p }, cacheable)
      },
      {
        publicSpace: { notFound: 'Product' },
        params: PublicProductParams,
        query: LangQuery,
        response: { 200: Data(PublicProductModel), 304: NoContent },
        detail: { summary: 'One active product by slug', description: CACHE_NOTE },
      },
    )
    .post(
      '/carts',
      async ({ space, set }) => {
        set.status = 201
        Object.assign(set.headers, NO_STORE)
        return { data: await createCart(kernel, space) }
      },
      {
        publicSpace: true,
        params: t.Object({ space: SpaceSlug }),
        response: { 201: Data(CartModel) },
        detail: { summary: 'A new, empty cart', description: 'Anonymous. Its `uuid` is the capability: whoever knows it may read, change and check out the cart. A cart idle for 30 days expires (`expires_at`).' },
      },
    )
    .get(
      '/carts/:uuid',
      async ({ space, params, set }) => {
        Object.assign(set.headers, NO_STORE)
        return { data: await getCart(kernel, space, params.uuid) }
      },
      {
        publicSpace: { notFound: 'Cart', headers: NO_STORE },
        params: CartParams,
        response: { 200: Data(CartModel) },
        detail: {
          summary: 'A cart with totals from current prices',
          description: 'Unknown, another shop’s or expired: 404, one answer for all. `price_changed` (per item and for the cart) tells when a price changed since the item was added; `available` when an item can no longer be bought in that quantity.',
        },
      },
    )
    .post(
      '/carts/:uuid/items',
      async ({ space, params, body, set }) => {
        set.status = 201
        Object.assign(set.headers, NO_STORE)
        return { data: await addCartItem(kernel, space, params.uuid, body) }
      },
      {
        publicSpace: { notFound: 'Cart', headers: NO_STORE },
        params: CartParams,
        body: AddItemBody,
        response: { 201: Data(CartModel) },
        detail: {
          summary: 'Add a product to a cart',
          description: '`product`: slug or id; `quantity` 1–99. The same product again raises its quantity (at most 99). An unknown or inactive product → 422; more than the stock → 409 `insufficient_stock` (`details`: product, available); a 101st line → 422 `cart_full`; a checked-out cart → 409 `cart_closed`. Answers the cart.',
        },
      },
    )
    .delete(
      '/carts/:uuid/items/:itemId',
      async ({ space, params, set }) => {
        await removeCartItem(kernel, space, params.uuid, params.itemId)
        set.status = 204
        Object.assign(set.headers, NO_STORE)
      },
      {
        publicSpace: { notFound: 'Cart', headers: NO_STORE },
        params: CartItemParams,
        response: { 204: NoContent },
        detail: { summary: 'Remove a line from a cart', description: 'A checked-out cart → 409 `cart_closed`; an unknown line → 404.' },
      },
    )
    .post(
      '/carts/:uuid/checkout',
      async ({ space, params, body, request, set }) => {
        Object.assign(set.headers, NO_STORE)
        const out = await checkout(kernel, payments, checkouts, space, params.uuid, body, request.headers.get('idempotency-key'))
        set.status = 201
        return { data: out.order }
      },
      {
        publicSpace: { notFound: 'Cart', headers: NO_STORE },
        params: CartParams,
        body: CheckoutBody,
        response: { 201: Data(OrderModel), 502: ErrorBody },
        detail: {
          summary: 'Check out a cart: the order',
          description:
            'Stock is taken and the order written in one transaction; the cart closes (later changes → 409 `cart_closed`). Not enough stock → 409 `insufficient_stock`, nothing taken; an empty cart → 422. `Idempotency-Key` header: a repeat with the same key answers the same order. With Stripe set up, the order carries `payment_url` (Stripe Checkout); `success_url`/`cancel_url` come from the body or the shop settings (`{ORDER_ID}`, `{ORDER_NUMBER}` are filled in). If Stripe fails: 502 `payment_provider_error`, the order stays pending with `payment_error` and its stock reserved (released after 30 minutes unpaid). Without Stripe the order waits for manual payment. A confirmation mail goes to `email`.',
        },
      },
    )
}
