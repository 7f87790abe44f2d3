import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import type { Server } from 'bun'
import { migrations } from '../../db/migrations'
import type { Database } from './db'
import type { Logger } from './logger'

/**
 * Backups of the whole service state: one tar.gz file holding `manifest.json` and either the embedded database's
 * data folder (`data/...`, copied under PGlite's locks after a CHECKPOINT: one consistent state, asset bytes
 * included since they live in the database) or a `pg_dump` custom-format dump (`postgres.dump`).
 *
 * A running `serve` on the embedded database owns its data folder: no other process may open it. So `serve` answers
 * on a Unix socket in the data folder (`control.sock`, mode 0600: only the service's user reaches it), and the
 * `backup` command asks it for the archive there; with no server running, the command opens the folder itself.
 */

export const BACKUP_FORMAT = 'content-service-backup'
export const BACKUP_FORMAT_VERSION = 1
export const CONTROL_SOCKET = 'control.sock'

/**
 * Entries of the data folder a backup leaves out: the socket, the owner's lock file (the restoring process takes its
 * own), the image variant cache (rebuilt on demand).
 */
const NOT_BACKED_UP = new Set([CONTROL_SOCKET, 'content-service.lock', 'cache', 'postmaster.pid'])

export interface BackupManifest {
  format: typeof BACKUP_FORMAT
  format_version: number
  driver: 'pglite' | 'postgres'
  created_at: string
  service_version: string
  /** The migrations the snapshot's schema had (this binary's list at backup time). */
  migrations: string[]
  files: number
  bytes: number
  /** The data folder's directories (Postgres needs its empty ones, which a tar of files would not carry). */
  directories?: string[]
}

export class BackupError extends Error {}

export type Progress = (step: string, bytes?: number) => void

/** Every regular file and directory under `dir` (relative paths), but the excluded top-level entries. */
function entriesUnder(dir: string, top = dir, out = { files: [] as string[], directories: [] as string[] }) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (dir === top && NOT_BACKED_UP.has(name)) continue
    const st = lstatSync(path)
    if (st.isDirectory()) {
      out.directories.push(relative(top, path))
      entriesUnder(path, top, out)
    } else if (st.isFile()) out.files.push(relative(top, path))
  }
  return out
}

/**
 * The backup archive of an open database: the embedded database's files read while it is quiescent, or pg_dump's
 * output for Postgres.
 */
export async function createBackup(db: Database, serviceVersion: string, opts: { databaseUrl?: string | null; clockNow: Date; progress?: Progress }): Promise<Uint8Array> {
  const progress = opts.progress ?? (() => {})
  const entries: Record<string, Uint8Array | string> = {}
  let files = 0
  let bytes = 0
  let directories: string[] | undefined
  if (db.driver === 'pglite') {
    if (!db.whileQuiescent) throw new BackupError('an in-memory database cannot be backed up')
    progress('checkpoint and copy of the database files')
    await db.whileQuiescent(async (dataDir) => {
      // Read under the lock (no statement runs meanwhile): the files are one consistent state.
      const found = entriesUnder(dataDir)
      directories = found.directories
      for (const rel of found.files) {
        const data = readFileSync(join(dataDir, rel))
        entries[`data/${rel}`] = data
        files++
        bytes += data.byteLength
        progress('copying the database files', bytes)
      }
    })
  } else {
    if (!opts.databaseUrl) throw new BackupError('a Postgres backup needs DATABASE_URL')
    progress('pg_dump')
    const dump = await runPgDump(opts.databaseUrl, (n) => progress('pg_dump', n))
    entries['postgres.dump'] = dump
    files = 1
    bytes = dump.byteLength
  }
  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    format_version: BACKUP_FORMAT_VERSION,
    driver: db.driver,
    created_at: opts.clockNow.toISOString(),
    service_version: serviceVersion,
    migrations: migrations.map((m) => m.tag),
    files,
    bytes,
    ...(directories ? { directories } : {}),
  }
  entries['manifest.json'] = JSON.stringify(manifest, null, 2)
  progress('compressing', bytes)
  return new Bun.Archive(entries, { compress: 'gzip' }).bytes()
}

function tool(name: 'pg_dump' | 'pg_restore'): string {
  const path = Bun.which(name)
  if (!path) {
    throw new BackupError(
      `${name} is not installed (Debian/Ubuntu: apt install postgresql-client; use the major version of your Postgres server or newer)`,
    )
  }
  return path
}

