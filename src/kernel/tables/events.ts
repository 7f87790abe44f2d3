import { sql } from 'drizzle-orm'
import { bigserial, customType, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })
/** A full transaction id (Postgres `xid8`, read as its decimal text). */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' })

/**
 * The outbox: every event is written in the transaction of the change that causes it and handed to in-process
 * subscribers after commit. `handled_at` is set by the consumer that turns events into durable work (webhook jobs).
 * `tx` is the writing transaction's id: the other instances' buses read the outbox in `(tx, id)` order up to the
 * oldest transaction still running (`pg_snapshot_xmin`), a position no later commit can land behind, so an event
 * whose NOTIFY was lost still reaches them (kernel/events.ts). Null on rows written before the column existed.
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
    tx: xid8('tx').default(sql`pg_current_xact_id()`),
  },
  (t) => [index('events_unhandled_idx').on(t.id).where(sql`handled_at is null`), index('events_tx_idx').on(t.tx, t.id)],
)

/** Fixed-window counters for RATE_LIMIT_STORE=postgres (shared by every instance). */
export const rateLimitCounters = pgTable('rate_limit_counters', {
  key: text('key').primaryKey(),
  count: integer('count').notNull(),
  resetAt: ts('reset_at').notNull(),
})
