// bun scripts/bench/replica.ts [--stories=2000] [--duration=5] [--rounds=3] [--connections=32]
//                              [--pg=postgres://postgres@127.0.0.1:5432]
//
// The public read path with a read replica: the same cache-missing Story reads against a server on the primary alone
// and a server whose public reads go to a streaming replica (DATABASE_REPLICA_URLS).
// 1. A fresh database on --pg, seeded over HTTP with --stories published Stories of about 4 KB in one Space.
// 2. A hot standby of that server (pg_basebackup into a temporary folder, a free port: test/helpers/replica.ts; the
//    server must accept replication connections from 127.0.0.1).
// 3. Two server processes (`bun bin/content-service.ts serve`), CDN_CACHE_MB=1 so that most reads miss the read cache
//    and load the Story from the database: "primary only" and "with replica". wrk drives GET
//    /v1/cdn/bench/stories/{path} over every path, in alternating rounds (scripts/bench/wrk.ts).
// 4. The replica server's /metrics afterwards: public reads by target (proof the replica served them) and the read
//    cache's miss ratio.
// On one machine the standby shares the cores with everything else: the figure is the cost of the routed read path,
// not the capacity a replica on its own host adds.
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startStandby } from '../../test/helpers/replica'
import { scratchDatabase } from './scratch'
import { alternate, formatTable, waitFor } from './wrk'

const root = join(import.meta.dir, '..', '..')
const { values: args } = parseArgs({
  options: {
    stories: { type: 'string', default: '2000' },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
  },
})
const N = Number(args.stories)

function freePort(): number {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

function startServer(env: Record<string, string>) {
  const port = freePort()
  const proc = Bun.spawn(['bun', join(root, 'bin', 'content-service.ts'), 'serve'], {
    cwd: root,
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      TRUSTED_PROXIES: '127.0.0.1',
      REGISTRATION_VERIFY: 'off',
      METRICS: 'on',
      CDN_CACHE_MB: '1',
      SERVICE_WORKER_ENABLED: 'off',
    },
    stdout: 'inherit',
    stderr: 'inherit',
  })
  const base = `http://127.0.0.1:${port}`
  return { base, proc, ready: () => waitFor(`${base}/v1/health/ready`, 180_000) }
}

const scratch = await scratchDatabase('postgres', args.pg!, 'replica_bench')
const servers: ReturnType<typeof startServer>[] = []
let standby: Awaited<ReturnType<typeof startStandby>> | null = null
try {
  // 1. Seed through a primary-only server.
  const seeder = startServer({ ...scratch.env, SERVICE_WORKER_ENABLED: 'on' })
  servers.push(seeder)
  await seeder.ready()
  const api = async (method: string, path: string, body?: unknown, token?: string) => {
    const res = await fetch(`${seeder.base}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': `10.1.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const json = (await res.json().catch(() => null)) as any
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
    return json
  }
  const reg = await api('POST', '/v1/auth/register', { email: 'bench@example.com', password: 'bench bench bench bench', name: 'Bench' })
  const token = reg.data.token as string
  await api('POST', '/v1/spaces', { slug: 'bench', name: 'Bench' }, token)
  await api('POST', '/v1/spaces/bench/components', { name: 'hero', schema: { headline: { type: 'text' }, text: { type: 'textarea' } } }, token)
  const t0 = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < N; i = next++) {
        const text = `Story ${i}. `.padEnd(4000, 'lorem ipsum dolor sit amet ')
        const s = await api('POST', '/v1/spaces/bench/stories', { slug: `s${i}`, name: `Story ${i}`, content: { type: 'doc', blocks: [{ component: 'hero', _uid: `h${i}`, headline: `Story ${i}`, text }] } }, token)
        await api('POST', `/v1/spaces/bench/stories/${s.data.uuid}/publish`, undefined, token)
      }
    }),
  )
  console.log(`seeded ${N} published Stories in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  seeder.proc.kill('SIGTERM')
  await seeder.proc.exited
  servers.length = 0

  // 2. The standby.
  const s = await startStandby(`${args.pg}/postgres`)
  if (typeof s === 'string') throw new Error(`no standby: ${s}`)
  standby = s
  const replicaUrl = s.urlOf(scratch.env.DATABASE_URL)

  // 3. The two servers, then wrk.
  const primaryOnly = startServer(scratch.env)
  const withReplica = startServer({ ...scratch.env, DATABASE_REPLICA_URLS: replicaUrl })
  servers.push(primaryOnly, withReplica)
  await Promise.all([primaryOnly.ready(), withReplica.ready()])
  const paths = Array.from({ length: N }, (_, i) => `/v1/cdn/bench/stories/s${i}`)
  const date = new Date().toISOString()
  const r = await alternate(
    [
      { name: 'primary only', base: primaryOnly.base },
      { name: 'with replica', base: withReplica.base },
    ],
    {
      paths,
      rotateForwardedFor: 16_384,
      connections: Number(args.connections),
      durationSeconds: Number(args.duration),
      rounds: Number(args.rounds),
      baselineName: 'primary only',
      onRound: (round, name, w) => console.log(`  round ${round} ${name}: ${Math.round(w.rps)} req/s p99 ${w.p99Ms.toFixed(1)} ms non-2xx ${w.non2xx3xx}`),
    },
  )
  console.log(`${date} — ${N} Stories, CDN_CACHE_MB=1, ${args.connections} connections, ${args.rounds} × ${args.duration} s`)
  console.log(formatTable('public Story reads missing the cache: primary only vs. a streaming replica', r))
  // 4. What served them.
  for (const [name, srv] of [['primary only', primaryOnly], ['with replica', withReplica]] as const) {
    const text = await (await fetch(`${srv.base}/metrics`)).text()
    const lines = text.split('\n').filter((l) => /^content_service_(db_public_reads_total|db_replica_fallbacks_total|read_cache_total|db_replica_lag_seconds)\{/.test(l))
    console.log(`-- ${name}: ${lines.join('   ')}`)
  }
} finally {
  for (const srv of servers) srv.proc.kill('SIGTERM')
  await Promise.all(servers.map((srv) => srv.proc.exited))
  await standby?.remove()
  await scratch.cleanup()
}
