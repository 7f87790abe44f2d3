// Postgres stops and comes back under a running `content-service serve`: a Postgres server of the test's own (initdb
// in a temporary folder, pg_ctl), so it can be stopped without touching the shared one. While it is down, requests
// that need it answer 503 `database_unavailable` with Retry-After (never a 500, never a hang) and cached public reads
// keep answering; when it is back the pool reconnects by itself, LISTEN resubscribes, and every write acknowledged
// before the outage is there. Runs on the Postgres suite (TEST_DATABASE_URL), where Debian's PostgreSQL binaries are.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { call, doc, fleetEnv, type Proc, seedSite, startServe, stopAll, waitFor } from './fleet/procs'
import { type Receiver, startReceiver } from './helpers/receiver'

setDefaultTimeout(60_000)

const PG_BIN = (() => {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a))
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'pg_ctl'))) return join(root, v, 'bin')
  return null
})()
const enabled = !!process.env.TEST_DATABASE_URL && PG_BIN !== null
if (process.env.TEST_DATABASE_URL && !PG_BIN) console.error('\n!! PostgreSQL server binaries not found: the outage test is SKIPPED\n')
/** Bounds for waiting: conditions are waited for, never timed. */
const BOUND_MS = 90_000

const asRoot = process.getuid?.() === 0
let dir = ''
let port = 0

/** Runs a PostgreSQL binary (as the postgres user when the test runs as root: Postgres refuses root). */
async function pg(bin: string, ...args: string[]) {
  const cmd = asRoot ? ['runuser', '-u', 'postgres', '--', join(PG_BIN!, bin), ...args] : [join(PG_BIN!, bin), ...args]
  const p = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe' })
  const code = await p.exited
  if (code !== 0) throw new Error(`${bin} failed (${code}): ${await new Response(p.stderr).text()}`)
}

const startPostgres = () =>
  pg('pg_ctl', '-D', join(dir, 'pg'), '-l', join(dir, 'pg.log'), '-w', '-t', '60', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, 'start')
const stopPostgres = () => pg('pg_ctl', '-D', join(dir, 'pg'), '-m', 'fast', '-w', '-t', '60', 'stop')

