// Operating it: one owner per data folder and per port, durable and private data files, version refusal, clear
// database failures, a talkative first start and JSON-only logs. Real processes of bin/content-service.ts.
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, cpSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pkg from '../package.json'
import { openDatabase } from '../src/kernel/db'
import { migrate } from '../src/kernel/migrate'
import { freshDatabase } from './helpers/db'
import { SERVICE_COMMAND } from './helpers/command'

setDefaultTimeout(60_000)

const BASE_ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_FORMAT: 'json', LOG_LEVEL: 'info' }
const SLOW = 240_000 // a first start creates the embedded database: tens of seconds on a busy machine

const root = mkdtempSync(join(tmpdir(), 'cs-ops-'))
const started: Bun.Subprocess[] = []
afterAll(() => {
  for (const p of started) if (p.exitCode === null) p.kill(9)
  rmSync(root, { recursive: true, force: true })
})

function run(args: string[], env: Record<string, string>) {
  const r = Bun.spawnSync([...SERVICE_COMMAND, ...args], { env: { ...BASE_ENV, ...env } })
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() }
}

async function runAsync(args: string[], env: Record<string, string>) {
  const p = Bun.spawn([...SERVICE_COMMAND, ...args], { env: { ...BASE_ENV, ...env }, stdout: 'pipe', stderr: 'pipe' })
  started.push(p)
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { code, out, err }
}

interface Serving {
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  port: number
  /** Everything written so far (stdout then stderr). */
  output(): string
  /** Resolves with the exit code and all output once the process ended. */
  ended: Promise<{ code: number; out: string; err: string }>
}

/** Starts `serve`; resolves once it listens (or rejects with its output if it exits first). */
async function serve(env: Record<string, string>): Promise<Serving> {
  const proc = Bun.spawn([...SERVICE_COMMAND, 'serve', '--host', '127.0.0.1'], {
    env: { ...BASE_ENV, PORT: '0', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  started.push(proc)
  let out = ''
  let err = ''
  const pump = async (stream: ReadableStream<Uint8Array>, add: (s: string) => void) => {
    const dec = new TextDecoder()
    const reader = stream.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      add(dec.decode(value, { stream: true }))
    }
  }
  const pumped = Promise.all([pump(proc.stdout, (s) => (out += s)), pump(proc.stderr, (s) => (err += s))])
  const ended = proc.exited.then(async (code) => {
    await pumped
    return { code, out, err }
  })
  const listening = await new Promise<number | null>((resolve) => {
    const timer = setInterval(() => {
      const m = out.match(/listening on http:\/\/[^:]+:(\d+)/)
      if (m) {
        clearInterval(timer)
        resolve(Number(m[1]))
      }
    }, 50)
    void ended.then(() => {
      clearInterval(timer)
      resolve(null)
    })
  })
  if (listening === null) {
    const r = await ended
    throw new Error(`serve exited with ${r.code}: ${r.out}${r.err}`)
  }
  return { proc, port: listening, output: () => out + err, ended }
}

const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>
      } catch {
        throw new Error(`not a JSON line: ${line}`)
      }
    })

