// Scheduled backups (BACKUP_CRON, BACKUP_KEEP, BACKUP_DIR) through the job queue, driven by the ManualClock. On PGlite
// the kernel opens a real data folder (an in-memory database has no files to copy); with TEST_DATABASE_URL, pg_dump.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRuntime, type Runtime } from '../src/app'
import { ConfigError, loadConfig } from '../src/config'
import { readBackupManifest } from '../src/kernel/backup'
import { ManualClock } from '../src/kernel/clock'
import { createKernel } from '../src/kernel/kernel'
import { freshDatabase, type TestDatabase } from './helpers/db'

setDefaultTimeout(180_000)

const temp = mkdtempSync(join(tmpdir(), 'cs-backup-schedule-'))
let runtime: Runtime | null = null
let tdb: TestDatabase | null = null

afterAll(async () => {
  await runtime?.close()
  await tdb?.drop()
  rmSync(temp, { recursive: true, force: true })
})

const HOUR = 3_600_000

test('BACKUP_CRON writes a backup per tick into BACKUP_DIR and keeps the newest BACKUP_KEEP', async () => {
  const backupDir = join(temp, 'backups')
  // S3_* set: the manifest records the bucket (nothing here reaches it: the backup copies no object).
  const s3 = { S3_BUCKET: 'media', S3_ENDPOINT: 'http://127.0.0.1:9', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's', S3_PREFIX: 'cms/' }
  const env = { LOG_LEVEL: 'silent', BACKUP_CRON: '0 3 * * *', BACKUP_KEEP: '2', BACKUP_DIR: backupDir, ...s3 }
  const clock = new ManualClock(Date.parse('2026-03-01T03:00:00Z'))
  let kernel
  if (process.env.TEST_DATABASE_URL) {
    tdb = await freshDatabase()
    const config = loadConfig(env, { databaseUrl: tdb.url, secretKey: 'cd'.repeat(32) })
    kernel = await createKernel(config, { clock, database: tdb.database, migrate: false })
  } else {
    const config = loadConfig({ ...env, DATA_DIR: join(temp, 'data') })
    kernel = await createKernel(config, { clock })
  }
  runtime = createRuntime(kernel)

  // Before the first tick: nothing.
  await kernel.jobs.runDueJobs()
  expect(existsSync(backupDir) ? readdirSync(backupDir) : []).toEqual([])

  for (let day = 0; day < 3; day++) {
    clock.advance(24 * HOUR)
    await kernel.jobs.runDueJobs()
  }
  const files = readdirSync(backupDir).sort()
  expect(files).toEqual(['content-service-backup-20260303T030000Z.tar.gz', 'content-service-backup-20260304T030000Z.tar.gz'])
  for (const f of files) expect(statSync(join(backupDir, f)).mode & 0o777).toBe(0o600)
  const manifest = await readBackupManifest(join(backupDir, files[1]))
  // The streamed archive is a standard tar.gz (read here by another reader).
  const entries = await new Bun.Archive(await Bun.file(join(backupDir, files[1])).bytes()).files()
  expect(manifest.driver).toBe(kernel.db.driver)
  expect(manifest.created_at).toBe('2026-03-04T03:00:00.000Z')
  expect(manifest.asset_store).toMatchObject({ kind: 's3', bucket: 'media', prefix: 'cms/', endpoint: expect.stringContaining('127.0.0.1:9') })
  if (kernel.db.driver === 'pglite') {
    expect(entries.has('data/PG_VERSION')).toBe(true)
    expect(entries.has('data/secret.key')).toBe(true)
  } else {
    expect(entries.get('postgres.dump.000000')!.size).toBeGreaterThan(1000)
  }
})

test('scheduled backups are off by default, and a bad BACKUP_CRON is a configuration error', () => {
  const config = loadConfig({})
  expect(config.backupCron).toBeNull()
  expect(config.backupKeep).toBe(7)
  expect(config.backupDir).toBe(join('data', '..', 'backups'))
  expect(() => loadConfig({ BACKUP_CRON: 'every day' })).toThrow(ConfigError)
  expect(() => loadConfig({ BACKUP_KEEP: '0' })).toThrow(ConfigError)
})
