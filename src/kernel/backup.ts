import { copyFile, mkdir } from 'node:fs/promises'
import { constants as fsConstants, chmodSync, closeSync, createReadStream, createWriteStream, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, statSync } from 'node:fs'
import { PassThrough, Readable, type Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGunzip, createGzip } from 'node:zlib'
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
const NOT_BACKED_UP = new Set([CONTROL_SOCKET, 'content-service.lock', 'cache', 'postmaster.pid', 'backup-staging'])

/**
 * Where an embedded-database backup copies the data folder's files under the locks (`DATA_DIR/backup-staging/<id>`):
 * on the same file system, so the copy is a reflink where the file system has them (btrfs, XFS) and a kernel copy
 * otherwise; compressed from there once the locks are released, then deleted.
 */
export const BACKUP_STAGING = 'backup-staging'

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
  /** With the S3 store: where the asset bytes are (they are not in the archive; version the bucket). */
  asset_store?: { kind: 's3'; endpoint: string | null; bucket: string; region: string; prefix: string }
}

export class BackupError extends Error {}

export type Progress = (step: string, bytes?: number) => void

/** Every regular file and directory under `dir` (relative paths, with file sizes), but the excluded top-level entries. */
function entriesUnder(dir: string, top = dir, out = { files: [] as { rel: string; size: number }[], directories: [] as string[] }) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (dir === top && NOT_BACKED_UP.has(name)) continue
    const st = lstatSync(path)
    if (st.isDirectory()) {
      out.directories.push(relative(top, path))
      entriesUnder(path, top, out)
    } else if (st.isFile()) out.files.push({ rel: relative(top, path), size: st.size })
  }
  return out
}

// ---- tar (ustar + PAX long names), written and read as streams ----

const BLOCK = 512
const ZERO_BLOCK = new Uint8Array(BLOCK)
/** A Postgres dump goes into the archive in parts of this size: a tar entry's size comes before its bytes. */
const DUMP_PART = 8 * 1024 * 1024

function octal(buf: Buffer, value: number, offset: number, length: number) {
  buf.write(value.toString(8).padStart(length - 1, '0') + '\0', offset, length, 'ascii')
}

