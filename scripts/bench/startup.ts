// bun run bench:startup [--stories=0,10000,50000] [--driver=pglite|postgres] [--runs=3] [--idle=5]
//                       [--pg=postgres://postgres@127.0.0.1:5432] [--no-build]
//
// Start-up time and memory of the built executable (dist/content-service, rebuilt first), one process at a time:
// 1. First start on an empty data folder (or an empty Postgres database): spawn → first 200 of GET /v1/health/live,
//    the peak RSS until then (VmHWM) and the RSS after --idle seconds of idleness.
// 2. Restart on that data: stop (SIGTERM, wait for the exit), start again → first 200; --runs times, median.
// 3. For every size in --stories above 0: with the server stopped, bulk-insert that many published Stories of about
//    300 words (one Space, 20 section folders), then restart --runs times: first 200 of /v1/health/live, the first
//    answer of the public search (200, or 503 while the index warms), the first search 200, and the RSS after warm-up
//    (the search answered, one read of every 100th Story, then --idle seconds).
// RSS is read from /proc/<pid>/status (Linux); times are wall-clock from spawn, probing every 10 ms. The CPU time the
// server used until its first 200 (/proc/<pid>/stat, every thread) is printed beside: on a loaded machine wall times
// are upper bounds, CPU times move much less.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { Subprocess } from 'bun'
import { emitBenchJson, type Figures } from './json'
import { scratchDatabase } from './scratch'
import { seedStories } from './seed-stories'

