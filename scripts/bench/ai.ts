// bun scripts/bench/ai.ts [--requests=400] [--first-delay-ms=20] [--server=binary|source] [--no-build] [--max-seconds=60] [--bin=path]
//
// What `POST /v1/spaces/{space}/ai/stream-text` adds to a provider's time to first token (TTFT). A fake
// OpenAI-compatible server (test/helpers/fake-ai.ts) in this process streams 5 chunks after --first-delay-ms; the
// service runs as the built executable (dist/content-service, rebuilt first unless --no-build; --server=source runs
// bin/content-service.ts with bun instead) in its own process on a fresh embedded database, with AI_BASE_URL pointing
// at the fake. Requests run one at a time, in pairs: straight to the fake (its own TTFT), then through the service
// (bearer check, Space and role, budget, the outbound guard, the upstream request, SSE re-framing). Each pair gives one
// sample of "added" = through − direct; the report is p50/p95/p99 of those samples (warm-up pairs excluded), the
// TTFTs themselves, an authenticated `GET .../ai/status` (the floor of any bearer route), and the server's CPU time
// per request (from /proc, phases run alone), which the machine's load does not inflate the way latency is.
// --bin=<path> runs another executable as is (A/B against an older build).
// BENCH_BUN_FLAGS adds flags to `bun` with --server=source (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
// Sampling is bounded by --max-seconds after start-up (it stops early and says so); start-up by 60 s.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startFakeAi } from '../../test/helpers/fake-ai'

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '400' },
    warmup: { type: 'string', default: '30' },
    'first-delay-ms': { type: 'string', default: '20' },
    server: { type: 'string', default: 'binary' },
    'no-build': { type: 'boolean', default: false },
    'max-seconds': { type: 'string', default: '60' },
    bin: { type: 'string' },
  },
})
const N = Number(args.requests)
const WARMUP = Number(args.warmup)
const firstDelayMs = Number(args['first-delay-ms'])
// Set once the server answers: sampling gets --max-seconds, start-up at most 60 s more (a loaded machine is slow to
// start the embedded database), so a run stays within two minutes by default.
let deadline = Number.POSITIVE_INFINITY
const root = join(import.meta.dir, '..', '..')

