// bun scripts/bench/events.ts [--rate=500] [--seconds=20] [--rounds=2] [--driver=pglite|postgres] [--no-build] [--no-worker]
//                             [--source [--root=DIR] [--cpu-prof=DIR]]
//
// Event registrations at a fixed arrival rate against the built executable on a fresh database: one published event
// with unlimited capacity; a separate Bun process (this file with --load) POSTs /v1/cdn/bench/events/launch/register
// at `rate` requests per second, open loop (a slow answer does not delay the next send), each with its own e-mail
// address and X-Forwarded-For address through a trusted proxy (so the 20/min/IP route limit never answers 429).
// Latency is measured from each request's scheduled send time (no coordinated omission). Every request is a full
// registration: validation, the event row's conditional update, the insert, two hashed tokens and the mail job in
// one transaction (the server's job worker then writes the mails as .eml files, sharing the embedded database's one
// connection; `--no-worker` serves without the worker, so only the registration path is measured and the mails wait).
// Target: p99 < 50 ms at 500/s.
//
// `--source` runs the server from source (bin/content-service.ts, no build) and `--cpu-prof=DIR` writes its CPU
// profile there (bun --cpu-prof) when it stops; `--root=DIR` serves another checkout's source (A/B); the server then also prints its per-registration CPU time (process
// CPU time spent while the rounds ran, divided by the registrations answered).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import postgres from 'postgres'

const { values: args } = parseArgs({
  options: {
    rate: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '2' },
    driver: { type: 'string', default: 'pglite' },
    'no-build': { type: 'boolean', default: false },
    'no-worker': { type: 'boolean', default: false },
    source: { type: 'boolean', default: false },
    root: { type: 'string' },
    'cpu-prof': { type: 'string' },
    // Internal: the load generator process.
    load: { type: 'boolean', default: false },
    base: { type: 'string' },
    offset: { type: 'string', default: '0' },
  },
})

if (args.load) {
  await generateLoad(args.base!, Number(args.rate), Number(args.seconds), Number(args.offset))
  process.exit(0)
}

/** The load generator (its own process): open loop at a fixed rate; prints one JSON line of results. */
async function generateLoad(base: string, rate: number, seconds: number, offset: number) {
  const total = rate * seconds
  const interval = 1000 / rate
  const latencies: number[] = []
  const statuses: Record<string, number> = {}
  let inFlight = 0
  let done = 0
  const url = `${base}/v1/cdn/bench/events/launch/register`
  const t0 = performance.now() + 50
  const fire = (i: number, scheduled: number) => {
    const n = offset + i
    inFlight++
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` },
      body: JSON.stringify({ name: `Guest ${n}`, email: `guest${n}@bench.example.com` }),
    })
      .then(async (res) => {
        await res.arrayBuffer()
        statuses[res.status] = (statuses[res.status] ?? 0) + 1
      })
      .catch(() => {
        statuses.error = (statuses.error ?? 0) + 1
      })
      .finally(() => {
        latencies.push(performance.now() - scheduled)
        inFlight--
        done++
      })
  }
  let next = 0
  while (next < total) {
    const now = performance.now()
    while (next < total && t0 + next * interval <= now) {
      fire(next, t0 + next * interval)
      next++
    }
    await Bun.sleep(1)
  }
  const sentBy = performance.now()
  while (done < total) await Bun.sleep(5)
  latencies.sort((a, b) => a - b)
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]
  console.log(
    JSON.stringify({
      sent: total,
      achievedRate: Math.round(total / ((sentBy - t0) / 1000)),
      p50: q(50),
      p90: q(90),
      p99: q(99),
      max: latencies[latencies.length - 1],
      statuses,
      maxInFlight: inFlight,
    }),
  )
}

const root = join(import.meta.dir, '..', '..')
if (!args['no-build'] && !args.source) {
  const build = Bun.spawnSync(['bun', 'run', 'build'], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
  if (build.exitCode !== 0) throw new Error('build failed')
}

const dir = mkdtempSync(join(tmpdir(), 'cs-events-'))
const port = 19_000 + Math.floor(Math.random() * 1000)
const env: Record<string, string> = { ...(process.env as Record<string, string>), DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', TRUSTED_PROXIES: '127.0.0.1' }
let dropDb: (() => Promise<void>) | null = null
if (args.driver === 'postgres') {
  const server = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
  const name = `cs_bench_events_${Date.now().toString(36)}`
  const admin = postgres(server, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  await admin.end()
  const url = new URL(server)
  url.pathname = `/${name}`
  env.DATABASE_URL = url.toString()
  env.SERVICE_SECRET_KEY = 'a'.repeat(64)
  dropDb = async () => {
    const a = postgres(server, { max: 1, onnotice: () => {} })
    await a.unsafe(`drop database if exists ${name} with (force)`)
    await a.end()
  }
}
const serveArgs = ['serve', ...(args['no-worker'] ? ['--no-worker'] : [])]
const cmd = args.source
  ? [process.execPath, ...(args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`] : []), join(args.root ?? root, 'bin', 'content-service.ts'), ...serveArgs]
  : [join(root, 'dist', 'content-service'), ...serveArgs]