describe.skipIf(!enabled)('Postgres stops and comes back', () => {
  const procs: Proc[] = []
  let receiver: Receiver

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cs-outage-'))
    chmodSync(dir, 0o777) // the postgres user writes its cluster, log and socket here
    const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    port = s.port
    s.stop(true)
    await pg('initdb', '-D', join(dir, 'pg'), '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8')
    await startPostgres()
    // Deliveries take a while to be answered: some are in flight when Postgres stops.
    receiver = startReceiver(async () => {
      await Bun.sleep(1000)
      return new Response('ok')
    })
    // Two instances as a fleet runs them (rate limits in Postgres too), with short leases.
    const env = fleetEnv(`postgres://postgres@127.0.0.1:${port}/postgres`, { DATABASE_CONNECT_TIMEOUT: '3', JOB_LEASE_SECONDS: '3' })
    procs.push(await startServe(env))
    procs.push(await startServe(env))
  })

  afterAll(async () => {
    await stopAll(procs)
    await receiver?.stop()
    await stopPostgres().catch(() => {})
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  test('503 database_unavailable while it is down, cached reads still served, everything back after', async () => {
    const [a, b] = procs.map((p) => p.base)
    const { token, stories } = await seedSite(a, 1)
    const story = stories[0]
    expect((await call(a, 'POST', '/spaces/site/webhooks', { token, body: { label: 'o', url: `${receiver.url}/hook`, events: ['story.published'], active: true } })).status).toBe(201)
    expect((await call(a, 'POST', `/spaces/site/stories/${story.uuid}/publish`, { token })).status).toBe(200)
    for (const base of [a, b]) expect((await call(base, 'GET', '/cdn/site/stories/page-0')).status).toBe(200) // cached on both
    await waitFor('a delivery in flight', async () => (receiver.open > 0 ? true : undefined))

    await stopPostgres()

    // Requests that need the database: a clear 503 with Retry-After and the shared error body.
    for (const path of ['/spaces', '/spaces/site/stories']) {
      const r = await call(a, 'GET', path, { token })
      expect(r.status).toBe(503)
      expect(r.body.error).toBe('database_unavailable')
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(r.text).not.toContain('ECONNREFUSED')
    }
    expect((await call(a, 'POST', '/spaces', { token, body: { slug: 'other', name: 'Other' } })).status).toBe(503)
    // What the read cache holds is still served, although the rate limits live in Postgres too.
    const cached = await call(b, 'GET', '/cdn/site/stories/page-0')
    expect(cached.status).toBe(200)
    expect(cached.body.data.content.blocks[0].headline).toBe('v0-0')
    expect((await fetch(`${a}/health/ready`)).status).toBe(503)
    expect((await fetch(`${a}/health/live`)).status).toBe(200)

    // An outage of seconds with requests arriving all along, as a restart under traffic goes: every failed attempt
    // must not push the pool's next connection attempt further away (the driver's own pause grows to 20 s).
    const outageEnds = Date.now() + 3000
    while (Date.now() < outageEnds) {
      expect((await call(a, 'GET', '/spaces', { token })).status).toBe(503)
      await Bun.sleep(100)
    }

    const back = Date.now()
    await startPostgres()
    const startMs = Date.now() - back
    const spaces = await waitFor('the first 200 after the restart', async () => {
      const r = await call(a, 'GET', '/spaces', { token })
      return r.status === 200 ? r : undefined
    })
    const recovered = Date.now() - back
    console.log(`outage: first 200 ${(recovered / 1000).toFixed(1)} s after Postgres was back`)
    // How long pg_ctl start takes is the machine's; the pool's pause between attempts is at most 0.5 s, so the first
    // answer after that must not wait on a reconnect delay of many seconds.
    expect(recovered).toBeLessThan(8000 + startMs)
    expect(spaces.body.data.map((s: { slug: string }) => s.slug)).toEqual(['site'])
    // Acknowledged writes are all there, and writes work again.
    expect((await call(a, 'GET', `/spaces/site/stories/${story.uuid}`, { token })).status).toBe(200)
    expect((await call(a, 'POST', '/spaces', { token, body: { slug: 'other', name: 'Other' } })).status).toBe(201)
    await waitFor('ready again', async () => ((await fetch(`${a}/health/ready`)).status === 200 ? true : undefined))

    // LISTEN came back on b too: a publish on a reaches b's cache (not by its 10-minute expiry).
    const saved = await call(a, 'PUT', `/spaces/site/stories/${story.uuid}`, { token, body: { content: doc('after the outage'), expected_version_no: story.version } })
    expect(saved.status).toBe(200)
    expect((await call(a, 'POST', `/spaces/site/stories/${story.uuid}/publish`, { token })).status).toBe(200)
    await waitFor('the publish on the other instance', async () => {
      const r = await call(b, 'GET', '/cdn/site/stories/page-0')
      return r.body?.data?.content?.blocks?.[0]?.headline === 'after the outage' ? true : undefined
    })
    // The deliveries in flight when Postgres stopped resume: every one ends delivered, under its own id.
    const sql = postgres(`postgres://postgres@127.0.0.1:${port}/postgres`, { max: 1, onnotice: () => {} })
    try {
      const rows = await waitFor('every delivery delivered', async () => {
        const r = await sql`select id::text as id, status from webhook_deliveries`
        return r.length === 2 && r.every((d) => d.status === 'delivered') ? r : undefined
      })
      const received = new Set(receiver.requests.map((r) => r.headers['x-service-delivery']))
      for (const d of rows) expect(received.has(d.id)).toBe(true)
    } finally {
      await sql.end()
    }
  })
})
