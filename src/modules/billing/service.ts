import { and, eq, sql } from 'drizzle-orm'
import { billingProviderEvents, tenantPlans, usageCounters } from './tables'
import type { PlanLimits } from '../../config'
import type { SpaceAccess } from '../../kernel/auth'
import { type DbOrTx, rowsOf, type Tx } from '../../kernel/db'
import { findPgError, forbidden, validationFailed } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import { bytesText } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { spacesByIds } from '../spaces/service'
import type { SubscriptionChangedPayload } from '../payments/events'
import { BillingErrors, type BillingView } from './model'

/** What is counted, where, and which limit of a plan it counts against. */
export type Kind = 'spaces' | 'stories' | 'asset_bytes' | 'members' | 'requests'
const COUNTERS: Record<Kind, { scope: 'tenant' | 'space'; limit: keyof PlanLimits }> = {
  spaces: { scope: 'tenant', limit: 'spaces' },
  stories: { scope: 'space', limit: 'stories_per_space' },
  asset_bytes: { scope: 'tenant', limit: 'asset_bytes' },
  members: { scope: 'space', limit: 'members_per_space' },
  requests: { scope: 'tenant', limit: 'requests_per_month' },
}

export interface Plan {
  name: string
  limits: PlanLimits
}

/** The request-counting period at `ms`: the calendar month (UTC), keyed `YYYY-MM`. */
export function periodAt(ms: number): { key: string; start: number; end: number } {
  const d = new Date(ms)
  const y = d.getUTCFullYear()
  const m = d.getUTCMonth()
  return { key: `${y}-${String(m + 1).padStart(2, '0')}`, start: Date.UTC(y, m, 1), end: Date.UTC(y, m + 1, 1) }
}

/** A stored plan name as configured now; a name no longer in PLANS reads as DEFAULT_PLAN. */
export function resolvePlan(config: Kernel['config'], stored: string | null | undefined): Plan {
  const name = stored && Object.hasOwn(config.plans, stored) ? stored : config.defaultPlan
  return { name, limits: config.plans[name] }
}

export async function tenantPlan(kernel: Pick<Kernel, 'config'>, db: DbOrTx, tenantId: number): Promise<Plan> {
  const [row] = await db.select({ plan: tenantPlans.plan }).from(tenantPlans).where(eq(tenantPlans.tenantId, tenantId)).limit(1)
  return resolvePlan(kernel.config as Kernel['config'], row?.plan)
}

/** A Tenant's plan and its limits (whoami, through the members module's slot). */
export async function planOfTenant(kernel: Kernel, tenantId: number): Promise<Plan> {
  return tenantPlan(kernel, kernel.db.db, tenantId)
}

async function counterValue(db: DbOrTx, kind: Kind, scopeId: number, period = ''): Promise<number> {
  const [row] = await db
    .select({ n: usageCounters.n })
    .from(usageCounters)
    .where(
      and(
        eq(usageCounters.scope, COUNTERS[kind].scope),
        eq(usageCounters.scopeId, scopeId),
        eq(usageCounters.kind, kind),
        eq(usageCounters.period, period),
      ),
    )
    .limit(1)
  return Number(row?.n ?? 0)
}

const LIMIT_TEXT: Record<keyof PlanLimits, (n: number) => string> = {
  spaces: (n) => `${n} Space${n === 1 ? '' : 's'}`,
  stories_per_space: (n) => `${n} Stor${n === 1 ? 'y' : 'ies'} per Space`,
  asset_bytes: (n) => `${bytesText(n)} of assets`,
  members_per_space: (n) => `${n} member${n === 1 ? '' : 's'} per Space`,
  requests_per_month: (n) => `${n} API request${n === 1 ? '' : 's'} a month`,
}

export function planLimitError(plan: Plan, limit: keyof PlanLimits, usage: number) {
  const value = plan.limits[limit] ?? 0
  const used = limit === 'asset_bytes' ? bytesText(usage) : String(usage)
  return BillingErrors.planLimit(
    `The "${plan.name}" plan allows ${LIMIT_TEXT[limit](value)} (${limit}); ${used} in use.`,
    undefined,
    undefined,
    { limit, value, usage },
  )
}

