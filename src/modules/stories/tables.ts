import { sql } from 'drizzle-orm'
import {
  type AnyPgColumn,
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  serial,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core'
import { spaces } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * The structural record of a Story: where it sits in the tree and its publishing state. Content lives per locale in
 * story_contents (drafts) and story_published (the public snapshot). Owned by the stories module.
 */
export const stories = pgTable(
  'stories',
  {
    id: serial('id').primaryKey(),
    uuid: uuid('uuid').notNull(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    // No ON DELETE: deleting a Story that still has children is refused by the service.
    parentId: integer('parent_id').references((): AnyPgColumn => stories.id),
    /** The Story's own locale; translations are the other rows of story_contents. */
    lang: text('lang').notNull(),
    name: text('name').notNull(),
    slug: text('slug').notNull(),
    /** '/' + every ancestor slug + '/' + slug; rewritten for the whole subtree on a move. */
    fullPath: text('full_path').notNull(),
    /** Number of path segments (a root Story has 1): bounds tree queries without a recursive CTE. */
    depth: smallint('depth').notNull(),
    isFolder: boolean('is_folder').notNull().default(false),
    status: text('status', { enum: ['draft', 'published', 'archived'] }).notNull(),
    versionNo: integer('version_no').notNull(),
    /** Set by a content or name save, cleared by publish: "the drafts differ from the public snapshot". */
    hasUnpublishedChanges: boolean('has_unpublished_changes').notNull(),
    publishedAt: ts('published_at'),
    /** The first publish ever (kept through unpublish and re-publish): the public list's `first_published_at` sort. */
    firstPublishedAt: ts('first_published_at'),
    archivedAt: ts('archived_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('stories_uuid_key').on(t.uuid),
    // The public read and the listing order; unique per Space, archived Stories included.
    uniqueIndex('stories_space_path_key').on(t.spaceId, t.fullPath),
    // Subtree lookups (moves, descendants) use `full_path LIKE '<prefix>/%'`, which needs pattern ops in any collation.
    index('stories_space_path_prefix_idx').using('btree', t.spaceId, t.fullPath.op('text_pattern_ops')),
    index('stories_space_status_path_idx').on(t.spaceId, t.status, t.fullPath),
    index('stories_space_parent_path_idx').on(t.spaceId, t.parentId, t.fullPath),
    index('stories_parent_idx').on(t.parentId),
    // The search build and reconcile page a Space's published Stories by id (`space_id = $1 and status = 'published'
    // and id > $2 order by id`): without it, a Space of 10 Stories walked the primary key past every other Space's.
    index('stories_space_published_id_idx').on(t.spaceId, t.id).where(sql`status = 'published'`),
    // Public lists and feeds by publish date within a Space and status.
    index('stories_space_status_published_at_idx').on(t.spaceId, t.status, t.publishedAt),
  ],
)

/**
 * Stories per Space and status, kept by the service in the transaction of every create, status change and delete:
 * `meta.total` of a listing without a parent or text filter reads two rows instead of counting 100,000.
 */
export const storyCounts = pgTable(
  'story_counts',
  {
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    status: text('status', { enum: ['draft', 'published', 'archived'] }).notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.spaceId, t.status] })],
)

/** The latest draft of a Story in one locale. */
export const storyContents = pgTable(
  'story_contents',
  {
    storyId: integer('story_id')
      .notNull()
      .references(() => stories.id, { onDelete: 'cascade' }),
    lang: text('lang').notNull(),
    /** A translated name; null means the Story's own name. */
    name: text('name'),
    content: jsonb('content').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.storyId, t.lang] })],
)

