import { sql } from 'drizzle-orm'
import { index, integer, pgTable, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { spaces, users } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * Invitations to a Space (members module). The link carries a 32-byte random token; only its SHA-256 is kept. An
 * address has at most one pending invitation per Space; accepted, declined, revoked and expired ones stay as a log.
 */
export const invitations = pgTable(
  'invitations',
  {
    id: serial('id').primaryKey(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    /** Lower-cased. */
    email: text('email').notNull(),
    role: text('role', { enum: ['viewer', 'editor', 'admin'] }).notNull(),
    tokenHash: text('token_hash').notNull(),
    status: text('status', { enum: ['pending', 'accepted', 'declined', 'revoked', 'expired'] }).notNull(),
    invitedBy: integer('invited_by').references(() => users.id, { onDelete: 'set null' }),
    acceptedBy: integer('accepted_by').references(() => users.id, { onDelete: 'set null' }),
    expiresAt: ts('expires_at').notNull(),
    sentAt: ts('sent_at').notNull(),
    endedAt: ts('ended_at'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('invitations_token_key').on(t.tokenHash),
    uniqueIndex('invitations_pending_key').on(t.spaceId, t.email).where(sql`${t.status} = 'pending'`),
    index('invitations_space_idx').on(t.spaceId, t.status),
  ],
)
