/**
 * Memory of `content-service backup` on a large database, restored and compared.
 *
 * Fills a new installation with `--mb` MB of incompressible asset bytes (32 MB uploads through the HTTP API, hashed as
 * they are made) plus `--stories` Stories, then runs the real command line as a subprocess and samples its VmRSS (and,
 * on the embedded database with the server running, the server's: the snapshot is taken there) every 100 ms from
 * /proc/<pid>/status against an idle reference. Then `content-service restore` into an empty installation (a new data
 * folder, or a new Postgres database), and compares: every table's row count, every asset's SHA-256 (downloaded from a
 * server started on the restored installation).
 *
 *   bun scripts/bench/backup-size.ts --driver pglite|postgres [--mb 2048] [--stories 1000] [--keep]
 *     [--pg postgres://postgres@127.0.0.1:5432/postgres] [--dir /var/tmp]
 *
 * On the embedded database it backs up twice: through the running server (control socket) and with the server stopped
 * (the command opens the data folder itself). Prints one JSON line per measurement and a summary. Temp files go under
 * `--dir` (default TMPDIR) and are removed at the end unless `--keep`.
 */
import { createHash, randomFillSync } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import { openDatabase } from '../../src/kernel/db'

const { values: args } = parseArgs({
  options: {
    driver: { type: 'string', default: 'pglite' },
    mb: { type: 'string', default: '2048' },
    stories: { type: 'string', default: '1000' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    dir: { type: 'string', default: tmpdir() },
    keep: { type: 'boolean', default: false },
  },
})
const DRIVER = args.driver as 'pglite' | 'postgres'
if (DRIVER !== 'pglite' && DRIVER !== 'postgres') throw new Error('--driver pglite|postgres')
const TOTAL_MB = Number(args.mb)
const STORIES = Number(args.stories)
const FILE_MB = 32
const ROOT = join(import.meta.dir, '..', '..')
const BIN = join(ROOT, 'bin', 'content-service.ts')
const SECRET = 'ef'.repeat(32)
/** The modules bin/content-service.ts imports (every subcommand's): loading them is most of the command's idle size. */
const CLI_MODULES = ['assets', 'backup', 'health', 'help', 'migrate', 'reindex', 'seed', 'serve', 'user', 'worker'].map((m) => join(ROOT, 'src', 'cli', `${m}.ts`))
const temp = mkdtempSync(join(args.dir!, 'cs-backup-size-'))
const databases: string[] = []
const children: Bun.Subprocess[] = []
const mb = (n: number) => Math.round(n / 1024 / 1024)
const log = (o: Record<string, unknown>) => console.log(JSON.stringify(o))

async function cleanup() {
  for (const c of children) if (c.exitCode === null && !c.killed) c.kill('SIGKILL')
  if (args.keep) return console.error(`kept ${temp} and databases ${databases.join(', ')}`)
  if (databases.length) {
    const a = postgres(args.pg!, { max: 1, onnotice: () => {} })
    for (const name of databases) await a.unsafe(`drop database if exists ${name} with (force)`)
    await a.end()
  }
  rmSync(temp, { recursive: true, force: true })
}

async function installation(label: string): Promise<Record<string, string>> {
  const base: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    TMPDIR: temp,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    // Each request comes "from" another address (X-Forwarded-For, below): the fill is not rate limited.
    TRUSTED_PROXIES: '127.0.0.1',
    DATA_DIR: join(temp, label),
  }
  if (DRIVER === 'pglite') return base
  const name = `cs_backup_size_${label}_${Date.now().toString(36)}`
  const admin = postgres(args.pg!, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  await admin.end()
  databases.push(name)
  const url = new URL(args.pg!)
  url.pathname = `/${name}`
  return { ...base, DATABASE_URL: url.toString(), SERVICE_SECRET_KEY: SECRET }
}

function rss(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : 0
  } catch {
    return 0
  }
}

/** Peak VmRSS of `pid`, sampled every 100 ms until stopped. */
function sampler(pid: number) {
  const series: number[] = [rss(pid)]
  const timer = setInterval(() => {
    const r = rss(pid)
    if (r) series.push(r)
  }, 100)
  return {
    stop() {
      clearInterval(timer)
      // The RSS at each tenth of the run: flat when memory does not grow with the bytes copied.
      const deciles = Array.from({ length: 9 }, (_, i) => mb(series[Math.floor(((i + 1) * series.length) / 10)] ?? 0))
      return { peak: Math.max(...series), samples: series.length, deciles }
    },
  }
}

