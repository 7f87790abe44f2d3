import { eq, sql } from 'drizzle-orm'
import type { Kernel } from '../../kernel/kernel'
import { searchSnapshots } from './tables'

// The search_snapshots rows (tables.ts): read on a cold load, written in the background (registry.ts).

type Db = Pick<Kernel, 'db'>

export interface StoredSnapshot {
  format: number
  cv: number
  data: Uint8Array
}

export async function readSnapshot(deps: Db, spaceId: number): Promise<StoredSnapshot | null> {
  // PGlite hands bytea over in its hex text form, parsed in JavaScript byte by byte; base64 through encode() is ~8×
  // faster there (assets/store.ts reads its chunks the same way). postgres.js parses hex natively.
  const data = deps.db.driver === 'pglite' ? sql<string>`encode(${searchSnapshots.data}, 'base64')` : sql<Uint8Array>`${searchSnapshots.data}`
  const [row] = await deps.db.db
    .select({ format: searchSnapshots.format, cv: searchSnapshots.cv, data })
    .from(searchSnapshots)
    .where(eq(searchSnapshots.spaceId, spaceId))
  if (!row) return null
  const bytes = typeof row.data === 'string' ? Buffer.from(row.data, 'base64') : row.data instanceof Uint8Array ? row.data : new Uint8Array(row.data as ArrayBufferLike)
  return { format: row.format, cv: Number(row.cv), data: bytes }
}

/**
 * Stores a snapshot unless the stored one is newer (another instance may have written a later one meanwhile): the
 * content version never goes back, except for a snapshot of another format, which is replaced.
 */
export async function writeSnapshot(deps: Db & Pick<Kernel, 'clock'>, s: { spaceId: number; format: number; cv: number; documents: number; data: Uint8Array }) {
  await deps.db.db
    .insert(searchSnapshots)
    .values({ spaceId: s.spaceId, format: s.format, cv: s.cv, documents: s.documents, data: s.data, writtenAt: deps.clock.now() })
    .onConflictDoUpdate({
      target: searchSnapshots.spaceId,
      set: { format: sql`excluded.format`, cv: sql`excluded.cv`, documents: sql`excluded.documents`, data: sql`excluded.data`, writtenAt: sql`excluded.written_at` },
      setWhere: sql`${searchSnapshots.cv} < excluded.cv or ${searchSnapshots.format} <> excluded.format`,
    })
}

export async function deleteSnapshot(deps: Db, spaceId: number) {
  await deps.db.db.delete(searchSnapshots).where(eq(searchSnapshots.spaceId, spaceId))
}
