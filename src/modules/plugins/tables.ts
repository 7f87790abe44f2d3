import { bigserial, boolean, index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core'
import { spaces } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * A Space's plugin: an HTTP endpoint called synchronously, signed like a webhook, before the changes its `hooks`
 * name (filter hooks). The secret is stored sealed (AES-256-GCM), never plain. `consecutive_failures` counts errors
 * and timeouts since the last answer; at 20 the plugin is deactivated (`deactivated_reason` says why).
 */
export const plugins = pgTable(
  'plugins',
  {
    id: serial('id').primaryKey(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    url: text('url').notNull(),
    hooks: text('hooks').array().notNull(),
    timeoutMs: integer('timeout_ms').notNull(),
    failureMode: text('failure_mode', { enum: ['open', 'closed'] }).notNull(),
    active: boolean('active').notNull(),
    position: integer('position').notNull(),
    secretSealed: text('secret_sealed').notNull(),
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    deactivatedAt: ts('deactivated_at'),
    deactivatedReason: text('deactivated_reason'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [index('plugins_space_idx').on(t.spaceId)],
)

/** The call log of plugins: one row per call (kept 14 days, pruned by the `plugins.prune-log` job). */
export const pluginCalls = pgTable(
  'plugin_calls',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    pluginId: integer('plugin_id')
      .notNull()
      .references(() => plugins.id, { onDelete: 'cascade' }),
    hook: text('hook').notNull(),
    calledAt: ts('called_at').notNull(),
    latencyMs: integer('latency_ms'),
    responseStatus: integer('response_status'),
    outcome: text('outcome', { enum: ['allow', 'amend', 'veto', 'error'] }).notNull(),
    message: text('message'),
  },
  (t) => [index('plugin_calls_log_idx').on(t.pluginId, t.calledAt, t.id), index('plugin_calls_called_at_idx').on(t.calledAt)],
)
