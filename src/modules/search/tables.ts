import { bigint, customType, integer, pgTable, timestamp } from 'drizzle-orm/pg-core'
import { spaces } from '../../kernel/tables'

/** `bytea` as a Uint8Array on both drivers (postgres.js hands back a Buffer, PGlite a Uint8Array). */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => 'bytea' })

/**
 * One Space's search indexes (every locale), compacted and compressed (snapshot.ts), so that an instance loads a cold
 * Space instead of rebuilding it from its Stories. `cv` is the Space's content version (stories' change feed) the
 * snapshot holds at least: a load catches up on the changes after it. Written in the background (registry.ts); never
 * the only copy of anything — a missing or unreadable snapshot means a build from the rows.
 */
export const searchSnapshots = pgTable('search_snapshots', {
  spaceId: integer('space_id')
    .primaryKey()
    .references(() => spaces.id, { onDelete: 'cascade' }),
  /** snapshot.ts SNAPSHOT_FORMAT when written: another format is ignored. */
  format: integer('format').notNull(),
  cv: bigint('cv', { mode: 'number' }).notNull(),
  documents: integer('documents').notNull(),
  data: bytea('data').notNull(),
  writtenAt: timestamp('written_at', { withTimezone: true, mode: 'date' }).notNull(),
})
