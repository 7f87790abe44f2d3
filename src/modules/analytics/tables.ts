import { date, index, integer, pgTable, primaryKey, smallint, text, timestamp, uuid } from 'drizzle-orm/pg-core'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * One accepted beacon (spec 4.3): a Story mount. Nothing about the visitor: no IP, no user agent, no id — only the
 * normalised facts below and the time. Kept 90 days (the daily rollup job deletes older rows). No foreign keys: the
 * table is an append-only log written in batches, and one vanished Space must not fail a whole batch.
 */
export const analyticsEvents = pgTable(
  'analytics_events',
  {
    spaceId: integer('space_id').notNull(),
    storyUuid: uuid('story_uuid').notNull(),
    /** A segment key of the Space, or null. */
    segmentKey: text('segment_key'),
    /** Canonical BCP-47, or null. */
    lang: text('lang'),
    /** desktop | mobile | tablet */
    device: text('device').notNull(),
    /** `scheme://host[:port]` of the referrer, or null (direct). */
    referrer: text('referrer'),
    at: ts('at').notNull(),
  },
  (t) => [index('analytics_events_space_at_idx').on(t.spaceId, t.at), index('analytics_events_at_idx').on(t.at)],
)

/**
 * Mounts per (Space, day, Story, lang, segment, device, referrer), written by the rollup every five minutes: each
 * finished slot's counts are added to its day's rows, so the rows of the day being rolled grow until its last slot
 * is in. Unknown values are '' (not null) so the tuple can be the key. Kept for good (a few rows per Story per day).
 */
export const analyticsDaily = pgTable(
  'analytics_daily',
  {
    spaceId: integer('space_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    storyUuid: uuid('story_uuid').notNull(),
    lang: text('lang').notNull(),
    segmentKey: text('segment_key').notNull(),
    device: text('device').notNull(),
    referrer: text('referrer').notNull(),
    mounts: integer('mounts').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.spaceId, t.day, t.storyUuid, t.lang, t.segmentKey, t.device, t.referrer] }),
    // One Story's days (the per-Story view, a page of Stories' breakdowns).
    index('analytics_daily_story_idx').on(t.spaceId, t.storyUuid, t.day),
  ],
)

/**
 * Mounts per (Space, day, Story): analytics_daily summed over its other columns, written by the same statement. Rankings
 * and daily series read one row per Story and day here instead of one per combination of lang, segment, device and
 * referrer. Kept for good.
 */
export const analyticsStoryDaily = pgTable(
  'analytics_story_daily',
  {
    spaceId: integer('space_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    storyUuid: uuid('story_uuid').notNull(),
    mounts: integer('mounts').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.spaceId, t.day, t.storyUuid] }),
    // One Story's days, and a page of Stories' series.
    index('analytics_story_daily_story_idx').on(t.spaceId, t.storyUuid, t.day),
  ],
)

/**
 * How far the rollup has gone (one row, id 1): every mount before minute `rolled_minutes` (0–1435, UTC) of day
 * `rolled_until` is in analytics_daily and analytics_story_daily, and queries read raw rows only from that instant on.
 * `revision` counts late writes into rolled minutes (beacons a database outage held back): aggregates of rolled days
 * cached under an older revision are stale. Missing row: nothing rolled yet.
 */
export const analyticsRollupState = pgTable('analytics_rollup_state', {
  id: smallint('id').primaryKey(),
  rolledUntil: date('rolled_until', { mode: 'string' }).notNull(),
  rolledMinutes: smallint('rolled_minutes').notNull().default(0),
  revision: integer('revision').notNull().default(0),
  updatedAt: ts('updated_at').notNull(),
})
