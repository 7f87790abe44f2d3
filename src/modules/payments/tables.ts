import { integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'
import { spaces } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/** A Space's own Stripe keys, sealed (AES-256-GCM); `secret_key_hint` is what the masked answer shows. */
export const stripeAccounts = pgTable('payment_stripe_accounts', {
  spaceId: integer('space_id')
    .primaryKey()
    .references(() => spaces.id, { onDelete: 'cascade' }),
  secretKeySealed: text('secret_key_sealed').notNull(),
  webhookSecretSealed: text('webhook_secret_sealed').notNull(),
  secretKeyHint: text('secret_key_hint').notNull(),
  webhookSecretHint: text('webhook_secret_hint').notNull(),
  updatedAt: ts('updated_at').notNull(),
})

/** Provider events applied (once each): a repeated delivery of the same id changes nothing. */
export const paymentEvents = pgTable(
  'payment_events',
  {
    provider: text('provider').notNull(),
    eventId: text('event_id').notNull(),
    type: text('type').notNull(),
    spaceId: integer('space_id'),
    processedAt: ts('processed_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.eventId] })],
)
