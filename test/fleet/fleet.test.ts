// A fleet on one Postgres: three `serve` processes (job workers off) and one `worker` process, a round-robin proxy in
// front (a small Bun proxy: the instances trust it as a proxy and take the client address from X-Forwarded-For),
// and FLEET_SECONDS (default 60) of mixed traffic through it: saves and publishes, CDN reads, searches, form submits,
// beacons, uploads, webhook-triggering changes. Afterwards every instance must answer the same published bytes and
// ETag for every Story and the same search hits, each webhook must have been delivered exactly once, each job run
// once, rate limits counted fleet-wide (RATE_LIMIT_STORE=postgres), and analytics must count every beacon. Prints the
// propagation delay from a publish on one instance to its bytes on another.
//
// Runs on the Postgres suite (TEST_DATABASE_URL). The processes are the built executable when FLEET_BINARY names it
// (.ci/run builds it first), else `bun bin/content-service.ts`.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { type Receiver, startReceiver } from '../helpers/receiver'

setDefaultTimeout(60_000)

const serverUrl = process.env.TEST_DATABASE_URL
const SECONDS = Number(process.env.FLEET_SECONDS ?? 60)
const BOUND_MS = 120_000
const CMD = process.env.FLEET_BINARY ? [process.env.FLEET_BINARY] : ['bun', join(import.meta.dir, '..', '..', 'bin', 'content-service.ts')]
const STORIES = 10
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36'
const PNG = Uint8Array.from(
  atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='),
  (c) => c.charCodeAt(0),
)

interface Proc {
  child: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  base: string
}

const procs: Proc[] = []
const cleanups: (() => Promise<void> | void)[] = []
let dbUrl = ''
let sql: ReturnType<typeof postgres>
let proxy: ReturnType<typeof Bun.serve>
let receiver: Receiver
let P = '' // the proxy's base URL

const sleep = (ms: number) => Bun.sleep(ms)
const pct = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : NaN)
let ipCounter = 0
const nextIp = () => `10.${(++ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, boundMs = BOUND_MS): Promise<T> {
  const deadline = Date.now() + boundMs
  let last: unknown
  for (;;) {
    try {
      const v = await probe()
      if (v !== undefined) return v
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`)
    await sleep(200)
  }
}

function baseEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    DATABASE_URL: dbUrl,
    SERVICE_SECRET_KEY: '5a'.repeat(32),
    RATE_LIMIT_STORE: 'postgres',
    // The address visitors use, the same for every instance (links in answers, such as meta.beacon_url, name it).
    PUBLIC_URL: 'https://cms.example.test',
    TRUSTED_PROXIES: '127.0.0.1',
    SERVICE_OUTBOUND_ALLOW_PRIVATE: 'true',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'cs-fleet-')),
  }
}

async function startServe(): Promise<Proc> {
  const child = Bun.spawn([...CMD, 'serve', '--port', '0', '--host', '127.0.0.1'], {
    env: { ...baseEnv(), SERVICE_WORKER_ENABLED: 'false' },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const reader = child.stdout.getReader()
  let out = ''
  const deadline = Date.now() + BOUND_MS
  while (Date.now() < deadline) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`serve exited before listening: ${out}${await new Response(child.stderr).text()}`)
    out += new TextDecoder().decode(value)
    const port = /listening on http:\/\/[^:]+:(\d+)/.exec(out)?.[1]
    if (port) {
      void (async () => {
        for (;;) if ((await reader.read()).done) return
      })()
      void new Response(child.stderr).text()
      const p = { child, base: `http://127.0.0.1:${port}/v1` }
      procs.push(p)
      return p
    }
  }
  throw new Error(`serve did not listen: ${out}`)
}

