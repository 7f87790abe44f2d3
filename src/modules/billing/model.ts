import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { Int, Timestamp } from '../../kernel/schemas'

const Limit = (description: string) => t.Union([Int({ minimum: 0 }), t.Null()], { description: `${description}; null: unlimited` })

/** A plan's limits (PLANS, docs/billing.md). */
export const PlanLimitsModel = t.Object({
  spaces: Limit('Live (not archived) Spaces of the Tenant'),
  stories_per_space: Limit('Stories (not archived) in one Space'),
  asset_bytes: Limit('Bytes of the assets of all the Tenant\'s Spaces'),
  members_per_space: Limit('Members of one Space'),
  requests_per_month: Limit('Authenticated management API requests of the Tenant per calendar month (UTC)'),
})

export const BillingModel = t.Object({
  plan: t.String({ description: 'The Tenant\'s plan' }),
  limits: PlanLimitsModel,
  usage: t.Object(
    {
      spaces: Int(),
      stories_per_space: Int({ description: 'Stories of this Space' }),
      asset_bytes: Int(),
      members_per_space: Int({ description: 'Members of this Space' }),
      requests_per_month: Int({ description: 'This period, including requests counted but not yet written by any instance' }),
    },
    { description: 'What counts against each limit now (the per-Space ones: of this Space)' },
  ),
  period: t.Object({ start: Timestamp, end: Timestamp }, { description: 'The request-counting period: the current calendar month, UTC' }),
  self_serve: t.Boolean({ description: 'Whether a Tenant admin may change the plan here (BILLING_SELF_SERVE); false: the operator does' }),
  plans: t.Array(t.Object({ name: t.String(), limits: PlanLimitsModel }), {
    description: 'The configured plans (PLANS), to choose from when self_serve is true',
  }),
})
export type BillingView = typeof BillingModel.static

export const PlanChangeBody = t.Object({ plan: t.String({ minLength: 1, maxLength: 40, description: 'A plan name of PLANS' }) })

export const BillingErrors = {
  planLimit: defineError(
    'plan_limit',
    402,
    'The operation would exceed a limit of the Tenant\'s plan; `details` holds {limit, value, usage}.',
  ),
  selfServeDisabled: defineError('self_serve_disabled', 403, 'Plans are changed by the operator here (BILLING_SELF_SERVE is off).'),
}
