import type { EventDeclarations } from '../../kernel/events'

/** Internal: a Tenant's plan changed (every instance drops what it remembers of the Tenant's plan). */
export interface PlanChangedPayload {
  tenant_id: number
  plan: string
  previous_plan: string
  source: 'self_serve' | 'provider'
}

/**
 * What billing consumes from a payments module (docs/billing.md): the provider says the Tenant's subscription is now
 * on `plan`. `provider_event_id` is the provider's own event id: the plan moves once per id, however often it comes.
 * Emit it in the transaction that records the provider's webhook (`spaceId: null`); billing applies it in that same
 * transaction (an `inTx` hook), so the payment record and the plan commit together.
 */
export interface SubscriptionChangedPayload {
  tenant_id: number
  plan: string
  provider_event_id: string
  provider?: string
}

declare module '../../kernel/events' {
  interface EventMap {
    'billing.plan_changed': PlanChangedPayload
    'payment.subscription_changed': SubscriptionChangedPayload
  }
}

export const billingEvents: EventDeclarations = {
  'billing.plan_changed': { description: 'Internal: a Tenant\'s plan changed (self-serve or a payment provider).' },
  'payment.subscription_changed': {
    description:
      'Internal, emitted by a payments module: a Tenant\'s subscription moved to another plan (billing applies it once per provider event id).',
  },
}
