// bun scripts/bench/beacon.ts [--driver=pglite|postgres|both] [--server=binary|source] [--stories=1000] [--raw=1000000]
//                             [--rollup-days=365] [--busy=200000] [--duration=10] [--connections=64] [--read-connections=16]
//                             [--rate=0 (beacons/s offered; 0 = as fast as the server answers)]
//                             [--pg=postgres://postgres@127.0.0.1:5432]
//
// The beacon and the analytics queries at scale.
// 1. Seeds a Space with --stories published Stories (bulk inserts), then --raw raw beacon rows spread over the last 90
//    days and --rollup-days days of rollups before today (every Story, two rows per day, and their per-Story totals),
//    then runs the rollup job's own code as it ran one tick ago (so queries read the last 5–10 minutes raw, more than
//    the 3–8 minutes the job leaves; the server's own job then runs on its schedule) — the state the job leaves.
//    Queries and the job read the real clock, so the bench runs with today's date.
// 2. Starts the server as its own process (the built executable, rebuilt first; or --server=source) and times
//    sequential management requests (stories over 30 and 366 days, overview, one Story) on that data.
// 3. A busy day (--busy, 0 skips it): with the server stopped, --busy more raw rows spread evenly over the 24 hours up
//    to now, the rollups of yesterday and today rebuilt by the job's code from the raw rows (as at step 1), the server
//    started again and the same requests timed.
// 4. Drives POST /v1/cdn/bench/_beacon with wrk (scripts/bench/wrk.lua in POST mode: text/plain bodies rotating over every
//    Story, each request from another X-Forwarded-For address) while a second wrk keeps reading Stories
//    (GET /v1/cdn/bench/stories/{path}); reports both, and how many beacons reached the table; then times the requests
//    once more, with the beacon run's burst on top (its rows are the last seconds', read raw).
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { stories, storyContents, storyPublished, storyVersions } from '../../src/modules/stories/tables'
import { loadConfig } from '../../src/config'
import type { SpaceAccess } from '../../src/kernel/auth'
import { createKernel, type Kernel } from '../../src/kernel/kernel'
import { ROLLUP_GRACE_MS, ROLLUP_SLOT_MS, rollup } from '../../src/modules/analytics/repo'
import { firstAccount, registerUser } from '../../src/modules/auth/service'
import { createSpace, findLiveSpace } from '../../src/modules/spaces/service'
import { createComponent } from '../../src/modules/stories/components'
import { emitBenchJson } from './json'
import { scratchDatabase } from './scratch'
import { pct, runWrk, waitFor, type WrkResult } from './wrk'

