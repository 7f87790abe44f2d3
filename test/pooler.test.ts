// Postgres behind a connection pooler in transaction mode (PgBouncer, as managed Postgres services put in front):
// real `content-service serve` processes against a real PgBouncer the test starts on 127.0.0.1. Without the pooler
// settings a server refuses to start and names them (LISTEN would silently receive nothing); with
// DATABASE_POOLER=transaction and DATABASE_LISTEN_URL every query goes through the pooler and a publish on one
// instance reaches another's CDN cache. Runs on the Postgres suite (TEST_DATABASE_URL) when pgbouncer is installed
// (.ci/run installs it).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { ConfigError, loadConfig } from '../src/config'
import { CMD, freshDatabase, startServe, waitFor } from './fleet/procs'

setDefaultTimeout(60_000)

const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => existsSync(p))
const serverUrl = process.env.TEST_DATABASE_URL

if (serverUrl && !PGBOUNCER) {
  console.error('\n!! pgbouncer is not installed (apt-get install pgbouncer): the pooler tests are SKIPPED\n')
}

const cleanups: (() => Promise<void> | void)[] = []
const children: Bun.Subprocess[] = []
let direct = ''
let pooled = ''

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && !c.killed) c.kill('SIGKILL')
  for (const c of cleanups.reverse()) await c()
})

async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

const env = (extra: Record<string, string>): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/tmp',
  LOG_LEVEL: 'warn',
  LOG_FORMAT: 'json',
  DATA_DIR: mkdtempSync(join(tmpdir(), 'cs-pooler-data-')),
  SERVICE_SECRET_KEY: '5a'.repeat(32),
  ...extra,
})

/** A `serve` process that is expected to refuse to start. */
function serve(extra: Record<string, string>) {
  const child = Bun.spawn([...CMD, 'serve', '--port', '0', '--host', '127.0.0.1'], { env: env(extra), stdout: 'pipe', stderr: 'pipe' })
  children.push(child)
  return child
}

/** Starts a server and resolves with its base URL once it listens. */
async function startBase(extra: Record<string, string>): Promise<string> {
  const p = await startServe(env(extra))
  children.push(p.child)
  return p.base.replace(/\/v1$/, '')
}

test('the pooler settings are checked with the configuration', () => {
  const pg = 'postgres://u@db.internal:6432/app'
  expect(loadConfig({ DATABASE_URL: pg }).databasePooler).toBe('none')
  const c = loadConfig({ DATABASE_URL: pg, DATABASE_POOLER: 'transaction', DATABASE_LISTEN_URL: 'postgres://u@db.internal:5432/app' })
  expect([c.databasePooler, c.databaseListenUrl]).toEqual(['transaction', 'postgres://u@db.internal:5432/app'])
  expect(() => loadConfig({ DATABASE_URL: pg, DATABASE_POOLER: 'transaction' })).toThrow(/needs DATABASE_LISTEN_URL/)
  expect(() => loadConfig({ DATABASE_URL: pg, DATABASE_POOLER: 'session' })).toThrow(ConfigError)
  expect(() => loadConfig({ DATABASE_LISTEN_URL: 'postgres://u@db.internal:5432/app' })).toThrow(/set DATABASE_URL too/)
  expect(() => loadConfig({ DATABASE_URL: pg, DATABASE_LISTEN_URL: 'mysql://u@db/app' })).toThrow(ConfigError)
})