/**
 * Moves a counter by `delta` inside the writing transaction. A rise is checked against the plan's limit in the same
 * statement (`n + delta <= limit`): the row lock orders concurrent writers and each sees the others' committed rises
 * (Postgres re-checks the condition on the newest row version), so no mix of concurrent writes passes the limit.
 * No row returned: the rise would pass it, 402. A fall is never checked (deletes are never blocked).
 */
export async function moveCounter(tx: Tx, kind: Kind, scopeId: number, delta: number, plan: Plan | null, period = ''): Promise<void> {
  if (delta === 0) return
  const { scope, limit: limitName } = COUNTERS[kind]
  const limit = delta > 0 && plan ? plan.limits[limitName] : null
  if (limit !== null && delta > limit) throw planLimitError(plan!, limitName, await counterValue(tx, kind, scopeId, period))
  const upsert = sql`insert into usage_counters (scope, scope_id, kind, period, n) values (${scope}, ${scopeId}, ${kind}, ${period}, ${delta})
    on conflict (scope, scope_id, kind, period) do update set n = usage_counters.n + excluded.n`
  if (limit === null) {
    await tx.execute(upsert)
    return
  }
  const rows = rowsOf<{ n: unknown }>(await tx.execute(sql`${upsert} where usage_counters.n + excluded.n <= ${limit} returning n`))
  if (!rows.length) throw planLimitError(plan!, limitName, await counterValue(tx, kind, scopeId, period))
}

/** The Tenant a Space belongs to, inside the caller's transaction (through the spaces service). */
export async function tenantOfSpace(tx: Tx, spaceId: number): Promise<number | null> {
  return (await spacesByIds(tx, [spaceId])).get(spaceId)?.tenantId ?? null
}

/** Counts a change of a Space's usage (`kind` per Space, or per its Tenant) in the writing transaction. */
export async function countForSpace(kernel: Kernel, tx: Tx, spaceId: number | null, kind: Kind, delta: number): Promise<void> {
  if (spaceId === null || delta === 0) return
  const tenantId = await tenantOfSpace(tx, spaceId)
  if (tenantId === null) return
  const plan = delta > 0 ? await tenantPlan(kernel, tx, tenantId) : null
  await moveCounter(tx, kind, COUNTERS[kind].scope === 'space' ? spaceId : tenantId, delta, plan)
}

/** `GET /spaces/{space}/billing`: the plan of the Space's Tenant, its limits, and what counts against them. */
export async function getBilling(kernel: Kernel, access: SpaceAccess, unflushedRequests: (tenantId: number, period: string) => number): Promise<BillingView> {
  const tenantId = access.space.tenantId
  const period = periodAt(kernel.clock.ms())
  const db = kernel.db.db
  const plan = await tenantPlan(kernel, db, tenantId)
  const rows = await db
    .select({ scope: usageCounters.scope, kind: usageCounters.kind, period: usageCounters.period, n: usageCounters.n })
    .from(usageCounters)
    .where(
      sql`(${usageCounters.scope} = 'tenant' and ${usageCounters.scopeId} = ${tenantId} and ${usageCounters.kind} in ('spaces', 'asset_bytes', 'requests'))
        or (${usageCounters.scope} = 'space' and ${usageCounters.scopeId} = ${access.space.id} and ${usageCounters.kind} in ('stories', 'members'))`,
    )
  const value = (kind: Kind, p = '') => Number(rows.find((r) => r.kind === kind && r.period === p)?.n ?? 0)
  return {
    plan: plan.name,
    limits: plan.limits,
    usage: {
      spaces: value('spaces'),
      stories_per_space: value('stories'),
      asset_bytes: value('asset_bytes'),
      members_per_space: value('members'),
      requests_per_month: value('requests', period.key) + unflushedRequests(tenantId, period.key),
    },
    period: { start: new Date(period.start).toISOString(), end: new Date(period.end).toISOString() },
    self_serve: kernel.config.billingSelfServe,
    plans: Object.entries(kernel.config.plans).map(([name, limits]) => ({ name, limits })),
  }
}

