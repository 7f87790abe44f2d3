import { acquireDataDirLock } from '../kernel/data-dir'
import { chmodSync, createWriteStream, renameSync, rmSync, statSync } from 'node:fs'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { resolve } from 'node:path'
import postgres from 'postgres'
import type { Config } from '../config'
import {
  BackupError,
  controlSocketPath,
  emptyDir,
  isEmptyDir,
  type Progress,
  readBackupManifest,
  restoreDataDir,
  restorePostgres,
  writeBackupFile,
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

/**
 * Asks the server holding the data folder for a snapshot and streams it into `partial`; false when no server answers
 * on its socket.
 */
async function backupFromRunningServer(dataDir: string, partial: string, progress: Progress): Promise<boolean> {
  const socket = controlSocketPath(dataDir)
  if (!socket) return false
  let res: Response
  try {
    // No timeout: the snapshot's first bytes come once the server has copied the data folder.
    res = await fetch('http://content-service/backup', { unix: socket, timeout: false } as RequestInit)
  } catch (err) {
    // No socket, or a stale one left by a process that is gone: no server holds the folder.
    const code = (err as { code?: string }).code
    if (code === 'ENOENT' || code === 'ECONNREFUSED') return false
    throw new BackupError(`cannot reach the running server on ${socket}: ${(err as Error).message}`)
  }
  if (!res.ok) throw new BackupError(`the running server could not take the snapshot: ${(await res.text()).trim()}`)
  progress('the running server takes the snapshot')
  let n = 0
  const counted = (async function* () {
    for await (const chunk of res.body! as unknown as AsyncIterable<Uint8Array>) {
      n += chunk.byteLength
      progress('receiving the snapshot from the running server', n)
      yield chunk
    }
  })()
  try {
    await pipeline(Readable.from(counted), createWriteStream(partial, { mode: 0o600 }))
  } catch (err) {
    throw new BackupError(`the running server could not finish the snapshot: ${(err as Error).message}`)
  }
  return true
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

/** `content-service backup [--out FILE]`: the archive is written as it is read (memory stays flat). */
export async function runBackup(config: Config, opts: { out?: string; now?: Date } = {}): Promise<BackupResult> {
  const now = opts.now ?? new Date()
  const file = resolve(opts.out ?? defaultBackupName(now))
  const progress = terminalProgress()
  let source: BackupResult['source'] = 'pg_dump'
  let bytes: number
  const s3 = config.s3
  try {
    if (!config.databaseUrl) {
      // Written aside, then renamed: a backup file is whole or absent. 0600: it holds the data folder's secret key.
      const partial = `${file}.partial`
      let fromServer = false
      try {
        fromServer = await backupFromRunningServer(config.dataDir, partial, progress)
        if (fromServer) {
          chmodSync(partial, 0o600)
          renameSync(partial, file)
        }
      } catch (err) {
        rmSync(partial, { force: true })
        throw err
      }
      source = 'running server'
      if (fromServer) bytes = statSync(file).size
      else {
        if (isEmptyDir(config.dataDir)) throw new BackupError(`no database in ${config.dataDir} (DATA_DIR)`)
        source = 'data folder'
        // No server holds the folder: this process opens it (openDatabase takes the data folder's lock, so a server
        // starting meanwhile is refused rather than writing under the copy).
        const db = await openDatabase({ databaseUrl: null, dataDir: config.dataDir })
        try {
          bytes = await writeBackupFile(db, SERVICE_VERSION, file, { clockNow: now, progress, s3 })
        } finally {
          await db.close()
        }
      }
    } else {
      const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
      try {
        bytes = await writeBackupFile(db, SERVICE_VERSION, file, { databaseUrl: config.databaseUrl, clockNow: now, progress, s3 })
      } finally {
        await db.close()
      }
    }
  } finally {
    progress.done()
  }
  return { file, bytes, source }
}

export interface RestoreResult {
  driver: 'pglite' | 'postgres'
  createdAt: string
  bytes: number
  /** With the S3 store: the bucket and prefix the backup's assets are in (not in the file). */
  assetStore?: { bucket: string; prefix: string; endpoint: string | null }
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
    const manifest = await readBackupManifest(opts.file)
    const store = manifest.asset_store
    const assetStore = store ? { bucket: store.bucket, prefix: store.prefix, endpoint: store.endpoint } : undefined
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
      const bytes = await restoreDataDir(manifest, opts.file, dir, progress)
      // Open it once: the database recovers from the snapshot's WAL now, and a broken backup fails here, not at start.
      progress('checking the restored database')
      const db = await openDatabase({ databaseUrl: null, dataDir: dir })
      try {
        await db.query('select count(*) from _migrations')
      } finally {
        await db.close()
      }
      return { driver: 'pglite', createdAt: manifest.created_at, bytes, assetStore }
    }
    if (!config.databaseUrl) throw new BackupError('this backup is a Postgres dump: set DATABASE_URL to the database to restore into')
    const occupied = await postgresHasTables(config.databaseUrl)
    if (occupied && !opts.force) {
      throw new BackupError('the database at DATABASE_URL is not empty: restore into an empty database, or add --force to replace its tables')
    }
    const bytes = await restorePostgres(opts.file, config.databaseUrl, occupied, progress)
    return { driver: 'postgres', createdAt: manifest.created_at, bytes, assetStore }
  } finally {
    progress.done()
  }
}