async function runPgDump(databaseUrl: string, onBytes: (n: number) => void): Promise<Uint8Array> {
  const proc = Bun.spawn([tool('pg_dump'), '--format=custom', '--no-owner', '--no-privileges', `--dbname=${databaseUrl}`], {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const chunks: Uint8Array[] = []
  let n = 0
  for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>) {
    chunks.push(chunk)
    n += chunk.byteLength
    onBytes(n)
  }
  const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
  if (code !== 0) throw new BackupError(`pg_dump failed (exit ${code}): ${err.trim()}`)
  return Buffer.concat(chunks)
}

/** Reads and checks a backup archive: its manifest and entries. */
export async function openBackup(bytes: Uint8Array): Promise<{ manifest: BackupManifest; files: Map<string, File> }> {
  let files: Map<string, File>
  try {
    files = await new Bun.Archive(bytes).files()
  } catch (err) {
    throw new BackupError(`not a backup archive (${(err as Error).message})`)
  }
  const m = files.get('manifest.json')
  if (!m) throw new BackupError('not a backup archive: manifest.json is missing')
  let manifest: BackupManifest
  try {
    manifest = JSON.parse(await m.text())
  } catch {
    throw new BackupError('not a backup archive: manifest.json is not JSON')
  }
  if (manifest.format !== BACKUP_FORMAT) throw new BackupError('not a backup archive of this service')
  if (manifest.format_version > BACKUP_FORMAT_VERSION) {
    throw new BackupError(`the backup has format version ${manifest.format_version}; this binary reads up to ${BACKUP_FORMAT_VERSION}`)
  }
  return { manifest, files }
}

/** True when `dir` does not exist or holds nothing. */
export function isEmptyDir(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0
}

/** Writes an embedded-database backup's files into `dataDir` (which the caller checked is empty, or emptied). */
export async function restoreDataDir(
  manifest: BackupManifest,
  files: Map<string, File>,
  dataDir: string,
  progress: Progress = () => {},
): Promise<number> {
  // Never outside the data folder, whatever the archive says.
  const safe = (rel: string) => {
    if (!rel || rel.startsWith('/') || rel.split('/').some((s) => s === '..' || s === '' || s === '.')) throw new BackupError(`unsafe path in the backup: ${rel}`)
    return join(dataDir, rel)
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  for (const d of manifest.directories ?? []) mkdirSync(safe(d), { recursive: true, mode: 0o700 })
  let bytes = 0
  for (const [name, file] of files) {
    if (!name.startsWith('data/')) continue
    const target = safe(name.slice('data/'.length))
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 })
    const data = await file.bytes()
    writeFileSync(target, data, { mode: 0o600 })
    bytes += data.byteLength
    progress('writing the database files', bytes)
  }
  return bytes
}

/** Empties a data folder (restore --force). */
export function emptyDir(dir: string): void {
  for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true })
}

/** Restores a pg_dump archive into the database at `databaseUrl` (`clean`: drop what is there first). */
export async function restorePostgres(dump: File, databaseUrl: string, clean: boolean): Promise<void> {
  const path = join(tmpdir(), `content-service-restore-${process.pid}-${crypto.randomUUID()}.dump`)
  await Bun.write(path, dump)
  chmodSync(path, 0o600)
  try {
    const args = [tool('pg_restore'), '--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', `--dbname=${databaseUrl}`]
    if (clean) args.push('--clean', '--if-exists')
    const proc = Bun.spawn([...args, path], { stdout: 'ignore', stderr: 'pipe' })
    const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
    if (code !== 0) throw new BackupError(`pg_restore failed (exit ${code}): ${err.trim()}`)
  } finally {
    rmSync(path, { force: true })
  }
}

/** The control socket's path for a data folder, or null when the path is too long for a Unix socket (107 bytes). */
export function controlSocketPath(dataDir: string): string | null {
  const path = join(dataDir, CONTROL_SOCKET)
  return Buffer.byteLength(path) <= 100 ? path : null
}

/**
 * The running server's side: answers `GET /backup` on the data folder's Unix socket with a fresh archive. Only for
 * the embedded database on disk (with Postgres any process may connect and pg_dump is the tool).
 */
export function startControlSocket(db: Database, dataDir: string, make: () => Promise<Uint8Array>, logger: Logger): Server<undefined> | null {
  if (db.driver !== 'pglite' || !db.whileQuiescent) return null
  const path = controlSocketPath(dataDir)
  if (!path) {
    logger.warn('backup: the data folder path is too long for the control socket; run `content-service backup` with the server stopped', { data_dir: dataDir })
    return null
  }
  // A socket left by a process that died; this process owns the folder now.
  rmSync(path, { recursive: true, force: true })
  let busy: Promise<unknown> | null = null
  const server = Bun.serve({
    unix: path,
    development: false,
    fetch: async (request) => {
      const url = new URL(request.url)
      if (request.method !== 'GET' || url.pathname !== '/backup') return new Response('not found\n', { status: 404 })
      if (busy) await busy.catch(() => {})
      const job = make()
      busy = job
      try {
        const bytes = await job
        return new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { 'Content-Type': 'application/gzip', 'Content-Length': String(bytes.byteLength) } })
      } catch (err) {
        logger.error('backup: snapshot failed', { error: String(err) })
        return new Response(`${(err as Error).message}\n`, { status: 500 })
      }
    },
  })
  chmodSync(path, 0o600)
  return server as Server<undefined>
}
