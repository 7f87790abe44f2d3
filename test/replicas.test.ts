// Read replicas (DATABASE_REPLICA_URLS) against a real streaming replica of the test server: a hot standby made by
// pg_basebackup in a temporary folder (test/helpers/replica.ts). Postgres only: under PGlite (no TEST_DATABASE_URL),
// or when this machine cannot run a standby, the replica tests skip and say why; the PGlite test runs there.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type Config, ConfigError, loadConfig } from '../src/config'
import { createLogger } from '../src/kernel/logger'
import { type TestApp, testApp } from './helpers/app'
import { type Standby, startStandby } from './helpers/replica'

setDefaultTimeout(120_000)

const serverUrl = process.env.TEST_DATABASE_URL
const standby: Standby | string = serverUrl ? await startStandby(serverUrl) : 'TEST_DATABASE_URL is not set (the embedded database has no replicas)'
if (typeof standby === 'string') console.warn(`test/replicas.test.ts: replica tests skipped — ${standby}`)
const replica = typeof standby === 'string' ? null : standby

afterAll(async () => {
  await replica?.remove()
})

/** Polls until `check` holds (bounded: a machine under load only makes it take longer). */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(50)
  }
}

const SORTS = ['full_path:asc', 'full_path:desc', 'name:asc', 'name:desc', 'published_at:asc', 'published_at:desc']
let listKey = 0
/** A list query no earlier one asked (each misses the list cache and loads a page from the database). */
function freshList(): string {
  const k = listKey++
  const prefix = ['q', 'q1', 'q2', 'q3'][Math.floor(k / (100 * SORTS.length)) % 4]
  return `per_page=${1 + (k % 100)}&sort_by=${SORTS[Math.floor(k / 100) % SORTS.length]}&starts_with=${prefix}`
}