function tarHeader(name: string, size: number, type: '0' | '5' | 'x', mode: number, mtime: number): Buffer {
  const h = Buffer.alloc(BLOCK)
  h.write(name, 0, 100, 'utf8')
  octal(h, mode, 100, 8)
  octal(h, 0, 108, 8)
  octal(h, 0, 116, 8)
  octal(h, size, 124, 12)
  octal(h, mtime, 136, 12)
  h.fill(0x20, 148, 156)
  h.write(type, 156, 1, 'ascii')
  h.write('ustar\0', 257, 6, 'ascii')
  h.write('00', 263, 2, 'ascii')
  let sum = 0
  for (const b of h) sum += b
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii')
  return h
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`
  let len = body.length + 1
  while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body)
  return `${len}${body}`
}

/** Bytes streamed between two garbage collections (Collector). */
const COLLECT_EVERY = 32 * 1024 * 1024

/**
 * Runs a full garbage collection every COLLECT_EVERY bytes streamed. Every piece the compressor (or decompressor)
 * answers is a new buffer; the collector lets them pile up before it runs, by an amount that grows with the process's
 * heap: measured on a 512 MB embedded database, compressing its copy grew the process by up to 144 MB of such
 * garbage (saw-tooth), by 34 MB with a collection every 32 MiB; on a 2 GB one, by 517 MB
 * once (docs/performance.md). A collection takes tens of milliseconds.
 */
class Collector {
  private since = 0
  add(n: number) {
    this.since += n
    if (this.since < COLLECT_EVERY) return
    this.since = 0
    Bun.gc(true)
  }
}

/** Writes a gzip-compressed tar stream into `out`, waiting whenever it is full: memory stays flat. */
class TarWriter {
  private gzip = createGzip({ level: 1 })
  private collector = new Collector()
  private done: Promise<void>
  constructor(out: Writable) {
    this.done = pipeline(this.gzip, out)
    // pipeline's promise rejects with the sink's error; keep it from being unhandled until finish() awaits it.
    this.done.catch(() => {})
  }
  /**
   * Hands `chunk` to the compressor and waits until it has been consumed: the caller may then reuse its buffer (the
   * copy loops read into one buffer, so garbage does not pile up between collections), and memory stays flat.
   */
  private async push(chunk: Uint8Array) {
    if (this.gzip.destroyed) throw new BackupError('the backup stream was closed')
    this.collector.add(chunk.byteLength)
    await new Promise<void>((resolve, reject) => {
      const onClose = () => reject(new BackupError('the backup stream was closed'))
      this.gzip.once('close', onClose)
      this.gzip.write(chunk, (err) => {
        this.gzip.off('close', onClose)
        if (err) reject(err)
        else resolve()
      })
    })
  }
  private async header(name: string, size: number, type: '0' | '5', mode: number) {
    const mtime = Math.floor(Date.now() / 1000)
    if (Buffer.byteLength(name) > 99) {
      const pax = Buffer.from(paxRecord('path', name))
      await this.push(tarHeader('PaxHeader', pax.byteLength, 'x', 0o644, mtime))
      await this.push(pax)
      await this.pad(pax.byteLength)
      name = name.slice(0, 99)
    }
    await this.push(tarHeader(name, size, type, mode, mtime))
  }
  private async pad(size: number) {
    const rest = size % BLOCK
    if (rest) await this.push(ZERO_BLOCK.subarray(0, BLOCK - rest))
  }
  async directory(name: string) {
    await this.header(`${name}/`, 0, '5', 0o700)
  }
  async bytes(name: string, data: Uint8Array) {
    await this.header(name, data.byteLength, '0', 0o600)
    await this.push(data)
    await this.pad(data.byteLength)
  }
  /** A file of `size` bytes read in 1 MiB pieces; it must not change meanwhile (the caller holds the locks). */
  async file(name: string, path: string, size: number, onBytes: (n: number) => void) {
    await this.header(name, size, '0', 0o600)
    let n = 0
    const fd = openSync(path, 'r')
    try {
      const buf = Buffer.allocUnsafe(1024 * 1024)
      while (n < size) {
        const got = readSync(fd, buf, 0, Math.min(buf.byteLength, size - n), null)
        if (got === 0) throw new BackupError(`${name} shrank while it was copied`)
        // push() returns once the compressor has consumed the piece: the buffer is reused.
        await this.push(buf.subarray(0, got))
        n += got
        onBytes(got)
      }
    } finally {
      closeSync(fd)
    }
    await this.pad(size)
  }
  async finish() {
    await this.push(ZERO_BLOCK)
    await this.push(ZERO_BLOCK)
    this.gzip.end()
    await this.done
  }
  abort(err: Error) {
    this.gzip.destroy(err)
  }
}

/** Reads exact byte counts from a stream of chunks. */
class ByteReader {
  private buf: Buffer = Buffer.alloc(0)
  private it: AsyncIterator<Uint8Array>
  private ended = false
  private collector = new Collector()
  constructor(input: AsyncIterable<Uint8Array>) {
    this.it = input[Symbol.asyncIterator]()
  }
  private async fill(): Promise<boolean> {
    if (this.ended) return false
    const { value, done } = await this.it.next()
    if (done) {
      this.ended = true
      return false
    }
    this.buf = this.buf.byteLength ? Buffer.concat([this.buf, value]) : Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    this.collector.add(value.byteLength)
    return true
  }
  /** `n` bytes, or null at the end of the stream (a truncated stream is an error). */
  async exactly(n: number): Promise<Buffer | null> {
    while (this.buf.byteLength < n) {
      if (!(await this.fill())) {
        if (this.buf.byteLength === 0) return null
        throw new BackupError('the backup archive is truncated')
      }
    }
    const out = this.buf.subarray(0, n)
    this.buf = this.buf.subarray(n)
    return out
  }
  /** `n` bytes as they arrive, in pieces. */
  async *take(n: number): AsyncGenerator<Buffer> {
    while (n > 0) {
      if (this.buf.byteLength === 0 && !(await this.fill())) throw new BackupError('the backup archive is truncated')
      const piece = this.buf.subarray(0, Math.min(n, this.buf.byteLength))
      this.buf = this.buf.subarray(piece.byteLength)
      n -= piece.byteLength
      yield piece
    }
  }
  async skip(n: number) {
    for await (const _ of this.take(n)) {
    }
  }
  async close() {
    await this.it.return?.()
  }
}

function readOctal(h: Buffer, offset: number, length: number): number {
  if (h[offset] & 0x80) {
    let v = 0
    for (let i = offset + 1; i < offset + length; i++) v = v * 256 + h[i]
    return v
  }
  const text = h.toString('ascii', offset, offset + length).replace(/\0.*$/s, '').trim()
  return text ? Number.parseInt(text, 8) : 0
}

function cstring(h: Buffer, offset: number, length: number): string {
  const end = h.indexOf(0, offset)
  return h.toString('utf8', offset, end === -1 || end > offset + length ? offset + length : end)
}

export interface TarEntry {
  name: string
  type: string
  size: number
  /** The entry's bytes; whatever the consumer leaves unread is skipped. */
  body: AsyncIterable<Buffer>
}

/** The entries of a tar stream, one after the other, never more than a piece of one in memory. */
async function* tarEntries(input: AsyncIterable<Uint8Array>): AsyncGenerator<TarEntry> {
  const r = new ByteReader(input)
  let longName: string | null = null
  let paxSize: number | null = null
  try {
    for (;;) {
      const h = await r.exactly(BLOCK)
      if (!h || h.every((b) => b === 0)) return
      let sum = 0
      for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]
      if (sum !== readOctal(h, 148, 8)) throw new BackupError('not a backup archive (bad tar header)')
      const type = String.fromCharCode(h[156] || 0x30)
      let size = readOctal(h, 124, 12)
      const padding = (BLOCK - (size % BLOCK)) % BLOCK
      if (type === 'x' || type === 'g' || type === 'L') {
        if (size > 1024 * 1024) throw new BackupError('not a backup archive (oversized tar header)')
        const data = (await r.exactly(size + padding))!.subarray(0, size)
        if (type === 'L') longName = cstring(data, 0, data.byteLength)
        if (type === 'x') {
          let at = 0
          while (at < data.byteLength) {
            const sp = data.indexOf(0x20, at)
            const len = Number.parseInt(data.toString('ascii', at, sp), 10)
            if (sp === -1 || !(len > 0)) break
            const kv = data.toString('utf8', sp + 1, at + len - 1)
            const eq = kv.indexOf('=')
            if (kv.slice(0, eq) === 'path') longName = kv.slice(eq + 1)
            if (kv.slice(0, eq) === 'size') paxSize = Number(kv.slice(eq + 1))
            at += len
          }
        }
        continue
      }
      let name = cstring(h, 0, 100)
      const prefix = h.toString('ascii', 257, 262) === 'ustar' ? cstring(h, 345, 155) : ''
      if (prefix) name = `${prefix}/${name}`
      if (longName !== null) name = longName
      if (paxSize !== null) size = paxSize
      longName = null
      paxSize = null
      const pad = (BLOCK - (size % BLOCK)) % BLOCK
      let left = size
      const body = (async function* () {
        for await (const piece of r.take(left)) {
          left -= piece.byteLength
          yield piece
        }
      })()
      yield { name: name.replace(/^\.\//, ''), type, size, body }
      if (left > 0) await r.skip(left)
      if (pad) await r.skip(pad)
    }
  } finally {
    await r.close()
  }
}

/** The decompressed tar entries of a backup file. */
function archiveEntries(file: string): AsyncGenerator<TarEntry> {
  const source = createReadStream(file, { highWaterMark: 1024 * 1024 })
  const gunzip = createGunzip()
  source.on('error', (err) => gunzip.destroy(err))
  source.pipe(gunzip)
  const entries = tarEntries(gunzip as AsyncIterable<Uint8Array>)
  const close = () => {
    source.destroy()
    gunzip.destroy()
  }
  return (async function* () {
    try {
      yield* entries
    } catch (err) {
      if (err instanceof BackupError) throw err
      throw new BackupError(`not a backup archive (${(err as Error).message})`)
    } finally {
      close()
    }
  })()
}

async function collect(body: AsyncIterable<Buffer>, limit: number): Promise<Buffer> {
  const parts: Buffer[] = []
  let n = 0
  for await (const p of body) {
    n += p.byteLength
    if (n > limit) throw new BackupError('not a backup archive: manifest.json is too large')
    parts.push(p)
  }
  return Buffer.concat(parts)
}

export interface BackupOptions {
  databaseUrl?: string | null
  clockNow: Date
  progress?: Progress
  /** The S3 bucket holding asset bytes (S3_*): recorded in the manifest, its objects are not copied. */
  s3?: { endpoint: string | null; bucket: string; region: string; prefix: string } | null
  /**
   * Embedded database: called once the snapshot has been copied and the locks released, before compression starts
   * (statements run again meanwhile). Tests use it to observe the phases.
   */
  onSnapshotTaken?: () => void | Promise<void>
}

/**
 * Writes the backup archive of an open database into `out` (gzip-compressed tar) as it reads: the embedded
 * database's files, read under its locks, or pg_dump's output for Postgres. Nothing larger than a 1 MiB piece (8 MiB
 * for a dump part) is held in memory. `out` is ended when the archive is whole, destroyed on failure.
 */
export async function writeBackup(db: Database, serviceVersion: string, out: Writable, opts: BackupOptions): Promise<{ bytes: number; files: number }> {
  const progress = opts.progress ?? (() => {})
  const tar = new TarWriter(out)
  const base = {
    format: BACKUP_FORMAT as typeof BACKUP_FORMAT,
    format_version: BACKUP_FORMAT_VERSION,
    driver: db.driver,
    created_at: opts.clockNow.toISOString(),
    service_version: serviceVersion,
    migrations: migrations.map((m) => m.tag),
    ...(opts.s3 ? { asset_store: { kind: 's3' as const, endpoint: opts.s3.endpoint, bucket: opts.s3.bucket, region: opts.s3.region, prefix: opts.s3.prefix } } : {}),
  }
  let files = 0
  let bytes = 0
  try {
    if (db.driver === 'pglite') {
      if (!db.whileQuiescent) throw new BackupError('an in-memory database cannot be backed up')
      progress('checkpoint and copy of the database files')
      // Under the locks (no statement runs meanwhile) the files are copied as they are, uncompressed: one consistent
      // state, taken at the speed of the disk. Compression (the slow part) reads that copy once the locks are
      // released, so requests wait for the copy only, never for the compressor or for a slow reader of the archive.
      let staging: string | null = null
      try {
        const found = await db.whileQuiescent(async (dataDir) => {
          staging = join(dataDir, BACKUP_STAGING, `${process.pid}-${crypto.randomUUID()}`)
          const listing = entriesUnder(dataDir)
          await mkdir(staging, { recursive: true, mode: 0o700 })
          for (const d of listing.directories) await mkdir(join(staging, d), { recursive: true, mode: 0o700 })
          let copied = 0
          for (const f of listing.files) {
            // A reflink where the file system can, else copy_file_range: the bytes never pass through this process.
            await copyFile(join(dataDir, f.rel), join(staging, f.rel), fsConstants.COPYFILE_FICLONE)
            copied += f.size
            progress('copying the database files', copied)
          }
          return listing
        })
        const from = staging as unknown as string
        await opts.onSnapshotTaken?.()
        progress('compressing')
        // The sizes are the copy's (taken under the locks): the manifest comes first, then folders and files, streamed.
        const sized = found.files.map((f) => ({ rel: f.rel, size: statSync(join(from, f.rel)).size }))
        files = sized.length
        const total = sized.reduce((a, f) => a + f.size, 0)
        const manifest: BackupManifest = { ...base, files, bytes: total, directories: found.directories }
        await tar.bytes('manifest.json', Buffer.from(JSON.stringify(manifest, null, 2)))
        for (const d of found.directories) await tar.directory(`data/${d}`)
        for (const f of sized) {
          await tar.file(`data/${f.rel}`, join(from, f.rel), f.size, (n) => {
            bytes += n
            progress('compressing', bytes)
          })
        }
      } finally {
        if (staging) rmSync(staging, { recursive: true, force: true })
      }
    } else {
      if (!opts.databaseUrl) throw new BackupError('a Postgres backup needs DATABASE_URL')
      progress('pg_dump')
      // The dump's size is known only at its end, and a tar entry's size comes first: it goes in numbered parts; the
      // manifest comes last.
      let part = 0
      await runPgDump(opts.databaseUrl, async (chunk) => {
        await tar.bytes(`postgres.dump.${String(part++).padStart(6, '0')}`, chunk)
        bytes += chunk.byteLength
        progress('pg_dump', bytes)
      })
      files = part
      const manifest: BackupManifest = { ...base, files, bytes }
      await tar.bytes('manifest.json', Buffer.from(JSON.stringify(manifest, null, 2)))
    }
    await tar.finish()
  } catch (err) {
    tar.abort(err as Error)
    throw err
  }
  return { bytes, files }
}

/**
 * Writes a backup into `file`: aside (`.partial`, mode 0600: it holds the data folder's secret key), then renamed,
 * so the file is whole or absent. Returns the file's size.
 */
export async function writeBackupFile(db: Database, serviceVersion: string, file: string, opts: BackupOptions): Promise<number> {
  const partial = `${file}.partial`
  try {
    const out = createWriteStream(partial, { mode: 0o600 })
    await writeBackup(db, serviceVersion, out, opts)
    chmodSync(partial, 0o600)
    renameSync(partial, file)
  } catch (err) {
    rmSync(partial, { force: true })
    throw err
  }
  return statSync(file).size
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

/** Runs pg_dump, handing its output on in parts of DUMP_PART bytes (the last one shorter); waits for each. */
async function runPgDump(databaseUrl: string, onPart: (chunk: Uint8Array) => Promise<void>): Promise<void> {
  const proc = Bun.spawn([tool('pg_dump'), '--format=custom', '--no-owner', '--no-privileges', `--dbname=${databaseUrl}`], {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const errText = new Response(proc.stderr).text()
  try {
    // One part buffer, reused: onPart returns once the part has been consumed.
    const part = Buffer.allocUnsafe(DUMP_PART)
    let n = 0
    for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>) {
      let at = 0
      while (at < chunk.byteLength) {
        const take = Math.min(DUMP_PART - n, chunk.byteLength - at)
        part.set(chunk.subarray(at, at + take), n)
        n += take
        at += take
        if (n === DUMP_PART) {
          await onPart(part)
          n = 0
        }
      }
    }
    if (n) await onPart(part.subarray(0, n))
  } catch (err) {
    proc.kill()
    throw err
  }
  const [code, err] = await Promise.all([proc.exited, errText])
  if (code !== 0) throw new BackupError(`pg_dump failed (exit ${code}): ${err.trim()}`)
}

/** Reads and checks a backup file's manifest (it may come first or last: the file is read up to it, as a stream). */
export async function readBackupManifest(file: string): Promise<BackupManifest> {
  let manifest: BackupManifest | null = null
  for await (const e of archiveEntries(file)) {
    if (e.name !== 'manifest.json') continue
    const text = (await collect(e.body, 1024 * 1024 * 16)).toString('utf8')
    try {
      manifest = JSON.parse(text)
    } catch {
      throw new BackupError('not a backup archive: manifest.json is not JSON')
    }
    break
  }
  if (!manifest) throw new BackupError('not a backup archive: manifest.json is missing')
  if (manifest.format !== BACKUP_FORMAT) throw new BackupError('not a backup archive of this service')
  if (manifest.format_version > BACKUP_FORMAT_VERSION) {
    throw new BackupError(`the backup has format version ${manifest.format_version}; this binary reads up to ${BACKUP_FORMAT_VERSION}`)
  }
  return manifest
}

/** True when `dir` does not exist or holds nothing. */
export function isEmptyDir(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0
}

/** Writes an embedded-database backup's files into `dataDir` (which the caller checked is empty, or emptied), streamed. */
export async function restoreDataDir(manifest: BackupManifest, file: string, dataDir: string, progress: Progress = () => {}): Promise<number> {
  // Never outside the data folder, whatever the archive says.
  const safe = (rel: string) => {
    if (!rel || rel.startsWith('/') || rel.split('/').some((s) => s === '..' || s === '' || s === '.')) throw new BackupError(`unsafe path in the backup: ${rel}`)
    return join(dataDir, rel)
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  for (const d of manifest.directories ?? []) mkdirSync(safe(d), { recursive: true, mode: 0o700 })
  let bytes = 0
  for await (const e of archiveEntries(file)) {
    if (!e.name.startsWith('data/')) continue
    const rel = e.name.slice('data/'.length).replace(/\/$/, '')
    if (e.type === '5') {
      mkdirSync(safe(rel), { recursive: true, mode: 0o700 })
      continue
    }
    if (e.type !== '0') continue
    const target = safe(rel)
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 })
    const counted = (async function* () {
      for await (const piece of e.body) {
        bytes += piece.byteLength
        progress('writing the database files', bytes)
        yield piece
      }
    })()
    await pipeline(Readable.from(counted), createWriteStream(target, { mode: 0o600 }))
  }
  return bytes
}

/** Empties a data folder (restore --force). */
export function emptyDir(dir: string): void {
  for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true })
}

/**
 * Restores a backup's pg_dump archive into the database at `databaseUrl` (`clean`: drop what is there first). The dump
 * (one `postgres.dump` entry, or numbered parts) is streamed to a temporary file (pg_restore needs to seek in it).
 */
export async function restorePostgres(file: string, databaseUrl: string, clean: boolean, progress: Progress = () => {}): Promise<number> {
  const pg = tool('pg_restore')
  const path = join(tmpdir(), `content-service-restore-${process.pid}-${crypto.randomUUID()}.dump`)
  let bytes = 0
  try {
    const out = createWriteStream(path, { mode: 0o600 })
    const parts = (async function* () {
      let next = 0
      for await (const e of archiveEntries(file)) {
        const m = /^postgres\.dump(?:\.(\d{6}))?$/.exec(e.name)
        if (!m) continue
        if (m[1] !== undefined && Number(m[1]) !== next) throw new BackupError(`the backup's dump parts are out of order (${e.name})`)
        next++
        for await (const piece of e.body) {
          bytes += piece.byteLength
          progress('reading the dump', bytes)
          yield piece
        }
      }
    })()
    await pipeline(Readable.from(parts), out)
    if (bytes === 0) throw new BackupError('the backup has no postgres.dump')
    const args = [pg, '--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', `--dbname=${databaseUrl}`]
    if (clean) args.push('--clean', '--if-exists')
    progress('pg_restore', bytes)
    const proc = Bun.spawn([...args, path], { stdout: 'ignore', stderr: 'pipe' })
    const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
    if (code !== 0) throw new BackupError(`pg_restore failed (exit ${code}): ${err.trim()}`)
  } finally {
    rmSync(path, { force: true })
  }
  return bytes
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
export function startControlSocket(db: Database, dataDir: string, make: (out: Writable) => Promise<unknown>, logger: Logger): Server<undefined> | null {
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
    // The archive's first bytes come once the data folder has been copied (tens of seconds for a large database):
    // no idle timeout may close the connection meanwhile. Bun applies idleTimeout to Unix sockets too (checked: a
    // response that starts after 14 s is cut at 10 s without it), though its types leave it out for them;
    // server.timeout(request, 0) does not help there.
    ...({ idleTimeout: 0 } as object),
    fetch: async (request) => {
      const url = new URL(request.url)
      if (request.method !== 'GET' || url.pathname !== '/backup') return new Response('not found\n', { status: 404 })
      while (busy) await busy.catch(() => {})
      // The archive streams to the client as it is read (the client's pace holds it back: memory stays flat). A
      // failure midway aborts the stream, so the client sees a broken transfer, never a short archive.
      const pass = new PassThrough({ highWaterMark: 1024 * 1024 })
      const job = make(pass).catch((err) => {
        logger.error('backup: snapshot failed', { error: String(err) })
        pass.destroy(err as Error)
      })
      busy = job.finally(() => {
        busy = null
      })
      return new Response(Readable.toWeb(pass) as unknown as ReadableStream, { headers: { 'Content-Type': 'application/gzip' } })
    },
  })
  chmodSync(path, 0o600)
  return server as Server<undefined>
}
