import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { Data, Paged, SpaceParams } from '../../kernel/schemas'
import { OrderListQuery, OrderModel, OrderParams, OrderPatch, ProductBody, ProductListQuery, ProductModel, ProductParams, ProductPatch, ShopSettingsModel, ShopSettingsPatch } from './model'
import { getOrder, listOrders, setOrderStatus } from './orders'
import { createProduct, deleteProduct, getProduct, listProducts, updateProduct } from './products'
import { shopSettingsOf, updateShopSettings } from './public'

const NoContent = t.Void({ description: 'No content' })

const PRODUCT_RULES =
  '`slug` ^[a-z0-9][a-z0-9-]*$, unique per Space (409 product_slug_taken). `name`/`description`: text per locale of the Space. `price`: a JSON integer of minor units, 0–100,000,000 (a string, a fraction, a negative or 1e20 → 422 naming `price`). `currency`: ISO 4217, one per Space: required on the first product unless the shop settings name it, then it must match. `stock`: integer ≥ 0 or null (unlimited). `images`: asset uuids of this Space (422 `images/<i>` otherwise). `attributes`: any JSON object up to 10,000 bytes.'

/** Products and the shop's settings (viewer+ reads, editor+ writes); orders are personal data (admin). */
export function commerceRoutes(kernel: Kernel, guards: Guards) {
  return new Elysia({ prefix: '/spaces/:space', tags: ['Commerce'] })
    .use(guards)
    .get('/products', ({ access, query }) => listProducts(kernel, access, query), {
      params: SpaceParams,
      query: ProductListQuery,
      spaceRole: 'viewer',
      response: Paged(ProductModel),
      detail: { summary: 'List products by slug', description: '`q` matches slug or name; `active=true|false`; `page`, `per_page` (1–100, default 25).' },
    })
    .post(
      '/products',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await createProduct(kernel, access, body) }
      },
      {
        params: SpaceParams,
        body: ProductBody,
        spaceRole: 'editor',
        response: { 201: Data(ProductModel) },
        detail: { summary: 'Create a product', description: PRODUCT_RULES },
      },
    )
    .get('/products/:id', async ({ access, params }) => ({ data: await getProduct(kernel, access, params.id) }), {
      params: ProductParams,
      spaceRole: 'viewer',
      response: Data(ProductModel),
      detail: { summary: 'One product' },
    })
    .patch('/products/:id', async ({ access, params, body }) => ({ data: await updateProduct(kernel, access, params.id, body) }), {
      params: ProductParams,
      body: ProductPatch,
      spaceRole: 'editor',
      response: Data(ProductModel),
      detail: { summary: 'Change a product (only the fields sent)', description: PRODUCT_RULES },
    })
    .delete(
      '/products/:id',
      async ({ access, params, set }) => {
        await deleteProduct(kernel, access, params.id)
        set.status = 204
      },
      {
        params: ProductParams,
        spaceRole: 'editor',
        response: { 204: NoContent },
        detail: { summary: 'Delete a product', description: 'Its lines leave open carts; orders keep their copy of the line.' },
      },
    )
    .get('/orders', ({ access, query }) => listOrders(kernel, access, query), {
      params: SpaceParams,
      query: OrderListQuery,
      spaceRole: 'admin',
      response: Paged(OrderModel),
      detail: { summary: 'List orders, newest first', description: '`status`; `q` matches the e-mail or the number (#1001 or 1001); `page`, `per_page` (1–100, default 25).' },
    })
    .get('/orders/:id', async ({ access, params }) => ({ data: await getOrder(kernel, access, params.id) }), {
      params: OrderParams,
      spaceRole: 'admin',
      response: Data(OrderModel),
      detail: { summary: 'One order' },
    })
    .patch('/orders/:id', async ({ access, params, body }) => ({ data: await setOrderStatus(kernel, access, params.id, body.status) }), {
      params: OrderParams,
      body: OrderPatch,
      spaceRole: 'admin',
      response: Data(OrderModel),
      detail: {
        summary: 'Move an order: pending → paid → fulfilled, pending|paid → cancelled',
        description: 'Cancelling returns the stock. Any other move → 409 invalid_transition (`details`: from, to). Marking a pending order paid is how manual payment is recorded.',
      },
    })
    .get('/shop', async ({ access }) => ({ data: await shopSettingsOf(kernel, access.space.id) }), {
      params: SpaceParams,
      spaceRole: 'viewer',
      response: Data(ShopSettingsModel),
      detail: { summary: 'The shop’s settings (currency, Stripe return URLs, next order number)' },
    })
    .patch('/shop', async ({ access, body }) => ({ data: await updateShopSettings(kernel, access, body) }), {
      params: SpaceParams,
      body: ShopSettingsPatch,
      spaceRole: 'editor',
      response: Data(ShopSettingsModel),
      detail: {
        summary: 'Change the shop’s settings',
        description: '`currency` (ISO 4217; 409 currency_in_use while products have another); `success_url`, `cancel_url` (http(s); `{ORDER_ID}` and `{ORDER_NUMBER}` are filled in) for Stripe Checkout when the checkout request names none.',
      },
    })
}
