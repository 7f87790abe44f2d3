// bun scripts/bench/presence.ts [--editors=1000] [--seconds=30] [--listeners=200] [--per-story=5]
//                                [--server=<executable or .ts entry>] [--cpu-prof=<dir>]
//
// Presence at scale against the built executable on a fresh embedded database: --editors simulated editors each
// heart-beating every 15 s (1,000 → ~67 heartbeats/s, spread evenly), --per-story editors per Story (default five; all
// of them on one Story with --per-story=1000), while --listeners
// clients hold the live stream of one of those Stories open. Reports heartbeat latency (p50/p99, measured at the client) and how long a presence change takes to
// reach all listeners (the fan-out). The load is a paced open loop of ~67 requests/s, far below what would make a
// Bun client compete with the server for a core. Also reports the server's CPU time (user + system, from /proc) per
// heartbeat over the timed window: on a loaded machine a steadier figure than latency. --server runs another build
// (e.g. `bin/content-service.ts` of another checkout, through bun, with no build first: A/B runs); --cpu-prof writes a
// CPU profile of the server (run through bun from source) into that folder.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const { values: args } = parseArgs({
  options: {
    editors: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '30' },
    listeners: { type: 'string', default: '200' },
    'per-story': { type: 'string', default: '5' },
    server: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
})
const EDITORS = Number(args.editors)
const SECONDS = Number(args.seconds)
const LISTENERS = Number(args.listeners)
const root = join(import.meta.dir, '..', '..')

