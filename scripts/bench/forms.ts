// bun scripts/bench/forms.ts [--connections=8] [--seconds=20] [--rounds=3] [--driver=pglite|postgres] [--action=store|email]
//                            [--source [--root=DIR]]
//
// Public form submits against the built executable on a fresh database: a `store` form with four fields
// (rate_limit_per_ip 10,000), wrk POSTing valid submissions from 8,192 rotating X-Forwarded-For addresses through a
// trusted proxy (so neither the 20/min route limit nor the daily per-IP limit answers 429). Every request is a full
// submit: validation, IP hash, the daily count under its advisory lock, the insert. Reports req/s and latency per
// round; the target is ≥ 500 submits/s sustained with p99 < 50 ms. `--action=email`: the form mails each submission
// (the file driver: .eml files under DATA_DIR/mail/, sent by the server's job worker while the submits go on); target
// p99 < 30 ms on PGlite. `--source` serves from source (bin/content-service.ts, no build); `--root=DIR` serves another
// checkout's source (A/B against a base commit, back to back on the same machine).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import { runWrk } from './wrk'

const { values: args } = parseArgs({
  options: {
    connections: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '3' },
    driver: { type: 'string', default: 'pglite' },
    action: { type: 'string', default: 'store' },
    source: { type: 'boolean', default: false },
    root: { type: 'string' },
  },
})
const root = join(import.meta.dir, '..', '..')
if (!args.source) {
  const build = Bun.spawnSync(['bun', 'run', 'build'], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
  if (build.exitCode !== 0) throw new Error('build failed')
}

const dir = mkdtempSync(join(tmpdir(), 'cs-forms-'))
const port = 19_000 + Math.floor(Math.random() * 1000)
const env: Record<string, string> = { ...(process.env as Record<string, string>), DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', TRUSTED_PROXIES: '127.0.0.1' }
let dropDb: (() => Promise<void>) | null = null
if (args.driver === 'postgres') {
  const server = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
  const name = `cs_bench_forms_${Date.now().toString(36)}`
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
const cmd = args.source ? [process.execPath, join(args.root ?? root, 'bin', 'content-service.ts'), 'serve'] : [join(root, 'dist', 'content-service'), 'serve']
const server = Bun.spawn(cmd, { env, stdout: 'ignore', stderr: 'inherit' })
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
  const { data: session } = await call('POST', '/v1/auth/register', null, { email: `f${Date.now()}@example.com`, password: 'bench bench bench bench', name: 'Bench' })
  await call('POST', '/v1/spaces', session.token, { slug: 'bench', name: 'Bench', default_lang: 'en' })
  const action = args.action === 'email' ? { submit_action: 'email', notification_email: 'team@example.com' } : {}
  await call('POST', '/v1/spaces/bench/forms', session.token, {
    slug: 'contact',
    label: 'Contact',
    rate_limit_per_ip: 10_000,
    success_message: { en: 'Thanks!' },
    ...action,
    fields: [
      { key: 'name', type: 'text', label: 'Name', required: true },
      { key: 'email', type: 'email', label: 'E-mail', required: true },
      { key: 'message', type: 'textarea', label: 'Message' },
      { key: 'consent', type: 'consent', label: 'I agree', required: true },
    ],
  })
  // One body per client address, each from its own X-Forwarded-For (rotating over 8,192 through the trusted proxy).
  const submissions: [string, string][] = Array.from({ length: 8192 }, (_, k) => [
    '/v1/cdn/bench/forms/contact',
    JSON.stringify({ _hp: '', data: { name: `Bench ${k}`, email: `bench${k}@example.com`, message: `Hello from request ${k}, a message of ordinary length.`, consent: true } }),
  ])
  const run = async (seconds: number) => {
    const r = await runWrk(
      { name: 'forms', base },
      {
        paths: submissions,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'User-Agent': 'wrk-bench' },
        rotateForwardedFor: 8192,
        connections: Number(args.connections),
        threads: 2,
        durationSeconds: seconds,
      },
    )
    return { rps: r.rps, p50: r.p50Ms, p90: r.p90Ms, p99: r.p99Ms, non2xx: r.non2xx3xx, errors: r.socketErrors }
  }
  await run(3) // warm-up
  console.log(`driver ${args.driver}, action ${args.action}, ${args.connections} connections, ${args.seconds} s per round`)
  for (let round = 1; round <= Number(args.rounds); round++) {
    const r = await run(Number(args.seconds))
    console.log(
      `round ${round}: ${r.rps} submits/s   p50 ${r.p50.toFixed(2)} ms   p90 ${r.p90.toFixed(2)} ms   p99 ${r.p99.toFixed(2)} ms   non-2xx ${r.non2xx}   socket errors ${r.errors}`,
    )
    // bun run bench (scripts/bench/all.ts): one machine-readable line per round.
    if (process.env.BENCH_JSON === '1') console.log(`BENCH_JSON ${JSON.stringify({ bench: 'forms', figures: { driver: args.driver, action: args.action, connections: Number(args.connections), round, rps: r.rps, p50_ms: r.p50, p99_ms: r.p99, non2xx: r.non2xx, errors: r.errors } })}`)
    await Bun.sleep(500)
  }
} finally {
  server.kill()
  await server.exited
  rmSync(dir, { recursive: true, force: true })
  await dropDb?.()
}
