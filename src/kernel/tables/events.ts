import { sql } from 'drizzle-orm'
import { bigserial, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * The outbox: every event is written in the transaction of the change that causes it and handed to in-process
 * subscribers after commit. `handled_at` is set by the consumer that turns events into durable work (webhook jobs).
 */
export const events = pgTable(
  'events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    type: text('type').notNull(),
    spaceId: integer('space_id'),
    payload: jsonb('payload').notNull(),
    createdAt: ts('created_at').notNull(),
    handledAt: ts('handled_at'),
  },
  (t) => [index('events_unhandled_idx').on(t.id).where(sql`handled_at is null`)],
)

/** Fixed-window counters for RATE_LIMIT_STORE=postgres (shared by every instance). */
export const rateLimitCounters = pgTable('rate_limit_counters', {
  key: text('key').primaryKey(),
  count: integer('count').notNull(),
  resetAt: ts('reset_at').notNull(),
})
