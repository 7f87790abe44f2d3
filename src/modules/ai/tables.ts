import { bigint, index, integer, jsonb, pgTable, primaryKey, serial, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { spaces, users } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * A change an AI action proposes (spec 4.8: translate, alt text). It changes nothing by itself: an editor approves
 * (the result is applied in one transaction) or rejects it. `target` names what it would change (Story uuid and
 * locales, or asset uuid and locale) and, for a translation, the Story version it started from (`version_no`).
 * status: queued → running → awaiting_review → approved | rejected, or failed (`error`).
 */
export const aiJobs = pgTable(
  'ai_jobs',
  {
    id: serial('id').primaryKey(),
    uuid: uuid('uuid').notNull(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['translate', 'alt_text'] }).notNull(),
    status: text('status', { enum: ['queued', 'running', 'awaiting_review', 'approved', 'rejected', 'failed'] }).notNull(),
    target: jsonb('target').notNull(),
    result: jsonb('result'),
    error: text('error'),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
    createdBy: integer('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    decidedAt: ts('decided_at'),
  },
  (t) => [uniqueIndex('ai_jobs_uuid_key').on(t.uuid), index('ai_jobs_space_idx').on(t.spaceId, t.id)],
)

/** A Space's AI use per calendar month (UTC, `YYYY-MM`): the status answer and the AI_MONTHLY_TOKENS budget. */
export const aiUsage = pgTable(
  'ai_usage',
  {
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    month: text('month').notNull(),
    requests: integer('requests').notNull().default(0),
    promptTokens: bigint('prompt_tokens', { mode: 'number' }).notNull().default(0),
    completionTokens: bigint('completion_tokens', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.spaceId, t.month] })],
)
