// bun run bench [--only=read,search] [--quick] [--out=FILE] [--no-build] [--timeout=SECONDS]
//
// Every bench script, one after another, each bounded (a bench that runs past its time is stopped and its row says
// so), then ONE table: figure, ours, the raw baseline where there is one, the ratio, the target and whether it is met.
// The machine's load (/proc/loadavg) at the start and the end and the commit head the table; --out=FILE writes it
// as markdown too, ready to paste into docs/performance.md.
//
// Each bench runs as its own process with BENCH_JSON=1 and prints, after its usual output, one line
// `BENCH_JSON {"bench":…,"figures":{…}}` (scripts/bench/json.ts); search's figures come from the `JSON [...]` line
// it always prints. The executable is built once here; the benches' own `bun run build` then reuses it
// (CS_BUILD_REUSE=1, scripts/build.ts). The benches' output streams through as it comes.
//
// --quick: short rounds and small data sets (a smoke run of every bench in a few minutes: not figures of record).
// Full runs use each bench's own defaults on the embedded database (PGlite), which is what the targets are about.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { BENCH_JSON_PREFIX, type Figures } from './json'

export interface Row {
  bench: string
  figure: string
  ours: string
  raw?: string
  ratio?: string
  target: string
  /** null: no target, or the figure is missing. */
  met: boolean | null
}

type F = Record<string, number | string | boolean | null>

export interface Bench {
  name: string
  script: string
  full: string[]
  quick: string[]
  /** Seconds before the bench is stopped (full run; a quick run gets at most 120 s). */
  timeout: number
  /** The figures out of the bench's output (default: its BENCH_JSON line). */
  parse?: (out: string) => F | null
  rows: (f: F) => Omit<Row, 'bench'>[]
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null)

/** 12,345 / 12.3 / 1.23 / 0.123: enough digits to read, no more. */
export function fmt(v: unknown, unit = ''): string {
  const n = num(v)
  if (n === null) return typeof v === 'string' ? v : '—'
  const abs = Math.abs(n)
  const s = abs >= 1000 ? Math.round(n).toLocaleString('en') : abs >= 100 ? n.toFixed(0) : abs >= 10 ? n.toFixed(1) : abs >= 1 ? n.toFixed(2) : n.toFixed(3)
  return unit ? `${s} ${unit}` : s
}

const ratioOf = (a: unknown, b: unknown) => {
  const x = num(a)
  const y = num(b)
  return x !== null && y !== null && y !== 0 ? x / y : null
}

/** `value < limit` (or >, ≥, ≤) when the value is there; null when it is not. */
function check(v: unknown, op: '<' | '<=' | '>=' | '>', limit: number): boolean | null {
  const n = num(v)
  if (n === null) return null
  return op === '<' ? n < limit : op === '<=' ? n <= limit : op === '>=' ? n >= limit : n > limit
}

/** Keys such as `restart_10000_ms`: the sizes a bench ran at. */
function sizes(f: F, re: RegExp): number[] {
  const out = new Set<number>()
  for (const k of Object.keys(f)) {
    const m = re.exec(k)
    if (m) out.add(Number(m[1]))
  }
  return [...out].sort((a, b) => a - b)
}

/** The figures of every `BENCH_JSON` line of `bench` in the output, in order (a line per round or per driver). */
export function parseBenchJsonLines(output: string, bench?: string): F[] {
  const found: F[] = []
  for (const line of output.split('\n')) {
    const at = line.indexOf(BENCH_JSON_PREFIX)
    if (at < 0) continue
    try {
      const x = JSON.parse(line.slice(at + BENCH_JSON_PREFIX.length)) as { bench?: unknown; figures?: unknown }
      if (typeof x !== 'object' || x === null || typeof x.figures !== 'object' || x.figures === null) continue
      if (bench && x.bench !== bench) continue
      found.push(x.figures as F)
    } catch {
      // A line that only looks like ours (a log line quoting it): not a summary.
    }
  }
  return found
}

/** The figures of a bench's `BENCH_JSON` line (the last one when there are several); null when there is none. */
export function parseBenchJson(output: string, bench?: string): F | null {
  return parseBenchJsonLines(output, bench).at(-1) ?? null
}

