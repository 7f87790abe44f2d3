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

/**
 * Bytes of a snapshot read per query on Postgres. postgres.js keeps the buffer of a connection's last message until that
 * connection's next query, and builds a large message in it as hex text (twice its size) before decoding: a snapshot of
 * a 30,000-Story Space (~19 MB) read whole left ~40 MB behind on an idle pooled connection, and ~100 MB in transit.
 */
export const SNAPSHOT_READ_CHUNK = 1 << 20

export async function readSnapshot(deps: Db, spaceId: number, chunk = SNAPSHOT_READ_CHUNK): Promise<StoredSnapshot | null> {
  if (deps.db.driver === 'pglite') {
    // PGlite hands bytea over in its hex text form, parsed in JavaScript byte by byte; base64 through encode() is ~8×
    // faster there (assets/store.ts reads its chunks the same way).
    const [row] = await deps.db.db
      .select({ format: searchSnapshots.format, cv: searchSnapshots.cv, data: sql<string>`encode(${searchSnapshots.data}, 'base64')` })
      .from(searchSnapshots)
      .where(eq(searchSnapshots.spaceId, spaceId))
    if (!row) return null
    return { format: row.format, cv: Number(row.cv), data: Buffer.from(row.data, 'base64') }
  }
  // Postgres: in pieces of `chunk` bytes copied into one array. A piece from another version of the snapshot (another
  // instance wrote a newer one meanwhile: its content version moved) makes the read answer none; the caller then builds
  // the Space from its rows.
  type Piece = { format: number; cv: string; size: number; bytes: Uint8Array }
  const piece = async (from: number) =>
    (
      await deps.db.query<Piece>(
        'select format, cv::text as cv, octet_length(data) as size, substring(data from $2 for $3) as bytes from search_snapshots where space_id = $1',
        [spaceId, from + 1, chunk],
      )
    )[0]
  const first = await piece(0)
  if (!first) return null
  const size = Number(first.size)
  if (first.bytes.length >= size) return { format: first.format, cv: Number(first.cv), data: first.bytes }
  const data = new Uint8Array(size)
  data.set(first.bytes, 0)
  for (let at = first.bytes.length; at < size; ) {
    const next = await piece(at)
    if (!next || next.format !== first.format || next.cv !== first.cv || Number(next.size) !== size || !next.bytes.length) return null
    data.set(next.bytes.subarray(0, size - at), at)
    at += next.bytes.length
  }
  return { format: first.format, cv: Number(first.cv), data }
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
