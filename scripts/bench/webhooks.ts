#!/usr/bin/env bun
// Webhook fan-out benchmark: N Story publishes fanned out to S subscriptions on a local receiver.
//
//   bun scripts/bench/webhooks.ts                      # embedded PGlite in a temporary data folder (the default)
//   DATABASE_URL=postgres://... bun scripts/bench/webhooks.ts   # real Postgres (a fresh database is created)
//   options: --publishes 1000 --subscriptions 3 --concurrency 4 (publish requests in flight in the backlog phase)
//
// Every publish goes through the real API (POST /v1/spaces/{space}/stories/{uuid}/publish) of an in-process app;
// the job workers run in the same process, as `serve` runs them. Two phases:
//   backlog: N publishes commit while no worker runs, then the workers start: time to drain the N×S deliveries
//            (relay and fan-out included) and deliveries per second — the capacity of one instance.
//   live:    the workers run while N more Stories are published one after another: p50/p99 latency from each
//            event's commit (the moment the bus hands it over) to its receipt, time to drain, deliveries per second.
// The receiver runs in its own process, so the service's event loop is not shared with it; both read the same
// system clock (performance.timeOrigin + performance.now()).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import { emitBenchJson } from './json'

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    receiver: { type: 'boolean' },
    publishes: { type: 'string', default: '1000' },
    subscriptions: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '4' },
  },
})

const wallNow = () => performance.timeOrigin + performance.now()

if (values.receiver) {
  // Receiver process: answer 200 at once, note when each delivery arrived.
  const seen: { delivery: string; story: string; at: number }[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      if (req.method === 'GET') return Response.json(seen)
      const at = wallNow()
      const body = (await req.json()) as { story?: { uuid?: string } }
      seen.push({ delivery: req.headers.get('x-service-delivery') ?? '', story: body.story?.uuid ?? '', at })
      return new Response('ok')
    },
  })
  console.log(JSON.stringify({ port: server.port }))
} else {
  await main()
}