describe.skipIf(!replica)('public reads on a streaming replica', () => {
  let t: TestApp
  let token: string
  let space: string
  let quiet: string
  type Instance = Awaited<ReturnType<TestApp['instance']>>
  let b: Instance

  let uid = 0
  const doc = (headline: string) => ({ type: 'doc', blocks: [{ component: 'hero', _uid: `h${++uid}`, headline }] })
  /** A request to instance `i` (default: the one with the replica) with the owner's token. */
  async function call(i: { runtime: Instance['runtime'] }, method: string, path: string, body?: unknown) {
    const res = await i.runtime.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'X-Forwarded-For': '10.9.9.9' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    )
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }
  async function story(i: { runtime: Instance['runtime'] }, s: string, slug: string, headline: string) {
    const r = await call(i, 'POST', `/v1/spaces/${s}/stories`, { slug, name: slug, content: doc(headline) })
    if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`)
    expect((await call(i, 'POST', `/v1/spaces/${s}/stories/${r.body.data.uuid}/publish`)).status).toBe(200)
    return r.body.data.uuid as string
  }
  async function edit(i: { runtime: Instance['runtime'] }, s: string, uuid: string, headline: string) {
    expect((await call(i, 'PUT', `/v1/spaces/${s}/stories/${uuid}`, { content: doc(headline) })).status).toBe(200)
    expect((await call(i, 'POST', `/v1/spaces/${s}/stories/${uuid}/publish`)).status).toBe(200)
  }
  const headline = (r: { body: any }) => r.body?.data?.content?.blocks?.[0]?.headline

  async function metrics(i: Instance) {
    const r = await i.get('/metrics')
    expect(r.status).toBe(200)
    const value = (name: string, label: string) => {
      const m = r.text.match(new RegExp(`^${name}\\{${label}\\} (\\S+)$`, 'm'))
      return m ? Number(m[1]) : 0
    }
    return {
      primary: value('content_service_db_public_reads_total', 'target="primary"'),
      replica: value('content_service_db_public_reads_total', `target="127.0.0.1:${replica!.port}/[^"]+"`),
      fallback: (reason: string) => value('content_service_db_replica_fallbacks_total', `reason="${reason}"`),
      text: r.text,
    }
  }
  async function replicaState(i: Instance): Promise<string | undefined> {
    const r = await i.get('/v1/health/ready')
    // 503 only while the instance's search indexes are still building (a replica never fails readiness).
    if (r.status === 503 && /search/.test(r.body?.message)) return undefined
    expect(r.status).toBe(200)
    return r.body.replicas?.[0]?.state
  }
  const withReplica = (overrides: Partial<Config> = {}) =>
    t.instance({ databaseReplicaUrls: [replica!.urlOf(t.config.databaseUrl!)], replicaMaxLagMs: 60_000, metrics: true, ...overrides })

  beforeAll(async () => {
    t = await testApp()
    token = (await t.register()).token
    space = (await t.createSpace(token)).slug
    quiet = (await t.createSpace(token)).slug
    for (const s of [space, quiet]) {
      expect((await t.request('POST', `/v1/spaces/${s}/components`, { token, body: { name: 'hero', schema: { headline: { type: 'text' } } } })).status).toBe(201)
    }
    for (let i = 0; i < 40; i++) await story({ runtime: t.app }, quiet, `q${i}`, `quiet ${i}`)
    b = await withReplica()
    // The test database reaches the standby through the WAL: the replica is up once it answers in it.
    await until('the replica to be up', async () => (await replicaState(b)) === 'up')
  })
  afterAll(async () => {
    await b?.close()
    await t?.close()
  })

  test('public reads that miss the cache go to the replica; writes and the management API stay on the primary', async () => {
    const before = await metrics(b)
    let n = 0
    await until('a public read on the replica', async () => {
      const r = await b.get(`/v1/cdn/${quiet}/stories/q${n++ % 40}`)
      expect(r.status).toBe(200)
      return (await metrics(b)).replica > before.replica
    })
    // The standby's own view: the service holds sessions in the test database there.
    const name = new URL(t.config.databaseUrl!).pathname.slice(1)
    const sessions = await replica!.query(`select count(*)::int as n from pg_stat_activity where datname = '${name}' and backend_type = 'client backend'`)
    expect(Number(sessions[0].n)).toBeGreaterThan(0)
    // The management API reads on the primary: a Story created through b is at once in its management list.
    const uuid = await story(b, space, 'fresh', 'one')
    const list = await call(b, 'GET', `/v1/spaces/${space}/stories/${uuid}`)
    expect(list.status).toBe(200)
    const m = await metrics(b)
    expect(m.text).toContain('content_service_db_replica_lag_seconds{')
    expect(m.text).toMatch(/content_service_db_replica_up\{replica="127\.0\.0\.1:\d+\/[^"]+",state="up"\} 1/)
  })

  test('a read right after a publish shows it, here and on another instance, while the replica replays nothing', async () => {
    const uuid = await story(b, space, 'news', 'v1')
    expect(headline(await b.get(`/v1/cdn/${space}/stories/news`))).toBe('v1')
    await replica!.query('select pg_wal_replay_pause()')
    try {
      // Published through b: b pinned the Space to the primary at its own commit.
      await edit(b, space, uuid, 'v2')
      expect(headline(await b.get(`/v1/cdn/${space}/stories/news`))).toBe('v2')
      const list = await b.get(`/v1/cdn/${space}/stories?per_page=100`)
      expect(list.status).toBe(200)
      expect(list.body.data.find((s: any) => s.slug === 'news')?.content.blocks[0].headline).toBe('v2')
      // Published through another instance: b learns of it through NOTIFY, pins the Space and reads the primary
      // (were it to read the paused replica it would cache v2 and never show v3).
      await edit({ runtime: t.app }, space, uuid, 'v3')
      await until('v3 on the other instance', async () => headline(await b.get(`/v1/cdn/${space}/stories/news`)) === 'v3')
      expect((await metrics(b)).fallback('space_changed')).toBeGreaterThan(0)
      // The quiet Space did not change: its reads stay on the (paused, but within the bound) replica.
      const before = (await metrics(b)).replica
      await until('a quiet read on the replica', async () => {
        expect((await b.get(`/v1/cdn/${quiet}/stories?${freshList()}`)).status).toBe(200)
        return (await metrics(b)).replica > before
      })
    } finally {
      await replica!.query('select pg_wal_replay_resume()')
    }
  })

  test('a replica lagging past REPLICA_MAX_LAG_MS serves nothing until it catches up', async () => {
    const c = await withReplica({ replicaMaxLagMs: 300 })
    try {
      await until('the replica to be up for c', async () => (await replicaState(c)) === 'up')
      await replica!.query('select pg_wal_replay_pause()')
      try {
        // Writes on the primary the paused replica does not replay (in the other Space: the quiet one is unchanged).
        let i = 0
        await until('the replica to lag', async () => {
          await story({ runtime: t.app }, space, `lag${i++}`, 'x')
          return (await replicaState(c)) === 'lagging'
        })
        const ready = await c.get('/v1/health/ready')
        expect(ready.status).toBe(200)
        expect(ready.body.replicas[0].lag_ms).toBeGreaterThan(300)
        const before = await metrics(c)
        for (let q = 0; q < 40; q++) expect((await c.get(`/v1/cdn/${quiet}/stories?${freshList()}`)).status).toBe(200)
        const after = await metrics(c)
        expect(after.replica).toBe(before.replica)
        expect(after.primary).toBeGreaterThan(before.primary)
        expect(after.fallback('lagging')).toBeGreaterThan(0)
      } finally {
        await replica!.query('select pg_wal_replay_resume()')
      }
      await until('the replica to catch up', async () => (await replicaState(c)) === 'up')
    } finally {
      await c.close()
    }
  })

  test('stopping the replica moves reads to the primary without a failed request; readiness stays ok', async () => {
    const before = await metrics(b)
    // Reads run while the replica stops: each one answers 200 (a read that fails on the replica runs on the primary).
    let stopping = true
    let reads = 0
    const reader = (async () => {
      const statuses: number[] = []
      while (stopping || reads < 200) {
        const r = await b.get(`/v1/cdn/${quiet}/stories?${freshList()}`)
        statuses.push(r.status)
        reads++
      }
      return statuses
    })()
    await replica!.stop()
    stopping = false
    const statuses = await reader
    expect(statuses.filter((s) => s !== 200)).toEqual([])
    await until('the replica to be reported down', async () => (await replicaState(b)) === 'down')
    const ready = await b.get('/v1/health/ready')
    expect(ready.status).toBe(200)
    const mid = await metrics(b)
    for (let q = 0; q < 40; q++) expect((await b.get(`/v1/cdn/${quiet}/stories?${freshList()}`)).status).toBe(200)
    const after = await metrics(b)
    expect(after.primary).toBeGreaterThan(before.primary)
    expect(after.replica).toBe(mid.replica)
    expect(after.fallback('down') + after.fallback('error')).toBeGreaterThan(0)
    expect(after.text).toMatch(/content_service_db_replica_up\{replica="[^"]+",state="down"\} 0/)
  })
})