const nums = (xs: F[], k: string) => xs.map((x) => num(x[k])).filter((n): n is number => n !== null)
const worst = (xs: number[]) => (xs.length ? Math.max(...xs) : null)
const middle = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : null)

/** Benches that print a line per round: the worst round's p99, the median round's rate. */
function perRound(bench: string) {
  return (output: string): F | null => {
    const lines = parseBenchJsonLines(output, bench)
    if (!lines.length) return null
    return { ...lines[0], rounds: lines.length, rps: middle(nums(lines, 'rps')), p50_ms: middle(nums(lines, 'p50_ms')), p99_ms: worst(nums(lines, 'p99_ms')) }
  }
}

/** checkout.ts prints a line per driver: `<driver>_p99_ms`, and `exact` when every driver's every round was. */
export function parseCheckout(output: string): F | null {
  const lines = parseBenchJsonLines(output, 'checkout')
  if (!lines.length) return null
  const f: F = { exact: lines.every((l) => l.exact === true) }
  for (const l of lines) {
    f[`${l.driver}_p99_ms`] = num(l.p99_ms)
    f[`${l.driver}_cold_p99_ms`] = num(l.cold_p99_ms)
  }
  return f
}

/** search.ts prints `JSON [runs]` at its end: one run per size, flattened to `s<size>_<figure>`. */
export function parseSearchOutput(output: string): F | null {
  const line = output.split('\n').findLast((l) => l.startsWith('JSON ['))
  if (!line) return null
  let runs: {
    stories: number
    memory?: Record<string, number>
    in_process?: Record<string, { p99: number }>
    in_process_under_load?: Record<string, { p99: number }>
    executable?: { rss_mb?: number; http?: Record<string, { rps?: number; p99?: number; raw_rps?: number; raw_p99?: number }> }
  }[]
  try {
    runs = JSON.parse(line.slice(5))
  } catch {
    return null
  }
  if (!Array.isArray(runs)) return null
  const f: F = {}
  for (const r of runs) {
    const http = Object.values(r.executable?.http ?? {})
    const worst = (xs: (number | undefined)[], pick: (...n: number[]) => number) => {
      const ns = xs.filter((x): x is number => typeof x === 'number')
      return ns.length ? pick(...ns) : null
    }
    const p = `s${r.stories}_`
    f[`${p}rps`] = worst(http.map((x) => x.rps), Math.min)
    f[`${p}raw_rps`] = worst(http.map((x) => x.raw_rps), Math.min)
    f[`${p}p99_ms`] = worst(http.map((x) => x.p99), Math.max)
    f[`${p}raw_p99_ms`] = worst(http.map((x) => x.raw_p99), Math.max)
    f[`${p}in_process_p99_ms`] = worst(Object.values(r.in_process_under_load ?? {}).map((x) => x.p99), Math.max)
    f[`${p}index_heap_mb`] = num(r.memory?.index_heap_mb)
    f[`${p}rss_mb`] = num(r.executable?.rss_mb)
  }
  return f
}

