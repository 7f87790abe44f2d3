// A fleet on one Postgres: three `serve` processes (job workers off) and one `worker` process, a round-robin proxy in
// front (a small Bun proxy: the instances trust it as a proxy and take the client address from X-Forwarded-For),
// and FLEET_SECONDS (default 60) of mixed traffic through it: saves and publishes, CDN reads, searches, form submits,
// beacons, uploads, webhook-triggering changes. Afterwards every instance must answer the same published bytes and
// ETag for every Story and the same search hits, each webhook must have been delivered exactly once, each job run
// once, rate limits counted fleet-wide (RATE_LIMIT_STORE=postgres), and analytics must count every beacon. Prints the
// propagation delay from a publish on one instance to its bytes on another.
//
// Runs on the Postgres suite (TEST_DATABASE_URL). The processes are the built executable when SERVICE_BINARY names it
// (.ci/run builds it first), else `bun bin/content-service.ts`.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type Receiver, startReceiver } from '../helpers/receiver'
import { BOUND_MS, call, doc, fleetEnv, freshDatabase, pct, type Proc, seedSite, serverUrl, sleep, startProxy, startServe, startWorker, stopAll, waitFor } from './procs'

setDefaultTimeout(60_000)

const SECONDS = Number(process.env.FLEET_SECONDS ?? 60)
const STORIES = 10
const PNG = Uint8Array.from(
  atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='),
  (c) => c.charCodeAt(0),
)

const procs: Proc[] = []
const cleanups: (() => Promise<void> | void)[] = []
let sql: Awaited<ReturnType<typeof freshDatabase>>['sql']
let receiver: Receiver
let P = '' // the proxy's base URL

describe.skipIf(!serverUrl)('a fleet of three servers and a worker on one Postgres', () => {
  beforeAll(async () => {
    const db = await freshDatabase('cs_fleet')
    sql = db.sql
    cleanups.push(() => db.drop())
    receiver = startReceiver()
    cleanups.push(() => receiver.stop())
    const env = fleetEnv(db.url, { SERVICE_WORKER_ENABLED: 'false' })
    procs.push(await startServe(env)) // migrates the database
    procs.push(...(await Promise.all([startServe(env), startServe(env)])))
    procs.push(startWorker(fleetEnv(db.url)))
    const proxy = startProxy(() => procs.filter((p) => p.base))
    P = proxy.base
    cleanups.push(() => proxy.server.stop(true))
  })

  afterAll(async () => {
    await stopAll(procs)
    for (const c of cleanups.reverse()) await c()
  })

  test('mixed traffic through the proxy; afterwards every instance agrees, nothing ran twice, nothing was lost', async () => {
    // ---- set-up through the proxy ----
    const { token, stories } = await seedSite(P, STORIES)
    const hook = await call(P, 'POST', '/spaces/site/webhooks', { token, body: { label: 'fleet', url: `${receiver.url}/hook`, events: ['story.published'], active: true } })
    expect(hook.status).toBe(201)
    const form = await call(P, 'POST', '/spaces/site/forms', {
      token,
      body: { slug: 'contact', label: 'Contact', fields: [{ key: 'name', type: 'text', label: 'Name', required: true }] },
    })
    expect(form.status).toBe(201)
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
