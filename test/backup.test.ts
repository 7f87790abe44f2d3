// Backup and restore through the real command line: a server takes writes, `content-service backup` runs meanwhile,
// the backup is restored into a new data folder (PGlite) or a new, empty database (TEST_DATABASE_URL: pg_dump and
// pg_restore), a server starts on it, and every Story, asset byte and webhook log row acknowledged before the backup
// began is there, unchanged.
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { type Receiver, startReceiver } from './helpers/receiver'
import { SERVICE_COMMAND } from './helpers/command'

setDefaultTimeout(300_000)

const SECRET = 'ab'.repeat(32)

const temp = mkdtempSync(join(tmpdir(), 'cs-backup-'))
const databases: string[] = []
const children: Bun.Subprocess[] = []
let receiver: Receiver | null = null

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && !c.killed) c.kill('SIGKILL')
  await receiver?.stop()
  const serverUrl = process.env.TEST_DATABASE_URL
  if (serverUrl && databases.length) {
    const a = postgres(serverUrl, { max: 1, onnotice: () => {} })
    for (const name of databases) await a.unsafe(`drop database if exists ${name} with (force)`)
    await a.end()
  }
  rmSync(temp, { recursive: true, force: true })
})

/** The environment of one installation: its own data folder, or its own (empty) Postgres database. */
async function installation(label: string): Promise<Record<string, string>> {
  const dataDir = join(temp, label)
  const base: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    SERVICE_OUTBOUND_ALLOW_PRIVATE: 'true',
    JOB_POLL_INTERVAL_MS: '200',
    DATA_DIR: dataDir,
  }
  const serverUrl = process.env.TEST_DATABASE_URL
  if (!serverUrl) return base
  const name = `cs_backup_${label}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  await admin.end()
  databases.push(name)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return { ...base, DATABASE_URL: url.toString(), SERVICE_SECRET_KEY: SECRET }
}

async function run(env: Record<string, string>, args: string[]) {
  const p = Bun.spawn([...SERVICE_COMMAND, ...args], { env, stdout: 'pipe', stderr: 'pipe' })
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()])
  return { code, out, err }
}

interface Server {
  base: string
  stop(): Promise<void>
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const child = Bun.spawn([...SERVICE_COMMAND, 'serve'], { env, stdout: 'pipe', stderr: 'inherit' })
  children.push(child)
  const reader = child.stdout.getReader()
  let text = ''
  const decoder = new TextDecoder()
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the server exited before listening: ${text}`)
    text += decoder.decode(value)
    const m = /listening on (http:\/\/\S+)/.exec(text)
    if (m) {
      // Keep draining stdout so the child never blocks on a full pipe.
      void (async () => {
        while (!(await reader.read()).done) {}
      })().catch(() => {})
      return {
        base: m[1].replace('localhost', '127.0.0.1'),
        async stop() {
          child.kill('SIGTERM')
          await child.exited
        },
      }
    }
  }
}

async function api(s: Server, method: string, path: string, opts: { token?: string; body?: unknown; raw?: BodyInit } = {}) {
  const headers: Record<string, string> = {}
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json'
  const res = await fetch(`${s.base}${path}`, { method, headers, body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)) })
  const text = await res.text()
  let body: any = text
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: res.status, body, text }
}

async function until(what: string, check: () => Promise<boolean>, ms = 60_000) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(100)
  }
}

/** A PDF of `size` pseudo-random bytes: several 1 MiB chunk rows in the database. */
function pdfOf(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size)
  let x = 2463534242 ^ seed
  for (let i = 0; i < size; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = x & 255
  }
  out.set(new TextEncoder().encode('%PDF-1.7\n'))
  return out
}

const doc = (headline: string) => ({ type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline }] })

