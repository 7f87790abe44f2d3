import { index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'
import { spaces } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * Preview tokens (docs/in-page-editing.md): short-lived, read-only, one Space. `id` is the public half of
 * `<id>.<secret>` (`p_` + 12 characters); only the SHA-256 of the secret is stored. Rows past `expires_at` are
 * worthless and pruned when new tokens are minted.
 */
export const previewTokens = pgTable(
  'preview_tokens',
  {
    id: text('id').primaryKey(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    secretHash: text('secret_hash').notNull(),
    /** The user who minted it (null: a Space token did). */
    createdBy: integer('created_by'),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [index('preview_tokens_expires_idx').on(t.expiresAt), index('preview_tokens_space_idx').on(t.spaceId)],
)

/**
 * Draft snapshots (docs/in-page-editing.md, the visual editor): the editor's current, unsaved content of one Story
 * and locale, stored against one preview token. Never a version, never published: only a draft read with that very
 * token answers it, until the token expires (the row goes with the token).
 */
export const previewSnapshots = pgTable(
  'preview_snapshots',
  {
    tokenId: text('token_id')
      .notNull()
      .references(() => previewTokens.id, { onDelete: 'cascade' }),
    storyUuid: text('story_uuid').notNull(),
    lang: text('lang').notNull(),
    name: text('name'),
    content: jsonb('content').notNull(),
    bytes: integer('bytes').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tokenId, t.storyUuid, t.lang] })],
)
