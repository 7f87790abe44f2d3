import { acquireDataDirLock } from '../kernel/data-dir'
import { chmodSync, renameSync, rmSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import postgres from 'postgres'
import type { Config } from '../config'
import {
  BackupError,
  controlSocketPath,
  createBackup,
  emptyDir,
  isEmptyDir,
  openBackup,
  type Progress,
  restoreDataDir,
  restorePostgres,
} from '../kernel/backup'
import { openDatabase } from '../kernel/db'
import { SERVICE_VERSION } from '../modules/system/service'

/** Progress on a terminal (one line rewritten in place); nothing when stderr is a file or a pipe. */
export function terminalProgress(stream: NodeJS.WriteStream = process.stderr): Progress & { done(): void } {
  const tty = !!stream.isTTY
  let last = ''
  let shown = 0
  const fn = ((step: string, bytes?: number) => {
    if (!tty) return
    const line = bytes === undefined ? step : `${step}: ${formatBytes(bytes)}`
    // Redraw at most every 64 KiB of progress on one step, so a copy of many small files does not flood the terminal.
    if (line === last || (bytes !== undefined && step === last.split(':')[0] && bytes - shown < 65_536)) return
    shown = bytes ?? 0
    last = line
    stream.write(`\r\x1b[2K${line}`)
  }) as Progress & { done(): void }
  fn.done = () => {
    if (tty && last) stream.write('\r\x1b[2K')
  }
  return fn
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`
  return `${(n / 1024 ** 3).toFixed(2)} GiB`
}

export function defaultBackupName(now: Date): string {
  return `content-service-backup-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}.tar.gz`
}

/** Asks the server holding the data folder for a snapshot; null when no server answers on its socket. */
async function backupFromRunningServer(dataDir: string, progress: Progress): Promise<Uint8Array | null> {
  const socket = controlSocketPath(dataDir)
  if (!socket) return null
  let res: Response
  try {
    res = await fetch('http://content-service/backup', { unix: socket } as RequestInit)
  } catch (err) {
    // No socket, or a stale one left by a process that is gone: no server holds the folder.
    const code = (err as { code?: string }).code
    if (code === 'ENOENT' || code === 'ECONNREFUSED') return null
    throw new BackupError(`cannot reach the running server on ${socket}: ${(err as Error).message}`)
  }
  if (!res.ok) throw new BackupError(`the running server could not take the snapshot: ${(await res.text()).trim()}`)
  progress('the running server takes the snapshot')
  const chunks: Uint8Array[] = []
  let n = 0
  for await (const chunk of res.body! as unknown as AsyncIterable<Uint8Array>) {
    chunks.push(chunk)
    n += chunk.byteLength
    progress('receiving the snapshot from the running server', n)
  }
  return Buffer.concat(chunks)
}

/** True when a server answers on the data folder's control socket. */
async function serverRunning(dataDir: string): Promise<boolean> {
  const socket = controlSocketPath(dataDir)
  if (!socket) return false
  try {
    await fetch('http://content-service/', { unix: socket } as RequestInit)
    return true
  } catch {
    return false
  }
}

export interface BackupResult {
  file: string
  bytes: number
  /** Where the snapshot came from. */
  source: 'running server' | 'data folder' | 'pg_dump'
}

/** `content-service backup [--out FILE]`. */
export async function runBackup(config: Config, opts: { out?: string; now?: Date } = {}): Promise<BackupResult> {
  const now = opts.now ?? new Date()
  const file = resolve(opts.out ?? defaultBackupName(now))
  const progress = terminalProgress()
  let bytes: Uint8Array | null = null
  let source: BackupResult['source'] = 'pg_dump'
  try {
    if (!config.databaseUrl) {
      bytes = await backupFromRunningServer(config.dataDir, progress)
      source = 'running server'
      if (!bytes) {
        if (isEmptyDir(config.dataDir)) throw new BackupError(`no database in ${config.dataDir} (DATA_DIR)`)
        source = 'data folder'
        // No server holds the folder: this process opens it (openDatabase takes the data folder's lock, so a server
        // starting meanwhile is refused rather than writing under the copy).
        const db = await openDatabase({ databaseUrl: null, dataDir: config.dataDir })
        try {
          bytes = await createBackup(db, SERVICE_VERSION, { clockNow: now, progress })
        } finally {
          await db.close()
        }
      }
    } else {
      const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
      try {
        bytes = await createBackup(db, SERVICE_VERSION, { databaseUrl: config.databaseUrl, clockNow: now, progress })
      } finally {
        await db.close()
      }
    }
    progress('writing the file')
    // Written aside, then renamed: a backup file is whole or absent. 0600: it holds the data folder's secret key.
    const partial = `${file}.partial`
    try {
      await Bun.write(partial, bytes)
      chmodSync(partial, 0o600)
      renameSync(partial, file)
    } catch (err) {
      rmSync(partial, { force: true })
      throw err
    }
  } finally {
    progress.done()
  }
  return { file, bytes: bytes.byteLength, source }
}

export interface RestoreResult {
  driver: 'pglite' | 'postgres'
  createdAt: string
  bytes: number
}

async function postgresHasTables(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from information_schema.tables where table_schema = 'public'`
    return row.n > 0
  } finally {
    await sql.end({ timeout: 5 })
  }
}

/** `content-service restore FILE [--force]`. */
export async function runRestore(config: Config, opts: { file: string; force?: boolean }): Promise<RestoreResult> {
  let size: number
  try {
    size = statSync(opts.file).size
  } catch {
    throw new BackupError(`cannot read ${opts.file}`)
  }
  const progress = terminalProgress()
  try {
    progress('reading the backup', size)
    const { manifest, files } = await openBackup(await Bun.file(opts.file).bytes())
    if (manifest.driver === 'pglite') {
      if (config.databaseUrl) {
        throw new BackupError('this backup is of the embedded database: unset DATABASE_URL and set DATA_DIR to the folder to restore into')
      }
      const dir = config.dataDir
      if (!isEmptyDir(dir)) {
        if (!opts.force) throw new BackupError(`${dir} (DATA_DIR) is not empty: restore into an empty folder, or add --force to replace what it holds`)
        if (await serverRunning(dir)) throw new BackupError(`a server is running on ${dir}: stop it first`)
        // Hold the data folder's lock while emptying it: a server starting meanwhile is refused, not half-deleted.
        const lock = acquireDataDirLock(dir)
        try {
          emptyDir(dir)
        } finally {
          lock.release()
        }
      }
      const bytes = await restoreDataDir(manifest, files, dir, progress)
      // Open it once: the database recovers from the snapshot's WAL now, and a broken backup fails here, not at start.
      progress('checking the restored database')
      const db = await openDatabase({ databaseUrl: null, dataDir: dir })
      try {
        await db.query('select count(*) from _migrations')
      } finally {
        await db.close()
      }
      return { driver: 'pglite', createdAt: manifest.created_at, bytes }
    }
    if (!config.databaseUrl) throw new BackupError('this backup is a Postgres dump: set DATABASE_URL to the database to restore into')
    const dump = files.get('postgres.dump')
    if (!dump) throw new BackupError('the backup has no postgres.dump')
    const occupied = await postgresHasTables(config.databaseUrl)
    if (occupied && !opts.force) {
      throw new BackupError('the database at DATABASE_URL is not empty: restore into an empty database, or add --force to replace its tables')
    }
    progress('pg_restore', dump.size)
    await restorePostgres(dump, config.databaseUrl, occupied)
    return { driver: 'postgres', createdAt: manifest.created_at, bytes: dump.size }
  } finally {
    progress.done()
  }
}
