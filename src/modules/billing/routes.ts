import { Elysia } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { Data, SpaceParams } from '../../kernel/schemas'
import { BillingModel, PlanChangeBody } from './model'
import type { RequestCounter } from './requests'
import { changePlan, getBilling } from './service'

/** §4.8 "Billing": the plan of the Space's Tenant, its limits and usage; self-serve plan changes. */
export function billingRoutes(kernel: Kernel, guards: Guards, requests: RequestCounter) {
  const unwritten = (tenantId: number, period: string) => requests.unwritten(tenantId, period)
  return new Elysia({ tags: ['Billing'] })
    .use(guards)
    .get('/spaces/:space/billing', async ({ access }) => ({ data: await getBilling(kernel, access, unwritten) }), {
      params: SpaceParams,
      spaceRole: 'admin',
      response: Data(BillingModel),
      detail: { summary: "The plan of the Space's Tenant, its limits, the usage counted against them and the request period" },
    })
    .patch(
      '/spaces/:space/billing',
      async ({ access, body }) => {
        await changePlan(kernel, access, body.plan)
        return { data: await getBilling(kernel, access, unwritten) }
      },
      {
        params: SpaceParams,
        body: PlanChangeBody,
        spaceUser: 'admin',
        response: Data(BillingModel),
        detail: {
          summary:
            "Moves the Space's Tenant to another configured plan (BILLING_SELF_SERVE=true; a user token of the Tenant's own admin). Usage above the new limits stays; new growth is refused",
        },
      },
    )
}
