import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core'
import { rowsOf } from '../src/kernel/db'
import { freshDatabase, type TestDatabase } from './helpers/db'

setDefaultTimeout(60_000)

/**
 * Tables live with their owner: the kernel's in src/kernel/tables/, each module's in src/modules/<name>/tables.ts,
 * and drizzle.config.ts collects exactly those files (so a new module's tables need no line elsewhere). The collected
 * schema and the committed migrations describe the same tables and columns.
 */
const root = join(import.meta.dir, '..')
const KERNEL_TABLES = 'src/kernel/tables/index.ts'
const MODULE_TABLES = 'src/modules/*/tables.ts'

async function collectedTables(): Promise<Map<string, { file: string; columns: string[] }>> {
  const files = [KERNEL_TABLES, ...[...new Bun.Glob(MODULE_TABLES).scanSync({ cwd: root })].sort()]
  const out = new Map<string, { file: string; columns: string[] }>()
  for (const file of files) {
    const mod = (await import(join(root, file))) as Record<string, unknown>
    for (const value of Object.values(mod)) {
      if (!(value instanceof PgTable)) continue
      const config = getTableConfig(value)
      const seen = out.get(config.name)
      if (seen) throw new Error(`table ${config.name} is exported by ${seen.file} and ${file}`)
      out.set(config.name, { file, columns: config.columns.map((c) => c.name).sort() })
    }
  }
  return out
}

let db: TestDatabase
beforeAll(async () => {
  db = await freshDatabase()
})
afterAll(async () => {
  await db?.drop()
})

describe('tables live with their module', () => {
  test('drizzle.config.ts collects the kernel tables and every module tables.ts', () => {
    const config = readFileSync(join(root, 'drizzle.config.ts'), 'utf8')
    expect(config).toContain(`'./${KERNEL_TABLES}'`)
    expect(config).toContain(`'./${MODULE_TABLES}'`)
  })

  test('no table is defined outside src/kernel/tables/ and src/modules/<name>/tables.ts', () => {
    const outside: string[] = []
    for (const file of new Bun.Glob('src/**/*.ts').scanSync({ cwd: root })) {
      if (file.startsWith('src/kernel/tables/') || /^src\/modules\/[^/]+\/tables\.ts$/.test(file)) continue
      if (/\bpgTable\s*\(/.test(readFileSync(join(root, file), 'utf8'))) outside.push(file)
    }
    expect(outside).toEqual([])
  })

  test('the collected schema and the migrated database have the same tables and columns', async () => {
    const schema = await collectedTables()
    const rows = rowsOf<{ table_name: string; column_name: string }>(
      await db.database.db.execute(sql`
        select c.table_name, c.column_name from information_schema.columns c
          join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
         where c.table_schema = 'public' and t.table_type = 'BASE TABLE'
           -- A partition (analytics_events_pYYYYMMDD, …) is part of its table, not a table of the schema.
           and c.table_name not in (select p.relname from pg_inherits i join pg_class p on p.oid = i.inhrelid)`),
    )
    const migrated = new Map<string, string[]>()
    for (const r of rows) (migrated.get(r.table_name) ?? migrated.set(r.table_name, []).get(r.table_name)!).push(r.column_name)
    // The migration runner's own bookkeeping (src/kernel/migrate.ts) is not part of the schema.
    expect(migrated.delete('_migrations')).toBe(true)
    expect([...migrated.keys()].sort()).toEqual([...schema.keys()].sort())
    for (const [name, { columns }] of schema) expect({ table: name, columns: migrated.get(name)!.sort() }).toEqual({ table: name, columns })
    expect(schema.size).toBeGreaterThan(40)
  })
})
