// A backup of a database of a few hundred MB (asset bytes included) is written as it is read: the memory of the
// process taking it (the running server for the embedded database, the command for Postgres) stays within a bound
// above its idle size, as does the restoring command's — a bound of half the asset bytes (the archive is larger
// still), so a backup that held the data in memory could not pass. The backup is restored into a new installation
// and compared: every asset's bytes by SHA-256, the Story count. BACKUP_TEST_MB sets the size (default 192; at least
// twice the bound). scripts/bench/backup-size.ts measures the same at 2 GB.
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'

setDefaultTimeout(1_800_000)

const BIN = join(import.meta.dir, '..', 'bin', 'content-service.ts')
const SECRET = 'cd'.repeat(32)
const TOTAL_MB = Number(process.env.BACKUP_TEST_MB ?? 192)
const FILE_MB = 32
/** Memory allowed above idle while the archive is written or read: at most half the asset bytes. */
const BOUND = 96 * 1024 * 1024
/** The modules bin/content-service.ts imports (every subcommand's): most of the command's idle size (about 96 MB). */
const CLI_MODULES = ['assets', 'backup', 'health', 'help', 'migrate', 'reindex', 'seed', 'serve', 'user', 'worker'].map((m) =>
  join(import.meta.dir, '..', 'src', 'cli', `${m}.ts`),
)

const temp = mkdtempSync(join(tmpdir(), 'cs-backup-large-'))
const databases: string[] = []
const children: Bun.Subprocess[] = []

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && !c.killed) c.kill('SIGKILL')
  const serverUrl = process.env.TEST_DATABASE_URL
  if (serverUrl && databases.length) {
    const a = postgres(serverUrl, { max: 1, onnotice: () => {} })
    for (const name of databases) await a.unsafe(`drop database if exists ${name} with (force)`)
    await a.end()
  }
  rmSync(temp, { recursive: true, force: true })
})

async function installation(label: string): Promise<Record<string, string>> {
  const base: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    DATA_DIR: join(temp, label),
  }
  const serverUrl = process.env.TEST_DATABASE_URL
  if (!serverUrl) return base
  const name = `cs_bigbackup_${label}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  await admin.end()
  databases.push(name)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return { ...base, DATABASE_URL: url.toString(), SERVICE_SECRET_KEY: SECRET }
}

/** Resident memory of a process, in bytes (0 once it is gone). */
function rss(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : 0
  } catch {
    return 0
  }
}

/** Samples the peak RSS of `pid` every 50 ms until stopped. */
function sampler(pid: number) {
  let peak = rss(pid)
  const timer = setInterval(() => {
    peak = Math.max(peak, rss(pid))
  }, 50)
  return {
    stop() {
      clearInterval(timer)
      return peak
    },
  }
}

/** Runs the command line, sampling its own RSS: the peak, and its size once started (after 300 ms: "idle"). */
async function runMeasured(env: Record<string, string>, args: string[]) {
  const p = Bun.spawn(['bun', BIN, ...args], { env, stdout: 'pipe', stderr: 'pipe' })
  const s = sampler(p.pid)
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()])
  return { code, out, err, peak: s.stop() }
}

/** The RSS of a bun process that has loaded the command line and does nothing: the idle reference. */
async function idleCliRss(env: Record<string, string>): Promise<number> {
  const p = Bun.spawn(['bun', '-e', `for (const m of ${JSON.stringify(CLI_MODULES)}) await import(m); console.log('ready'); await Bun.sleep(1500)`], {
    env,
    stdout: 'pipe',
    stderr: 'inherit',
  })
  await p.stdout.getReader().read()
  await Bun.sleep(500)
  const r = rss(p.pid)
  await p.exited
  return r
}

/** The RSS of a bun process that loaded the command line and holds the embedded database in `dataDir` open, idle. */
async function openDbRss(dataDir: string): Promise<number> {
  const db = join(import.meta.dir, '..', 'src', 'kernel', 'db.ts')
  const code = `for (const m of ${JSON.stringify(CLI_MODULES)}) await import(m); const { openDatabase } = await import(${JSON.stringify(db)}); const d = await openDatabase({ databaseUrl: null, dataDir: ${JSON.stringify(dataDir)} }); await d.query('select count(*) from _migrations'); console.log('open'); await Bun.sleep(1500); await d.close()`
  const p = Bun.spawn(['bun', '-e', code], { stdout: 'pipe', stderr: 'inherit' })
  const reader = p.stdout.getReader()
  await reader.read()
  await Bun.sleep(500)
  const r = rss(p.pid)
  await p.exited
  return r
}

async function startServer(env: Record<string, string>) {
  const child = Bun.spawn(['bun', BIN, 'serve'], { env, stdout: 'pipe', stderr: 'inherit' })
  children.push(child)
  const reader = child.stdout.getReader()
  let text = ''
  const decoder = new TextDecoder()
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the server exited before listening: ${text}`)
    text += decoder.decode(value)
    const m = /listening on (http:\/\/\S+)/.exec(text)
    if (m) {
      void (async () => {
        while (!(await reader.read()).done) {}
      })().catch(() => {})
      return {
        pid: child.pid,
        base: m[1].replace('localhost', '127.0.0.1'),
        async stop() {
          child.kill('SIGTERM')
          await child.exited
        },
      }
    }
  }
}

