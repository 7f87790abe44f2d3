import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { paymentEvents } from './events'
import { PaymentErrors } from './model'
import { paymentRoutes, paymentWebhookRoutes } from './routes'
import { paymentAccountOf, startCheckout } from './service'

/**
 * Payments through Stripe's HTTP API (docs/commerce.md): per-Space keys (sealed) or the instance's, hosted Checkout
 * Sessions, and the signed webhook receivers. It knows no orders: it emits `payment.succeeded` (commerce marks the
 * order paid in the same transaction) and `payment.subscription_changed` (billing moves the Tenant's plan).
 *
 * State: `accountOf(spaceId)` and `startCheckout(spaceId, input)`, what the commerce module's checkout calls.
 */
export const paymentsModule = defineModule({
  name: 'payments',
  setup: (kernel) => ({
    accountOf: (spaceId: number) => paymentAccountOf(kernel, spaceId),
    startCheckout: (spaceId: number, input: Parameters<typeof startCheckout>[2]) => startCheckout(kernel, spaceId, input),
  }),
  routes: ({ kernel, guards }) => paymentRoutes(kernel, guards),
  publicRoutes: ({ kernel, guards, requestInfo }) => paymentWebhookRoutes(kernel, guards, requestInfo),
  errors: Object.values(PaymentErrors),
  events: paymentEvents,
  rateLimits: [
    { id: 'payments.stripe.webhook', method: 'POST', path: '/v1/payments/stripe/webhook', limit: 600, windowSeconds: MIN },
    { id: 'payments.stripe.webhook.space', method: 'POST', path: '/v1/payments/stripe/webhook/:space', limit: 600, windowSeconds: MIN },
  ],
})
