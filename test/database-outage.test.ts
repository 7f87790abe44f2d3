// Postgres stops and comes back under a running `content-service serve`: a Postgres server of the test's own (initdb
// in a temporary folder, pg_ctl), so it can be stopped without touching the shared one. While it is down, requests
// that need it answer 503 `database_unavailable` with Retry-After (never a 500, never a hang) and cached public reads
// keep answering; when it is back the pool reconnects by itself, LISTEN resubscribes, and every write acknowledged
// before the outage is there. Runs on the Postgres suite (TEST_DATABASE_URL), where Debian's PostgreSQL binaries are.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

setDefaultTimeout(60_000)

const BIN = join(import.meta.dir, '..', 'bin', 'content-service.ts')
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
let server: Bun.Subprocess | null = null
let base = ''

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

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + BOUND_MS
  for (;;) {
    const v = await probe().catch(() => undefined)
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(100)
  }
}

async function call(method: string, path: string, token: string | null, body?: unknown) {
  const res = await fetch(`${base}/v1${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(BOUND_MS),
  })
  return { status: res.status, headers: res.headers, body: (await res.json()) as any }
}

describe.skipIf(!enabled)('Postgres stops and comes back', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cs-outage-'))
    chmodSync(dir, 0o777) // the postgres user writes its cluster, log and socket here
    const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    port = s.port
    s.stop(true)
    await pg('initdb', '-D', join(dir, 'pg'), '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8')
    await startPostgres()
    const data = mkdtempSync(join(tmpdir(), 'cs-outage-data-'))
    const child = Bun.spawn(['bun', BIN, 'serve', '--port', '0', '--host', '127.0.0.1'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        LOG_LEVEL: 'warn',
        LOG_FORMAT: 'json',
        DATA_DIR: data,
        SERVICE_SECRET_KEY: '5a'.repeat(32),
        DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`,
        DATABASE_CONNECT_TIMEOUT: '3',
      },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    server = child
    const reader = child.stdout.getReader()
    let out = ''
    const deadline = Date.now() + BOUND_MS
    while (!base && Date.now() < deadline) {
      const { value, done } = await reader.read()
      if (done) throw new Error(`server exited before listening: ${out}${await new Response(child.stderr).text()}`)
      out += new TextDecoder().decode(value)
      const p = /listening on http:\/\/[^:]+:(\d+)/.exec(out)?.[1]
      if (p) base = `http://127.0.0.1:${p}`
    }
    void (async () => {
      for (;;) if ((await reader.read()).done) return
    })()
    void new Response(child.stderr).text()
    if (!base) throw new Error(`server did not listen: ${out}`)
  })

  afterAll(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM')
      await server.exited
    }
    await stopPostgres().catch(() => {})
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  test('503 database_unavailable while it is down, cached reads still served, everything back after', async () => {
    const reg = await call('POST', '/auth/register', null, { email: 'ops@example.com', password: 'a long password', name: 'Ops' })
    expect(reg.status).toBe(201)
    const token = reg.body.data.token as string
    expect((await call('POST', '/spaces', token, { slug: 'site', name: 'Site' })).status).toBe(201)
    expect((await call('POST', '/spaces/site/components', token, { name: 'page', schema: { headline: { type: 'text' } } })).status).toBe(201)
    const story = await call('POST', '/spaces/site/stories', token, {
      name: 'Home',
      slug: 'home',
      content: { type: 'doc', blocks: [{ component: 'page', _uid: 'b1', headline: 'kept' }] },
    })
    expect(story.status).toBe(201)
    expect((await call('POST', `/spaces/site/stories/${story.body.data.uuid}/publish`, token)).status).toBe(200)
    expect((await call('GET', '/cdn/site/stories/home', null)).status).toBe(200) // now in the read cache

    await stopPostgres()

    // Requests that need the database: a clear 503 with Retry-After and the shared error body.
    for (const path of ['/spaces', '/spaces/site/stories']) {
      const r = await call('GET', path, token)
      expect(r.status).toBe(503)
      expect(r.body.error).toBe('database_unavailable')
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(JSON.stringify(r.body)).not.toContain('ECONNREFUSED')
    }
    const write = await call('POST', '/spaces', token, { slug: 'other', name: 'Other' })
    expect(write.status).toBe(503)
    // What the read cache holds is still served.
    const cached = await call('GET', '/cdn/site/stories/home', null)
    expect(cached.status).toBe(200)
    expect(cached.body.data.content.blocks[0].headline).toBe('kept')
    const ready = await fetch(`${base}/v1/health/ready`)
    expect(ready.status).toBe(503)
    expect((await fetch(`${base}/v1/health/live`)).status).toBe(200)

    const back = Date.now()
    await startPostgres()
    const spaces = await waitFor('the first 200 after the restart', async () => {
      const r = await call('GET', '/spaces', token)
      return r.status === 200 ? r : undefined
    })
    console.log(`outage: first 200 ${((Date.now() - back) / 1000).toFixed(1)} s after Postgres was back`)
    expect(spaces.body.data.map((s: { slug: string }) => s.slug)).toEqual(['site'])
    // Acknowledged writes are all there, and writes work again.
    const read = await call('GET', `/spaces/site/stories/${story.body.data.uuid}`, token)
    expect(read.status).toBe(200)
    expect((await call('POST', '/spaces', token, { slug: 'other', name: 'Other' })).status).toBe(201)
    await waitFor('ready again', async () => ((await fetch(`${base}/v1/health/ready`)).status === 200 ? true : undefined))
  })
})