/** Records `plan` as the Tenant's; emits billing.plan_changed when it is another plan than before. */
async function setPlan(
  kernel: Kernel,
  tx: Tx,
  emit: Emit,
  tenantId: number,
  plan: string,
  source: 'self_serve' | 'provider',
  providerEventId: string | null,
): Promise<void> {
  const previous = await tenantPlan(kernel, tx, tenantId)
  const now = kernel.clock.now()
  await tx
    .insert(tenantPlans)
    .values({ tenantId, plan, changedAt: now, lastProviderEventId: providerEventId })
    .onConflictDoUpdate({
      target: tenantPlans.tenantId,
      set: providerEventId ? { plan, changedAt: now, lastProviderEventId: providerEventId } : { plan, changedAt: now },
    })
  if (previous.name !== plan) {
    emit({ type: 'billing.plan_changed', spaceId: null, payload: { tenant_id: tenantId, plan, previous_plan: previous.name, source } })
  }
}

/**
 * `PATCH /spaces/{space}/billing`: a Tenant admin moves the Tenant to another configured plan (BILLING_SELF_SERVE).
 * The Space guard has checked the admin role; the caller must also belong to the Space's own Tenant (an admin invited
 * from another Tenant runs the Space, not its owner's subscription). Usage above the new limits stays; only new
 * growth is refused.
 */
export async function changePlan(kernel: Kernel, access: SpaceAccess, plan: string): Promise<void> {
  if (!kernel.config.billingSelfServe) throw BillingErrors.selfServeDisabled()
  if (access.principal.tenantId !== access.space.tenantId) {
    throw forbidden("Only an admin of the Space's own Tenant may change the Tenant's plan.")
  }
  if (!Object.hasOwn(kernel.config.plans, plan)) {
    throw validationFailed({ plan: [`Unknown plan "${plan}"; the plans are ${Object.keys(kernel.config.plans).join(', ')}.`] })
  }
  await transact(kernel, (tx, emit) => setPlan(kernel, tx, emit, access.space.tenantId, plan, 'self_serve', null))
}

/**
 * A payments module's `payment.subscription_changed`, in its emitting transaction: the plan moves once per provider
 * event id (a repeated delivery finds the id recorded and changes nothing). A payload billing cannot apply (unknown
 * plan, malformed) is logged and recorded, never thrown: the payment's own record must still commit.
 */
export async function applySubscriptionChange(kernel: Kernel, tx: Tx, emit: Emit, p: SubscriptionChangedPayload): Promise<void> {
  if (!p || typeof p.provider_event_id !== 'string' || !p.provider_event_id || !Number.isSafeInteger(p.tenant_id)) {
    kernel.logger.warn('billing: a payment.subscription_changed event without tenant_id or provider_event_id was ignored')
    return
  }
  const fresh = await tx
    .insert(billingProviderEvents)
    .values({ eventId: p.provider_event_id, tenantId: p.tenant_id, processedAt: kernel.clock.now() })
    .onConflictDoNothing()
    .returning({ id: billingProviderEvents.eventId })
  if (!fresh.length) return
  if (typeof p.plan !== 'string' || !Object.hasOwn(kernel.config.plans, p.plan)) {
    kernel.logger.warn('billing: a subscription moved to a plan PLANS does not name; the Tenant keeps its plan', {
      tenant_id: p.tenant_id,
      plan: String(p.plan),
      provider_event_id: p.provider_event_id,
    })
    return
  }
  try {
    // A savepoint: a Tenant that does not exist (any more) fails the insert without failing the payment's transaction.
    await tx.transaction((sp) => setPlan(kernel, sp as Tx, emit, p.tenant_id, p.plan, 'provider', p.provider_event_id))
  } catch (err) {
    if (findPgError(err)?.code !== '23503') throw err
    kernel.logger.warn('billing: a subscription event names no known Tenant; ignored', { tenant_id: p.tenant_id, provider_event_id: p.provider_event_id })
  }
}

/** Writes counted requests: one statement per Tenant and period, in one transaction. */
export async function addRequests(kernel: Kernel, counts: { tenantId: number; period: string; n: number }[]): Promise<void> {
  if (!counts.length) return
  await kernel.db.db.transaction(async (tx) => {
    for (const c of counts) await moveCounter(tx, 'requests', c.tenantId, c.n, null, c.period)
  })
}

/** The requests a Tenant has on record for `period` (written by every instance's flushes). */
export function recordedRequests(kernel: Kernel, tenantId: number, period: string): Promise<number> {
  return counterValue(kernel.db.db, 'requests', tenantId, period)
}