const root = join(import.meta.dir, '..', '..')
const { values: args } = parseArgs({
  options: {
    stories: { type: 'string', default: '0,10000,50000' },
    driver: { type: 'string', default: 'pglite' },
    runs: { type: 'string', default: '3' },
    idle: { type: 'string', default: '5' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
    'no-build': { type: 'boolean', default: false },
  },
})
const SIZES = args.stories!.split(',').map(Number).filter((n) => n > 0)
const RUNS = Math.max(1, Number(args.runs))
const IDLE_MS = Number(args.idle) * 1000
const driver = args.driver === 'postgres' ? 'postgres' : 'pglite'

if (!args['no-build']) {
  const b = Bun.spawnSync(['bun', 'run', 'build'], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
  if (b.exitCode !== 0) throw new Error('build failed')
}
const BIN = join(root, 'dist', 'content-service')
if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run bun run build`)

function memMb(pid: number): { rss: number; peak: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? NaN)
  return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) }
}

/** CPU time (user + system, every thread) the process has used, in ms (Linux clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

interface Started {
  proc: Subprocess
  base: string
  t0: number
  firstOk: number
  /** CPU ms the server had used at its first 200. */
  cpu: number
}

async function start(env: Record<string, string>): Promise<Started> {
  const port = 20_000 + Math.floor(Math.random() * 10_000)
  const base = `http://127.0.0.1:${port}`
  const t0 = performance.now()
  const proc = Bun.spawn([BIN, 'serve'], {
    env: { ...(process.env as Record<string, string>), ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the server exited with ${proc.exitCode}`)
    try {
      const r = await fetch(`${base}/v1/health/live`)
      if (r.status === 200) return { proc, base, t0, firstOk: performance.now() - t0, cpu: cpuMs(proc.pid) }
    } catch {}
    if (performance.now() - t0 > 120_000) throw new Error('no 200 within 120 s')
    await Bun.sleep(10)
  }
}

async function stop(s: Started) {
  s.proc.kill('SIGTERM')
  await s.proc.exited
}


async function restartWithSearch(env: Record<string, string>, total: number) {
  const s = await start(env)
  let firstSearch = NaN
  let firstSearchStatus = 0
  let searchOk = NaN
  for (;;) {
    const r = await fetch(`${s.base}/v1/cdn/bench/search?q=w17`, { headers: { 'x-forwarded-for': '10.0.0.1' } })
    await r.arrayBuffer()
    const at = performance.now() - s.t0
    if (Number.isNaN(firstSearch)) {
      firstSearch = at
      firstSearchStatus = r.status
    }
    if (r.status === 200) {
      searchOk = at
      break
    }
    if (at > 180_000) throw new Error(`search still answers ${r.status} after 180 s`)
    await Bun.sleep(10)
  }
  for (let i = 0; i < total; i += 100) {
    const r = await fetch(`${s.base}/v1/cdn/bench/stories/section-${i % 20}/article-${i}`, { headers: { 'x-forwarded-for': `10.0.${(i >> 8) & 255}.${i & 255}` } })
    await r.arrayBuffer()
  }
  await Bun.sleep(IDLE_MS)
  const mem = memMb(s.proc.pid)
  await stop(s)
  return { firstOk: s.firstOk, firstSearch, firstSearchStatus, searchOk, rss: mem.rss, peak: mem.peak }
}

const db = await scratchDatabase(driver, args.pg!, 'cs_bench_startup')
const rows: string[][] = []
const figures: Figures = {}
try {
  console.log(`start-up and memory of ${BIN} (${driver}), ${RUNS} runs, ${args.idle} s idle before RSS; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)
  const first = await start(db.env)
  const firstMem = memMb(first.proc.pid)
  await Bun.sleep(IDLE_MS)
  const idleMem = memMb(first.proc.pid)
  await stop(first)
  rows.push(['first start, empty', `${Math.round(first.firstOk)} ms (CPU ${first.cpu} ms)`, `${firstMem.peak} MB`, `${idleMem.rss} MB`, ''])
  Object.assign(figures, { first_start_ms: Math.round(first.firstOk), first_start_cpu_ms: first.cpu, first_start_peak_mb: idleMem.peak, first_start_idle_mb: idleMem.rss })
  console.log(`  first start: ${Math.round(first.firstOk)} ms to 200 (CPU ${first.cpu} ms), peak ${idleMem.peak} MB (${firstMem.peak} MB at the 200), idle ${idleMem.rss} MB`)

  const restarts: number[] = []
  const restartCpu: number[] = []
  const idle: number[] = []
  for (let r = 0; r < RUNS; r++) {
    const s = await start(db.env)
    restarts.push(s.firstOk)
    restartCpu.push(s.cpu)
    await Bun.sleep(IDLE_MS)
    idle.push(memMb(s.proc.pid).rss)
    await stop(s)
  }
  rows.push(['restart, empty', `${Math.round(median(restarts))} ms (CPU ${median(restartCpu)} ms)`, '', `${median(idle)} MB`, ''])
  Object.assign(figures, { restart_ms: Math.round(median(restarts)), restart_cpu_ms: median(restartCpu), restart_idle_mb: median(idle) })
  console.log(`  restart (empty): ${restarts.map(Math.round).join(', ')} ms (CPU ${restartCpu.join(', ')} ms); idle RSS ${idle.join(', ')} MB`)

  let total = 0
  for (const size of SIZES) {
    await seedStories(db.env, size - total, total)
    total = size
    const runs: Awaited<ReturnType<typeof restartWithSearch>>[] = []
    for (let r = 0; r < RUNS; r++) runs.push(await restartWithSearch(db.env, total))
    const m = (k: keyof (typeof runs)[number]) => median(runs.map((x) => x[k] as number))
    figures[`restart_${total}_ms`] = Math.round(m('firstOk'))
    figures[`search_first_${total}_ms`] = Math.round(m('firstSearch'))
    figures[`search_ok_${total}_ms`] = Math.round(m('searchOk'))
    figures[`rss_${total}_mb`] = m('rss')
    rows.push([
      `restart, ${total} Stories`,
      `${Math.round(m('firstOk'))} ms`,
      `${m('peak')} MB`,
      `${m('rss')} MB`,
      `first answer ${Math.round(m('firstSearch'))} ms (${runs.map((x) => x.firstSearchStatus).join('/')}), first 200 ${Math.round(m('searchOk'))} ms`,
    ])
    console.log(`  ${total} Stories: ${runs.map((x) => `200 in ${Math.round(x.firstOk)} ms, search ${x.firstSearchStatus} at ${Math.round(x.firstSearch)} ms, 200 at ${Math.round(x.searchOk)} ms, RSS ${x.rss} MB (peak ${x.peak})`).join('; ')}`)
  }
} finally {
  await db.cleanup()
}

console.log(`\n| case | spawn → first 200 | peak RSS | RSS after idle / warm-up | search |\n|---|---|---|---|---|`)
for (const r of rows) console.log(`| ${r.join(' | ')} |`)
emitBenchJson('startup', figures)