describe.skipIf(!serverUrl || !PGBOUNCER)('Postgres through PgBouncer in transaction mode', () => {
  beforeAll(async () => {
    // A fresh database on the test server, reached directly and through the pooler.
    const db = await freshDatabase('cs_pooler')
    cleanups.push(() => db.drop())
    direct = db.url
    const target = new URL(direct)

    // PgBouncer refuses to run as root: as root it drops to the postgres user, so its files must be readable.
    const dir = mkdtempSync(join(tmpdir(), 'cs-pgbouncer-'))
    chmodSync(dir, 0o755)
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const port = await freePort()
    const user = decodeURIComponent(target.username || 'postgres')
    writeFileSync(join(dir, 'users.txt'), `"${user}" "${decodeURIComponent(target.password)}"\n`, { mode: 0o644 })
    writeFileSync(
      join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=${target.hostname} port=${target.port || 5432}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${join(dir, 'users.txt')}`,
        'pool_mode = transaction',
        'max_client_conn = 200',
        // Fewer server connections than the service's pool: transactions of one client really do move between them.
        'default_pool_size = 4',
        'ignore_startup_parameters = extra_float_digits,options',
        '',
      ].join('\n'),
      { mode: 0o644 },
    )
    const asRoot = process.getuid?.() === 0
    const bouncer = Bun.spawn([PGBOUNCER!, ...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], { stdout: 'pipe', stderr: 'pipe' })
    children.push(bouncer)
    cleanups.push(async () => {
      bouncer.kill('SIGTERM')
      await bouncer.exited
    })
    const viaPooler = new URL(direct)
    viaPooler.port = String(port)
    pooled = viaPooler.toString()
    await waitFor('pgbouncer', async () => {
      const c = postgres(pooled, { max: 1, onnotice: () => {}, prepare: false, connect_timeout: 2 })
      try {
        await c`select 1`
        return true
      } finally {
        await c.end({ timeout: 0 })
      }
    })
  })

  test('without the pooler settings a server refuses to start and names them', async () => {
    const child = serve({ DATABASE_URL: pooled })
    const code = await child.exited
    const output = (await new Response(child.stdout).text()) + (await new Response(child.stderr).text())
    expect(code).not.toBe(0)
    expect(output).toContain('LISTEN/NOTIFY does not work')
    expect(output).toContain('DATABASE_POOLER=transaction')
    expect(output).toContain('DATABASE_LISTEN_URL')
    expect(output).not.toContain(pooled) // never the URL itself (it may hold a password)
  })

  test('DATABASE_POOLER=transaction without DATABASE_LISTEN_URL is a configuration error', async () => {
    const child = serve({ DATABASE_URL: pooled, DATABASE_POOLER: 'transaction' })
    const code = await child.exited
    const output = (await new Response(child.stdout).text()) + (await new Response(child.stderr).text())
    expect(code).not.toBe(0)
    expect(output).toContain('DATABASE_POOLER=transaction needs DATABASE_LISTEN_URL')
  })

  test('with the settings, two instances serve through the pooler and a publish on one reaches the other', async () => {
    const settings = { DATABASE_URL: pooled, DATABASE_POOLER: 'transaction', DATABASE_LISTEN_URL: direct }
    const a = await startBase(settings)
    const b = await startBase(settings)
    const call = async (base: string, method: string, path: string, token: string | null, body?: unknown) => {
      const res = await fetch(`${base}/v1${path}`, {
        method,
        headers: { ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...(token ? { Authorization: `Bearer ${token}` } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      })
      return { status: res.status, body: (await res.json()) as any }
    }
    const reg = await call(a, 'POST', '/auth/register', null, { email: 'pool@example.com', password: 'a long password', name: 'Pool' })
    expect(reg.status).toBe(201)
    const token = reg.body.data.token as string
    expect((await call(a, 'POST', '/spaces', token, { slug: 'pool', name: 'Pool' })).status).toBe(201)
    expect(
      (await call(a, 'POST', '/spaces/pool/components', token, { name: 'page', schema: { headline: { type: 'text', required: true } } })).status,
    ).toBe(201)
    const doc = (headline: string) => ({ type: 'doc', blocks: [{ component: 'page', _uid: 'b1', headline }] })
    const created = await call(a, 'POST', '/spaces/pool/stories', token, { name: 'Home', slug: 'home', content: doc('first') })
    expect(created.status).toBe(201)
    const uuid = created.body.data.uuid as string
    expect((await call(a, 'POST', `/spaces/pool/stories/${uuid}/publish`, token)).status).toBe(200)

    // Instance b caches the published Story...
    const headline = async () => {
      const r = await call(b, 'GET', '/cdn/pool/stories/home', null)
      return r.status === 200 ? (r.body.data.content.blocks[0].headline as string) : undefined
    }
    expect(await waitFor('the first publish on b', async () => ((await headline()) === 'first' ? true : undefined))).toBe(true)
    // ...and learns of the next publish on a through LISTEN (DATABASE_LISTEN_URL), not by expiry.
    const version = created.body.data.version_no as number
    const saved = await call(a, 'PUT', `/spaces/pool/stories/${uuid}`, token, { content: doc('second'), expected_version_no: version })
    expect(saved.status).toBe(200)
    expect((await call(a, 'POST', `/spaces/pool/stories/${uuid}/publish`, token)).status).toBe(200)
    expect(await waitFor('the second publish on b', async () => ((await headline()) === 'second' ? true : undefined))).toBe(true)

    // Many transactions at once through 4 server connections: no prepared-statement errors, no 500.
    const reads = await Promise.all(
      Array.from({ length: 40 }, (_, i) => call(i % 2 ? a : b, 'GET', i % 4 < 2 ? '/spaces/pool/stories' : '/spaces', token)),
    )
    expect(reads.map((r) => r.status)).toEqual(reads.map(() => 200))
  })
})