export const BENCHES: Bench[] = [
  {
    name: 'startup',
    script: 'startup.ts',
    full: ['--stories=0,10000', '--runs=3', '--idle=5', '--no-build'],
    quick: ['--stories=0', '--runs=1', '--idle=2', '--no-build'],
    timeout: 900,
    rows: (f) => [
      { figure: 'first start on an empty folder → first 200', ours: fmt(f.first_start_ms, 'ms'), target: '< 3 s', met: check(f.first_start_ms, '<', 3000) },
      { figure: 'first start: CPU time of the server until then', ours: fmt(f.first_start_cpu_ms, 'ms'), target: '—', met: null },
      { figure: 'first start: peak RSS', ours: fmt(f.first_start_peak_mb, 'MB'), target: '< 400 MB', met: check(f.first_start_peak_mb, '<', 400) },
      { figure: 'restart on existing data (empty) → first 200', ours: fmt(f.restart_ms, 'ms'), target: '< 300 ms', met: check(f.restart_ms, '<', 300) },
      { figure: 'restart: CPU time of the server until then', ours: fmt(f.restart_cpu_ms, 'ms'), target: '—', met: null },
      { figure: 'idle RSS, empty data (after a restart)', ours: fmt(f.restart_idle_mb, 'MB'), target: '< 150 MB', met: check(f.restart_idle_mb, '<', 150) },
      ...sizes(f, /^restart_(\d+)_ms$/).flatMap((n) => [
        { figure: `restart with ${n.toLocaleString('en')} Stories → first 200`, ours: fmt(f[`restart_${n}_ms`], 'ms'), target: '< 1 s', met: check(f[`restart_${n}_ms`], '<', 1000) },
        {
          figure: `restart with ${n.toLocaleString('en')} Stories → first search answer (200 or 503 index_warming)`,
          ours: fmt(f[`search_first_${n}_ms`], 'ms'),
          target: '< 1 s',
          met: check(f[`search_first_${n}_ms`], '<', 1000),
        },
        { figure: `RSS with ${n.toLocaleString('en')} Stories, after warm-up`, ours: fmt(f[`rss_${n}_mb`], 'MB'), target: '< 250 MB', met: check(f[`rss_${n}_mb`], '<', 250) },
      ]),
    ],
  },
  {
    name: 'read',
    script: 'read.ts',
    full: ['--driver=pglite'],
    quick: ['--driver=pglite', '--stories=300', '--list-stories=0', '--rounds=1', '--duration=2', '--datasources=skip'],
    timeout: 1200,
    rows: (f) => [
      { figure: 'cached Story read (wrk -t2 -c64), req/s', ours: fmt(f.rps), raw: fmt(f.raw_rps), ratio: fmt(ratioOf(f.rps, f.raw_rps)), target: '≥ 0.7 of raw', met: check(ratioOf(f.rps, f.raw_rps), '>=', 0.7) },
      {
        figure: 'cached Story read p99 at equal offered load',
        ours: fmt(f.paced_p99_ms, 'ms'),
        raw: fmt(f.paced_raw_p99_ms, 'ms'),
        ratio: fmt(ratioOf(f.paced_p99_ms, f.paced_raw_p99_ms)),
        target: '≤ 1.5× raw',
        met: check(ratioOf(f.paced_p99_ms, f.paced_raw_p99_ms), '<=', 1.5),
      },
      { figure: '304 revalidation, req/s', ours: fmt(f.rps_304), raw: fmt(f.raw_rps_304), ratio: fmt(ratioOf(f.rps_304, f.raw_rps_304)), target: '—', met: null },
    ],
  },
  {
    name: 'search',
    script: 'search.ts',
    full: ['--sizes=10000'],
    quick: ['--sizes=500', '--duration=2', '--queries=200'],
    timeout: 1200,
    parse: parseSearchOutput,
    rows: (f) =>
      sizes(f, /^s(\d+)_rps$/).flatMap((n) => {
        const k = (x: string) => f[`s${n}_${x}`]
        const at = `${n.toLocaleString('en')} Stories`
        return [
          { figure: `public search over HTTP (${at}, worst kind), req/s`, ours: fmt(k('rps')), raw: fmt(k('raw_rps')), ratio: fmt(ratioOf(k('rps'), k('raw_rps'))), target: '—', met: null },
          { figure: `public search over HTTP (${at}, worst kind), p99`, ours: fmt(k('p99_ms'), 'ms'), raw: fmt(k('raw_p99_ms'), 'ms'), ratio: fmt(ratioOf(k('p99_ms'), k('raw_p99_ms'))), target: '< 15 ms', met: check(k('p99_ms'), '<', 15) },
          { figure: `search in process under load (${at}, worst kind), p99`, ours: fmt(k('in_process_p99_ms'), 'ms'), target: '< 5 ms', met: check(k('in_process_p99_ms'), '<', 5) },
          { figure: `search index heap (${at})`, ours: fmt(k('index_heap_mb'), 'MB'), target: n <= 10_000 ? '< 100 MB' : '< 500 MB', met: check(k('index_heap_mb'), '<', n <= 10_000 ? 100 : 500) },
        ]
      }),
  },
  {
    name: 'beacon',
    script: 'beacon.ts',
    full: ['--driver=pglite'],
    quick: ['--driver=pglite', '--stories=100', '--raw=10000', '--rollup-days=10', '--busy=0', '--duration=2'],
    timeout: 900,
    rows: (f) => [
      { figure: 'beacons accepted (wrk -c64 at full speed, Story reads beside), req/s', ours: fmt(f.beacons_rps), target: '≥ 5,000/s', met: check(f.beacons_rps, '>=', 5000) },
      { figure: 'beacon p99 (at saturation)', ours: fmt(f.beacons_p99_ms, 'ms'), target: '—', met: null },
      { figure: 'beacons stored / sent', ours: `${fmt(f.stored)} / ${fmt(f.sent)}`, target: 'all', met: num(f.stored) === null ? null : num(f.stored)! >= num(f.sent)! },
      { figure: 'management query, stories over 30 days, p99', ours: fmt(f.management_30d_p99_ms, 'ms'), target: '—', met: null },
    ],
  },
  {
    name: 'forms',
    script: 'forms.ts',
    full: ['--action=email'],
    quick: ['--action=email', '--seconds=3', '--rounds=1'],
    timeout: 600,
    parse: perRound('forms'),
    rows: (f) => [
      { figure: `form submits (${f.action ?? '?'} action, wrk -c${f.connections ?? '?'}), req/s (median round)`, ours: fmt(f.rps), target: '≥ 500/s', met: check(f.rps, '>=', 500) },
      { figure: `form submit p99 (${f.action ?? '?'} action, worst round)`, ours: fmt(f.p99_ms, 'ms'), target: '< 30 ms', met: check(f.p99_ms, '<', 30) },
    ],
  },
  {
    name: 'webhooks',
    script: 'webhooks.ts',
    full: [],
    quick: ['--publishes', '100'],
    timeout: 600,
    rows: (f) => [
      { figure: 'webhook backlog drain, deliveries/s', ours: fmt(f.backlog_deliveries_per_s), target: '—', met: null },
      { figure: 'webhook commit → receipt, live, p99', ours: fmt(f.live_p99_ms, 'ms'), target: '—', met: null },
      { figure: 'webhook deliveries received / expected', ours: `${fmt(f.received)} / ${fmt(f.expected)}`, target: 'all', met: num(f.received) === null ? null : num(f.received)! >= num(f.expected)! },
    ],
  },
  {
    name: 'presence',
    script: 'presence.ts',
    full: ['--per-story=1000', '--seconds=30'],
    quick: ['--editors=200', '--per-story=200', '--listeners=20', '--seconds=5'],
    timeout: 600,
    rows: (f) => [
      { figure: `presence: ${fmt(f.editors)} editors, ${fmt(f.per_story)} per Story, heartbeat p99`, ours: fmt(f.p99_ms, 'ms'), target: '< 50 ms', met: check(f.p99_ms, '<', 50) },
      { figure: 'presence fan-out to every listener, p99', ours: fmt(f.fanout_p99_ms, 'ms'), target: '—', met: null },
    ],
  },
  {
    name: 'images',
    script: 'images.ts',
    full: [],
    quick: ['--samples=2', '--seconds=2', '--concurrency=4'],
    timeout: 900,
    rows: (f) => [
      { figure: '2000×1333 JPEG → 800 px WebP, median', ours: fmt(f.webp_ms, 'ms'), target: '—', met: null },
      { figure: '2000×1333 JPEG → 800 px AVIF, median', ours: fmt(f.avif_ms, 'ms'), target: '—', met: null },
      { figure: 'Story reads during a transform burst / alone', ours: fmt(f.reads_during_rps), raw: fmt(f.reads_alone_rps), ratio: fmt(ratioOf(f.reads_during_rps, f.reads_alone_rps)), target: '—', met: null },
      { figure: '100 MB upload: RSS growth of the last upload', ours: fmt(f.upload_rss_growth_mb, 'MB'), target: '—', met: null },
    ],
  },
  {
    name: 'events',
    script: 'events.ts',
    full: ['--no-build'],
    quick: ['--no-build', '--seconds=3', '--rounds=1'],
    timeout: 600,
    parse: perRound('events'),
    rows: (f) => [
      { figure: `event registrations at ${fmt(f.rate)}/s (PGlite), p99 of the worst round`, ours: fmt(f.p99_ms, 'ms'), target: '< 50 ms', met: check(f.p99_ms, '<', 50) },
    ],
  },
  {
    name: 'ai',
    script: 'ai.ts',
    full: [],
    quick: ['--requests=30'],
    timeout: 600,
    rows: (f) => [
      {
        figure: 'stream-text time to first token, added over the provider (median)',
        ours: fmt(f.through_median_ms, 'ms'),
        raw: fmt(f.direct_median_ms, 'ms'),
        ratio: fmt(f.added_median_ms, 'ms added'),
        target: '< 5 ms added',
        met: check(f.added_median_ms, '<', 5),
      },
    ],
  },
  {
    name: 'checkout',
    script: 'checkout.ts',
    full: [],
    quick: ['--drivers=postgres', '--rounds=1'],
    timeout: 900,
    parse: parseCheckout,
    rows: (f) => [
      ...(['postgres', 'pglite'] as const)
        .filter((d) => f[`${d}_p99_ms`] !== undefined)
        .map((d) => ({
          figure: `200 concurrent checkouts of one product (${d}), p99 of the worst round after a cold one`,
          ours: `${fmt(f[`${d}_p99_ms`], 'ms')} (cold round ${fmt(f[`${d}_cold_p99_ms`], 'ms')})`,
          target: d === 'postgres' ? '< 100 ms' : '—',
          met: d === 'postgres' ? check(f[`${d}_p99_ms`], '<', 100) : null,
        })),
      { figure: 'checkout: exactly `stock` orders in every round', ours: f.exact === true ? 'yes' : f.exact === false ? 'NO' : '—', target: 'yes', met: typeof f.exact === 'boolean' ? f.exact : null },
    ],
  },
  {
    name: 'plugins',
    script: 'plugins.ts',
    full: [],
    quick: ['--rounds=2', '--per-round=10'],
    timeout: 600,
    rows: (f) => [
      { figure: 'Story save with one allowing plugin, added over the plugin (median)', ours: fmt(f.added_ms, 'ms'), target: '< 5 ms', met: check(f.added_ms, '<', 5) },
    ],
  },
  {
    name: 'overlay',
    script: 'overlay.ts',
    full: [],
    quick: ['--paths=100', '--rules=10', '--duration=2', '--rounds=1'],
    timeout: 900,
    rows: (f) => [
      {
        figure: 'DOM overlay reads / Story reads, req/s',
        ours: fmt(f.overlay_rps),
        raw: fmt(f.story_rps),
        ratio: fmt(ratioOf(f.overlay_rps, f.story_rps)),
        target: '≥ 0.9',
        met: check(ratioOf(f.overlay_rps, f.story_rps), '>=', 0.9),
      },
    ],
  },
]

