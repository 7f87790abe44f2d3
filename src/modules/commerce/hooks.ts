import type { FilterDeclarations } from '../../kernel/filters'

/**
 * The commerce module's filter hook (kernel/filters.ts): a checkout about to be written, before its transaction opens
 * (no row lock is held while a handler — a plugin — works). A handler may veto it (a fraud check, a shipping rule);
 * the checkout then answers the veto and nothing is sold. It cannot amend: prices and stock are the server's.
 * The payload carries the buyer's own data (e-mail, name, address, note), never the client's address.
 */
export interface OrderBeforeCheckout {
  cart: {
    uuid: string
    currency: string | null
    subtotal: number
    items: { product: { id: string; slug: string; name: string }; quantity: number; unit_price: number; line_total: number }[]
  }
  buyer: {
    email: string
    name: string
    address: { line1: string; line2?: string; city: string; postal_code: string; country: string } | null
    note: string | null
  }
}

declare module '../../kernel/filters' {
  interface FilterMap {
    'order.before_checkout': OrderBeforeCheckout
  }
}

export const commerceFilterHooks: FilterDeclarations = {
  'order.before_checkout': {
    description: 'Before a checkout sells a cart: its items at current prices and the buyer (never the client address); veto only.',
    amend: false,
    routes: ['POST /v1/cdn/{space}/carts/{uuid}/checkout'],
  },
}
