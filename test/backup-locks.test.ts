// The embedded database's backup holds PGlite's locks only while it copies the data folder's files; compression (and
// the reader of the archive, however slow) runs after they are released. Deterministic: the archive's sink stops at
// its first compressed chunk — the compressor is then mid-way and waiting on it — and a write to the service must
// complete right there. Were the locks still held, that write could never run and the sink would never let go (the
// test then fails with "the write did not complete").
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { createRuntime } from '../src/app'
import { loadConfig } from '../src/config'
import { BACKUP_STAGING, readBackupManifest, restoreDataDir, writeBackup } from '../src/kernel/backup'
import { openDatabase } from '../src/kernel/db'
import { createKernel } from '../src/kernel/kernel'

setDefaultTimeout(120_000)

const temp = mkdtempSync(join(tmpdir(), 'cs-backup-locks-'))
afterAll(() => rmSync(temp, { recursive: true, force: true }))

test('a write completes while the backup is being compressed; the backup holds the state before it', async () => {
  const dataDir = join(temp, 'data')
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', REGISTRATION_VERIFY: 'off', TRUSTED_PROXIES: '127.0.0.1' })
  const kernel = await createKernel(config)
  const app = createRuntime(kernel)
  await app.start()
  const call = async (method: string, path: string, body?: unknown, token?: string) => {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'X-Forwarded-For': '10.9.0.1' }
    if (token) headers.Authorization = `Bearer ${token}`
    const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }))
    return { status: res.status, body: (await res.json().catch(() => null)) as any }
  }
  try {
    const reg = await call('POST', '/v1/auth/register', { email: 'owner@example.com', password: 'correct horse battery staple', name: 'Owner' })
    expect(reg.status).toBe(201)
    const token = reg.body.data.token as string
    expect((await call('POST', '/v1/spaces', { slug: 'site', name: 'Site' }, token)).status).toBe(201)
    const story = (slug: string) => call('POST', '/v1/spaces/site/stories', { slug, name: slug, content: { type: 'doc', blocks: [] } }, token)
    expect((await story('before')).status).toBe(201)

    const steps: string[] = []
    let snapshotTaken = false
    let backupDone = false
    let during: { status: number } | null = null
    let sinkBytes = 0
    let guardError: Error | null = null
    const file = join(temp, 'backup.tar.gz')
    const out = Bun.file(file).writer()
    const sink = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _enc, callback) {
        sinkBytes += chunk.byteLength
        out.write(chunk)
        if (during) return callback()
        // The first compressed chunk: the compressor has started and now waits for this sink. A write to the service
        // (a Story, through the HTTP API, on the same database) must complete before we let it go on.
        expect(snapshotTaken).toBe(true)
        expect(backupDone).toBe(false)
        const guard = new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('the write did not complete while the backup was being compressed (locks held)')), 60_000),
        )
        Promise.race([story('during'), guard]).then(
          (res) => {
            during = res
            callback()
          },
          (err) => {
            guardError = err
            callback(err)
          },
        )
      },
      final(callback) {
        Promise.resolve(out.end()).then(() => callback(), callback)
      },
    })
    const backup = writeBackup(kernel.db, '0.0.0-test', sink, {
      clockNow: new Date(),
      progress: (step) => {
        if (steps.at(-1) !== step) steps.push(step)
      },
      onSnapshotTaken: () => {
        snapshotTaken = true
        // Still copying? No: the staging copy is whole and the locks are free; a read runs now.
        return kernel.db.query('select 1').then(() => {})
      },
    }).finally(() => {
      backupDone = true
    })
    // writeBackup returns once the sink has finished (its final() flushed the file). A blocked write is the failure
    // to report (the backup then fails with a closed stream).
    const failure = await backup.then(
      () => null,
      (err: Error) => err,
    )
    if (guardError) throw guardError
    if (failure) throw failure
    expect(during).not.toBeNull()
    expect(during!.status).toBe(201)
    expect(steps.indexOf('compressing')).toBeGreaterThan(steps.indexOf('copying the database files'))
    expect(sinkBytes).toBeGreaterThan(1024 * 1024)
    // The staging copy is gone; the service keeps working.
    expect(readdirSync(join(dataDir, BACKUP_STAGING))).toEqual([])
    expect((await story('after')).status).toBe(201)
    const list = await call('GET', '/v1/spaces/site/stories?per_page=100', undefined, token)
    expect(list.body.data.map((s: { slug: string }) => s.slug).sort()).toEqual(['after', 'before', 'during'])

    // The archive is the state when the locks were released: "before", not "during".
    const manifest = await readBackupManifest(file)
    expect(manifest.driver).toBe('pglite')
    const restoredDir = join(temp, 'restored')
    await restoreDataDir(manifest, file, restoredDir)
    const restored = await openDatabase({ databaseUrl: null, dataDir: restoredDir })
    try {
      const rows = await restored.query<{ slug: string }>('select slug from stories order by slug')
      expect(rows.map((r) => r.slug)).toEqual(['before'])
    } finally {
      await restored.close()
    }
  } finally {
    await app.close()
  }
})