const root = join(import.meta.dir, '..', '..')
const { values: args } = parseArgs({
  options: {
    driver: { type: 'string', default: 'both' },
    server: { type: 'string', default: 'binary' },
    stories: { type: 'string', default: '1000' },
    raw: { type: 'string', default: '1000000' },
    'rollup-days': { type: 'string', default: '365' },
    busy: { type: 'string', default: '200000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    'read-connections': { type: 'string', default: '16' },
    rate: { type: 'string', default: '0' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
    /** Seed only (the busy day too, unless --busy=0), keep the database and print its environment (to explain queries by hand). */
    'seed-only': { type: 'boolean', default: false },
  },
})
const N_STORIES = Number(args.stories)
const N_RAW = Number(args.raw)
const ROLLUP_DAYS = Number(args['rollup-days'])
const BUSY = Number(args.busy)
/** Today (UTC) in SQL, whatever the server's time zone. */
const TODAY = `(now() at time zone 'UTC')::date`
const DURATION = Number(args.duration)
const drivers = args.driver === 'both' ? ['pglite', 'postgres'] : [args.driver!]

const ipOf = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`

function serverCommand(): string[] {
  if (args.server === 'source') return ['bun', join(root, 'bin', 'content-service.ts'), 'serve']
  const b = Bun.spawnSync(['bun', 'run', 'build'], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
  const bin = join(root, 'dist', 'content-service')
  if (b.exitCode !== 0 || !existsSync(bin)) throw new Error('build failed; run with --server=source to bench from source')
  return [bin, 'serve']
}

async function seed(env: Record<string, string>) {
  const deps = await createKernel(loadConfig({ ...env, LOG_LEVEL: 'warn' }))
  const t0 = performance.now()
  const { token, user, tenant } = firstAccount(await registerUser(deps, { email: `bench-${Date.now()}@example.com`, password: 'bench bench bench bench', name: 'Bench' }))
  const principal = { kind: 'user' as const, tokenId: '', tenantId: tenant.id, userId: user.id, expiresAt: null }
  await createSpace(deps, principal, { slug: 'bench', name: 'Bench', default_lang: 'en' })
  const bench: SpaceAccess = { principal, space: (await findLiveSpace(deps, 'bench'))!, role: 'admin' }
  await createComponent(deps, bench, { name: 'hero', is_root: true, schema: { headline: { type: 'text' } } })
  const now = new Date()
  const made: { uuid: string; path: string }[] = []
  for (let k = 0; k < N_STORIES; k += 500) {
    await deps.db.db.transaction(async (tx) => {
      const rows = await tx
        .insert(stories)
        .values(
          Array.from({ length: Math.min(500, N_STORIES - k) }, (_, j) => ({
            uuid: crypto.randomUUID(), spaceId: bench.space.id, parentId: null, lang: 'en', name: `Article ${k + j}`, slug: `article-${k + j}`,
            fullPath: `/article-${k + j}`, depth: 1, isFolder: false, status: 'published' as const, versionNo: 1, hasUnpublishedChanges: false,
            publishedAt: now, createdAt: now, updatedAt: now,
          })),
        )
        .returning({ id: stories.id, uuid: stories.uuid, fullPath: stories.fullPath, name: stories.name, slug: stories.slug })
      const doc = (r: { name: string }) => ({ type: 'doc', blocks: [{ component: 'hero', _uid: 'h', headline: r.name }] })
      await tx.insert(storyContents).values(rows.map((r) => ({ storyId: r.id, lang: 'en', content: doc(r), updatedAt: now })))
      await tx.insert(storyVersions).values(
        rows.map((r) => ({ storyId: r.id, versionNo: 1, lang: 'en', name: r.name, slug: r.slug, fullPath: r.fullPath, content: doc(r), authorUserId: user.id, createdAt: now })),
      )
      await tx.insert(storyPublished).values(rows.map((r) => ({ storyId: r.id, lang: 'en', name: r.name, content: doc(r), versionNo: 1, publishedAt: now })))
      for (const r of rows) made.push({ uuid: r.uuid, path: r.fullPath.slice(1) })
    })
  }
  await deps.db.query(
    `insert into story_counts (space_id, status, count) select space_id, status, count(*)::int from stories group by 1, 2
     on conflict (space_id, status) do update set count = excluded.count`,
  )
  const sid = bench.space.id
  // Raw rows: the last 90 days, evenly spread (so about 1/90 of them fall on today); rollups: every finished day.
  const t1 = performance.now()
  for (let k = 0; k < N_RAW; k += 200_000) {
    await deps.db.query(
      `insert into analytics_events (space_id, story_uuid, segment_key, lang, device, referrer, at)
       select $1, s.uuids[1 + (i % array_length(s.uuids, 1))],
              case when i % 10 = 0 then 'vip' end,
              (array['en', 'de', 'fr', null])[1 + i % 4],
              (array['desktop', 'mobile', 'tablet'])[1 + i % 3],
              (array['https://www.google.com', 'https://news.example', null, null, null])[1 + i % 5],
              now() - ((i::bigint * 7919) % (90 * 86400)) * interval '1 second'
         from generate_series($2::int, $3::int) i, (select array_agg(uuid) as uuids from stories where space_id = $1) s`,
      [sid, k + 1, Math.min(N_RAW, k + 200_000)],
    )
  }
  await deps.db.query(
    `insert into analytics_daily (space_id, day, story_uuid, lang, segment_key, device, referrer, mounts)
     select $1, (${TODAY} - d), st.uuid, v.lang, v.seg, v.device, v.ref, 1 + ((d * 31 + st.id) % 40)
       from generate_series(1, $2::int) d
       cross join (select id, uuid from stories where space_id = $1) st
       cross join (values ('en', '', 'desktop', ''), ('de', 'vip', 'mobile', 'https://www.google.com')) v(lang, seg, device, ref)`,
    [sid, ROLLUP_DAYS],
  )
  // The per-Story totals (where this version has them), as the rollup writes them.
  const [{ totals }] = await deps.db.query<{ totals: boolean }>(`select to_regclass('analytics_story_daily') is not null as totals`)
  if (totals) {
    await deps.db.query(`insert into analytics_story_daily (space_id, day, story_uuid, mounts) select space_id, day, story_uuid, sum(mounts)::int from analytics_daily group by 1, 2, 3`)
  }
  // Everything before today is rolled up; the job's own code rolls today's finished hours.
  await rolledTo(deps, 0)
  const state = await describe(deps)
  console.log(`  seeded ${made.length} Stories in ${Math.round(t1 - t0)} ms; ${state.raw} raw rows and ${state.daily} rollup rows in ${Math.round(performance.now() - t1)} ms; ${state.line}`)
  await deps.close()
  return { token, stories: made, ...state }
}

/** Every day before today − `daysBack` rolled up; then the rollup job's code as it ran one tick ago. */
async function rolledTo(deps: Kernel, daysBack: number) {
  await deps.db.query('delete from analytics_rollup_state')
  await deps.db.query(`insert into analytics_rollup_state (id, rolled_until, updated_at) values (1, ${TODAY} - $1::int, now())`, [daysBack])
  const slot = Math.floor(Date.now() / ROLLUP_SLOT_MS) * ROLLUP_SLOT_MS
  await rollup(deps.db.db, new Date(slot - ROLLUP_SLOT_MS + ROLLUP_GRACE_MS))
  await deps.db.query('analyze')
}

async function describe(deps: Kernel) {
  const [{ raw }] = await deps.db.query<{ raw: number }>('select count(*)::int as raw from analytics_events')
  const [{ daily }] = await deps.db.query<{ daily: number }>('select count(*)::int as daily from analytics_daily')
  const [{ today }] = await deps.db.query<{ today: number }>(`select count(*)::int as today from analytics_events where at >= ${TODAY}::timestamp at time zone 'UTC'`)
  // What a query reads raw: the rows from the watermark on.
  const [{ mark }] = await deps.db.query<{ mark: string }>(
    `select (rolled_until + rolled_minutes * interval '1 minute')::text as mark from analytics_rollup_state`,
  )
  const [{ unrolled }] = await deps.db.query<{ unrolled: number }>(
    `select count(*)::int as unrolled from analytics_events where at >= ($1::timestamp at time zone 'UTC')`,
    [mark],
  )
  return { raw, daily, today, unrolled, line: `${today} raw rows today, ${unrolled} of them after the watermark (${mark} UTC), read raw` }
}

/**
 * A busy day: `BUSY` more raw rows over the 24 hours up to now; yesterday's and today's rollups are rebuilt from the
 * raw rows by the job's code, as if it had run all along.
 */
async function seedBusyDay(env: Record<string, string>) {
  const deps = await createKernel(loadConfig({ ...env, LOG_LEVEL: 'warn' }))
  const sid = (await findLiveSpace(deps, 'bench'))!.id
  const t0 = performance.now()
  for (let k = 0; k < BUSY; k += 200_000) {
    await deps.db.query(
      `insert into analytics_events (space_id, story_uuid, segment_key, lang, device, referrer, at)
       select $1, s.uuids[1 + ((i * 7) % array_length(s.uuids, 1))],
              case when i % 7 = 0 then 'vip' end,
              (array['en', 'de', 'fr', 'it', null])[1 + i % 5],
              (array['desktop', 'mobile', 'tablet'])[1 + i % 3],
              (array['https://www.google.com', 'https://news.example', 'https://t.co', null, null])[1 + (i / 3) % 5],
              now() - (i::float8 / $4) * interval '24 hours'
         from generate_series($2::int, $3::int) i, (select array_agg(uuid) as uuids from stories where space_id = $1) s`,
      [sid, k + 1, Math.min(BUSY, k + 200_000), BUSY],
    )
  }
  await deps.db.query(`delete from analytics_daily where day >= ${TODAY} - 1`)
  const [{ totals }] = await deps.db.query<{ totals: boolean }>(`select to_regclass('analytics_story_daily') is not null as totals`)
  if (totals) await deps.db.query(`delete from analytics_story_daily where day >= ${TODAY} - 1`)
  await rolledTo(deps, 1)
  const state = await describe(deps)
  console.log(`  busy day: ${BUSY} more raw rows over the last 24 hours, rolled up in ${Math.round(performance.now() - t0)} ms; ${state.line}`)
  await deps.close()
  return state
}

async function sequential(base: string, token: string, cases: Record<string, string>) {
  const out: Record<string, { first: number; p50: number; p99: number }> = {}
  for (const [name, path] of Object.entries(cases)) {
    const times: number[] = []
    let first = 0
    for (let k = 0; k < 120; k++) {
      const t0 = performance.now()
      const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': ipOf(300_000 + k) } })
      if (!res.ok) throw new Error(`${name}: ${res.status} ${await res.text()}`)
      await res.arrayBuffer()
      if (k === 0) first = performance.now() - t0
      if (k >= 20) times.push(performance.now() - t0)
    }
    times.sort((a, b) => a - b)
    out[name] = { first: Math.round(first * 100) / 100, p50: Math.round(pct(times, 50) * 100) / 100, p99: Math.round(pct(times, 99) * 100) / 100 }
  }
  return out
}

let command: string[] | null = null

/** The server on `env`, its caches warmed (every Story read once, one beacon for the published-Story index). */
async function startServer(env: Record<string, string>, stories: { uuid: string; path: string }[]) {
  command ??= serverCommand()
  const port = 21_000 + Math.floor(Math.random() * 2000)
  const server = Bun.spawn(command, {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', TRUSTED_PROXIES: '127.0.0.1' },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  const base = `http://127.0.0.1:${port}`
  // A graceful stop flushes the buffer: then every accepted beacon is in the table (the server held PGlite's folder).
  const stop = async () => {
    if (server.exitCode === null) server.kill('SIGTERM')
    await server.exited
  }
  try {
    await waitFor(`${base}/v1/version`)
    const readPaths = stories.map((s) => `/v1/cdn/bench/stories/${s.path}`)
    for (let k = 0; k < readPaths.length; k += 32) {
      await Promise.all(readPaths.slice(k, k + 32).map((p, j) => fetch(base + p, { headers: { 'x-forwarded-for': ipOf(200_000 + k + j) } }).then((r) => r.arrayBuffer())))
    }
    await fetch(`${base}/v1/cdn/bench/_beacon`, { method: 'POST', body: JSON.stringify({ story_uuid: stories[0].uuid }), headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/124.0' } })
    await Bun.sleep(1500)
    return { base, readPaths, stop }
  } catch (err) {
    await stop()
    throw err
  }
}

async function run(driver: string) {
  console.log(`\n== ${driver} ==`)
  const { env, cleanup } = await scratchDatabase(driver as 'pglite' | 'postgres', args.pg, 'cs_bench_beacon')
  try {
    const seeded = await seed(env)
    if (args['seed-only']) {
      if (BUSY > 0) await seedBusyDay(env)
      console.log(`  kept: ${JSON.stringify(env)}`)
      process.exit(0)
    }
    const cases = {
      'stories, 30 days': '/v1/spaces/bench/analytics/stories',
      'stories, 366 days by week': `/v1/spaces/bench/analytics/stories?from=${dayOf(-365)}&to=${dayOf(0)}&granularity=week`,
      overview: '/v1/spaces/bench/analytics/overview',
      'one Story, 365 days': `/v1/spaces/bench/stories/${seeded.stories[1].uuid}/analytics?days=365`,
    }
    const first = await startServer(env, seeded.stories)
    let managementSeeded: Awaited<ReturnType<typeof sequential>>
    try {
      managementSeeded = await sequential(first.base, seeded.token, cases)
    } finally {
      await first.stop()
    }
    const busy = BUSY > 0 ? await seedBusyDay(env) : null
    const rawBefore = await countRaw(env)
    const server = await startServer(env, seeded.stories)
    try {
      const managementBusy = busy ? await sequential(server.base, seeded.token, cases) : null
      const langs = ['en', 'de', 'fr-CH', 'pt-br']
      const devices = ['desktop', 'mobile', 'tablet']
      const bodies: [string, string][] = seeded.stories.map((s, i) => [
        '/v1/cdn/bench/_beacon',
        JSON.stringify({ story_uuid: s.uuid, lang: langs[i % 4], device: devices[i % 3], referrer: i % 2 ? 'https://www.google.com/search?q=x' : '' }),
      ])
      const [beacons, reads] = await Promise.all([
        runWrk({ name: 'beacon', base: server.base }, {
          paths: bodies,
          method: 'POST',
          // What navigator.sendBeacon sends with a string body, from a browser on another site.
          headers: {
            'Content-Type': 'text/plain;charset=UTF-8',
            'User-Agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
            Origin: 'https://site.example',
          },
          rotateForwardedFor: 50_000,
          connections: Number(args.connections),
          threads: 1,
          durationSeconds: DURATION,
          // A paced run offers about --rate beacons/s: each connection pauses between requests (latency adds to it,
          // hence the 10% margin); the accepted rate is what the figures report.
          delayMs: Number(args.rate) > 0 ? Math.max(1, Math.floor((Number(args.connections) * 1000) / (Number(args.rate) * 1.1))) : undefined,
        }),
        runWrk({ name: 'reads', base: server.base }, { paths: server.readPaths, rotateForwardedFor: 8192, connections: Number(args['read-connections']), threads: 1, durationSeconds: DURATION }),
      ])
      const management = await sequential(server.base, seeded.token, cases)
      await server.stop()
      // Less the warm-up beacon.
      const stored = (await countRaw(env)) - rawBefore - 1
      return { driver, beacons, reads, stored, managementSeeded, managementBusy, management, seeded, busy }
    } finally {
      await server.stop()
    }
  } finally {
    await cleanup()
  }
}

const dayOf = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)

async function countRaw(env: Record<string, string>): Promise<number> {
  const deps = await createKernel(loadConfig({ ...env, LOG_LEVEL: 'warn' }))
  try {
    const [{ n }] = await deps.db.query<{ n: number }>('select count(*)::int as n from analytics_events')
    return Number(n)
  } finally {
    await deps.close()
  }
}

const results: Awaited<ReturnType<typeof run>>[] = []
for (const d of drivers) results.push(await run(d))

const line = (r: WrkResult) => `${r.rps} req/s, p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms, non-2xx ${r.non2xx3xx}, socket errors ${r.socketErrors}`
console.log(`\nPOST /v1/cdn/{space}/_beacon (wrk -t1 -c${args.connections}, ${DURATION} s${Number(args.rate) > 0 ? `, paced to about ${args.rate}/s` : ''}) while GET story reads run (wrk -t1 -c${args['read-connections']})`)
for (const r of results) {
  console.log(`${r.driver.padEnd(9)} | beacons: ${line(r.beacons)}`)
  console.log(`${''.padEnd(9)} | reads:   ${line(r.reads)}`)
  console.log(`${''.padEnd(9)} | beacons stored: ${r.stored} of ${r.beacons.requests} sent`)
}
const table = (driver: string, rows: Awaited<ReturnType<typeof sequential>>) => {
  for (const [k, v] of Object.entries(rows)) console.log(`${driver.padEnd(9)} | ${k.padEnd(28)} | first (cold) ${v.first} | p50 ${v.p50} | p99 ${v.p99}`)
}
console.log(`\nManagement queries (sequential, client-side latency in ms; after the first, counts up to a few minutes ago come from the in-memory cache) over ${results[0]?.seeded.raw} raw rows + ${results[0]?.seeded.daily} rollup rows`)
for (const r of results) {
  console.log(`${r.driver}: as seeded (${r.seeded.line})`)
  table(r.driver, r.managementSeeded)
  if (r.busy && r.managementBusy) {
    console.log(`${r.driver}: a busy day (${r.busy.line})`)
    table(r.driver, r.managementBusy)
  }
  console.log(`${r.driver}: after the beacon run (${r.stored} more raw rows, all from the last ${DURATION} s: read raw)`)
  table(r.driver, r.management)
}
const r0 = results[0]
if (r0) {
  emitBenchJson('beacon', {
    driver: r0.driver,
    beacons_rps: r0.beacons.rps,
    beacons_p99_ms: r0.beacons.p99Ms,
    reads_rps: r0.reads.rps,
    reads_p99_ms: r0.reads.p99Ms,
    stored: r0.stored,
    sent: r0.beacons.requests,
    management_30d_p99_ms: r0.management['stories, 30 days']?.p99,
  })
}
