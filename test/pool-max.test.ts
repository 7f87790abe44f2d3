// DATABASE_POOL_MAX: the size of each process's Postgres pool (a fleet's connections add up: docs/operations.md
// "Many tenants"). The setting is parsed on both drivers; on Postgres (TEST_DATABASE_URL) a pool opened with a maximum
// of 2 serves eight concurrent queries over at most two server connections.
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { ConfigError, loadConfig } from '../src/config'
import { openDatabase, rowsOf } from '../src/kernel/db'
import { freshDatabase, type TestDatabase } from './helpers/db'

setDefaultTimeout(60_000)

describe('DATABASE_POOL_MAX', () => {
  test('defaults to 10, takes 1–1000, refuses anything else', () => {
    expect(loadConfig({}).databasePoolMax).toBe(10)
    expect(loadConfig({ DATABASE_POOL_MAX: '3' }).databasePoolMax).toBe(3)
    for (const bad of ['0', '1001', 'ten', '-2']) expect(() => loadConfig({ DATABASE_POOL_MAX: bad })).toThrow(ConfigError)
  })

  const url = process.env.TEST_DATABASE_URL
  let fresh: TestDatabase | null = null
  afterAll(async () => {
    await fresh?.drop()
  })

  test.if(!!url)('on Postgres the pool opens at most that many connections', async () => {
    fresh = await freshDatabase()
    const database = await openDatabase({ databaseUrl: fresh.url!, dataDir: '', poolMax: 2 })
    try {
      const pids = await Promise.all(
        Array.from({ length: 8 }, async () => rowsOf<{ pid: number }>(await database.db.execute('select pg_backend_pid() as pid, pg_sleep(0.05)'))[0].pid),
      )
      expect(new Set(pids).size).toBeLessThanOrEqual(2)
      expect(new Set(pids).size).toBeGreaterThanOrEqual(1)
    } finally {
      await database.close()
    }
  })
})
