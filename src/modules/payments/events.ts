import type { EventDeclarations } from '../../kernel/events'

/**
 * A provider confirmed a payment (Stripe: `checkout.session.completed` with `payment_status` paid). Emitted in the
 * transaction that records the provider's event (once per `provider_event_id`); the module owning the order applies
 * it in that same transaction (commerce: the order becomes `paid`). `account`: whose keys verified the event —
 * `instance` (STRIPE_* variables, `spaceId` null) or `space` (the Space's own keys, `spaceId` that Space).
 */
export interface PaymentSucceededPayload {
  provider: 'stripe'
  provider_event_id: string
  account: 'instance' | 'space'
  /** The order's uuid (`client_reference_id` of the Checkout Session). */
  order_id: string
  session_id: string
  amount_total: number | null
  currency: string | null
}

/**
 * A provider's payment page for an order expired unpaid (Stripe: `checkout.session.expired`). Emitted once per
 * `provider_event_id`, in the transaction that records it; the module owning the order releases its reservation there
 * (commerce: a pending order becomes `cancelled`, `cancel_reason: payment_expired`, its stock returned).
 */
export interface PaymentExpiredPayload {
  provider: 'stripe'
  provider_event_id: string
  account: 'instance' | 'space'
  /** The order's uuid (`client_reference_id` of the Checkout Session). */
  order_id: string
  session_id: string
}

/**
 * The provider says the Tenant's subscription is now on `plan` (Stripe: `customer.subscription.*`). Emitted only for
 * events verified with the instance's signing secret (STRIPE_WEBHOOK_SECRET): a Space's own keys never move a
 * Tenant. Emitted in the transaction that records the provider's webhook (`spaceId: null`); billing applies it in
 * that same transaction (an `inTx` hook), once per `provider_event_id` (docs/billing.md).
 */
export interface SubscriptionChangedPayload {
  tenant_id: number
  plan: string
  provider_event_id: string
  provider?: string
}

declare module '../../kernel/events' {
  interface EventMap {
    'payment.succeeded': PaymentSucceededPayload
    'payment.expired': PaymentExpiredPayload
    'payment.subscription_changed': SubscriptionChangedPayload
  }
}

export const paymentEvents: EventDeclarations = {
  'payment.succeeded': {
    description: 'Internal: a payment provider confirmed the payment of an order (commerce marks the order paid in the same transaction).',
  },
  'payment.expired': {
    description: 'Internal: the payment page of an order expired unpaid (commerce cancels the pending order and returns its stock in the same transaction).',
  },
  'payment.subscription_changed': {
    description:
      'Internal: a Tenant\'s subscription moved to another plan at the payment provider (billing applies it once per provider event id).',
  },
}