/** The rows of one bench from its output; one "failed" row when its figures are missing. */
export function rowsFor(bench: Bench, output: string, failure?: string): Row[] {
  const f = (bench.parse ?? ((o: string) => parseBenchJson(o, bench.name)))(output)
  if (!f) return [{ bench: bench.name, figure: failure ?? 'no figures in its output', ours: '—', target: '—', met: null }]
  const rows = bench.rows(f).map((r) => ({ bench: bench.name, ...r }))
  if (failure) rows.push({ bench: bench.name, figure: failure, ours: '—', target: '—', met: null })
  return rows
}

export function markdownTable(rows: Row[]): string {
  const cell = (s: string | undefined) => (s ?? '').replaceAll('|', '\\|')
  const met = (m: boolean | null) => (m === true ? 'met' : m === false ? '**not met**' : '—')
  const lines = ['| bench | figure | ours | raw | ratio | target | met |', '|---|---|---|---|---|---|---|']
  for (const r of rows) lines.push(`| ${[r.bench, r.figure, r.ours, r.raw, r.ratio, r.target].map(cell).join(' | ')} | ${met(r.met)} |`)
  return lines.join('\n')
}

/** Streams a child's output through while keeping it; stops it (its whole process group) after `seconds`. */
async function runBench(cmd: string[], env: Record<string, string>, seconds: number): Promise<{ output: string; code: number | null; timedOut: boolean }> {
  const proc = Bun.spawn(cmd, { env, stdout: 'pipe', stderr: 'inherit', detached: true })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    try {
      process.kill(-proc.pid, 'SIGTERM')
    } catch {}
    setTimeout(() => {
      try {
        process.kill(-proc.pid, 'SIGKILL')
      } catch {}
    }, 5000).unref()
  }, seconds * 1000)
  let output = ''
  const decoder = new TextDecoder()
  const reader = proc.stdout.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    const text = decoder.decode(value, { stream: true })
    output += text
    process.stdout.write(text)
  }
  const code = await proc.exited
  clearTimeout(timer)
  return { output, code: timedOut ? null : code, timedOut }
}

