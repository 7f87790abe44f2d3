// Crash test: real server processes, kill -9 with deliveries in flight and pending, start again. Every delivery must
// arrive at least once, each under its original X-Service-Delivery id.
//
// The server is test/helpers/server-process.ts (createDeps + createApp + startWorkers, as `serve` wires them). On
// PGlite (default) it runs in a temporary data folder; with TEST_DATABASE_URL on a fresh database of that server.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { type Receiver, startReceiver } from './helpers/receiver'

setDefaultTimeout(180_000)

const SERVER = join(import.meta.dir, 'helpers', 'server-process.ts')
const CONCURRENCY = 6
const SPACES = 4
const HOOKS_PER_SPACE = 4

let dataDir: string | null = null
let dropDatabase: (() => Promise<void>) | null = null
let receiver: Receiver | null = null
const children: Bun.Subprocess[] = []

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && !c.killed) c.kill('SIGKILL')
  await receiver?.stop()
  if (dropDatabase) await dropDatabase()
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

async function environment(): Promise<Record<string, string>> {
  const base: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    PORT: '0',
    LOG_LEVEL: 'warn',
    SERVICE_OUTBOUND_ALLOW_PRIVATE: 'true',
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    JOB_LEASE_SECONDS: '3',
    JOB_POLL_INTERVAL_MS: '200',
  }
  const serverUrl = process.env.TEST_DATABASE_URL
  if (!serverUrl) {
    // The embedded default: no SERVICE_SECRET_KEY, so the key file in the data folder must survive the crash too.
    dataDir = mkdtempSync(join(tmpdir(), 'cs-crash-'))
    return { ...base, DATA_DIR: dataDir }
  }
  const name = `cs_crash_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  await admin.end()
  dropDatabase = async () => {
    const a = postgres(serverUrl, { max: 1, onnotice: () => {} })
    await a.unsafe(`drop database if exists ${name} with (force)`)
    await a.end()
  }
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  dataDir = mkdtempSync(join(tmpdir(), 'cs-crash-'))
  return { ...base, DATABASE_URL: url.toString(), SERVICE_SECRET_KEY: '5a'.repeat(32), DATA_DIR: dataDir }
}

async function startServer(env: Record<string, string>) {
  const child = Bun.spawn(['bun', SERVER], { env, stdout: 'pipe', stderr: 'inherit' })
  children.push(child)
  const reader = child.stdout.getReader()
  let buffered = ''
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`server exited before listening (code ${child.exitCode})`)
    buffered += new TextDecoder().decode(value)
    const line = buffered.split('\n').find((l) => l.startsWith('{"port"'))
    if (line) {
      reader.releaseLock()
      // Keep draining its stdout so the child never blocks on a full pipe.
      void child.stdout.pipeTo(new WritableStream()).catch(() => {})
      return { child, base: `http://127.0.0.1:${JSON.parse(line).port}/v1` }
    }
  }
  throw new Error('server did not start within 60 s')
}

async function call(base: string, method: string, path: string, token?: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text ? JSON.parse(text).data : null
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(100)
  }
}

test('kill -9 with deliveries in flight and pending: after a restart every delivery arrives, under its original id', async () => {
  // The receiver holds every request until released: what is in flight at the kill stays in flight.
  let release!: () => void
  let held = new Promise<void>((r) => (release = r))
  let holding = true
  receiver = startReceiver(async () => {
    if (holding) await held
    return new Response('ok')
  })
  const env = await environment()
  const first = await startServer(env)

  const user = await call(first.base, 'POST', '/auth/register', undefined, {
    email: `crash-${Date.now()}@example.com`,
    password: 'correct horse battery staple',
    name: 'Crash',
  })
  const hooks: { space: string; id: number }[] = []
  const slugs: string[] = []
  for (let s = 0; s < SPACES; s++) {
    const space = await call(first.base, 'POST', '/spaces', user.token, { slug: `crash-${s}-${Date.now().toString(36)}`, name: `Crash ${s}` })
    slugs.push(space.slug)
    for (let h = 0; h < HOOKS_PER_SPACE; h++) {
      const hook = await call(first.base, 'POST', `/spaces/${space.slug}/webhooks`, user.token, {
        label: `hook ${s}/${h}`,
        url: `${receiver.url}/hook/${s}/${h}`,
        events: ['space.archived'],
      })
      hooks.push({ space: space.slug, id: hook.id })
    }
  }
  // Deliveries of two kinds: pings (written directly) and space.archived events (through the outbox).
  for (const h of hooks) await call(first.base, 'POST', `/spaces/${h.space}/webhooks/${h.id}/ping`, user.token)
  for (const slug of slugs) await call(first.base, 'POST', `/spaces/${slug}/archive`, user.token)
  const expected = hooks.length * 2

  await until('the worker to fill its slots', 30_000, async () => receiver!.open >= CONCURRENCY)
  const beforeKill = receiver.requests.map((r) => r.headers['x-service-delivery'])
  expect(beforeKill.length).toBe(CONCURRENCY)
  first.child.kill('SIGKILL')
  await first.child.exited

  // Let the held requests finish (their sender is gone), then answer at once.
  holding = false
  release()
  held = Promise.resolve()

  const second = await startServer(env)
  const byHook = async () =>
    Promise.all(hooks.map((h) => call(second.base, 'GET', `/spaces/${h.space}/webhooks/${h.id}/deliveries?limit=200`, user.token)))
  const entries = await until('every delivery to be delivered', 90_000, async () => {
    const logs = (await byHook()).flat()
    const deliveries = new Map<string, string>()
    for (const e of logs) deliveries.set(e.delivery_id, e.delivery_status)
    if (deliveries.size < expected) return null
    return [...deliveries.values()].every((s) => s === 'delivered') ? logs : null
  })

  const logged = new Set(entries.map((e: { delivery_id: string }) => e.delivery_id))
  expect(logged.size).toBe(expected)
  const received = receiver.requests.map((r) => r.headers['x-service-delivery'])
  // Every delivery arrived at least once ...
  for (const id of logged) expect(received).toContain(id)
  // ... and nothing arrived under an id the service does not know.
  for (const id of received) expect(logged.has(id)).toBe(true)
  // The attempts cut off by the kill were made again under the same ids.
  for (const id of beforeKill) expect(received.filter((r) => r === id).length).toBeGreaterThanOrEqual(2)
  // Both kinds came through: pings and events fanned out from the outbox.
  const events = receiver.requests.map((r) => r.headers['x-service-event'])
  expect(events.filter((e) => e === 'ping').length).toBeGreaterThanOrEqual(hooks.length)
  expect(events.filter((e) => e === 'space.archived').length).toBeGreaterThanOrEqual(hooks.length)

  second.child.kill('SIGTERM')
  await second.child.exited
})
