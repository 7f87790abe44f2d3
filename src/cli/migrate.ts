import type { Config } from '../config'
import { openDatabase } from '../kernel/db'
import { migrate } from '../kernel/migrate'

export async function runMigrate(config: Config): Promise<void> {
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
  const where = db.driver === 'postgres' ? 'Postgres (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`
  console.log(`migrating ${where}`)
  try {
    const t0 = performance.now()
    const result = await migrate(db, (s) => console.log(`  [${s.index}/${s.total}] ${s.tag}`))
    const ms = Math.round(performance.now() - t0)
    console.log(
      result.applied.length
        ? `applied ${result.applied.length} migration(s) in ${ms} ms; ${result.total} in all`
        : `already up to date (${result.total} migration(s))`,
    )
  } finally {
    await db.close()
  }
}
