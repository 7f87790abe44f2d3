import { index, integer, jsonb, pgTable, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { users } from '../../kernel/tables'

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

/**
 * Sign-ups waiting for their address to be confirmed (auth module, REGISTRATION_VERIFY=on). The mailed link carries
 * 32 random bytes; only their SHA-256 is kept. Following it (within `expires_at`, once: `used_at`) creates the account
 * with the password chosen at sign-up (`password_hash`, argon2id) and runs the `follow_up` a module asked for (e.g.
 * onboarding: a first Space). No account exists before: the address may have several rows (whoever signed up with
 * it), the first confirmed one wins. A daily job deletes rows a day after they expired.
 */
export const pendingSignUps = pgTable(
  'pending_sign_ups',
  {
    id: serial('id').primaryKey(),
    /** Lower-cased. */
    email: text('email').notNull(),
    name: text('name').notNull(),
    tenantName: text('tenant_name'),
    passwordHash: text('password_hash').notNull(),
    tokenHash: text('token_hash').notNull(),
    /** `{kind, payload}` of a module's follow-up (onboarding: `onboard`), or null. */
    followUp: jsonb('follow_up'),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
  },
  (t) => [uniqueIndex('pending_sign_ups_hash_key').on(t.tokenHash), index('pending_sign_ups_expires_idx').on(t.expiresAt)],
)

/**
 * Admin sessions (auth module): what lets every tab of the admin app share one sign-in. The admin's sign-in screen
 * opens one right after the login (`POST /v1/auth/admin-session` with the fresh bearer token); the browser keeps
 * `<id>.<secret>` in an HttpOnly, SameSite=Strict cookie scoped to `/v1/auth/admin-session`, and a tab without a token
 * trades it for a short-lived bearer token (`POST /v1/auth/admin-session/token`). Only SHA-256 of the secret is kept,
 * compared in constant time. Lifetime: 14 days after the last exchange (sliding), never beyond 90 days after sign-in.
 * Bearer tokens minted from a session carry `admin-session:<id>` as their `api_tokens.name`, so ending the session
 * revokes them too. A session ends (the row is deleted) on sign-out with its cookie or with the login token that opened
 * it (`login_token_id`) or a token it minted, on sign-out everywhere, and on a password change (other sessions) or reset.
 */
export const adminSessions = pgTable(
  'admin_sessions',
  {
    /** Public part of the cookie value (`as_` + 12 characters). */
    id: text('id').primaryKey(),
    secretHash: text('secret_hash').notNull(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The login token (api_tokens.id) the session was opened with: signing out with it ends the session. */
    loginTokenId: text('login_token_id'),
    createdAt: ts('created_at').notNull(),
    lastUsedAt: ts('last_used_at'),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [index('admin_sessions_user_idx').on(t.userId), index('admin_sessions_login_token_idx').on(t.loginTokenId)],
)