describe('one owner per data folder and per port (embedded database)', () => {
  const data = join(root, 'data')
  const copy = join(root, 'copy')

  test('a first start says what it creates, names each migration, sums up, and leaves private files', () => {
    // Folders that exist already with loose modes are tightened.
    const r = run(['migrate'], { DATA_DIR: data })
    expect(r.code).toBe(0)
    const lines = jsonLines(r.out)
    const msgs = lines.map((l) => String(l.msg))
    const creating = msgs.findIndex((m) => m.startsWith(`creating the embedded database in ${data} — first start only`))
    const first = msgs.findIndex((m) => m === 'applying migration 0000_init')
    expect(creating).toBeGreaterThanOrEqual(0)
    expect(first).toBeGreaterThan(creating)
    expect(msgs.some((m) => /^database migrated: applied \d+ migration\(s\) in \d+ ms; \d+ in all$/.test(m))).toBe(true)
    expect(statSync(data).mode & 0o777).toBe(0o700)
    expect(statSync(join(data, 'PG_VERSION')).mode & 0o777).toBe(0o600)
    expect(statSync(join(data, 'base')).mode & 0o777).toBe(0o700)
    cpSync(data, copy, { recursive: true })
  }, SLOW)

  test('existing loose modes are tightened at start: folders 0700, files 0600', () => {
    chmodSync(data, 0o777)
    chmodSync(join(data, 'PG_VERSION'), 0o666)
    chmodSync(join(data, 'global'), 0o755)
    const r = run(['migrate'], { DATA_DIR: data })
    expect(r.code).toBe(0)
    expect(r.out).toContain('database up to date')
    expect(statSync(data).mode & 0o777).toBe(0o700)
    expect(statSync(join(data, 'PG_VERSION')).mode & 0o777).toBe(0o600)
    expect(statSync(join(data, 'global')).mode & 0o777).toBe(0o700)
  }, SLOW)

  test('a second process on the data folder or the port is refused; a kill -9 leaves no stale lock', async () => {
    const a = await serve({ DATA_DIR: data })
    try {
      expect((await fetch(`http://127.0.0.1:${a.port}/v1/version`)).status).toBeLessThan(500)
      // Same folder: exit 2, and the message names the PID holding it.
      const second = await runAsync(['serve', '--host', '127.0.0.1'], { DATA_DIR: data, PORT: '0' })
      expect(second.code).toBe(2)
      expect(second.err).toContain(`is in use by process ${a.proc.pid}`)
      expect(second.err).toContain(data)
      // Same for every command that opens the folder.
      const migrating = await runAsync(['migrate'], { DATA_DIR: data })
      expect(migrating.code).toBe(2)
      expect(migrating.err).toContain(`process ${a.proc.pid}`)
      // Another folder, same port: the bind is refused (no silent port sharing), exit 2, naming REUSE_PORT.
      const samePort = await runAsync(['serve', '--host', '127.0.0.1'], { DATA_DIR: copy, PORT: String(a.port) })
      expect(samePort.code).toBe(2)
      expect(samePort.err).toContain(`127.0.0.1:${a.port}`)
      expect(samePort.err).toContain('REUSE_PORT')
    } finally {
      a.proc.kill(9)
      await a.ended
    }
    // The kernel dropped the lock with the process: the next start succeeds.
    const b = await serve({ DATA_DIR: data })
    try {
      expect((await fetch(`http://127.0.0.1:${b.port}/v1/version`)).status).toBeLessThan(500)
    } finally {
      b.proc.kill('SIGTERM')
      expect((await b.ended).code).toBe(0)
    }
  }, SLOW)

  test('with LOG_FORMAT=json every line is JSON, and requests answered up to the shutdown are all logged', async () => {
    const s = await serve({ DATA_DIR: data })
    const n = 10
    const answers = await Promise.all(Array.from({ length: n }, (_, i) => fetch(`http://127.0.0.1:${s.port}/v1/version?i=${i}`)))
    for (const a of answers) await a.arrayBuffer()
    // One request still sending its body when SIGTERM arrives: answered while the server drains, and logged.
    let finish: () => void = () => {}
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('{"email":"late@example.com",'))
        finish = () => {
          c.enqueue(new TextEncoder().encode('"password":"not the password"}'))
          c.close()
        }
      },
    })
    const late = fetch(`http://127.0.0.1:${s.port}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    // The server has the request (its head, part of the body) before the signal.
    await Bun.sleep(300)
    s.proc.kill('SIGTERM')
    const until = Date.now() + 60_000
    while (!s.output().includes('SIGTERM received') && Date.now() < until) await Bun.sleep(20)
    finish()
    const lateStatus = (await late).status
    expect(lateStatus).toBeGreaterThanOrEqual(400)
    const r = await s.ended
    expect(r.code).toBe(0)
    const lines = jsonLines(r.out + r.err)
    expect(lines.filter((l) => l.msg === 'request' && l.route === '/v1/version')).toHaveLength(n)
    expect(lines.filter((l) => l.msg === 'request' && l.route === '/v1/auth/login' && l.status === lateStatus)).toHaveLength(1)
    expect(lines.some((l) => String(l.msg).startsWith('SIGTERM received'))).toBe(true)
    expect(lines.some((l) => String(l.msg).startsWith('content-service listening on'))).toBe(true)
  }, SLOW)

  test('PGLITE_FSYNC=off is said in the log at start; fsync is on by default', async () => {
    const off = run(['migrate'], { DATA_DIR: data, PGLITE_FSYNC: 'off' })
    expect(off.code).toBe(0)
    const warning = jsonLines(off.out).find((l) => l.level === 'warn')
    expect(String(warning?.msg)).toContain('PGLITE_FSYNC=off')
    const on = run(['migrate'], { DATA_DIR: data })
    expect(jsonLines(on.out).some((l) => l.level === 'warn')).toBe(false)
    const db = await openDatabase({ databaseUrl: null, dataDir: data })
    try {
      expect(await db.query<{ fsync: string }>('show fsync')).toEqual([{ fsync: 'on' }])
    } finally {
      await db.close()
    }
  }, SLOW)

  test('an older binary refuses a database a newer version migrated, naming both versions', async () => {
    const db = await openDatabase({ databaseUrl: null, dataDir: data })
    try {
      await db.query(`insert into _migrations (tag, hash, app_version) values ('9999_from_the_future', 'x', '9.9.9')`)
    } finally {
      await db.close()
    }
    const r = run(['migrate'], { DATA_DIR: data })
    expect(r.code).toBe(2)
    expect(r.err).toContain('content-service 9.9.9')
    expect(r.err).toContain(`content-service ${pkg.version}`)
    expect(r.err).toContain('9999_from_the_future')
    const s = run(['serve'], { DATA_DIR: data, PORT: '0' })
    expect(s.code).toBe(2)
    expect(s.err).toContain('9.9.9')
  }, SLOW)

  test('a data folder the process cannot write is named in one clear error', () => {
    const file = join(root, 'a-file')
    writeFileSync(file, '')
    const r = run(['migrate'], { DATA_DIR: join(file, 'data') })
    expect(r.code).toBe(2)
    const [line, ...rest] = jsonLines(r.err)
    expect(rest).toEqual([])
    expect(String(line.msg)).toContain(`the data folder ${join(file, 'data')} (DATA_DIR) cannot be written`)
    expect(String(line.msg)).not.toContain('PGlite failed')
  })
})

describe('version refusal on either driver', () => {
  test('migrate refuses a database with a migration this version does not know', async () => {
    const tdb = await freshDatabase()
    try {
      await tdb.database.query(`insert into _migrations (tag, hash, app_version) values ('9999_newer', 'x', '7.0.0')`)
      await expect(migrate(tdb.database)).rejects.toThrow(
        `this database was migrated by content-service 7.0.0 (migration 9999_newer), which this binary, content-service ${pkg.version}, does not know`,
      )
    } finally {
      await tdb.drop()
    }
  }, SLOW)
})

describe('clear database connection failures', () => {
  const key = { SERVICE_SECRET_KEY: 'ab'.repeat(32) }

  test('a closed port is refused at once, naming the host, the port and DATABASE_URL, never the password', async () => {
    const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const port = probe.port
    probe.stop(true)
    const r = await runAsync(['migrate'], { ...key, DATABASE_URL: `postgres://me:s3cret-pw@127.0.0.1:${port}/db` })
    expect(r.code).toBe(1)
    expect(r.err).toContain(`cannot connect to Postgres at 127.0.0.1:${port} (DATABASE_URL)`)
    expect(r.err).toContain('ECONNREFUSED')
    expect(r.err).not.toContain('s3cret-pw')
  }, SLOW)

  test('a server that accepts and never answers fails after DATABASE_CONNECT_TIMEOUT instead of hanging', async () => {
    const silent = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    try {
      const r = await runAsync(['migrate'], {
        ...key,
        DATABASE_URL: `postgres://me:s3cret-pw@127.0.0.1:${silent.port}/db`,
        DATABASE_CONNECT_TIMEOUT: '1',
      })
      expect(r.code).toBe(1)
      expect(r.err).toContain(`127.0.0.1:${silent.port} (DATABASE_URL)`)
      expect(r.err).toContain('DATABASE_CONNECT_TIMEOUT')
      expect(r.err).not.toContain('s3cret-pw')
    } finally {
      silent.stop(true)
    }
  }, SLOW)

  test('LOG_FORMAT=pretty writes lines for a person: time, level, message, fields', async () => {
    const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const port = probe.port
    probe.stop(true)
    const r = await runAsync(['migrate'], { ...key, LOG_FORMAT: 'pretty', DATABASE_URL: `postgres://me@127.0.0.1:${port}/db` })
    expect(r.code).toBe(1)
    expect(r.err).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} ERROR cannot connect to Postgres at 127\\.0\\.0\\.1:${port}`))
    expect(r.err.trim().split('\n')).toHaveLength(1)
  }, SLOW)

  test('a URL that is not Postgres is refused at start, without echoing it', () => {
    const r = run(['migrate'], { DATABASE_URL: 'mysql://root:s3cret-pw@127.0.0.1/db' })
    expect(r.code).toBe(2)
    expect(r.err).toContain('DATABASE_URL must be a postgres:// or postgresql:// URL')
    expect(r.err).not.toContain('s3cret-pw')
  })

  test('a database that does not exist says so and what to do', async () => {
    const url = process.env.TEST_DATABASE_URL
    if (!url) return // needs a real server
    const u = new URL(url)
    u.pathname = '/no_such_database_cs'
    const r = await runAsync(['migrate'], { ...key, DATABASE_URL: u.toString() })
    expect(r.code).toBe(1)
    expect(r.err).toContain('does not exist')
    expect(r.err).toContain('createdb no_such_database_cs')
  }, SLOW)
})
