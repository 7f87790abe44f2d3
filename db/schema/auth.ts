import { index, integer, pgTable, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { users } from './tenancy'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * Password-reset tokens (auth module). The mailed link carries 32 random bytes; only their SHA-256 is kept. A token is
 * good once (`used_at`) and until `expires_at` (one hour); a reset or a password change uses up every open token of
 * the user.
 */
export const passwordResetTokens = pgTable(
  'password_reset_tokens',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
  },
  (t) => [uniqueIndex('password_reset_tokens_hash_key').on(t.tokenHash), index('password_reset_tokens_user_idx').on(t.userId)],
)