type Server = Awaited<ReturnType<typeof startServer>>

async function api(s: Server, method: string, path: string, opts: { token?: string; body?: unknown; raw?: BodyInit } = {}) {
  const headers: Record<string, string> = {}
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json'
  const res = await fetch(`${s.base}${path}`, { method, headers, body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)) })
  const text = await res.text()
  let body: any = text
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: res.status, body, text, headers: res.headers }
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`

describe('backups stream', () => {
  test(`a ${TOTAL_MB} MB database is backed up and restored with memory flat, and restores whole`, async () => {
    expect(TOTAL_MB * 1024 * 1024).toBeGreaterThanOrEqual(2 * BOUND)
    const envA = await installation('a')
    const a = await startServer(envA)
    const reg = await api(a, 'POST', '/v1/auth/register', { body: { email: 'owner@example.com', password: 'correct horse battery staple', name: 'Owner' } })
    expect(reg.status).toBe(201)
    const token = reg.body.data.token as string
    expect((await api(a, 'POST', '/v1/spaces', { token, body: { slug: 'big', name: 'Big' } })).status).toBe(201)

    // Incompressible bytes (media is), uploaded in 32 MB files; only their hashes are kept.
    const hashes = new Map<string, string>()
    for (let i = 0; i * FILE_MB < TOTAL_MB; i++) {
      const data = randomBytes(FILE_MB * 1024 * 1024)
      data.set(Buffer.from('%PDF-1.7\n'))
      const fd = new FormData()
      fd.append('file', new Blob([data], { type: 'application/pdf' }), `file-${i}.pdf`)
      const up = await api(a, 'POST', '/v1/spaces/big/assets', { token, raw: fd })
      if (up.status !== 201) throw new Error(`upload: ${up.status} ${up.text}`)
      hashes.set(up.body.data.uuid, createHash('sha256').update(data).digest('hex'))
    }
    const STORIES = 40
    for (let i = 0; i < STORIES; i++) {
      const c = await api(a, 'POST', '/v1/spaces/big/stories', { token, body: { slug: `s-${i}`, name: `S ${i}`, content: { type: 'doc', blocks: [] } } })
      if (c.status !== 201) throw new Error(`story: ${c.status} ${c.text}`)
    }

    // The server's idle size once the data is in (the embedded database's snapshot is taken inside it).
    await Bun.sleep(1000)
    const serverIdle = rss(a.pid)
    const cliIdle = await idleCliRss(envA)
    const server = sampler(a.pid)
    const file = join(temp, 'big.tar.gz')
    const backup = await runMeasured(envA, ['backup', '--out', file])
    const serverPeak = server.stop()
    expect(backup.err).toBe('')
    expect(backup.code).toBe(0)
    const size = statSync(file).size
    expect(size).toBeGreaterThan(TOTAL_MB * 1024 * 1024 * 0.9)
    await a.stop()
    console.log(
      `[backup-large ${envA.DATABASE_URL ? 'postgres' : 'pglite'}] ${TOTAL_MB} MB of assets, archive ${mb(size)}; ` +
        `server RSS idle ${mb(serverIdle)} peak ${mb(serverPeak)}; backup command RSS idle ${mb(cliIdle)} peak ${mb(backup.peak)}`,
    )
    expect(serverPeak - serverIdle).toBeLessThan(BOUND)
    expect(backup.peak - cliIdle).toBeLessThan(BOUND)

    const envB = await installation('b')
    const restored = await runMeasured(envB, ['restore', file])
    expect(restored.err).toBe('')
    expect(restored.code).toBe(0)
    // The embedded restore ends by opening the restored database once (PGlite's own memory, whatever the size): its
    // idle reference is a process that only opens that database.
    const restoreIdle = envB.DATABASE_URL ? cliIdle : await openDbRss(envB.DATA_DIR)
    console.log(`[backup-large ${envA.DATABASE_URL ? 'postgres' : 'pglite'}] restore command RSS idle ${mb(restoreIdle)} peak ${mb(restored.peak)}`)
    expect(restored.peak - restoreIdle).toBeLessThan(BOUND)

    const b = await startServer(envB)
    try {
      for (const [uuid, hash] of hashes) {
        const res = await fetch(`${b.base}/v1/cdn/big/assets/${uuid}`)
        expect(res.status).toBe(200)
        const h = createHash('sha256')
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) h.update(chunk)
        expect(h.digest('hex')).toBe(hash)
      }
      const list = await api(b, 'GET', '/v1/spaces/big/stories?per_page=1', { token })
      expect(list.status).toBe(200)
      expect(Number(list.headers.get('total') ?? list.body.meta?.total ?? list.body.total)).toBe(STORIES)
    } finally {
      await b.stop()
    }
  })
})