const server = Bun.spawn(cmd, { env, stdout: 'ignore', stderr: 'inherit' })
/** The server process's CPU time so far (user + system), in ms (Linux /proc). */
const cpuMs = async () => {
  try {
    const f = (await Bun.file(`/proc/${server.pid}/stat`).text()).split(') ')[1].split(' ')
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100
  } catch {
    return NaN
  }
}
const base = `http://127.0.0.1:${port}`

try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/v1/version`)).ok) break
    } catch {}
    if (i > 1200) throw new Error('server did not start')
    await Bun.sleep(100)
  }
  const call = async (method: string, path: string, token: string | null, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), 'x-forwarded-for': '10.250.0.1' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return text ? JSON.parse(text) : null
  }
  const { data: session } = await call('POST', '/v1/auth/register', null, { email: `e${Date.now()}@example.com`, password: 'bench bench bench bench', name: 'Bench' })
  await call('POST', '/v1/spaces', session.token, { slug: 'bench', name: 'Bench', default_lang: 'en' })
  const start = Date.now() + 30 * 86_400_000
  await call('POST', '/v1/spaces/bench/events', session.token, {
    slug: 'launch',
    title: { en: 'Launch party' },
    description: { en: 'Drinks and demos' },
    starts_at: new Date(start).toISOString(),
    ends_at: new Date(start + 3 * 3_600_000).toISOString(),
    timezone: 'Europe/Berlin',
    location: { name: 'Hall A', address: 'Main St 1' },
    capacity: null,
    published: true,
  })

  let offset = 0
  const round = async (seconds: number) => {
    const proc = Bun.spawn([process.execPath, import.meta.path, '--load', `--base=${base}`, `--rate=${args.rate}`, `--seconds=${seconds}`, `--offset=${offset}`], {
      stdout: 'pipe',
      stderr: 'inherit',
    })
    offset += Number(args.rate) * seconds
    const out = await new Response(proc.stdout).text()
    await proc.exited
    return JSON.parse(out.trim().split('\n').pop()!)
  }
  await round(3) // warm-up
  console.log(`driver ${args.driver}, ${args.rate} registrations/s (open loop, separate Bun process), ${args.seconds} s per round, job worker ${args['no-worker'] ? 'off' : 'on'}`)
  for (let r = 1; r <= Number(args.rounds); r++) {
    const cpu0 = await cpuMs()
    const x = await round(Number(args.seconds))
    const cpu = (await cpuMs()) - cpu0
    const f = (v: number) => v.toFixed(2)
    console.log(
      `round ${r}: sent ${x.sent} at ${x.achievedRate}/s   p50 ${f(x.p50)} ms   p90 ${f(x.p90)} ms   p99 ${f(x.p99)} ms   max ${f(x.max)} ms   server CPU ${f(cpu / x.sent)} ms/registration   statuses ${JSON.stringify(x.statuses)}`,
    )
    // bun run bench (scripts/bench/all.ts): one machine-readable line per round.
    if (process.env.BENCH_JSON === '1') console.log(`BENCH_JSON ${JSON.stringify({ bench: 'events', figures: { driver: args.driver, rate: Number(args.rate), round: r, sent: x.sent, achieved_rate: x.achievedRate, p50_ms: x.p50, p99_ms: x.p99, statuses: JSON.stringify(x.statuses) } })}`)
    await Bun.sleep(500)
  }
} finally {
  server.kill()
  await server.exited
  rmSync(dir, { recursive: true, force: true })
  await dropDb?.()
}