describe('backup and restore', () => {
  test('a backup taken during writes restores into a new installation with every acknowledged Story, asset byte and webhook log row', async () => {
    receiver = startReceiver()
    const envA = await installation('a')
    const a = await startServer(envA)

    const reg = await api(a, 'POST', '/v1/auth/register', {
      body: { email: 'owner@example.com', password: 'correct horse battery staple', name: 'Owner' },
    })
    expect(reg.status).toBe(201)
    const token = reg.body.data.token as string
    const sp = await api(a, 'POST', '/v1/spaces', { token, body: { slug: 'site', name: 'Site' } })
    expect(sp.status).toBe(201)
    const comp = await api(a, 'POST', '/v1/spaces/site/components', { token, body: { name: 'hero', schema: { headline: { type: 'text' } } } })
    expect(comp.status).toBe(201)
    const hook = await api(a, 'POST', '/v1/spaces/site/webhooks', {
      token,
      body: { label: 'Receiver', url: `${receiver.url}/hook`, events: ['story.published'] },
    })
    expect(hook.status).toBe(201)
    const hookId = hook.body.data.id as string

    // Acknowledged before the backup: assets, published Stories, delivered webhooks.
    const files = [pdfOf(2_500_000, 1), pdfOf(70_000, 2)]
    const assetUuids: string[] = []
    for (const [i, f] of files.entries()) {
      const fd = new FormData()
      fd.append('file', new Blob([f as BlobPart], { type: 'application/pdf' }), `doc-${i}.pdf`)
      const up = await api(a, 'POST', '/v1/spaces/site/assets', { token, raw: fd })
      expect(up.status).toBe(201)
      assetUuids.push(up.body.data.uuid)
    }
    const stories: string[] = []
    for (let i = 0; i < 8; i++) {
      const c = await api(a, 'POST', '/v1/spaces/site/stories', { token, body: { slug: `before-${i}`, name: `Before ${i}`, content: doc(`Before ${i}`) } })
      if (c.status !== 201) throw new Error(`create: ${c.status} ${c.text}`)
      stories.push(c.body.data.uuid)
      if (i % 2 === 0) expect((await api(a, 'POST', `/v1/spaces/site/stories/${c.body.data.uuid}/publish`, { token })).status).toBe(200)
    }
    const deliveries = async (s: Server) => (await api(s, 'GET', `/v1/spaces/site/webhooks/${hookId}/deliveries?limit=200`, { token })).body.data as any[]
    await until('4 deliveries logged as delivered', async () => (await deliveries(a)).filter((d) => d.outcome === 'delivered').length >= 4)
    const before = {
      stories: await Promise.all(stories.map(async (uuid) => (await api(a, 'GET', `/v1/spaces/site/stories/${uuid}`, { token })).body.data)),
      deliveries: (await deliveries(a)).filter((d) => d.outcome === 'delivered'),
    }

    // Writes keep coming while the backup runs.
    let writing = true
    let written = 0
    const writer = (async () => {
      while (writing) {
        const c = await api(a, 'POST', '/v1/spaces/site/stories', { token, body: { slug: `during-${written}`, name: `During ${written}`, content: doc(`During ${written}`) } })
        if (c.status !== 201) throw new Error(`write during the backup failed: ${c.status} ${c.text}`)
        await api(a, 'POST', `/v1/spaces/site/stories/${c.body.data.uuid}/publish`, { token })
        written++
      }
    })()
    await until('writes in flight', async () => written >= 2)
    const file = join(temp, 'site.tar.gz')
    const backup = await run(envA, ['backup', '--out', file])
    expect(backup.err).toBe('') // quiet when not on a terminal
    expect(backup.code).toBe(0)
    expect(backup.out).toContain(`backup written to ${file}`)
    expect(backup.out).toContain(envA.DATABASE_URL ? 'pg_dump' : 'running server')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    writing = false
    await writer
    expect(written).toBeGreaterThan(2)
    // The container HEALTHCHECK's command: 0 while the server is ready, 1 once it is gone.
    const healthy = await run(envA, ['health', '--url', a.base])
    expect(healthy.code).toBe(0)
    await a.stop()
    const gone = await run(envA, ['health', '--url', a.base])
    expect(gone.code).toBe(1)
    expect(gone.err).toContain('no answer')

    // Restore into a new installation, start on it, compare.
    const envB = await installation('b')
    const restored = await run(envB, ['restore', file])
    expect(restored.err).toBe('')
    expect(restored.code).toBe(0)
    expect(restored.out).toContain('restored the backup')
    const again = await run(envB, ['restore', file])
    expect(again.code).toBe(1)
    expect(again.err).toContain('not empty')
    expect(again.err).toContain('--force')

    const b = await startServer(envB)
    try {
      for (const s of before.stories) {
        const got = await api(b, 'GET', `/v1/spaces/site/stories/${s.uuid}`, { token })
        expect(got.status).toBe(200)
        expect(got.body.data).toEqual(s)
      }
      for (const [i, uuid] of assetUuids.entries()) {
        const res = await fetch(`${b.base}/v1/cdn/site/assets/${uuid}`)
        expect(res.status).toBe(200)
        expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(files[i]))).toBe(true)
      }
      const after = await deliveries(b)
      for (const d of before.deliveries) expect(after.find((x) => x.id === d.id)).toEqual(d)
      // Every Story the backup holds is whole: its published content reads back as written.
      const list = await api(b, 'GET', '/v1/spaces/site/stories?per_page=100', { token })
      expect(list.status).toBe(200)
      for (const s of list.body.data as any[]) expect(s.name).toMatch(/^(Before|During) \d+$/)
      // The signing secrets survived (the data folder's key, or SERVICE_SECRET_KEY): a ping is delivered.
      const seen = receiver.requests.length
      expect((await api(b, 'POST', `/v1/spaces/site/webhooks/${hookId}/ping`, { token })).status).toBe(202)
      await receiver.waitFor(seen + 1, 60_000)
    } finally {
      await b.stop()
    }
  })

  test('restore refuses a file that is not a backup, and backup says what is missing', async () => {
    const env = await installation('c')
    const junk = join(temp, 'junk.tar.gz')
    writeFileSync(junk, 'not a backup')
    const r = await run(env, ['restore', junk])
    expect(r.code).toBe(1)
    expect(r.err).toContain('restore failed')
    expect(r.err).not.toContain('    at ')
    if (!env.DATABASE_URL) {
      mkdirSync(env.DATA_DIR, { recursive: true })
      const b = await run(env, ['backup', '--out', join(temp, 'none.tar.gz')])
      expect(b.code).toBe(1)
      expect(b.err).toContain('no database')
    }
  })
})