async function runMeasured(env: Record<string, string>, argv: string[], partial?: string) {
  const started = performance.now()
  const p = Bun.spawn(['bun', BIN, ...argv], { env, stdout: 'pipe', stderr: 'pipe' })
  const s = sampler(p.pid)
  // The archive's first bytes (the file being written aside): with the embedded database, the end of the copy under
  // the locks (nothing is compressed before it).
  let firstBytes: number | null = null
  const watch = partial
    ? setInterval(() => {
        try {
          if (firstBytes === null && statSync(partial).size > 0) firstBytes = (performance.now() - started) / 1000
        } catch {}
      }, 100)
    : null
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()])
  if (watch) clearInterval(watch)
  const { peak, samples, deciles } = s.stop()
  if (code !== 0) throw new Error(`content-service ${argv.join(' ')} exited ${code}: ${err}${out}`)
  return { peak, samples, deciles, first_bytes_s: firstBytes === null ? null : Math.round(firstBytes), seconds: (performance.now() - started) / 1000, out: out.trim() }
}

/** A bun process that loaded the command line's modules and does nothing: the command's idle reference (about 96 MB). */
async function idleCliRss(env: Record<string, string>): Promise<number> {
  const code = `for (const m of ${JSON.stringify(CLI_MODULES)}) await import(m); console.log('ready'); await Bun.sleep(1500)`
  const p = Bun.spawn(['bun', '-e', code], { env, stdout: 'pipe', stderr: 'inherit' })
  await p.stdout.getReader().read()
  await Bun.sleep(800)
  const r = rss(p.pid)
  await p.exited
  return r
}

/** A bun process that loaded the command line's modules and holds the embedded database in `dataDir` open, idle. */
async function openDbRss(dataDir: string): Promise<number> {
  const db = join(ROOT, 'src', 'kernel', 'db.ts')
  const code = `for (const m of ${JSON.stringify(CLI_MODULES)}) await import(m); const { openDatabase } = await import(${JSON.stringify(db)}); const d = await openDatabase({ databaseUrl: null, dataDir: ${JSON.stringify(dataDir)} }); await d.query('select count(*) from _migrations'); console.log('open'); await Bun.sleep(1500); await d.close()`
  const p = Bun.spawn(['bun', '-e', code], { stdout: 'pipe', stderr: 'inherit' })
  await p.stdout.getReader().read()
  await Bun.sleep(800)
  const r = rss(p.pid)
  await p.exited
  return r
}

async function startServer(env: Record<string, string>) {
  const child = Bun.spawn(['bun', BIN, 'serve'], { env, stdout: 'pipe', stderr: 'inherit' })
  children.push(child)
  const reader = child.stdout.getReader()
  const decoder = new TextDecoder()
  let text = ''
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
        base: m[1]!.replace('localhost', '127.0.0.1'),
        async stop() {
          child.kill('SIGTERM')
          await child.exited
        },
      }
    }
  }
}
let ip = 0
type Server = Awaited<ReturnType<typeof startServer>>

async function api(s: Server, method: string, path: string, opts: { token?: string; body?: unknown; raw?: BodyInit } = {}) {
  const headers: Record<string, string> = { 'X-Forwarded-For': `10.${(++ip >> 16) & 255}.${(ip >> 8) & 255}.${ip & 255}` }
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json'
  const res = await fetch(`${s.base}${path}`, { method, headers, body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)) })
  const text = await res.text()
  let body: any = text
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: res.status, body, text }
}

/** Row count of every table of the public schema (and the migrations table). */
async function rowCounts(env: Record<string, string>): Promise<Record<string, number>> {
  const db = await openDatabase({ databaseUrl: env.DATABASE_URL ?? null, dataDir: env.DATA_DIR! })
  try {
    const tables = await db.query<{ tablename: string }>(`select tablename from pg_tables where schemaname = 'public' order by tablename`)
    const out: Record<string, number> = {}
    for (const { tablename } of tables) {
      const [r] = await db.query<{ n: string | number }>(`select count(*) as n from "${tablename}"`)
      out[tablename] = Number(r!.n)
    }
    return out
  } finally {
    await db.close()
  }
}

