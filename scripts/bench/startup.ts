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
import { loadConfig } from '../../src/config'
import { createKernel } from '../../src/kernel/kernel'
import type { SpaceAccess } from '../../src/kernel/auth'
import { registerUser } from '../../src/modules/auth/service'
import { createComponent } from '../../src/modules/stories/components'
import { createSpace, findLiveSpace } from '../../src/modules/spaces/service'

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

async function seed(env: Record<string, string>, n: number, existing: number) {
  const t0 = performance.now()
  const deps = await createKernel(loadConfig({ ...env, LOG_LEVEL: 'warn' }))
  let spaceId: number
  if (existing === 0) {
    const { user, tenant } = await registerUser(deps, { email: `startup-${Date.now()}@example.com`, password: 'bench bench bench bench', name: 'Bench' })
    const principal = { kind: 'user' as const, tokenId: '', tenantId: tenant.id, userId: user.id, expiresAt: null }
    await createSpace(deps, principal, { slug: 'bench', name: 'Bench', default_lang: 'en' })
    const access: SpaceAccess = { principal, space: (await findLiveSpace(deps, 'bench'))!, role: 'admin' }
    await createComponent(deps, access, { name: 'article', is_root: true, schema: { headline: { type: 'text' }, body: { type: 'textarea' } } })
    spaceId = access.space.id
    await deps.db.query(
      `insert into stories (uuid, space_id, parent_id, lang, name, slug, full_path, depth, is_folder, status, version_no, has_unpublished_changes, created_at, updated_at)
       select gen_random_uuid(), $1, null, 'en', 'Section ' || i, 'section-' || i, '/section-' || i, 1, true, 'draft', 1, true, now(), now()
       from generate_series(0, 19) i`,
      [spaceId],
    )
  } else {
    spaceId = (await findLiveSpace(deps, 'bench'))!.id
  }
  // ~300 words per Story from a vocabulary of 5,000 made-up words, so the index has real work.
  await deps.db.query(
    `with rows as (
       insert into stories (uuid, space_id, parent_id, lang, name, slug, full_path, depth, is_folder, status, version_no, has_unpublished_changes, published_at, created_at, updated_at)
       select gen_random_uuid(), $1, f.id, 'en', 'Article ' || i, 'article-' || i, f.full_path || '/article-' || i, 2, false, 'published', 1, false, now(), now(), now()
       from generate_series($2::int, $3::int) i join stories f on f.space_id = $1 and f.full_path = '/section-' || (i % 20)
       returning id, name, slug
     )
     select count(*) from rows`,
    [spaceId, existing, existing + n - 1],
  )
  await deps.db.query(
    `insert into story_contents (story_id, lang, content, updated_at)
     select s.id, 'en', jsonb_build_object('type', 'doc', 'blocks', jsonb_build_array(jsonb_build_object('component', 'article', '_uid', 'a' || s.id, 'headline', s.name, 'body', x.body))), now()
     from stories s cross join lateral (select string_agg('w' || ((s.id * 7919 + k * 104729) % 5000)::text, ' ') as body from generate_series(1, 300) k) x
     where s.space_id = $1 and not s.is_folder and not exists (select 1 from story_contents c where c.story_id = s.id)`,
    [spaceId],
  )
  await deps.db.query(
    `insert into story_published (story_id, lang, name, content, version_no, published_at)
     select s.id, 'en', s.name, c.content, 1, now() from stories s join story_contents c on c.story_id = s.id
     where s.space_id = $1 and not s.is_folder and not exists (select 1 from story_published p where p.story_id = s.id)`,
    [spaceId],
  )
  await deps.db.query(
    `insert into story_counts (space_id, status, count) select space_id, status, count(*)::int from stories group by 1, 2
     on conflict (space_id, status) do update set count = excluded.count`,
  )
  await deps.db.query('analyze')
  await deps.close()
  console.log(`  seeded ${n} Stories (now ${existing + n}) in ${Math.round(performance.now() - t0)} ms`)
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
    await seed(db.env, size - total, total)
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
