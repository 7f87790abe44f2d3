import { bigserial, index, integer, pgTable, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { spaces } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/** A newsletter subscriber of a Space (double opt-in): pending → confirmed → unsubscribed. E-mail stored lower-cased. */
export const subscribers = pgTable(
  'subscribers',
  {
    id: serial('id').primaryKey(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    name: text('name'),
    lang: text('lang'),
    status: text('status', { enum: ['pending', 'confirmed', 'unsubscribed'] }).notNull(),
    source: text('source', { enum: ['subscribe', 'form', 'admin'] }).notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    confirmedAt: ts('confirmed_at'),
    unsubscribedAt: ts('unsubscribed_at'),
  },
  (t) => [uniqueIndex('subscribers_space_email_key').on(t.spaceId, t.email), index('subscribers_space_idx').on(t.spaceId, t.id)],
)

/**
 * Capability tokens in confirmation and newsletter mails: 32 random bytes handed out once, only SHA-256 stored.
 * `confirm`: single use, 7 days. `unsubscribe`: reusable (idempotent), no expiry.
 */
export const subscriberTokens = pgTable(
  'subscriber_tokens',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    tokenHash: text('token_hash').notNull(),
    subscriberId: integer('subscriber_id')
      .notNull()
      .references(() => subscribers.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['confirm', 'unsubscribe'] }).notNull(),
    expiresAt: ts('expires_at'),
    usedAt: ts('used_at'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [uniqueIndex('subscriber_tokens_hash_key').on(t.tokenHash), index('subscriber_tokens_subscriber_idx').on(t.subscriberId)],
)

/** Per-Space newsletter settings: where confirm and unsubscribe links redirect (303) when set. */
export const newsletterSettings = pgTable('newsletter_settings', {
  spaceId: integer('space_id')
    .primaryKey()
    .references(() => spaces.id, { onDelete: 'cascade' }),
  redirectUrl: text('redirect_url'),
  updatedAt: ts('updated_at').notNull(),
})