function serverCommand(): string[] {
  if (args.server === 'source') return ['bun', ...(process.env.BENCH_BUN_FLAGS ?? '').split(' ').filter(Boolean), '--max-http-header-size=131072', join(root, 'bin', 'content-service.ts'), 'serve', '--no-worker']
  if (args.bin) return [args.bin, 'serve', '--no-worker']
  const bin = join(root, 'dist', 'content-service')
  if (!args['no-build']) {
    const b = Bun.spawnSync(['bun', 'run', 'build'], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
    if (b.exitCode !== 0) throw new Error('build failed; run with --server=source to bench from source')
  }
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run bun run build`)
  return [bin, 'serve', '--no-worker']
}
const command = serverCommand()

const fake = startFakeAi()
fake.respond(() => ({ kind: 'stream', chunks: ['Hello', ' from', ' the', ' fake', ' model'], firstDelayMs }))

const dir = mkdtempSync(join(tmpdir(), 'cs-ai-'))
const port = 19_000 + Math.floor(Math.random() * 1000)
const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  DATA_DIR: dir,
  PORT: String(port),
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  TRUSTED_PROXIES: '127.0.0.1',
  PGLITE_FSYNC: 'off',
  AI_BASE_URL: fake.url,
  AI_MODEL: 'bench-model',
}
delete env.DATABASE_URL
const server = Bun.spawn(command, { env, stdout: 'ignore', stderr: 'inherit' })
const base = `http://127.0.0.1:${port}`

/** CPU time (user + system) the server process has used, in ms (Linux /proc; clock ticks of 10 ms). */
function serverCpuMs(): number {
  const f = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}

/** Milliseconds from sending the request to the first `data:` line with text. */
async function ttft(url: string, init: RequestInit): Promise<number> {
  const t0 = performance.now()
  const res = await fetch(url, init)
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`)
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  let seen = ''
  let at = -1
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    seen += dec.decode(value, { stream: true })
    if (at < 0 && /data: \{"(text|id)"/.test(seen)) at = performance.now() - t0
  }
  if (at < 0) throw new Error(`no token from ${url}: ${seen.slice(0, 200)}`)
  return at
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const ip = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`

try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/v1/version`)).ok) break
    } catch {}
    if (i > 600) throw new Error('server did not start within 60 s')
    await Bun.sleep(100)
  }
  deadline = performance.now() + Number(args['max-seconds']) * 1000
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
  const { data: session } = await call('POST', '/v1/auth/register', null, { email: `ai${Date.now()}@example.com`, password: 'bench bench bench bench', name: 'Bench' })
  await call('POST', '/v1/spaces', session.token, { slug: 'bench', name: 'Bench', default_lang: 'en' })
  const upstreamBody = JSON.stringify({ model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'Say hello' }] })
  const direct = () => ttft(`${fake.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: upstreamBody })
  // A new client address per request: the route's 10/min limit is per address (trusted proxy).
  const through = (i: number) =>
    ttft(`${base}/v1/spaces/bench/ai/stream-text`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${session.token}`, 'x-forwarded-for': ip(i) },
      body: JSON.stringify({ prompt: 'Say hello' }),
    })
  const status = async (i: number) => {
    const f0 = performance.now()
    const st = await fetch(`${base}/v1/spaces/bench/ai/status`, { headers: { authorization: `Bearer ${session.token}`, 'x-forwarded-for': ip(i) } })
    await st.arrayBuffer()
    if (!st.ok) throw new Error(`ai/status: ${st.status}`)
    return performance.now() - f0
  }

  const directs: number[] = []
  const throughs: number[] = []
  const added: number[] = []
  const floor: number[] = []
  let stoppedEarly = false
  let ipn = 0
  for (let i = 0; i < N + WARMUP; i++) {
    if (performance.now() > deadline - 15_000) {
      stoppedEarly = true
      break
    }
    // Alternate which goes first, so neither side always meets a just-woken event loop.
    let d: number
    let s: number
    if (i % 2) {
      d = await direct()
      s = await through(ipn++)
    } else {
      s = await through(ipn++)
      d = await direct()
    }
    const f = await status(ipn++)
    if (i >= WARMUP) {
      directs.push(d)
      throughs.push(s)
      added.push(s - d)
      floor.push(f)
    }
  }
  // Server CPU per request, each kind alone (the fake's work runs in this process, not the server's).
  const cpuPer = async (n: number, run: (i: number) => Promise<unknown>) => {
    const c0 = serverCpuMs()
    let done = 0
    for (; done < n && performance.now() < deadline - 5_000; done++) await run(ipn++)
    return done ? (serverCpuMs() - c0) / done : NaN
  }
  const cpuN = Math.min(300, Math.max(50, added.length))
  const cpuStream = await cpuPer(cpuN, through)
  const cpuStatus = await cpuPer(cpuN, status)

  if (!added.length) throw new Error('no samples within --max-seconds (the machine is too busy): raise it')
  const f2 = (x: number) => x.toFixed(2).padStart(7)
  const row = (name: string, xs: number[]) => `${name.padEnd(30)} p50 ${f2(pct(xs, 50))}  p95 ${f2(pct(xs, 95))}  p99 ${f2(pct(xs, 99))} ms`
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  console.log(`server: ${command.join(' ')}`)
  console.log(`stream-text TTFT, ${added.length} pairs after ${WARMUP} warm-up pairs${stoppedEarly ? ' (stopped early: --max-seconds)' : ''}; fake's first token after ${firstDelayMs} ms; load ${load}`)
  console.log(row('fake provider direct', directs))
  console.log(row('through stream-text', throughs))
  console.log(row('added (through − direct)', added))
  console.log(row('GET ai/status (floor)', floor))
  console.log(`server CPU per request (${cpuN} alone each): stream-text ${cpuStream.toFixed(2)} ms, ai/status ${cpuStatus.toFixed(2)} ms`)
  const ours = fake.calls.filter((c) => c.headers['user-agent'] === 'content-service-ai')
  console.log(`upstream connections the service opened: ${new Set(ours.map((c) => c.remotePort)).size} for ${ours.length} requests`)
  console.log(`added at p50: ${pct(added, 50).toFixed(2)} ms (target < 5 ms)`)
  // bun run bench (scripts/bench/all.ts): the machine-readable summary.
  if (process.env.BENCH_JSON === '1') console.log(`BENCH_JSON ${JSON.stringify({ bench: 'ai', figures: { direct_median_ms: pct(directs, 50), through_median_ms: pct(throughs, 50), floor_median_ms: pct(floor, 50), added_median_ms: pct(added, 50), added_p99_ms: pct(added, 99) } })}`)
} finally {
  server.kill()
  await server.exited
  await fake.stop()
  rmSync(dir, { recursive: true, force: true })
}