function startWorker() {
  const child = Bun.spawn([...CMD, 'worker'], { env: baseEnv(), stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  void new Response(child.stdout).text()
  void new Response(child.stderr).text()
  procs.push({ child, base: '' })
  return child
}

async function call(base: string, method: string, path: string, opts: { token?: string; body?: unknown; ip?: string; raw?: BodyInit; type?: string } = {}) {
  const headers: Record<string, string> = { 'User-Agent': UA, 'X-Forwarded-For': opts.ip ?? nextIp() }
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json'
  if (opts.type) headers['Content-Type'] = opts.type
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: opts.raw ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined),
    signal: AbortSignal.timeout(BOUND_MS),
  })
  const text = await res.text()
  let body: any = null
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: res.status, body, text, etag: res.headers.get('etag') }
}

const doc = (headline: string) => ({ type: 'doc', blocks: [{ component: 'page', _uid: 'b1', headline, body: `lighthouse keeper story ${headline}` }] })

describe.skipIf(!serverUrl)('a fleet of three servers and a worker on one Postgres', () => {
  beforeAll(async () => {
    const name = `cs_fleet_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`
    const admin = postgres(serverUrl!, { max: 1, onnotice: () => {} })
    await admin.unsafe(`create database ${name}`)
    await admin.end()
    const u = new URL(serverUrl!)
    u.pathname = `/${name}`
    dbUrl = u.toString()
    sql = postgres(dbUrl, { max: 2, onnotice: () => {} })
    cleanups.push(async () => {
      await sql.end({ timeout: 1 })
      const a = postgres(serverUrl!, { max: 1, onnotice: () => {} })
      await a.unsafe(`drop database if exists ${name} with (force)`)
      await a.end()
    })
    receiver = startReceiver()
    cleanups.push(() => receiver.stop())

    await startServe() // migrates the database
    await Promise.all([startServe(), startServe()])
    startWorker()
    let next = 0
    proxy = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      idleTimeout: 120,
      async fetch(request) {
        const target = procs.filter((p) => p.base)[next++ % 3]
        const url = new URL(request.url)
        const headers = new Headers(request.headers)
        headers.delete('accept-encoding')
        headers.delete('host')
        const res = await fetch(`${target.base.replace(/\/v1$/, '')}${url.pathname}${url.search}`, {
          method: request.method,
          headers,
          body: request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer(),
          redirect: 'manual',
        })
        const out = new Headers(res.headers)
        out.delete('content-encoding')
        out.delete('content-length')
        return new Response(await res.arrayBuffer(), { status: res.status, headers: out })
      },
    })
    P = `http://127.0.0.1:${proxy.port}/v1`
    cleanups.push(() => proxy.stop(true))
  })

  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGTERM')
    await Promise.race([Promise.all(procs.map((p) => p.child.exited)), sleep(20_000)])
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL')
    for (const c of cleanups.reverse()) await c()
  })

  test('mixed traffic through the proxy; afterwards every instance agrees, nothing ran twice, nothing was lost', async () => {
    // ---- set-up through the proxy ----
    const reg = await call(P, 'POST', '/auth/register', { body: { email: 'fleet@example.com', password: 'a long password', name: 'Fleet' } })
    expect(reg.status).toBe(201)
    const token = reg.body.data.token as string
    expect((await call(P, 'POST', '/spaces', { token, body: { slug: 'site', name: 'Site', locales: ['en'] } })).status).toBe(201)
    const comp = await call(P, 'POST', '/spaces/site/components', { token, body: { name: 'page', schema: { headline: { type: 'text' }, body: { type: 'text' } } } })
    expect(comp.status).toBe(201)
    const hook = await call(P, 'POST', '/spaces/site/webhooks', { token, body: { label: 'fleet', url: `${receiver.url}/hook`, events: ['story.published'], active: true } })
    expect(hook.status).toBe(201)
    const form = await call(P, 'POST', '/spaces/site/forms', {
      token,
      body: { slug: 'contact', label: 'Contact', fields: [{ key: 'name', type: 'text', label: 'Name', required: true }] },
    })
    expect(form.status).toBe(201)
    const stories: { uuid: string; slug: string; version: number; headline: string }[] = []
    for (let i = 0; i < STORIES; i++) {
      const r = await call(P, 'POST', '/spaces/site/stories', { token, body: { name: `Page ${i}`, slug: `page-${i}`, content: doc(`v0-${i}`) } })
      expect(r.status).toBe(201)
      stories.push({ uuid: r.body.data.uuid, slug: `page-${i}`, version: r.body.data.version_no, headline: `v0-${i}` })
    }
    let publishes = 0
    for (const s of stories) {
      expect((await call(P, 'POST', `/spaces/site/stories/${s.uuid}/publish`, { token })).status).toBe(200)
      publishes++
    }

    // ---- traffic ----
    const stopAt = Date.now() + SECONDS * 1000
    const statuses = new Map<string, number>()
    const count = (kind: string, status: number) => statuses.set(`${kind} ${status}`, (statuses.get(`${kind} ${status}`) ?? 0) + 1)
    const delays: number[] = []
    let beacons = 0
    let submits = 0
    let uploads = 0
    const servers = procs.filter((p) => p.base)

    const editor = async (lane: number) => {
      for (let round = 0; Date.now() < stopAt; round++) {
        const s = stories[(round * 2 + lane) % STORIES]
        const headline = `r${round}-l${lane}-${s.slug}`
        const saved = await call(P, 'PUT', `/spaces/site/stories/${s.uuid}`, { token, body: { content: doc(headline), expected_version_no: s.version } })
        count('save', saved.status)
        if (saved.status !== 200) continue
        s.version = saved.body.data.version_no
        // Publish on one instance, then watch another one's CDN answer until it has the new bytes.
        const from = servers[round % 3]
        const to = servers[(round + 1) % 3]
        const pub = await call(from.base, 'POST', `/spaces/site/stories/${s.uuid}/publish`, { token })
        count('publish', pub.status)
        if (pub.status !== 200) continue
        publishes++
        s.headline = headline
        const t0 = performance.now()
        await waitFor(`publish of ${s.slug} on another instance`, async () => {
          const r = await call(to.base, 'GET', `/cdn/site/stories/${s.slug}`)
          return r.status === 200 && r.body.data.content.blocks[0].headline === headline ? true : undefined
        })
        delays.push(performance.now() - t0)
      }
    }
    const reader = async () => {
      for (let i = 0; Date.now() < stopAt; i++) count('cdn', (await call(P, 'GET', `/cdn/site/stories/page-${i % STORIES}`)).status)
    }
    const searcher = async () => {
      for (let i = 0; Date.now() < stopAt; i++) count('search', (await call(P, 'GET', `/cdn/site/search?q=${i % 2 ? 'lighthouse' : 'keeper'}`)).status)
    }
    const submitter = async () => {
      while (Date.now() < stopAt) {
        const r = await call(P, 'POST', '/cdn/site/forms/contact', { body: { data: { name: `visitor ${submits}` } } })
        count('submit', r.status)
        if (r.status === 200 || r.status === 201) submits++
        await sleep(50)
      }
    }
    const beaconer = async () => {
      while (Date.now() < stopAt) {
        const s = stories[beacons % STORIES]
        const r = await call(P, 'POST', '/cdn/site/_beacon', { raw: JSON.stringify({ story_uuid: s.uuid, lang: 'en' }), type: 'text/plain' })
        count('beacon', r.status)
        if (r.status === 204) beacons++
        await sleep(20)
      }
    }
    const uploader = async () => {
      while (Date.now() < stopAt) {
        const form = new FormData()
        form.append('file', new Blob([PNG], { type: 'image/png' }), `pixel-${uploads}.png`)
        const r = await call(P, 'POST', '/spaces/site/assets', { token, raw: form })
        count('upload', r.status)
        if (r.status === 201) uploads++
        await sleep(500)
      }
    }
    await Promise.all([editor(0), editor(1), reader(), reader(), reader(), searcher(), submitter(), beaconer(), uploader()])
    console.log(`fleet: ${SECONDS} s of traffic:`, Object.fromEntries([...statuses].sort()))
    console.log(
      `fleet: publish on one instance → new bytes on another: p50 ${pct(delays, 50).toFixed(0)} ms, p99 ${pct(delays, 99).toFixed(0)} ms (${delays.length} publishes)`,
    )
    // Every answer of the traffic was a success: no 500, no 429 (addresses rotate), no conflict (one editor per Story).
    for (const [key, n] of statuses) expect({ key, n, ok: /^(save|publish|search|cdn) 200$|^(submit) 20[01]$|^beacon 204$|^upload 201$/.test(key) }).toEqual({ key, n, ok: true })
    expect(delays.length).toBeGreaterThan(0)
    expect(uploads).toBeGreaterThan(0)

    // ---- afterwards: every instance answers the same bytes and ETags ----
    for (const s of stories) {
      let seen = ''
      await waitFor(`the same ${s.slug} everywhere`, async () => {
        const answers = await Promise.all(servers.map((p) => call(p.base, 'GET', `/cdn/site/stories/${s.slug}`)))
        seen = JSON.stringify(answers.map((a) => ({ status: a.status, etag: a.etag, text: a.text })))
        const same = answers.every((a) => a.status === 200 && a.text === answers[0].text && a.etag === answers[0].etag)
        return same && answers[0].body.data.content.blocks[0].headline === s.headline ? true : undefined
      }, 30_000).catch((err) => {
        throw new Error(`${err.message}; expected headline ${s.headline}; instances answered ${seen}`)
      })
    }
    // ...the same search hits...
    for (const q of ['lighthouse', 'keeper', 'r1']) {
      await waitFor(`the same hits for ${q}`, async () => {
        const answers = await Promise.all(servers.map((p) => call(p.base, 'GET', `/cdn/site/search?q=${q}&per_page=50`)))
        const ids = answers.map((a) => (a.status === 200 ? JSON.stringify(a.body.data.map((h: { id: string }) => h.id).sort()) : `status ${a.status}`))
        return ids.every((x) => x === ids[0]) && !ids[0].startsWith('status') ? true : undefined
      })
    }

    // ---- each webhook delivered exactly once, each job run once ----
    await waitFor('every publish delivered', async () => (receiver.requests.length >= publishes ? true : undefined))
    await waitFor('no job left to run', async () => {
      const [{ n }] = await sql`select count(*)::int as n from jobs where status in ('pending', 'running') and run_at <= now()`
      return n === 0 ? true : undefined
    })
    await sleep(1000) // a duplicate would arrive now
    const deliveries = receiver.requests.map((r) => r.headers['x-service-delivery'])
    expect(new Set(deliveries).size).toBe(deliveries.length)
    expect(deliveries.length).toBe(publishes)
    const eventIds = receiver.requests.map((r) => r.json?.id ?? r.headers['x-service-event-id'] ?? r.headers['x-service-delivery'])
    expect(new Set(eventIds).size).toBe(eventIds.length)
    const [again] = await sql`select count(*)::int as n from jobs where attempts > 1 or last_error is not null`
    expect(again.n).toBe(0)

    // ---- rate limits are counted once for the fleet (RATE_LIMIT_STORE=postgres) ----
    // GET /v1/invite/{token} allows 30 a minute per address: 45 from one address over three instances.
    const ip = '192.0.2.77'
    const limited: number[] = []
    for (let i = 0; i < 45; i++) limited.push((await call(servers[i % 3].base, 'GET', `/invite/${'x'.repeat(43)}`, { ip })).status)
    expect(limited.filter((s) => s === 404).length).toBe(30)
    expect(limited.filter((s) => s === 429).length).toBe(15)

    // ---- analytics counted every beacon (each instance flushes its buffer within a second) ----
    const total = await waitFor('every beacon counted', async () => {
      const r = await call(P, 'GET', '/spaces/site/analytics/stories?per_page=200', { token })
      const mounts = (r.body?.data ?? []).reduce((n: number, s: { mounts: number }) => n + s.mounts, 0)
      return mounts >= beacons ? mounts : undefined
    })
    expect(total).toBe(beacons)
    console.log(`fleet: ${publishes} publishes delivered once each, ${submits} submits, ${beacons} beacons counted, ${uploads} uploads`)
  }, SECONDS * 1000 + 5 * BOUND_MS)
})