describe('the embedded database', () => {
  test.skipIf(!!serverUrl)('ignores DATABASE_REPLICA_URLS and says so at start-up', async () => {
    const lines: string[] = []
    const logger = createLogger('info', (line) => lines.push(line), 'json')
    const app = await testApp({}, { DATABASE_REPLICA_URLS: 'postgres://reader@127.0.0.1:1/db' }, { logger })
    try {
      expect(lines.some((l) => l.includes('DATABASE_REPLICA_URLS is ignored'))).toBe(true)
      expect(app.kernel.replicas.enabled).toBe(false)
      const ready = await app.request('GET', '/v1/health/ready')
      expect(ready.status).toBe(200)
      expect(ready.body).toEqual({ status: 'ok' })
    } finally {
      await app.close()
    }
  })
})

describe('configuration', () => {
  test('DATABASE_REPLICA_URLS takes comma-separated postgres:// URLs; anything else is refused without echoing it', () => {
    const c = loadConfig({ DATABASE_REPLICA_URLS: ' postgres://r@a:5432/db , postgresql://r@b/db ', REPLICA_MAX_LAG_MS: '500' })
    expect(c.databaseReplicaUrls).toEqual(['postgres://r@a:5432/db', 'postgresql://r@b/db'])
    expect(c.replicaMaxLagMs).toBe(500)
    expect(loadConfig({}).databaseReplicaUrls).toEqual([])
    expect(loadConfig({}).replicaMaxLagMs).toBe(2000)
    let err: unknown
    try {
      loadConfig({ DATABASE_REPLICA_URLS: 'postgres://r@a/db,mysql://u:hunter2@b/db' })
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(ConfigError)
    expect(String((err as Error).message)).toContain('DATABASE_REPLICA_URLS[1]')
    expect(String((err as Error).message)).not.toContain('hunter2')
    expect(() => loadConfig({ REPLICA_MAX_LAG_MS: '10' })).toThrow(ConfigError)
  })
})
