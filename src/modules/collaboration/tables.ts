import { boolean, index, integer, jsonb, pgTable, primaryKey, serial, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { stories } from '../stories/tables'
import { spaces, users } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/** An editor's presence on a Story (spec 2, 4.10): one row per client session, upserted by each heartbeat. */
export const presenceSessions = pgTable(
  'presence_sessions',
  {
    storyId: integer('story_id')
      .notNull()
      .references(() => stories.id, { onDelete: 'cascade' }),
    sessionId: uuid('session_id').notNull(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    blockPath: text('block_path').notNull(),
    selection: jsonb('selection').$type<{ anchor: number; head: number }>().notNull(),
    lastSeen: ts('last_seen').notNull(),
  },
  (t) => [primaryKey({ columns: [t.storyId, t.sessionId] }), index('presence_sessions_last_seen_idx').on(t.lastSeen)],
)

/**
 * A comment anchored to a block (spec 2, 4.10). The anchor is the block's `_uid` (plus the field path below it), so
 * a comment follows its block when blocks move; `block_path` keeps the last path it was seen at. Threads are one
 * level: `parent_id` names a root comment. A deleted root with replies keeps its row with `body` null.
 */
export const comments = pgTable(
  'comments',
  {
    id: serial('id').primaryKey(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    storyId: integer('story_id')
      .notNull()
      .references(() => stories.id, { onDelete: 'cascade' }),
    parentId: integer('parent_id'),
    blockUid: text('block_uid').notNull(),
    /** The part of `block_path` below the anchored block (`headline` of `blocks/3/headline`), '' for the block itself. */
    blockSuffix: text('block_suffix').notNull(),
    blockPath: text('block_path').notNull(),
    body: text('body'),
    deleted: boolean('deleted').notNull().default(false),
    resolved: boolean('resolved').notNull().default(false),
    authorUserId: integer('author_user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    edited: boolean('edited').notNull().default(false),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [index('comments_story_idx').on(t.storyId, t.id), index('comments_parent_idx').on(t.parentId)],
)