const loadavg = async () => (await Bun.file('/proc/loadavg').text().catch(() => '? ? ?')).split(' ').slice(0, 3).join(' ')

async function main() {
  const { values: args } = parseArgs({
    options: {
      only: { type: 'string' },
      quick: { type: 'boolean', default: false },
      out: { type: 'string' },
      'no-build': { type: 'boolean', default: false },
      timeout: { type: 'string' },
    },
  })
  const root = join(import.meta.dir, '..', '..')
  const names = args.only ? args.only.split(',').map((s) => s.trim()).filter(Boolean) : BENCHES.map((b) => b.name)
  const unknown = names.filter((n) => !BENCHES.some((b) => b.name === n))
  if (unknown.length) throw new Error(`unknown bench ${unknown.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}`)
  const chosen = BENCHES.filter((b) => names.includes(b.name))
  // Most benches drive the server with wrk: say so once, before minutes of runs end in the same error.
  if (!Bun.which('wrk')) throw new Error('wrk is not installed (most benches drive the server with it): apt-get install -y wrk')
  const git = (a: string[]) => Bun.spawnSync(['git', ...a], { cwd: root }).stdout.toString().trim()
  const commit = `${git(['rev-parse', '--short', 'HEAD'])}${git(['status', '--porcelain', '--untracked-files=no']) ? ' (with uncommitted changes)' : ''}`
  const loadStart = await loadavg()
  const started = new Date()
  console.log(`bun run bench${args.quick ? ' --quick' : ''}: ${chosen.map((b) => b.name).join(', ')} — commit ${commit}, load average ${loadStart}`)

  if (!args['no-build']) {
    const b = Bun.spawnSync(['bun', 'run', 'build'], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
    if (b.exitCode !== 0) throw new Error('build failed')
  }
  const env = { ...(process.env as Record<string, string>), BENCH_JSON: '1', CS_BUILD_REUSE: '1' }
  const rows: Row[] = []
  for (const bench of chosen) {
    const seconds = Number(args.timeout) || (args.quick ? Math.min(120, bench.timeout) : bench.timeout)
    const cmd = ['bun', join(import.meta.dir, bench.script), ...(args.quick ? bench.quick : bench.full)]
    console.log(`\n== ${bench.name}: ${cmd.slice(1).join(' ')} (stopped after ${seconds} s; load average ${await loadavg()})`)
    const t0 = performance.now()
    const r = await runBench(cmd, env, seconds)
    const failure = r.timedOut ? `stopped after ${seconds} s` : r.code !== 0 ? `exited with ${r.code}` : undefined
    rows.push(...rowsFor(bench, r.output, failure))
    console.log(`== ${bench.name}: ${failure ?? 'done'} in ${((performance.now() - t0) / 1000).toFixed(0)} s`)
  }
  const loadEnd = await loadavg()
  const head =
    `${started.toISOString().slice(0, 16).replace('T', ' ')} UTC — \`bun run bench${args.quick ? ' --quick' : ''}${args.only ? ` --only=${args.only}` : ''}\`, ` +
    `commit ${commit}, Bun ${Bun.version}, ${navigator.hardwareConcurrency} CPUs; load average ${loadStart} at the start, ${loadEnd} at the end` +
    `${args.quick ? ' (quick: short rounds and small data, a smoke run, not figures of record)' : ''}.`
  const table = markdownTable(rows)
  console.log(`\n${head}\n\n${table}`)
  if (args.out) {
    writeFileSync(args.out, `${head}\n\n${table}\n`)
    console.log(`\nwritten to ${args.out}`)
  }
}

if (import.meta.main) await main()