async function main() {
  const envA = await installation('a')
  let a = await startServer(envA)
  const reg = await api(a, 'POST', '/v1/auth/register', { body: { email: 'owner@example.com', password: 'correct horse battery staple', name: 'Owner' } })
  if (reg.status !== 201) throw new Error(`register: ${reg.status} ${reg.text}`)
  const token = reg.body.data.token as string
  if ((await api(a, 'POST', '/v1/spaces', { token, body: { slug: 'big', name: 'Big' } })).status !== 201) throw new Error('space')

  // Fill: incompressible bytes (media is), one 32 MB buffer refilled per upload.
  const fillStarted = performance.now()
  const hashes = new Map<string, string>()
  const data = Buffer.allocUnsafe(FILE_MB * 1024 * 1024)
  for (let i = 0; i * FILE_MB < TOTAL_MB; i++) {
    randomFillSync(data)
    data.set(Buffer.from('%PDF-1.7\n'))
    const fd = new FormData()
    fd.append('file', new Blob([data], { type: 'application/pdf' }), `file-${i}.pdf`)
    const up = await api(a, 'POST', '/v1/spaces/big/assets', { token, raw: fd })
    if (up.status !== 201) throw new Error(`upload: ${up.status} ${up.text}`)
    hashes.set(up.body.data.uuid, createHash('sha256').update(data).digest('hex'))
  }
  for (let i = 0; i < STORIES; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, STORIES - i) }, async (_, j) => {
        const n = i + j
        const body = { slug: `s-${n}`, name: `Story ${n}`, content: { type: 'doc', blocks: [] } }
        const c = await api(a, 'POST', '/v1/spaces/big/stories', { token, body })
        if (c.status !== 201) throw new Error(`story: ${c.status} ${c.text}`)
      }),
    )
  }
  log({ step: 'fill', driver: DRIVER, assets_mb: hashes.size * FILE_MB, stories: STORIES, seconds: Math.round((performance.now() - fillStarted) / 1000) })

  const results: Record<string, unknown>[] = []
  const cliIdle = await idleCliRss(envA)
  const file = join(temp, 'backup.tar.gz')

  if (DRIVER === 'pglite') {
    // 1. Through the running server: the snapshot is taken in the server, the command writes what it streams.
    await Bun.sleep(1000)
    const serverIdle = rss(a.pid)
    const server = sampler(a.pid)
    const r = await runMeasured(envA, ['backup', '--out', file], `${file}.partial`)
    const sp = server.stop()
    const size = statSync(file).size
    const row = {
      step: 'backup', mode: 'running server', driver: DRIVER, archive_mb: mb(size), seconds: Math.round(r.seconds), first_bytes_s: r.first_bytes_s,
      server_idle_mb: mb(serverIdle), server_peak_mb: mb(sp.peak), server_growth_mb: mb(sp.peak - serverIdle),
      command_idle_mb: mb(cliIdle), command_peak_mb: mb(r.peak), command_growth_mb: mb(r.peak - cliIdle), samples: r.samples,
      server_deciles_mb: sp.deciles, command_deciles_mb: r.deciles,
    }
    log(row)
    results.push(row)
    rmSync(file, { force: true })
    await a.stop()
  } else {
    await a.stop()
  }

  const counts = await rowCounts(envA)
  // 2. The command alone (Postgres: pg_dump streams into it; embedded: the server is stopped, it opens the folder).
  const idle = DRIVER === 'pglite' ? await openDbRss(envA.DATA_DIR!) : cliIdle
  const r = await runMeasured(envA, ['backup', '--out', file], `${file}.partial`)
  const size = statSync(file).size
  const row = {
    step: 'backup', mode: DRIVER === 'pglite' ? 'server stopped' : 'pg_dump', driver: DRIVER, archive_mb: mb(size), seconds: Math.round(r.seconds), first_bytes_s: r.first_bytes_s,
    command_idle_mb: mb(idle), command_peak_mb: mb(r.peak), command_growth_mb: mb(r.peak - idle), samples: r.samples, command_deciles_mb: r.deciles,
  }
  log(row)
  results.push(row)

  // Restore into an empty installation, measured the same way.
  const envB = await installation('b')
  const restored = await runMeasured(envB, ['restore', file])
  const restoreIdle = DRIVER === 'pglite' ? await openDbRss(envB.DATA_DIR!) : cliIdle
  const rrow = {
    step: 'restore', driver: DRIVER, seconds: Math.round(restored.seconds), command_idle_mb: mb(restoreIdle),
    command_peak_mb: mb(restored.peak), command_growth_mb: mb(restored.peak - restoreIdle), samples: restored.samples, command_deciles_mb: restored.deciles,
  }
  log(rrow)
  results.push(rrow)
  if (!args.keep) rmSync(file, { force: true })

  // Compare: row counts of every table, every asset's bytes.
  const after = await rowCounts(envB)
  const differing = Object.keys({ ...counts, ...after }).filter((t) => counts[t] !== after[t])
  const b = await startServer(envB)
  let same = 0
  try {
    for (const [uuid, hash] of hashes) {
      const res = await fetch(`${b.base}/v1/cdn/big/assets/${uuid}`)
      if (res.status !== 200) throw new Error(`download ${uuid}: ${res.status}`)
      const h = createHash('sha256')
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) h.update(chunk)
      if (h.digest('hex') === hash) same++
    }
  } finally {
    await b.stop()
  }
  const compare = {
    step: 'compare', driver: DRIVER, tables: Object.keys(counts).length, rows: Object.values(counts).reduce((x, y) => x + y, 0),
    tables_differing: differing, assets: hashes.size, assets_identical: same, stories: counts.stories,
  }
  log(compare)
  if (differing.length || same !== hashes.size) {
    process.exitCode = 1
    console.error('RESTORE DIFFERS', differing.map((t) => `${t}: ${counts[t]} → ${after[t]}`))
  }
}

try {
  await main()
} finally {
  await cleanup()
}
