import { index, integer, jsonb, pgTable, serial, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { spaces } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/** One picture of a gallery: an asset of the same Space, a caption and an optional alt text per locale. */
export interface GalleryItem {
  asset_uuid: string
  caption: Record<string, string>
  /** Absent or empty for a locale: the asset's own alt text is served. */
  alt?: Record<string, string>
}

/**
 * A gallery (issue 30): an ordered list of at most 500 images of the Space, answered publicly by slug. Owned by the
 * galleries module; the assets it names are checked through the assets module's service at save and at read.
 */
export const galleries = pgTable(
  'galleries',
  {
    id: serial('id').primaryKey(),
    uuid: uuid('uuid').notNull(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    title: jsonb('title').$type<Record<string, string>>().notNull(),
    items: jsonb('items').$type<GalleryItem[]>().notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('galleries_uuid_key').on(t.uuid), uniqueIndex('galleries_space_slug_key').on(t.spaceId, t.slug), index('galleries_space_created_idx').on(t.spaceId, t.createdAt)],
)
