// The streaming archive reader against archives written by another tar writer (Bun.Archive, which wrote the backups of
// earlier versions): the manifest is found wherever it is, files come back byte for byte, long names included, and
// paths leaving the data folder are refused.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BACKUP_FORMAT, type BackupManifest, readBackupManifest, restoreDataDir } from '../src/kernel/backup'

setDefaultTimeout(60_000)

const temp = mkdtempSync(join(tmpdir(), 'cs-backup-archive-'))
afterAll(() => rmSync(temp, { recursive: true, force: true }))

const manifest: BackupManifest = {
  format: BACKUP_FORMAT,
  format_version: 1,
  driver: 'pglite',
  created_at: '2026-01-01T00:00:00.000Z',
  service_version: '0.0.0',
  migrations: [],
  files: 3,
  bytes: 0,
  directories: ['base', 'base/1', 'pg_tblspc'],
}

async function archive(name: string, entries: Record<string, string | Uint8Array>): Promise<string> {
  const file = join(temp, name)
  writeFileSync(file, await new Bun.Archive(entries, { compress: 'gzip' }).bytes())
  return file
}

test('an archive of an earlier version restores: manifest last, long names, bytes unchanged', async () => {
  const big = new Uint8Array(3 * 1024 * 1024 + 17).map((_, i) => (i * 31) & 255)
  const long = `base/1/${'x'.repeat(120)}`
  const file = await archive('old.tar.gz', { 'data/PG_VERSION': '17\n', 'data/base/1/1259': big, [`data/${long}`]: 'long', 'manifest.json': JSON.stringify(manifest) })
  expect(await readBackupManifest(file)).toEqual(manifest)
  const dir = join(temp, 'restored')
  const bytes = await restoreDataDir(manifest, file, dir)
  expect(bytes).toBe(3 + big.byteLength + 4)
  expect(readFileSync(join(dir, 'PG_VERSION'), 'utf8')).toBe('17\n')
  expect(Buffer.from(readFileSync(join(dir, 'base/1/1259'))).equals(Buffer.from(big))).toBe(true)
  expect(readFileSync(join(dir, long), 'utf8')).toBe('long')
})

test('a path leaving the data folder, a missing manifest and a file that is not gzip are refused', async () => {
  const evil = await archive('evil.tar.gz', { 'manifest.json': JSON.stringify(manifest), 'data/../escape': 'x' })
  await expect(restoreDataDir(manifest, evil, join(temp, 'evil'))).rejects.toThrow('unsafe path')
  const none = await archive('none.tar.gz', { 'data/PG_VERSION': '17\n' })
  await expect(readBackupManifest(none)).rejects.toThrow('manifest.json is missing')
  const junk = join(temp, 'junk.tar.gz')
  writeFileSync(junk, 'not a backup')
  await expect(readBackupManifest(junk)).rejects.toThrow('not a backup archive')
})
