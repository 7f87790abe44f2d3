import postgres from 'postgres'
import { type Database, openDatabase } from '../../src/kernel/db'
import { migrate } from '../../src/kernel/migrate'

/**
 * A fresh, migrated database for one test file: in-memory PGlite by default, or — when TEST_DATABASE_URL is set —
 * a new database on that server, dropped again by `drop()`.
 */
export interface TestDatabase {
  database: Database
  url: string | null
  drop(): Promise<void>
}


/**
 * PGlite: the first database of a test process is made by initdb and the migrations, and dumped; every later one
 * starts as a copy of that dump (a fraction of initdb's time and memory). `migrate` still runs on each: a no-op check.
 */
let template: Promise<Blob> | null = null

async function migratedTemplate(): Promise<Blob> {
  const database = await openDatabase({ databaseUrl: null, dataDir: '', memory: true })
  try {
    await migrate(database)
    return await database.dumpTemplate!()
  } finally {
    await database.close()
  }
}

export async function freshDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.TEST_DATABASE_URL
  if (!serverUrl) {
    template ??= migratedTemplate()
    const database = await openDatabase({ databaseUrl: null, dataDir: '', memory: true, template: await template })
    await migrate(database)
    return { database, url: null, drop: () => database.close() }
  }
  const name = `cs_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  await admin.end()
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: '' })
  await migrate(database)
  return {
    database,
    url: url.toString(),
    async drop() {
      await database.close()
      const a = postgres(serverUrl, { max: 1, onnotice: () => {} })
      await a.unsafe(`drop database if exists ${name} with (force)`)
      await a.end()
    },
  }
}
