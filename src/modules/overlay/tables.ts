import { boolean, index, integer, jsonb, pgTable, serial, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { spaces } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * A DOM overlay rule (issue 30): on pages whose path matches `path_pattern` (a glob), embed.js applies `action` to the
 * elements `selector` matches, with `content` in the page's locale. `content` HTML is sanitized at save. Owned by the
 * overlay module.
 */
export const domOverlays = pgTable(
  'dom_overlays',
  {
    id: serial('id').primaryKey(),
    uuid: uuid('uuid').notNull(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    pathPattern: text('path_pattern').notNull(),
    selector: text('selector').notNull(),
    action: text('action', { enum: ['replace_text', 'replace_html', 'set_attribute', 'hide', 'insert_before', 'insert_after'] }).notNull(),
    attribute: text('attribute'),
    content: jsonb('content').$type<Record<string, string>>().notNull(),
    segmentKey: text('segment_key'),
    active: boolean('active').notNull(),
    priority: integer('priority').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('dom_overlays_uuid_key').on(t.uuid), index('dom_overlays_space_order_idx').on(t.spaceId, t.priority, t.id)],
)
