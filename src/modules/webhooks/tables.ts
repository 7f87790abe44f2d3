import { bigint, bigserial, boolean, index, integer, jsonb, pgTable, serial, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { spaces } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/** A Space's outbound webhook subscription (spec 2, 4.11). The secret is stored sealed (AES-256-GCM), never plain. */
export const webhookSubscriptions = pgTable(
  'webhook_subscriptions',
  {
    id: serial('id').primaryKey(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    label: text('label').notNull(),
    url: text('url').notNull(),
    events: text('events').array().notNull(),
    active: boolean('active').notNull(),
    secretSealed: text('secret_sealed').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [index('webhook_subscriptions_space_idx').on(t.spaceId)],
)

/**
 * One delivery of one event (or ping, or manual redelivery) to one subscription. `id` is the X-Service-Delivery
 * value, the same for every retry. `payload` is the body without `event` and `delivered_at`, which are added per
 * attempt. status: pending → delivered | failed.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey(),
    subscriptionId: integer('subscription_id')
      .notNull()
      .references(() => webhookSubscriptions.id, { onDelete: 'cascade' }),
    spaceId: integer('space_id').notNull(),
    kind: text('kind', { enum: ['event', 'ping', 'redelivery'] }).notNull(),
    event: text('event').notNull(),
    eventId: bigint('event_id', { mode: 'number' }),
    payload: jsonb('payload').notNull(),
    status: text('status', { enum: ['pending', 'delivered', 'failed'] }).notNull(),
    redeliveryOf: uuid('redelivery_of'),
    createdAt: ts('created_at').notNull(),
    finishedAt: ts('finished_at'),
  },
  (t) => [index('webhook_deliveries_subscription_idx').on(t.subscriptionId, t.createdAt)],
)

/**
 * The delivery log: one row per attempt, made or scheduled. A scheduled attempt is `pending` with `next_attempt_at`;
 * once made it carries the response (status, body cut to 4 KB, latency) and `delivered` or `failed`.
 * `logged_at` orders the log: when the attempt was scheduled, then when it was made.
 */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    subscriptionId: integer('subscription_id').notNull(),
    retry: integer('retry').notNull(),
    outcome: text('outcome', { enum: ['pending', 'delivered', 'failed'] }).notNull(),
    nextAttemptAt: ts('next_attempt_at'),
    attemptedAt: ts('attempted_at'),
    responseStatus: integer('response_status'),
    responseBody: text('response_body'),
    latencyMs: integer('latency_ms'),
    error: text('error'),
    loggedAt: ts('logged_at').notNull(),
  },
  (t) => [
    index('webhook_attempts_log_idx').on(t.subscriptionId, t.loggedAt, t.id),
    index('webhook_attempts_delivery_idx').on(t.deliveryId),
  ],
)
