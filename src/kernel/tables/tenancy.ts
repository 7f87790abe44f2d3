import { sql } from 'drizzle-orm'
import { index, integer, pgTable, primaryKey, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

export const tenants = pgTable('tenants', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: ts('created_at').notNull(),
})

export const users = pgTable(
  'users',
  {
    id: serial('id').primaryKey(),
    tenantId: integer('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    /** Stored lower-cased; unique across the whole service because it is the login name. */
    email: text('email').notNull(),
    name: text('name').notNull(),
    passwordHash: text('password_hash').notNull(),
    /** The admin app's UI language chosen in the profile (a BCP 47 tag); null: the browser's. */
    uiLanguage: text('ui_language'),
    /** The admin app's theme chosen in the profile: system, light or dark; null: the system's. */
    uiTheme: text('ui_theme'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [uniqueIndex('users_email_key').on(t.email)],
)

export const spaces = pgTable(
  'spaces',
  {
    id: serial('id').primaryKey(),
    tenantId: integer('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    /** Globally unique: the public surface addresses a Space by slug alone (/cdn/{space}). */
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    defaultLang: text('default_lang').notNull(),
    /** The site's URL for previews (docs/in-page-editing.md): the editor's Preview button opens it + the Story's path. */
    previewUrl: text('preview_url'),
    archivedAt: ts('archived_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('spaces_slug_key').on(t.slug), index('spaces_tenant_idx').on(t.tenantId)],
)

export const spaceLocales = pgTable(
  'space_locales',
  {
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    code: text('code').notNull(),
    fallback: text('fallback'),
    position: integer('position').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.spaceId, t.code] })],
)

export const memberships = pgTable(
  'memberships',
  {
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['viewer', 'editor', 'admin'] }).notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.spaceId] }), index('memberships_space_idx').on(t.spaceId)],
)

/**
 * Bearer tokens. The token handed out is `<id>.<secret>`; only SHA-256(secret) is kept, compared in constant time.
 * kind 'user': a login session of a User (expires). kind 'space': an API token scoped to one Space with a role.
 */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: text('id').primaryKey(),
    secretHash: text('secret_hash').notNull(),
    kind: text('kind', { enum: ['user', 'space'] }).notNull(),
    tenantId: integer('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    userId: integer('user_id').references(() => users.id, { onDelete: 'cascade' }),
    spaceId: integer('space_id').references(() => spaces.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['viewer', 'editor', 'admin'] }),
    name: text('name'),
    createdBy: integer('created_by').references(() => users.id, { onDelete: 'set null' }),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    lastUsedAt: ts('last_used_at'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    index('api_tokens_space_idx').on(t.spaceId).where(sql`${t.kind} = 'space'`),
    index('api_tokens_user_idx').on(t.userId),
  ],
)
