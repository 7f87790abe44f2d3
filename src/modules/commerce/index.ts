import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { paymentsModule } from '../payments'
import { spacesModule } from '../spaces'
import { deleteIdleCarts } from './carts'
import { CheckoutBatcher } from './checkout-batch'
import { commerceCdnRoutes } from './cdn'
import { commerceEvents } from './events'
import { commerceGraphql } from './graphql'
import { commerceFilterHooks } from './hooks'
import { CommerceErrors } from './model'
import { applyPayment, expirePayment, releaseUnpaid } from './orders'
import { productListSeek } from './public'
import { commerceRoutes } from './routes'
import './jobs'

/**
 * Commerce (docs/commerce.md): products, anonymous carts, a checkout that never oversells (one transaction, row locks
 * in product-id order), orders with their state machine and a confirmation mail. Payments are the payments module's:
 * the checkout asks it for a Stripe Checkout Session, and its `payment.succeeded` marks the order paid.
 */
export const commerceModule = defineModule({
  name: 'commerce',
  filterHooks: commerceFilterHooks,
  setup: (kernel, use) => {
    const payments = use(paymentsModule)
    return {
      payments,
      publicSpaces: use(spacesModule).publicSpaces,
      checkouts: new CheckoutBatcher(kernel, payments),
      listSeek: productListSeek(kernel),
    }
  },
  routes: ({ kernel, guards }) => commerceRoutes(kernel, guards),
  publicRoutes: ({ kernel, guards, self }) => commerceCdnRoutes(kernel, guards, self.payments, self.checkouts, self.listSeek),
  caches: (self) => [self.listSeek.cache],
  errors: Object.values(CommerceErrors),
  // A storefront on another origin sends Idempotency-Key with its checkout: browsers must be allowed to.
  publicCors: { allowHeaders: ['Idempotency-Key'] },
  events: commerceEvents,
  inTx: {
    'payment.succeeded': (tx, e, emit, _self, kernel) => applyPayment(kernel, tx, emit, e.spaceId, e.payload),
    'payment.expired': (tx, e, emit, _self, kernel) => expirePayment(kernel, tx, emit, e.spaceId, e.payload),
  },
  jobs: (jobs, _self, kernel) => {
    jobs.define('commerce.cart-cleanup', {
      handler: async () => {
        const n = await deleteIdleCarts(kernel)
        if (n) kernel.logger.info('deleted idle carts', { carts: n })
      },
    })
    jobs.define('commerce.release-unpaid', {
      handler: async () => {
        const n = await releaseUnpaid(kernel)
        if (n) kernel.logger.info('released the stock of unpaid orders', { orders: n })
      },
    })
    jobs.schedule({ name: 'commerce.cart-cleanup', cron: '23 3 * * *', queue: 'commerce.cart-cleanup', payload: {} })
    jobs.schedule({ name: 'commerce.release-unpaid', cron: '*/5 * * * *', queue: 'commerce.release-unpaid', payload: {} })
  },
  graphql: (builder, self, kernel) => commerceGraphql(builder, kernel, self.publicSpaces, self.listSeek),
  rateLimits: [
    // Spec 4.2.
    { id: 'cdn.carts.create', method: 'POST', path: '/v1/cdn/:space/carts', limit: 120, windowSeconds: MIN },
    { id: 'cdn.carts.read', method: 'GET', path: '/v1/cdn/:space/carts/:uuid', limit: 300, windowSeconds: MIN },
    { id: 'cdn.carts.checkout', method: 'POST', path: '/v1/cdn/:space/carts/:uuid/checkout', limit: 30, windowSeconds: MIN },
    { id: 'cdn.carts.items.add', method: 'POST', path: '/v1/cdn/:space/carts/:uuid/items', limit: 120, windowSeconds: MIN },
    { id: 'cdn.carts.items.remove', method: 'DELETE', path: '/v1/cdn/:space/carts/:uuid/items/:itemId', limit: 120, windowSeconds: MIN },
    { id: 'cdn.products.list', method: 'GET', path: '/v1/cdn/:space/products', limit: 600, windowSeconds: MIN },
    { id: 'cdn.products.read', method: 'GET', path: '/v1/cdn/:space/products/:slug', limit: 600, windowSeconds: MIN },
  ],
})
