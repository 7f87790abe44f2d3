import type { Config } from '../config'
import { openDatabase } from '../kernel/db'
import { databaseOptions, migrateAndReport } from '../kernel/kernel'
import { createLogger } from '../kernel/logger'

export async function runMigrate(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel, undefined, config.logFormat)
  const db = await openDatabase(databaseOptions(config, logger))
  const where = db.driver === 'postgres' ? 'Postgres (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`
  logger.info(`migrating ${where}`, { database: db.driver })
  try {
    await migrateAndReport(db, logger)
  } finally {
    await db.close()
  }
}