const fromSource = args['cpu-prof'] !== undefined ? (args.server ?? join(root, 'bin', 'content-service.ts')) : args.server
if (!fromSource) {
  const build = Bun.spawnSync(['bun', 'run', 'build'], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
  if (build.exitCode !== 0) throw new Error('build failed')
}
const serverCmd = !fromSource
  ? [join(root, 'dist', 'content-service')]
  : fromSource.endsWith('.ts')
    ? ['bun', ...(args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`] : []), fromSource]
    : [fromSource]
const dir = mkdtempSync(join(tmpdir(), 'cs-presence-'))
const port = 19_000 + Math.floor(Math.random() * 1000)
/** The server's CPU time so far (user + system), ms. */
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100 // utime, stime in clock ticks (USER_HZ = 100)
}
const server = Bun.spawn([...serverCmd, 'serve'], {
  env: { ...process.env, DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', TRUSTED_PROXIES: '127.0.0.1' },
  stdout: 'ignore',
  stderr: 'inherit',
})
const base = `http://127.0.0.1:${port}`
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]

try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/v1/version`)).ok) break
    } catch {}
    if (i > 1200) throw new Error('server did not start') // 2 minutes: a first start on a loaded machine
    await Bun.sleep(100)
  }
  const call = async (method: string, path: string, token: string | null, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), 'x-forwarded-for': `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return text ? JSON.parse(text) : null
  }
  const { data: session } = await call('POST', '/v1/auth/register', null, { email: `p${Date.now()}@example.com`, password: 'bench bench bench bench', name: 'Bench' })
  const token = session.token
  await call('POST', '/v1/spaces', token, { slug: 'presence', name: 'Presence', default_lang: 'en' })
  await call('POST', '/v1/spaces/presence/components', token, { name: 'hero', is_root: true, schema: { headline: { type: 'text' } } })
  const blocks = Array.from({ length: 20 }, (_, i) => ({ component: 'hero', _uid: `b${i}`, headline: `Block ${i}` }))
  // Editors spread over Stories, --per-story on each (five: an editing team, as in a real Space); the listeners all
  // watch Story 0.
  const STORIES = Math.max(1, Math.ceil(EDITORS / Number(args['per-story'])))
  const paths: string[] = []
  for (let i = 0; i < STORIES; i++) {
    const { data: story } = await call('POST', '/v1/spaces/presence/stories', token, { name: `Page ${i}`, slug: `page-${i}`, content: { type: 'doc', blocks } })
    paths.push(`/v1/spaces/presence/stories/${story.uuid}`)
  }
  const path = paths[0]

  // Listeners: each records when it sees a presence event naming the probe session.
  const seen: Map<string, number>[] = []
  const controllers: AbortController[] = []
  await Promise.all(
    Array.from({ length: LISTENERS }, async (_, k) => {
      const ac = new AbortController()
      controllers.push(ac)
      const res = await fetch(base + path + '/live', { headers: { authorization: `Bearer ${token}` }, signal: ac.signal })
      const map = new Map<string, number>()
      seen[k] = map
      void (async () => {
        const reader = res.body!.getReader()
        const dec = new TextDecoder()
        let buf = ''
        try {
          for (;;) {
            const { value, done } = await reader.read()
            if (done) return
            buf += dec.decode(value, { stream: true })
            let i: number
            while ((i = buf.indexOf('\n\n')) !== -1) {
              const block = buf.slice(0, i)
              buf = buf.slice(i + 2)
              const m = /"block_path":"probe-(\d+)"|"block_path":"(blocks\/\d+)"/.exec(block)
              const id = /"session_id":"([^"]+)"/.exec(block)?.[1]
              if (m && id && block.startsWith('event: presence')) map.set(`${id} ${/"block_path":"([^"]+)"/.exec(block)![1]}`, performance.now())
            }
          }
        } catch {}
      })()
    }),
  )
  console.log(`${LISTENERS} listeners connected`)

  // Editors: session ids and a paced schedule (one beat every 15 s each, spread evenly).
  const sessions = Array.from({ length: EDITORS }, () => crypto.randomUUID())
  const interval = 15_000 / EDITORS
  const latencies: number[] = []
  const fanout: number[] = []
  let errors = 0
  const t0 = performance.now()
  const cpu0 = cpuMs(server.pid)
  let n = 0
  const inflight: Promise<void>[] = []
  while (performance.now() - t0 < SECONDS * 1000) {
    const due = t0 + n * interval
    const wait = due - performance.now()
    if (wait > 0) await Bun.sleep(wait)
    const k = n % EDITORS
    // Every beat moves to another block, so every beat is a presence change the listeners must see.
    const blockPath = `blocks/${(Math.floor(n / EDITORS) + k) % 20}`
    const sent = performance.now()
    const storyPath = paths[k % STORIES]
    const probe = storyPath === path
    inflight.push(
      call('POST', storyPath + '/presence', token, { session_id: sessions[k], block_path: blockPath, selection: { anchor: 0, head: 1 } })
        .then(() => {
          latencies.push(performance.now() - sent)
          if (probe) {
            setTimeout(() => {
              const key = `${sessions[k]} ${blockPath}`
              const arrivals = seen.map((m) => m.get(key)).filter((x): x is number => x !== undefined)
              if (arrivals.length === LISTENERS) fanout.push(Math.max(...arrivals) - sent)
              else fanout.push(Number.POSITIVE_INFINITY)
            }, 2000)
          }
        })
        .catch(() => void errors++),
    )
    n++
  }
  await Promise.all(inflight)
  const cpu = cpuMs(server.pid) - cpu0
  await Bun.sleep(2500)
  for (const ac of controllers) ac.abort()
  const rate = latencies.length / SECONDS
  const reached = fanout.filter(Number.isFinite)
  console.log(
    `heartbeats: ${latencies.length} in ${SECONDS} s (${rate.toFixed(1)}/s), errors ${errors}, ` +
      `p50 ${pct(latencies, 50).toFixed(2)} ms, p99 ${pct(latencies, 99).toFixed(2)} ms, max ${Math.max(...latencies).toFixed(2)} ms`,
  )
  console.log(`server CPU: ${cpu.toFixed(0)} ms over the timed window = ${((cpu / Math.max(1, latencies.length)) * 1000).toFixed(0)} µs per heartbeat (its fan-out included)`)
  console.log(
    `fan-out to ${LISTENERS} listeners: ${reached.length}/${fanout.length} probes reached every listener; ` +
      `until the last listener p50 ${reached.length ? pct(reached, 50).toFixed(2) : '-'} ms, p99 ${reached.length ? pct(reached, 99).toFixed(2) : '-'} ms`,
  )
  // bun run bench (scripts/bench/all.ts): the machine-readable summary.
  if (process.env.BENCH_JSON === '1') console.log(`BENCH_JSON ${JSON.stringify({ bench: 'presence', figures: { editors: EDITORS, per_story: Number(args['per-story']), listeners: LISTENERS, beats: latencies.length, errors, p50_ms: pct(latencies, 50), p99_ms: pct(latencies, 99), fanout_reached: reached.length, fanout_probes: fanout.length, fanout_p99_ms: reached.length ? pct(reached, 99) : null } })}`)
} finally {
  server.kill('SIGTERM') // a clean exit: --cpu-prof writes its profile then
  await Promise.race([server.exited, Bun.sleep(20_000)])
  server.kill()
  await server.exited
  rmSync(dir, { recursive: true, force: true })
}
