import { chmodSync, closeSync, ftruncateSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { join, resolve } from 'node:path'

/**
 * The data folder (DATA_DIR) belongs to one process at a time: the embedded database, the secret key, mail files and
 * the image cache live there. Two processes writing one PGlite folder corrupt it, so every command that opens it
 * takes an exclusive flock(2) on `<DATA_DIR>/content-service.lock` for its whole life. The kernel drops the lock when
 * the process ends, however it ends (a `kill -9` never leaves a stale lock behind); the file keeps the holder's PID
 * only for the message.
 */

/** A refusal at start the operator must act on; the CLI prints the message and exits with `exitCode`. */
export class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 2,
  ) {
    super(message)
  }
}

export const LOCK_FILE = 'content-service.lock'

export interface DataDirLock {
  path: string
  /** False where flock(2) could not be loaded (not Linux or macOS): the folder is then not protected. */
  enforced: boolean
  release(): void
}

const LOCK_EX = 2
const LOCK_NB = 4
const LOCK_UN = 8

type Flock = (fd: number, op: number) => number
let flockFn: Flock | null | undefined

/** libc's flock through bun:ffi (no native addon: the compiled executable stays one file). */
function flock(): Flock | null {
  if (flockFn !== undefined) return flockFn
  flockFn = null
  try {
    const { dlopen, FFIType } = require('bun:ffi') as typeof import('bun:ffi')
    const names = process.platform === 'darwin' ? ['libc.dylib', '/usr/lib/libSystem.B.dylib'] : ['libc.so.6', 'libc.so', 'libc.musl-x86_64.so.1', 'libc.musl-aarch64.so.1']
    for (const name of names) {
      try {
        const lib = dlopen(name, { flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } })
        flockFn = (fd, op) => lib.symbols.flock(fd, op)
        break
      } catch {}
    }
  } catch {}
  return flockFn
}

/** Folders 0700 and files 0600 from here on: what the process creates is readable by its own user only. */
export function restrictNewFiles(): void {
  process.umask(0o077)
}

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException
  return e.code ? `${e.code}: ${e.message}` : String(err)
}

function notWritable(dir: string, err: unknown): StartupError {
  return new StartupError(
    `the data folder ${resolve(dir)} (DATA_DIR) cannot be written by this process (${describe(err)}). ` +
      `Create it and give it to the user the service runs as (e.g. \`mkdir -p ${dir} && chown "$(id -un)" ${dir}\`), ` +
      'or point DATA_DIR at a folder that user can write.',
  )
}

/**
 * Creates the data folder (0700) if missing, proves it is writable, and tightens what is already in it (folders 0700,
 * files 0600: earlier versions left them group- and world-readable). Throws one StartupError naming the folder.
 */
export function prepareDataDir(dir: string): void {
  restrictNewFiles()
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const probe = join(dir, `.write-test-${process.pid}`)
    writeFileSync(probe, '')
    rmSync(probe, { force: true })
  } catch (err) {
    throw notWritable(dir, err)
  }
  tightenModes(dir)
}

/**
 * Folders 0700, files 0600 under `dir`. PGlite sets the modes of the files it creates itself (0666, whatever the
 * umask), so the database calls this again after creating its files on a first start.
 */
export function tightenModes(dir: string): void {
  const walk = (path: string, isDir: boolean) => {
    const want = isDir ? 0o700 : 0o600
    try {
      const mode = lstatSync(path).mode & 0o777
      if (mode !== want) chmodSync(path, want)
    } catch {
      return // gone meanwhile, or not ours: the write probe already proved the folder itself is usable
    }
    if (!isDir) return
    let entries: import('node:fs').Dirent[]
    try {
      entries = readdirSync(path, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) {
      if (e.isSymbolicLink()) continue
      walk(join(path, e.name), e.isDirectory())
    }
  }
  walk(dir, true)
}

/**
 * Takes the data folder for this process, or throws a StartupError (exit code 2) naming the PID that holds it.
 * Call after prepareDataDir. The lock lasts until release() or the end of the process.
 */
export function acquireDataDirLock(dir: string): DataDirLock {
  const path = join(dir, LOCK_FILE)
  let fd: number
  try {
    fd = openSync(path, 'a+', 0o600)
  } catch (err) {
    throw notWritable(dir, err)
  }
  const lock = flock()
  if (!lock) {
    return { path, enforced: false, release: () => closeSync(fd) }
  }
  if (lock(fd, LOCK_EX | LOCK_NB) !== 0) {
    closeSync(fd)
    let holder = ''
    try {
      holder = readFileSync(path, 'utf8').trim()
    } catch {}
    const who = /^\d+$/.test(holder) ? `process ${holder}` : 'another process'
    throw new StartupError(
      `the data folder ${resolve(dir)} (DATA_DIR) is in use by ${who}: one data folder belongs to one running ` +
        'content-service (serve, migrate, ...) at a time. Stop that process first, or give this one its own DATA_DIR.',
    )
  }
  ftruncateSync(fd, 0)
  writeSync(fd, `${process.pid}\n`)
  let released = false
  return {
    path,
    enforced: true,
    release() {
      if (released) return
      released = true
      try {
        ftruncateSync(fd, 0)
      } catch {}
      lock(fd, LOCK_UN)
      closeSync(fd)
    },
  }
}
