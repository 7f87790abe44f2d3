import type { EventDeclarations } from '../../kernel/events'

export interface ProductEventPayload {
  product: { id: string; slug: string; name: Record<string, string>; price: number; currency: string; active: boolean; in_stock: boolean }
}

export interface OrderEventPayload {
  order: { id: string; number: string; status: string; email: string; name: string; currency: string; total: number; items: number }
}

declare module '../../kernel/events' {
  interface EventMap {
    'product.created': ProductEventPayload
    'product.updated': ProductEventPayload
    'product.deleted': ProductEventPayload
    'order.created': OrderEventPayload
    'order.paid': OrderEventPayload
    'order.fulfilled': OrderEventPayload
    'order.cancelled': OrderEventPayload
  }
}

const product = (p: ProductEventPayload) => ({ product: p.product })
const order = (p: OrderEventPayload) => ({ order: p.order })

const PRODUCT = '`product: {id, slug, name, price, currency, active, in_stock}`'
const ORDER = '`order: {id, number, status, email, name, currency, total, items}`'

export const commerceEvents: EventDeclarations = {
  'product.created': { description: 'A product was created.', webhook: product, body: PRODUCT },
  'product.updated': { description: 'A product was changed (price, stock, active, …).', webhook: product, body: PRODUCT },
  'product.deleted': { description: 'A product was deleted.', webhook: product, body: PRODUCT },
  'order.created': { description: 'A buyer checked out a cart (the order is pending).', webhook: order, body: ORDER },
  'order.paid': { description: 'An order was paid (Stripe, or marked paid by an admin).', webhook: order, body: ORDER },
  'order.fulfilled': { description: 'An order was marked fulfilled.', webhook: order, body: ORDER },
  'order.cancelled': { description: 'An order was cancelled (its stock is returned).', webhook: order, body: ORDER },
}
