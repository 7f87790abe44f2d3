import { boolean, index, integer, jsonb, pgTable, primaryKey, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { stories } from '../stories/tables'
import { spaces } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/** One rule of an audience segment (spec 2); validated and its regex compiled by the segments service at save. */
export interface SegmentRule {
  type: 'country' | 'language' | 'referrer' | 'cookie' | 'query' | 'utm_source' | 'utm_campaign'
  operator: 'eq' | 'neq' | 'in' | 'not_in' | 'contains' | 'starts_with' | 'regex'
  value: string | string[]
  key?: string
}

/** An audience segment (spec 2, 4.9). Owned by the segments module. */
export const audienceSegments = pgTable(
  'audience_segments',
  {
    id: serial('id').primaryKey(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    label: text('label').notNull(),
    priority: integer('priority').notNull(),
    active: boolean('active').notNull(),
    rules: jsonb('rules').$type<SegmentRule[]>().notNull(),
    /** Matches every visitor; then `rules` is empty. An empty rule list without it is refused at save. */
    matchAll: boolean('match_all').notNull().default(false),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('audience_segments_space_key').on(t.spaceId, t.key), index('audience_segments_space_order_idx').on(t.spaceId, t.priority, t.id)],
)

/** The draft of a Story variant: content served instead of the Story's to one segment, in one locale. */
export const storyVariants = pgTable(
  'story_variants',
  {
    id: serial('id').primaryKey(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    storyId: integer('story_id')
      .notNull()
      .references(() => stories.id, { onDelete: 'cascade' }),
    segmentId: integer('audience_segment_id')
      .notNull()
      .references(() => audienceSegments.id, { onDelete: 'cascade' }),
    lang: text('lang').notNull(),
    content: jsonb('content').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('story_variants_story_segment_lang_key').on(t.storyId, t.segmentId, t.lang), index('story_variants_segment_idx').on(t.segmentId)],
)

/**
 * The public snapshot of the variants: copied from story_variants in the transaction that publishes the Story
 * (the segments module's `inTx` hook on story.published), removed when the Story leaves `published`.
 */
export const storyVariantsPublished = pgTable(
  'story_variants_published',
  {
    storyId: integer('story_id')
      .notNull()
      .references(() => stories.id, { onDelete: 'cascade' }),
    segmentId: integer('audience_segment_id')
      .notNull()
      .references(() => audienceSegments.id, { onDelete: 'cascade' }),
    lang: text('lang').notNull(),
    content: jsonb('content').notNull(),
  },
  (t) => [primaryKey({ columns: [t.storyId, t.segmentId, t.lang] }), index('story_variants_published_segment_idx').on(t.segmentId)],
)
