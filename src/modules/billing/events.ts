import type { EventDeclarations } from '../../kernel/events'

/** Internal: a Tenant's plan changed (every instance drops what it remembers of the Tenant's plan). */
export interface PlanChangedPayload {
  tenant_id: number
  plan: string
  previous_plan: string
  source: 'self_serve' | 'provider'
}

declare module '../../kernel/events' {
  interface EventMap {
    'billing.plan_changed': PlanChangedPayload
  }
}

export const billingEvents: EventDeclarations = {
  'billing.plan_changed': { description: 'Internal: a Tenant\'s plan changed (self-serve or a payment provider).' },
}
