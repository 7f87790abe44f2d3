import { sql } from 'drizzle-orm'
import { migrations } from '../../db/migrations'
import pkg from '../../package.json'
import { StartupError } from './data-dir'
import { type Database, rowsOf } from './db'

/** The version recorded with each migration this binary applies (the package version). */
export const APP_VERSION: string = pkg.version

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
    // Which version applied each migration: an older binary names the newer one when it refuses (below).
    await tx.execute(sql`alter table _migrations add column if not exists app_version text`)
    const rows = rowsOf<{ tag: string; app_version: string | null }>(
      await tx.execute(sql`select tag, app_version from _migrations order by applied_at, tag`),
    )
    const known = new Set(migrations.map((m) => m.tag))
    const unknown = rows.filter((r) => !known.has(r.tag))
    if (unknown.length) {
      // A newer version migrated this database: this binary's code does not know its tables and could damage them.
      const newer = unknown.map((r) => r.app_version).filter(Boolean).at(-1) ?? 'a newer version'
      throw new StartupError(
        `this database was migrated by content-service ${newer} (migration ${unknown.at(-1)!.tag}), which this ` +
          `binary, content-service ${APP_VERSION}, does not know. Run content-service ${newer} or newer, or restore ` +
          `a backup taken before the upgrade.`,
      )
    }
    const done = new Set(rows.map((r) => r.tag))
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
      await tx.execute(sql`insert into _migrations (tag, hash, app_version) values (${m.tag}, ${hash}, ${APP_VERSION})`)
      applied.push(m.tag)
    }
    return { applied, total: migrations.length }
  })
}
