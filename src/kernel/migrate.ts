import { sql } from 'drizzle-orm'
import { migrations } from '../../db/migrations'
import { type Database, rowsOf } from './db'

// A fixed key for pg_advisory_xact_lock: several instances starting together migrate one at a time.
const LOCK_KEY = 4_720_311

export interface MigrateResult {
  applied: string[]
  total: number
}


/**
 * Applies every embedded migration not yet recorded in `_migrations`, in journal order, in one transaction under an
 * advisory lock (Postgres DDL is transactional: a failing migration leaves the schema as it was).
 * `onProgress` is called before each migration so the CLI can show progress.
 */
export async function migrate(
  database: Database,
  onProgress: (step: { index: number; total: number; tag: string }) => void = () => {},
): Promise<MigrateResult> {
  return database.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_KEY})`)
    await tx.execute(sql`create table if not exists _migrations (
      tag text primary key,
      hash text not null,
      applied_at timestamptz not null default now()
    )`)
    const done = new Set(rowsOf<{ tag: string }>(await tx.execute(sql`select tag from _migrations`)).map((r) => r.tag))
    const pending = migrations.filter((m) => !done.has(m.tag))
    const applied: string[] = []
    for (const [i, m] of pending.entries()) {
      onProgress({ index: i + 1, total: pending.length, tag: m.tag })
      const statements = m.sql
        .split('--> statement-breakpoint')
        .map((s) => s.trim())
        .filter(Boolean)
      for (const s of statements) await tx.execute(sql.raw(s))
      const hash = new Bun.CryptoHasher('sha256').update(m.sql).digest('hex')
      await tx.execute(sql`insert into _migrations (tag, hash) values (${m.tag}, ${hash})`)
      applied.push(m.tag)
    }
    return { applied, total: migrations.length }
  })
}
