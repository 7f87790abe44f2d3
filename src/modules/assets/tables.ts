import { bigint, customType, index, integer, jsonb, pgTable, primaryKey, serial, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { spaces } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/** `bytea` as a Uint8Array on both drivers (postgres.js hands back a Buffer, PGlite a Uint8Array). */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => 'bytea' })

/**
 * An uploaded file (spec 2 Asset, 4.8). The bytes live where `store` says: `postgres` (`asset_chunks`, the default)
 * or `s3` (the object `<S3_PREFIX>assets/<uuid>` in S3_BUCKET), so several instances need no shared disk; local disk
 * only caches transformed variants. `content_type` comes from the file's leading bytes.
 */
export const assets = pgTable(
  'assets',
  {
    id: serial('id').primaryKey(),
    uuid: uuid('uuid').notNull().unique(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    filename: text('filename').notNull(),
    contentType: text('content_type').notNull(),
    size: bigint('size', { mode: 'number' }).notNull(),
    width: integer('width'),
    height: integer('height'),
    sha256: text('sha256').notNull(),
    /** Alt text per Space locale. */
    alt: jsonb('alt').$type<Record<string, string>>().notNull().default({}),
    /** Focal point of an image, fractions 0..1 from the top left: cover crops centre on it (null: the centre). */
    focus: jsonb('focus').$type<{ x: number; y: number }>(),
    /** Crop of an image, fractions 0..1 of the oriented original: applied before every transform (null: none). */
    crop: jsonb('crop').$type<{ x: number; y: number; width: number; height: number }>(),
    createdBy: integer('created_by'),
    /** Where the bytes are: `postgres` or `s3` (src/modules/assets/store.ts). */
    store: text('store').$type<'postgres' | 's3'>().notNull().default('postgres'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [index('assets_space_idx').on(t.spaceId, t.id)],
)

/** The bytes of an asset in 1 MiB pieces, `idx` from 0. */
export const assetChunks = pgTable(
  'asset_chunks',
  {
    assetId: integer('asset_id')
      .notNull()
      .references(() => assets.id, { onDelete: 'cascade' }),
    idx: integer('idx').notNull(),
    data: bytea('data').notNull(),
  },
  (t) => [primaryKey({ columns: [t.assetId, t.idx] })],
)
