import { bigint, pgTable, primaryKey, integer, text, timestamp } from 'drizzle-orm/pg-core'
import { tenants } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * A Tenant's plan (docs/billing.md). No row: the configured DEFAULT_PLAN. `last_provider_event_id` is the payment
 * provider's id of the last subscription event applied; `billing_provider_events` keeps every one seen (idempotency).
 */
export const tenantPlans = pgTable('tenant_plans', {
  tenantId: integer('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  plan: text('plan').notNull(),
  changedAt: ts('changed_at').notNull(),
  lastProviderEventId: text('last_provider_event_id'),
})

/** Payment-provider event ids already applied: a subscription event moves a plan once, however often it arrives. */
export const billingProviderEvents = pgTable('billing_provider_events', {
  eventId: text('event_id').primaryKey(),
  tenantId: integer('tenant_id').notNull(),
  processedAt: ts('processed_at').notNull(),
})

/**
 * Usage, counted as it happens (in the transaction of the write that changes it), never by scanning: `scope` is
 * `tenant` (spaces, asset_bytes, requests) or `space` (stories, members); `period` is `YYYY-MM` for requests and ''
 * for the others. A missing row is 0. Rows of a Space or Tenant that is gone are left behind (harmless: never read).
 */
export const usageCounters = pgTable(
  'usage_counters',
  {
    scope: text('scope', { enum: ['tenant', 'space'] }).notNull(),
    scopeId: integer('scope_id').notNull(),
    kind: text('kind').notNull(),
    period: text('period').notNull().default(''),
    n: bigint('n', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.scope, t.scopeId, t.kind, t.period] })],
)