/** The public snapshot of a Story in one locale, written by publish and removed by unpublish/archive. */
export const storyPublished = pgTable(
  'story_published',
  {
    storyId: integer('story_id')
      .notNull()
      .references(() => stories.id, { onDelete: 'cascade' }),
    lang: text('lang').notNull(),
    name: text('name').notNull(),
    content: jsonb('content').notNull(),
    versionNo: integer('version_no').notNull(),
    publishedAt: ts('published_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.storyId, t.lang] })],
)

/** Every save of a Story, in any locale. */
export const storyVersions = pgTable(
  'story_versions',
  {
    storyId: integer('story_id')
      .notNull()
      .references(() => stories.id, { onDelete: 'cascade' }),
    versionNo: integer('version_no').notNull(),
    lang: text('lang').notNull(),
    name: text('name').notNull(),
    slug: text('slug').notNull(),
    fullPath: text('full_path').notNull(),
    content: jsonb('content').notNull(),
    /** Who saved it (the user, or the creator of a Space token); the auth module owns users, so no FK here. */
    authorUserId: integer('author_user_id'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.storyId, t.versionNo] })],
)

/** Component blueprints: the schema every block of a Story is validated against. */
export const components = pgTable(
  'components',
  {
    id: serial('id').primaryKey(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    displayName: text('display_name').notNull(),
    isRoot: boolean('is_root').notNull(),
    isNestable: boolean('is_nestable').notNull(),
    schema: jsonb('schema').notNull(),
    /** The schema's field names in the author's order: jsonb keeps object keys in its own order (by length). */
    fieldOrder: jsonb('field_order').$type<string[]>().notNull().default([]),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('components_space_name_key').on(t.spaceId, t.name)],
)

/**
 * The public change feed of a Space (`GET /cdn/{space}/changes`): what happened to published Stories — published,
 * unpublished, moved, deleted — numbered by the Space's content version (`seq`). Only the latest change of a Story is
 * kept (a sync from any cursor needs the final state of each Story changed since, not the history), so the table holds
 * one row per Story that was ever public. Written in the transaction of the change.
 */
export const storyChanges = pgTable(
  'story_changes',
  {
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    storyUuid: uuid('story_uuid').notNull(),
    kind: text('kind', { enum: ['published', 'unpublished', 'moved', 'deleted'] }).notNull(),
    /** The Story's full path after the change (for `deleted` and `unpublished`: where it was). */
    fullPath: text('full_path').notNull(),
    /** `moved`: the path it left. */
    fromPath: text('from_path'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.spaceId, t.seq] }), uniqueIndex('story_changes_story_key').on(t.spaceId, t.storyUuid)],
)

/**
 * The content version of each Space (`meta.cv`): the `seq` of its latest change. Taken with a row lock in the
 * transaction of each change, so changes of a Space commit in `seq` order and a reader never sees a later number before
 * an earlier one (the change feed's cursor can never skip a row committed late).
 */
export const storyContentVersions = pgTable('story_content_versions', {
  spaceId: integer('space_id')
    .primaryKey()
    .references(() => spaces.id, { onDelete: 'cascade' }),
  seq: bigint('seq', { mode: 'number' }).notNull(),
})

/**
 * A publish or unpublish of a Story planned for a time (at most one of each per Story). The `stories.scheduled` job
 * carries the row's id and time; it acts when it still finds the row with that time (a cancelled or moved schedule
 * leaves a stale job that does nothing), then deletes the row. A row whose action was refused keeps the reason in
 * `error` until an editor cancels it.
 */
export const storySchedules = pgTable(
  'story_schedules',
  {
    id: serial('id').primaryKey(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    storyId: integer('story_id')
      .notNull()
      .references(() => stories.id, { onDelete: 'cascade' }),
    action: text('action', { enum: ['publish', 'unpublish'] }).notNull(),
    runAt: ts('run_at').notNull(),
    /** Who planned it: the action runs with their identity (plugins' filter hooks see it). */
    userId: integer('user_id'),
    tokenId: text('token_id'),
    error: text('error'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [uniqueIndex('story_schedules_story_action_key').on(t.storyId, t.action), index('story_schedules_space_run_idx').on(t.spaceId, t.runAt)],
)