async function main() {
  const publishes = Number(values.publishes)
  const subscriptionCount = Number(values.subscriptions)
  const concurrency = Number(values.concurrency)
  const serverUrl = process.env.DATABASE_URL
  const dataDir = mkdtempSync(join(tmpdir(), 'cs-bench-'))
  let databaseUrl: string | undefined
  let dropDb: (() => Promise<void>) | null = null
  if (serverUrl) {
    const name = `cs_bench_${Date.now().toString(36)}`
    const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
    await admin.unsafe(`create database ${name}`)
    await admin.end()
    const u = new URL(serverUrl)
    u.pathname = `/${name}`
    databaseUrl = u.toString()
    dropDb = async () => {
      const a = postgres(serverUrl, { max: 1, onnotice: () => {} })
      await a.unsafe(`drop database if exists ${name} with (force)`)
      await a.end()
    }
  }

  const receiverProc = Bun.spawn(['bun', import.meta.path, '--receiver'], { stdout: 'pipe', stderr: 'inherit' })
  const reader = receiverProc.stdout.getReader()
  const first = new TextDecoder().decode((await reader.read()).value)
  const receiverUrl = `http://127.0.0.1:${JSON.parse(first.split('\n')[0]).port}`

  const { loadConfig } = await import('../../src/config')
  const { createKernel } = await import('../../src/kernel/kernel')
  const { createRuntime } = await import('../../src/app')
  const { startWorkers } = await import('../../src/kernel/jobs')
  const config = loadConfig({
    ...process.env,
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl ?? '',
    LOG_LEVEL: 'error',
    SERVICE_OUTBOUND_ALLOW_PRIVATE: 'true',
    SERVICE_SECRET_KEY: process.env.SERVICE_SECRET_KEY ?? 'a'.repeat(64),
  })
  const deps = await createKernel(config)
  const app = createRuntime(deps)
  await app.start()
  // Publishes arrive over real HTTP, as they do in production (and each request is its own turn of the event loop).
  const server = app.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 20, idleTimeout: 30 })
  const apiBase = `http://127.0.0.1:${server.port}/v1`
  const call = async (method: string, path: string, token?: string, body?: unknown) => {
    const res = await fetch(`${apiBase}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const json = (await res.json()) as { data: any }
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
    return json.data
  }

  const user = await call('POST', '/auth/register', undefined, {
    email: `bench-${Date.now()}@example.com`,
    password: 'correct horse battery staple',
    name: 'Bench',
  })
  const space = await call('POST', '/spaces', user.token, { slug: `bench-${Date.now().toString(36)}`, name: 'Bench' })
  for (let i = 0; i < subscriptionCount; i++) {
    await call('POST', `/spaces/${space.slug}/webhooks`, user.token, {
      label: `bench ${i}`,
      url: `${receiverUrl}/hook/${i}`,
      events: ['story.published'],
    })
  }
  // Two sets of Stories: one for the backlog phase, one for the live phase.
  const backlogUuids: string[] = []
  const liveUuids: string[] = []
  for (let i = 0; i < publishes * 2; i++) {
    const story = await call('POST', `/spaces/${space.slug}/stories`, user.token, { name: `Story ${i}`, slug: `story-${i}` })
    ;(i < publishes ? backlogUuids : liveUuids).push(story.uuid)
  }
  // Creating Stories wrote version.created events (no subscription wants them): relay them before measuring.
  await deps.jobs.runDueJobs()

  const committedAt = new Map<string, number>()
  deps.bus.subscribe('story.published', (e) => {
    committedAt.set(e.payload.story.uuid, wallNow())
  })
  const publishAll = async (uuids: string[], inFlight: number) => {
    let next = 0
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < uuids.length) {
          const uuid = uuids[next++]
          await call('POST', `/spaces/${space.slug}/stories/${uuid}/publish`, user.token)
        }
      }),
    )
  }
  const receipts = async (want: number) => {
    let seen: { delivery: string; story: string; at: number }[] = []
    const deadline = Date.now() + 600_000
    while (Date.now() < deadline) {
      seen = (await (await fetch(receiverUrl)).json()) as typeof seen
      if (seen.length >= want) break
      await Bun.sleep(20)
    }
    return seen
  }
  const expected = publishes * subscriptionCount
  const percentiles = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b)
    const at = (p: number) => +sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(1)
    return { p50: at(50), p90: at(90), p99: at(99), max: at(100) }
  }

  // Phase 1, capacity: the publishes commit while no worker runs; then the workers drain the backlog
  // (outbox relay and fan-out included).
  const p1Start = wallNow()
  await publishAll(backlogUuids, concurrency)
  const p1Published = wallNow()
  const workersStart = wallNow()
  let workers = await startWorkers(deps)
  const backlog = await receipts(expected)
  const backlogDrain = (Math.max(...backlog.map((s) => s.at)) - workersStart) / 1000
  await workers.stop()

  // Phase 2, latency: the workers run while the Stories are published one after another (as editors do), each
  // event timed from its commit to its receipt.
  workers = await startWorkers(deps)
  const p2Start = wallNow()
  await publishAll(liveUuids, 1)
  const p2Published = wallNow()
  const all = await receipts(expected * 2)
  await workers.stop()
  const live = all.filter((s) => liveUuids.includes(s.story))
  const liveFirst = Math.min(...liveUuids.map((u) => committedAt.get(u) ?? Number.POSITIVE_INFINITY))
  const liveDrain = (Math.max(...live.map((s) => s.at)) - liveFirst) / 1000
  const latencies = live.map((s) => s.at - (committedAt.get(s.story) ?? Number.NaN)).filter(Number.isFinite)

  const rows = await deps.db.query<{ status: string; n: number }>(
    'select status, count(*)::int as n from webhook_deliveries group by status order by status',
  )
  const ids = new Set(all.map((s) => s.delivery))
  const report = {
    driver: deps.db.driver,
    publishes_per_phase: publishes,
    subscriptions: subscriptionCount,
    deliveries: { expected: expected * 2, received: all.length, distinct_ids: ids.size, states: Object.fromEntries(rows.map((r) => [r.status, r.n])) },
    backlog: {
      publish_seconds: +((p1Published - p1Start) / 1000).toFixed(2),
      drain_seconds: +backlogDrain.toFixed(2),
      deliveries_per_second: Math.round(backlog.length / backlogDrain),
    },
    live: {
      publish_seconds: +((p2Published - p2Start) / 1000).toFixed(2),
      publishes_per_second: Math.round(publishes / ((p2Published - p2Start) / 1000)),
      drain_seconds: +liveDrain.toFixed(2),
      deliveries_per_second: Math.round(live.length / liveDrain),
      commit_to_receipt_ms: percentiles(latencies),
    },
  }
  console.log(JSON.stringify(report, null, 2))
  emitBenchJson('webhooks', {
    driver: report.driver,
    expected: report.deliveries.expected,
    received: report.deliveries.received,
    backlog_deliveries_per_s: report.backlog.deliveries_per_second,
    live_deliveries_per_s: report.live.deliveries_per_second,
    live_p50_ms: report.live.commit_to_receipt_ms.p50,
    live_p99_ms: report.live.commit_to_receipt_ms.p99,
  })
  const ok = all.length >= expected * 2 && ids.size === expected * 2
  receiverProc.kill()
  await server.stop(true)
  await app.close()
  if (dropDb) await dropDb()
  rmSync(dataDir, { recursive: true, force: true })
  process.exit(ok ? 0 : 1)
}
