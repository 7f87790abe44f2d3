import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { membersModule } from '../members'
import { billingEvents } from './events'
import { BillingErrors } from './model'
import { RequestCounter } from './requests'
import { billingRoutes } from './routes'
import { applySubscriptionChange, countForSpace, planOfTenant } from './service'

/**
 * A write that meets the request limit: every POST, PUT and PATCH except billing's own (an admin over the limit can
 * still change plans), those that take away (archive, unpublish: reads and deletes are never blocked), and the
 * account's own (sign out, password change).
 */
const GROWING = new Set(['POST', 'PUT', 'PATCH'])
const EXEMPT = /^\/v1\/auth\/|\/(billing|archive|unpublish)$/
const isExempt = (path: string) => EXEMPT.test(path)

/**
 * Plans, usage and limits (docs/billing.md). Usage is counted in the transaction of each write that changes it, from
 * the events the owning modules emit (`inTx`: a rise past the plan's limit vetoes the write with 402 plan_limit), and
 * API requests in memory (`admit`), written in batches. The Tenant's plan is billing's own table; a payments module
 * moves it through `payment.subscription_changed`, an event: billing imports no payments code.
 */
export const billingModule = defineModule({
  name: 'billing',
  setup: (kernel, use) => {
    const requests = new RequestCounter(kernel)
    // whoami shows the caller's Tenant's plan through the members module's slot.
    use(membersModule).planOf = (tenantId) => planOfTenant(kernel, tenantId)
    return {
      requests,
      /** Writes the requests counted so far (tests; otherwise a timer and shutdown do). */
      flushRequests: () => requests.flush(),
    }
  },
  start: (self) => self.requests.start(),
  close: (self) => self.requests.close(),
  routes: ({ kernel, guards, self }) => billingRoutes(kernel, guards, self.requests),
  // plan_limit is never answered by billing's own routes: it is declared where it is answered (errorsOn).
  errors: [BillingErrors.selfServeDisabled],
  errorsOn: [
    {
      // The request limit refuses any growing write; the creates that count (Spaces, Stories, assets, accepted
      // invitations) also meet their own limits.
      error: BillingErrors.planLimit,
      on: (r) => r.bearer && GROWING.has(r.method) && !isExempt(r.path),
    },
  ],
  events: billingEvents,
  caches: (self) => [self.requests.cache],
  admit: (self, _kernel, request) => {
    const tenantId = request.space?.tenantId ?? request.principal.tenantId
    const period = self.requests.periodNow()
    if (GROWING.has(request.method) && !isExempt(request.pathname)) {
      return self.requests.check(tenantId, period).then(() => self.requests.count(tenantId, period))
    }
    self.requests.count(tenantId, period)
  },
  inTx: {
    'space.created': async (tx, e, _emit, _self, kernel) => {
      await countForSpace(kernel, tx, e.spaceId, 'spaces', 1)
      // The creator is the Space's first member.
      await countForSpace(kernel, tx, e.spaceId, 'members', 1)
    },
    'space.archived': (tx, e, _emit, _self, kernel) => countForSpace(kernel, tx, e.spaceId, 'spaces', -1),
    'story.created': (tx, e, _emit, _self, kernel) => countForSpace(kernel, tx, e.spaceId, 'stories', 1),
    // Fired once per Story, at its archive or at a delete of a Story never archived.
    'story.deleted': (tx, e, _emit, _self, kernel) => countForSpace(kernel, tx, e.spaceId, 'stories', -1),
    'asset.uploaded': (tx, e, _emit, _self, kernel) => countForSpace(kernel, tx, e.spaceId, 'asset_bytes', e.payload.asset.size),
    'asset.deleted': (tx, e, _emit, _self, kernel) => countForSpace(kernel, tx, e.spaceId, 'asset_bytes', -(e.payload.asset.size ?? 0)),
    'member.added': (tx, e, _emit, _self, kernel) => countForSpace(kernel, tx, e.spaceId, 'members', 1),
    'member.removed': (tx, e, _emit, _self, kernel) => countForSpace(kernel, tx, e.spaceId, 'members', -1),
    'payment.subscription_changed': (tx, e, emit, _self, kernel) => applySubscriptionChange(kernel, tx, emit, e.payload),
  },
  rateLimits: [{ id: 'billing.change', method: 'PATCH', path: '/v1/spaces/:space/billing', limit: 10, windowSeconds: MIN }],
})
