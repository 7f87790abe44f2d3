import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { analyticsModule } from '../src/modules/analytics'
import { BeaconBuffer } from '../src/modules/analytics/buffer'
import { BeaconPipeline, type BeaconRow, deviceFromUserAgent, newMetrics, referrerOrigin } from '../src/modules/analytics/beacon'
import { addDays, dayOf } from '../src/modules/analytics/days'
import { groupedSets, insertEvents, readWatermark, RollupCache, rollup } from '../src/modules/analytics/repo'
import { sparklineSvg } from '../src/modules/analytics/service'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'
const IPAD = 'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'

let t: TestApp
let owner: { token: string; tenant: { id: number } }
let space: string
let spaceId: number
let other: string
let otherId: number
let viewer: string
let stranger: string
let storyA: string
let storyB: string
let draft: string
let otherStory: string
let today: string

const doc = (headline: string) => ({ type: 'doc', blocks: [{ component: 'hero', _uid: crypto.randomUUID(), headline }] })

async function publishedStory(s: string, slug: string, publish = true) {
  const r = await t.request('POST', `/v1/spaces/${s}/stories`, { token: owner.token, body: { name: slug, slug, content: doc(slug) } })
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`)
  if (publish) expect((await t.request('POST', `/v1/spaces/${s}/stories/${r.body.data.uuid}/publish`, { token: owner.token })).status).toBe(200)
  return r.body.data.uuid as string
}

async function spaceIdOf(slug: string) {
  const [row] = await t.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [slug])
  return row.id
}

/** A second person in the owner's tenant with a role in `s` (no membership API yet: the database). */
const member = (s: string, role: 'viewer' | 'editor' | 'admin') => t.member(owner.tenant.id, s, role)

interface BeaconOpts {
  space?: string
  ip?: string
  ua?: string | null
  type?: string | null
  raw?: string
  headers?: Record<string, string>
}
let ipN = 0
const freshIp = () => `198.51.${(++ipN >> 8) & 255}.${ipN & 255}`

function beacon(body: unknown, o: BeaconOpts = {}) {
  const headers: Record<string, string> = { ...o.headers }
  if (o.type !== null) headers['Content-Type'] = o.type ?? 'text/plain;charset=UTF-8'
  if (o.ua !== null) headers['User-Agent'] = o.ua ?? CHROME
  return t.request('POST', `/v1/cdn/${o.space ?? space}/_beacon`, { raw: o.raw ?? JSON.stringify(body), ip: o.ip ?? freshIp(), headers })
}

const state = () => t.state(analyticsModule)
/** Lets answered beacons finish their steps, then writes the buffer. */
async function settle(s = state()) {
  await Promise.allSettled([...s.beacon.inflight])
  await s.buffer.flush()
}
const rows = (sid: number) =>
  t.kernel.db.query<{ story_uuid: string; lang: string | null; device: string; referrer: string | null; segment_key: string | null; at: Date }>(
    'select story_uuid, lang, device, referrer, segment_key, at from analytics_events where space_id = $1 order by at',
    [sid],
  )
const get = (path: string, token = owner.token) => t.request('GET', path, { token })

beforeAll(async () => {
  t = await testApp({ userTokenTtlDays: 3650 })
  const now = new Date()
  // Noon UTC today: day arithmetic in the tests never straddles midnight.
  t.clock.set(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 12))
  today = dayOf(t.clock.now())
  owner = await t.register()
  space = (await t.createSpace(owner.token)).slug
  other = (await t.createSpace(owner.token)).slug
  spaceId = await spaceIdOf(space)
  otherId = await spaceIdOf(other)
  for (const s of [space, other]) {
    const c = await t.request('POST', `/v1/spaces/${s}/components`, { token: owner.token, body: { name: 'hero', is_root: true, schema: { headline: { type: 'text' } } } })
    expect(c.status).toBe(201)
  }
  storyA = await publishedStory(space, 'alpha')
  storyB = await publishedStory(space, 'beta')
  draft = await publishedStory(space, 'draft', false)
  otherStory = await publishedStory(other, 'elsewhere')
  viewer = await member(space, 'viewer')
  stranger = (await t.register()).token
})

afterAll(async () => {
  await t?.close()
})

describe('the beacon', () => {
  test('answers 204 with an empty body and no cookie on every path, and stores only the valid mount', async () => {
    const before = { ...state().metrics.dropped }
    const ok = { story_uuid: storyA }
    const cases: [string, Promise<Awaited<ReturnType<typeof beacon>>>][] = [
      ['valid (text/plain)', beacon(ok)],
      ['valid (application/json)', beacon(ok, { type: 'application/json' })],
      ['bad JSON', beacon(null, { raw: '{"story_uuid": ' })],
      ['not UTF-8', beacon(null, { raw: '\u00ff' })],
      ['an array', beacon([ok])],
      ['empty body', beacon(null, { raw: '' })],
      ['no story_uuid', beacon({ lang: 'en' })],
      ['not a uuid', beacon({ story_uuid: 'home' })],
      ['unknown Space', beacon(ok, { space: 'no-such-space' })],
      ['malformed Space', beacon(ok, { space: 'NOT_A_SLUG' })],
      ['unknown Story', beacon({ story_uuid: crypto.randomUUID() })],
      ['draft Story', beacon({ story_uuid: draft })],
      ["another Space's Story", beacon({ story_uuid: otherStory })],
      ['over 4 KB', beacon({ story_uuid: storyA, referrer: `https://x.example/${'a'.repeat(5000)}` })],
      ['form body', beacon(ok, { type: 'application/x-www-form-urlencoded' })],
      ['a bot', beacon(ok, { ua: GOOGLEBOT })],
      ['no User-Agent', beacon(ok, { ua: null })],
      ['garbage', beacon(null, { raw: '\u0000\u0001<script>' })],
    ]
    for (const [name, p] of cases) {
      const r = await p
      expect({ name, status: r.status, text: r.text }).toEqual({ name, status: 204, text: '' })
      expect(r.headers.get('set-cookie')).toBeNull()
      expect(r.headers.get('cache-control')).toBe('no-store')
    }
    await settle()
    const stored = await rows(spaceId)
    expect(stored.length).toBe(2)
    expect(new Set(stored.map((r) => r.story_uuid))).toEqual(new Set([storyA]))
    expect((await rows(otherId)).length).toBe(0)
    const d = state().metrics.dropped
    const delta = (k: keyof typeof d) => d[k] - before[k]
    expect(delta('parse')).toBe(7)
    expect(delta('space')).toBe(2)
    expect(delta('story')).toBe(3)
    expect(delta('too_large')).toBe(1)
    expect(delta('content_type')).toBe(1)
    expect(delta('bot')).toBe(2)
  })

  test('whatever its size: an oversized body or a very long URL still gets 204 with no body (real HTTP)', async () => {
    // The in-process server's HTTP parser takes 16 KiB of request line (a plain `bun test`), below the service's own
    // URL limit (64 KiB): a server process started like the executable (128 KiB) gets the long URLs.
    const server = t.app.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 64 * 1024, idleTimeout: 30 })
    const dataDir = mkdtempSync(join(tmpdir(), 'cs-beacon-'))
    const child = Bun.spawn([process.execPath, '--max-http-header-size=131072', join(import.meta.dir, 'helpers', 'server-process.ts')], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PORT: '0', LOG_LEVEL: 'error', DATA_DIR: dataDir, SERVICE_WORKER_ENABLED: 'false' },
      stdout: 'pipe',
      stderr: 'inherit',
    })
    try {
      const local = `http://127.0.0.1:${server.port}`
      const before = state().metrics.dropped.too_large
      const big = 'x'.repeat(2 * 1024 * 1024)
      const expect204 = async (what: string, res: Response) => {
        const text = await res.text()
        expect({ what, status: res.status, text, cache: res.headers.get('cache-control') }).toEqual({ what, status: 204, text: '', cache: 'no-store' })
      }
      // Over the server's body limit (which answers 413 on any other route), by its Content-Length.
      const other = await fetch(`${local}/v1/cdn/${space}/forms/x`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: big })
      expect(other.status).toBe(413)
      await expect204('2 MiB with a length', await fetch(`${local}/v1/cdn/${space}/_beacon`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: big }))
      // Without a length (chunked): read up to the beacon's 4 KB, then dropped.
      const chunks = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < 64; i++) c.enqueue(new Uint8Array(32 * 1024).fill(120))
          c.close()
        },
      })
      await expect204('2 MiB chunked', await fetch(`${local}/v1/cdn/${space}/_beacon`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: chunks, duplex: 'half' } as RequestInit))
      expect(state().metrics.dropped.too_large - before).toBe(2)
      // A URL over the service's 64 KiB limit (in process: the same handler the server runs).
      const longQuery = `?${'q'.repeat(70 * 1024)}`
      expect((await t.request('GET', `/v1/version${longQuery}`)).status).toBe(414)
      const longUrl = await t.request('POST', `/v1/cdn/${space}/_beacon${longQuery}`, { raw: '{}', headers: { 'Content-Type': 'text/plain' } })
      expect({ status: longUrl.status, text: longUrl.text }).toEqual({ status: 204, text: '' })
      const longSlug = await t.request('POST', `/v1/cdn/${'s'.repeat(70 * 1024)}/_beacon`, { raw: '{}', headers: { 'Content-Type': 'text/plain' } })
      expect({ status: longSlug.status, text: longSlug.text }).toEqual({ status: 204, text: '' })

      // Over real HTTP, against a server process that takes request lines of 128 KiB as the executable does.
      const reader = child.stdout.getReader()
      let out = ''
      let port = 0
      const deadline = Date.now() + 90_000
      while (!port && Date.now() < deadline) {
        const { value, done } = await reader.read()
        if (done) throw new Error(`the server process exited (${child.exitCode})`)
        out += new TextDecoder().decode(value)
        const line = out.split('\n').find((l) => l.startsWith('{"port"'))
        if (line) port = JSON.parse(line).port
      }
      reader.releaseLock()
      void child.stdout.pipeTo(new WritableStream()).catch(() => {})
      const remote = `http://127.0.0.1:${port}`
      expect((await fetch(`${remote}/v1/version${longQuery}`)).status).toBe(414)
      await expect204('a 70 KiB query string', await fetch(`${remote}/v1/cdn/some-space/_beacon${longQuery}`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{}' }))
      await expect204('a 70 KiB URL and a 2 MiB body', await fetch(`${remote}/v1/cdn/some-space/_beacon${longQuery}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: big }))
    } finally {
      server.stop(true)
      child.kill('SIGTERM')
      await child.exited
      rmSync(dataDir, { recursive: true, force: true })
    }
    // A server process starts in seconds; a loaded machine may take much longer to migrate its fresh data folder.
  }, 180_000)

  test('an unknown route method or a path below the beacon is not taken by it', async () => {
    expect((await t.request('GET', `/v1/cdn/${space}/_beacon`)).status).toBe(404)
    expect((await t.request('POST', `/v1/cdn/${space}/x/_beacon`, { raw: '{}', headers: { 'Content-Type': 'application/json' } })).status).toBe(404)
  })

  test('over 600 a minute from one IP, beacons are dropped — still 204 — and the IP is forgotten after the window', async () => {
    const ip = '192.0.2.200'
    const before = state().metrics.dropped.rate_limited
    const all = await Promise.all(Array.from({ length: 605 }, () => beacon({ story_uuid: storyB }, { ip })))
    expect(new Set(all.map((r) => r.status))).toEqual(new Set([204]))
    expect(state().metrics.dropped.rate_limited - before).toBe(5)
    expect(all.some((r) => r.headers.get('retry-after') || r.headers.get('ratelimit-limit'))).toBe(false)
    await settle()
    // A Story read from the same IP is not limited by the beacons (the beacon has its own limiter).
    expect((await t.request('GET', `/v1/cdn/${space}/stories/alpha`, { ip })).status).toBe(200)
    t.clock.advance(61_000)
    state().limiter.sweep()
    expect(state().limiter.size).toBe(0)
    expect((await beacon({ story_uuid: storyB }, { ip })).status).toBe(204)
    expect(state().metrics.dropped.rate_limited - before).toBe(5)
    t.clock.set(Date.parse(`${today}T12:00:00Z`) + 1000)
    await settle()
    await t.kernel.db.query('delete from analytics_events where space_id = $1', [spaceId])
  })

  test('CORS: any origin; OPTIONS answers 204', async () => {
    const r = await beacon({ story_uuid: storyA }, { headers: { Origin: 'https://shop.example' } })
    expect(r.status).toBe(204)
    expect(r.headers.get('access-control-allow-origin')).toBe('*')
    const pre = await t.request('OPTIONS', `/v1/cdn/${space}/_beacon`, {
      headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    })
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-origin')).toBe('*')
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST')
    expect(pre.headers.get('set-cookie')).toBeNull()
    await settle()
    await t.kernel.db.query('delete from analytics_events where space_id = $1', [spaceId])
  })

  test('the answer carries Cross-Origin-Resource-Policy: cross-origin (pages with COEP: require-corp embed it)', async () => {
    const r = await beacon({ story_uuid: storyA }, { headers: { Origin: 'https://shop.example' } })
    expect(r.status).toBe(204)
    expect(r.headers.get('cross-origin-resource-policy')).toBe('cross-origin')
    // Dropped beacons answer the same.
    const bad = await t.request('POST', `/v1/cdn/${space}/_beacon`, { raw: 'x', headers: { 'Content-Type': 'application/xml' } })
    expect(bad.status).toBe(204)
    expect(bad.headers.get('cross-origin-resource-policy')).toBe('cross-origin')
    await settle()
    await t.kernel.db.query('delete from analytics_events where space_id = $1', [spaceId])
  })

  test('normalises lang, device, referrer and segment_key', async () => {
    await beacon({ story_uuid: storyA, lang: 'de-at', device: 'tablet', referrer: 'https://www.Google.com/search?q=secret#x', segment_key: 'vip' })
    await beacon({ story_uuid: storyA.toUpperCase(), lang: 'not a tag!', device: 'phone', referrer: 'javascript:alert(1)' }, { ua: IPHONE })
    await beacon({ story_uuid: storyA, lang: 42, referrer: 'http://localhost:8080/a/b' }, { ua: IPAD })
    await beacon({ story_uuid: storyA, lang: 'zh-hant-tw', referrer: 'not a url' })
    await settle()
    const got = (await rows(spaceId)).map(({ at: _at, ...r }) => r)
    expect(got).toEqual([
      { story_uuid: storyA, lang: 'de-AT', device: 'tablet', referrer: 'https://www.google.com', segment_key: null },
      { story_uuid: storyA, lang: null, device: 'mobile', referrer: null, segment_key: null },
      { story_uuid: storyA, lang: null, device: 'tablet', referrer: 'http://localhost:8080', segment_key: null },
      { story_uuid: storyA, lang: 'zh-Hant-TW', device: 'desktop', referrer: null, segment_key: null },
    ])
    await t.kernel.db.query('delete from analytics_events where space_id = $1', [spaceId])
  })

  test('segment_key is kept only when it names a segment of that Space (the real segments module)', async () => {
    const editorToken = (await t.spaceToken(owner.token, space, 'editor')).token
    const seg = await t.request('POST', `/v1/spaces/${space}/audience-segments`, {
      token: editorToken,
      body: { key: 'members', label: 'Members', priority: 1, rules: [{ type: 'cookie', key: 'member', operator: 'eq', value: '1' }] },
    })
    expect(seg.status).toBe(201)
    await beacon({ story_uuid: storyA, segment_key: 'members' })
    await beacon({ story_uuid: storyA, segment_key: 'strangers' })
    await settle()
    expect((await rows(spaceId)).map((r) => r.segment_key)).toEqual(['members', null])
    await t.kernel.db.query('delete from analytics_events where space_id = $1', [spaceId])
  })

  test('segment_key is kept only when the segment check names it a segment of the Space', async () => {
    const metrics = newMetrics()
    const pushed: BeaconRow[] = []
    const pipeline = new BeaconPipeline({
      kernel: t.kernel,
      spaces: { get: (slug) => (slug === 'shop' ? ({ id: 7 } as never) : null) },
      published: { has: async (id, uuid) => id === 7 && uuid === storyA },
      isSegmentKey: async (id, key) => id === 7 && key === 'vip',
      buffer: { push: (r: BeaconRow) => (pushed.push(r), true) } as unknown as BeaconBuffer,
      metrics,
    })
    const body = (o: object) => new TextEncoder().encode(JSON.stringify({ story_uuid: storyA, ...o }))
    expect((await pipeline.run('shop', body({ segment_key: 'vip' }), CHROME))?.segmentKey).toBe('vip')
    expect((await pipeline.run('shop', body({ segment_key: 'nobody' }), CHROME))?.segmentKey).toBeNull()
    expect((await pipeline.run('shop', body({ segment_key: { $ne: 1 } }), CHROME))?.segmentKey).toBeNull()
    expect(await pipeline.run('other', body({}), CHROME)).toBeNull()
    expect(metrics.dropped.space).toBe(1)
    expect(pushed.length).toBe(3)
  })

  test('device and referrer helpers', () => {
    expect(deviceFromUserAgent(CHROME)).toBe('desktop')
    expect(deviceFromUserAgent(IPHONE)).toBe('mobile')
    expect(deviceFromUserAgent(IPAD)).toBe('tablet')
    expect(deviceFromUserAgent('Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 Chrome/124.0 Safari/537.36')).toBe('tablet')
    expect(deviceFromUserAgent('Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile Safari/537.36')).toBe('mobile')
    expect(referrerOrigin('https://user:pw@example.com:8443/path?q=1')).toBe('https://example.com:8443')
    expect(referrerOrigin('ftp://example.com/')).toBeNull()
  })

  test('no IP address is stored in any table, and no request leaves a cookie', async () => {
    const ip = '203.0.113.77'
    for (let i = 0; i < 3; i++) expect((await beacon({ story_uuid: storyB, referrer: `https://news.example/${ip}` }, { ip })).headers.get('set-cookie')).toBeNull()
    await settle()
    expect((await rows(spaceId)).length).toBe(3)
    const tables = await t.kernel.db.query<{ table_name: string }>(
      "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
    )
    expect(tables.length).toBeGreaterThan(5)
    for (const { table_name } of tables) {
      const all = await t.kernel.db.query(`select * from "${table_name}"`)
      expect({ table_name, leaked: JSON.stringify(all).includes(ip) }).toEqual({ table_name, leaked: false })
    }
    await t.kernel.db.query('delete from analytics_events where space_id = $1', [spaceId])
  })
})

describe('batched writes', () => {
  test('1,000 waiting beacons are written in one insert; a shutdown flushes the rest', async () => {
    const inst = await t.instance()
    const s = inst.state(analyticsModule)
    s.buffer.stop() // no one-second timer: only the batch size and the shutdown flush write
    const send = (i: number) =>
      inst.runtime.handle(
        new Request(`http://localhost/v1/cdn/${other}/_beacon`, {
          method: 'POST',
          headers: { 'Content-Type': 'text/plain', 'User-Agent': CHROME, 'X-Forwarded-For': `100.64.${i >> 8}.${i & 255}` },
          body: JSON.stringify({ story_uuid: otherStory }),
        }),
      )
    for (let i = 0; i < 999; i += 111) await Promise.all(Array.from({ length: 111 }, (_, j) => send(i + j)))
    await Promise.allSettled([...s.beacon.inflight])
    expect(s.buffer.pending).toBe(999)
    expect((await rows(otherId)).length).toBe(0)
    expect(s.metrics.inserts).toBe(0)
    await send(999)
    await Promise.allSettled([...s.beacon.inflight])
    // The 1,000th beacon starts the write by itself (no timer, no explicit flush).
    const deadline = Date.now() + 5000
    while ((await rows(otherId)).length < 1000 && Date.now() < deadline) await Bun.sleep(20)
    expect((await rows(otherId)).length).toBe(1000)
    expect(s.metrics.inserts).toBe(1)
    for (let i = 0; i < 5; i++) await send(1000 + i)
    expect((await rows(otherId)).length).toBe(1000)
    await inst.close()
    expect((await rows(otherId)).length).toBe(1005)
    expect(s.metrics.written).toBe(1005)
    expect(s.metrics.inserts).toBe(2)
    await t.kernel.db.query('delete from analytics_events where space_id = $1', [otherId])
  })

  test('the one-second timer writes what waits', async () => {
    await beacon({ story_uuid: storyA })
    const deadline = Date.now() + 3000
    while ((await rows(spaceId)).length === 0 && Date.now() < deadline) await Bun.sleep(100)
    expect((await rows(spaceId)).length).toBe(1)
    await t.kernel.db.query('delete from analytics_events where space_id = $1', [spaceId])
  })
})

/** Raw rows straight into the table, at chosen days (the beacon stamps the clock's time). */
async function seed(sid: number, entries: { story: string; day: string; n: number; lang?: string | null; device?: 'desktop' | 'mobile' | 'tablet'; referrer?: string | null; segment?: string | null }[]) {
  const out: BeaconRow[] = []
  for (const e of entries) {
    for (let i = 0; i < e.n; i++) {
      out.push({
        spaceId: sid,
        storyUuid: e.story,
        lang: e.lang === undefined ? 'en' : e.lang,
        device: e.device ?? 'desktop',
        referrer: e.referrer ?? null,
        segmentKey: e.segment ?? null,
        at: new Date(Date.parse(`${e.day}T00:00:00Z`) + ((i * 997) % 86_000) * 1000),
      })
    }
  }
  await insertEvents(t.kernel.db, out)
}

describe('management queries', () => {
  let qs: string
  let qsId: number
  let s1: string
  let s2: string
  beforeAll(async () => {
    qs = (await t.createSpace(owner.token)).slug
    qsId = await spaceIdOf(qs)
    await t.request('POST', `/v1/spaces/${qs}/components`, { token: owner.token, body: { name: 'hero', is_root: true, schema: { headline: { type: 'text' } } } })
    s1 = await publishedStory(qs, 'one')
    s2 = await publishedStory(qs, 'two')
    await seed(qsId, [
      { story: s1, day: addDays(today, -40), n: 4 }, // outside the default 30 days
      { story: s1, day: addDays(today, -20), n: 3, lang: 'de', segment: 'vip', device: 'mobile' },
      { story: s1, day: addDays(today, -2), n: 5, referrer: 'https://news.example' },
      { story: s1, day: today, n: 2, lang: null },
      { story: s2, day: addDays(today, -1), n: 6, device: 'tablet' },
      { story: s2, day: addDays(today, -8), n: 1 },
    ])
  })

  test('stories: the spec shape, ordered by mounts, dense by_day over the last 30 days by default', async () => {
    const r = await get(`/v1/spaces/${qs}/analytics/stories`)
    expect(r.status).toBe(200)
    expect(r.body.meta).toEqual({ from: addDays(today, -29), to: today, total_stories: 2, page: 1, per_page: 50 })
    expect(r.body.data.map((d: any) => [d.slug, d.mounts])).toEqual([
      ['one', 10],
      ['two', 7],
    ])
    const one = r.body.data[0]
    expect(Object.keys(one).sort()).toEqual(['by_day', 'by_lang', 'by_segment', 'mounts', 'slug', 'story_uuid'])
    expect(one.story_uuid).toBe(s1)
    expect(one.by_lang).toEqual({ de: 3, en: 5 })
    expect(one.by_segment).toEqual({ vip: 3 })
    expect(one.by_day.length).toBe(30)
    expect(one.by_day[0]).toEqual({ date: addDays(today, -29), mounts: 0 })
    expect(one.by_day.find((d: any) => d.date === addDays(today, -20)).mounts).toBe(3)
    expect(one.by_day[29]).toEqual({ date: today, mounts: 2 })
    expect(one.by_day.reduce((s: number, d: any) => s + d.mounts, 0)).toBe(10)
  })

  test('stories: week buckets start on Monday (ISO), month buckets on the 1st; paging', async () => {
    const from = addDays(today, -60)
    const w = await get(`/v1/spaces/${qs}/analytics/stories?from=${from}&to=${today}&granularity=week`)
    expect(w.status).toBe(200)
    for (const b of w.body.data[0].by_day) expect(new Date(`${b.date}T00:00:00Z`).getUTCDay()).toBe(1)
    expect(w.body.data[0].by_day.reduce((s: number, d: any) => s + d.mounts, 0)).toBe(14)
    const dates = w.body.data[0].by_day.map((d: any) => d.date)
    expect(dates.length).toBeGreaterThanOrEqual(9)
    for (let i = 1; i < dates.length; i++) expect(addDays(dates[i - 1], 7)).toBe(dates[i])
    const m = await get(`/v1/spaces/${qs}/analytics/stories?from=${from}&to=${today}&granularity=month`)
    for (const b of m.body.data[0].by_day) expect(b.date.endsWith('-01')).toBe(true)
    expect(m.body.data[0].by_day.reduce((s: number, d: any) => s + d.mounts, 0)).toBe(14)
    const p2 = await get(`/v1/spaces/${qs}/analytics/stories?per_page=1&page=2`)
    expect(p2.body.meta).toMatchObject({ total_stories: 2, page: 2, per_page: 1 })
    expect(p2.body.data.map((d: any) => d.slug)).toEqual(['two'])
    const p3 = await get(`/v1/spaces/${qs}/analytics/stories?per_page=1&page=3`)
    expect(p3.body.data).toEqual([])
  })

  test('stories: bad ranges and values answer 422', async () => {
    for (const q of [
      `from=${today}&to=${addDays(today, -1)}`,
      `from=${addDays(today, -366)}&to=${today}`,
      'from=2025-02-30',
      'to=2025-13-01',
      'from=yesterday',
      'granularity=year',
      'per_page=201',
      'per_page=0',
      'page=0',
    ]) {
      const r = await get(`/v1/spaces/${qs}/analytics/stories?${q}`)
      expect({ q, status: r.status }).toEqual({ q, status: 422 })
      expect(r.body.error).toBe('validation_failed')
    }
    expect((await get(`/v1/spaces/${qs}/analytics/stories?from=${addDays(today, -365)}&to=${today}`)).status).toBe(200)
  })

  test('one Story: daily series, breakdowns and a sparkline', async () => {
    const r = await get(`/v1/spaces/${qs}/stories/${s1}/analytics?days=7`)
    expect(r.status).toBe(200)
    const d = r.body.data
    expect(d.story_uuid).toBe(s1)
    expect(d.days).toBe(7)
    expect(d.mounts).toBe(7)
    expect(d.by_day.map((x: any) => x.date)).toEqual(Array.from({ length: 7 }, (_, i) => addDays(today, i - 6)))
    expect(d.sparkline.points).toEqual([0, 0, 0, 0, 5, 0, 2])
    expect(d.by_lang).toEqual({ en: 5 })
    expect(d.by_device).toEqual({ desktop: 7 })
    expect(d.by_referrer).toEqual({ 'https://news.example': 5, '(direct)': 2 })
    expect(d.sparkline.svg).toStartWith('<svg xmlns="http://www.w3.org/2000/svg"')
    expect(d.sparkline.svg).toContain('<polyline')
    expect(d.sparkline.svg.match(/points="([^"]+)"/)[1].split(' ').length).toBe(7)
    const def = await get(`/v1/spaces/${qs}/stories/${s1}/analytics`)
    expect(def.body.data.days).toBe(30)
    expect(def.body.data.by_segment).toEqual({ vip: 3 })
    for (const days of ['0', '366', '1.5', 'x']) expect((await get(`/v1/spaces/${qs}/stories/${s1}/analytics?days=${days}`)).status).toBe(422)
    expect(sparklineSvg([3])).toContain('points="1,1 119,1"')
  })

  test('overview: 7 and 30 days against the periods before, top Stories and referrers, shares', async () => {
    const r = await get(`/v1/spaces/${qs}/analytics/overview`)
    expect(r.status).toBe(200)
    const d = r.body.data
    expect(d.last_7_days).toEqual({ from: addDays(today, -6), to: today, mounts: 13, previous_mounts: 1, change_pct: 1200 })
    expect(d.last_30_days).toEqual({ from: addDays(today, -29), to: today, mounts: 17, previous_mounts: 4, change_pct: 325 })
    expect(d.top_stories).toEqual([
      { story_uuid: s1, slug: 'one', mounts: 10 },
      { story_uuid: s2, slug: 'two', mounts: 7 },
    ])
    expect(d.top_referrers).toEqual([
      { referrer: '(direct)', mounts: 12 },
      { referrer: 'https://news.example', mounts: 5 },
    ])
    expect(d.shares.device).toEqual({ desktop: 0.4706, tablet: 0.3529, mobile: 0.1765 })
    expect(d.shares.lang).toEqual({ en: 0.7059, de: 0.1765 })
    expect(d.shares.segment).toEqual({ vip: 0.1765 })
    // The window: 30 days by default, the same numbers as last_30_days, a dense daily series.
    expect(d.window).toEqual({ days: 30, ...d.last_30_days })
    expect(d.by_day).toHaveLength(30)
    expect(d.by_day[0].date).toBe(addDays(today, -29))
    expect(d.by_day.at(-1).date).toBe(today)
    expect(d.by_day.reduce((s: number, p: { mounts: number }) => s + p.mounts, 0)).toBe(17)
    // 7 days: the series, top lists and shares of the last 7 only.
    const w7 = (await get(`/v1/spaces/${qs}/analytics/overview?days=7`)).body.data
    expect(w7.window).toEqual({ days: 7, ...d.last_7_days })
    expect(w7.last_30_days).toEqual(d.last_30_days)
    expect(w7.by_day).toHaveLength(7)
    expect(w7.by_day.reduce((s: number, p: { mounts: number }) => s + p.mounts, 0)).toBe(13)
    expect(w7.top_stories.reduce((s: number, p: { mounts: number }) => s + p.mounts, 0)).toBe(13)
    // 90 days holds the 30.
    const w90 = (await get(`/v1/spaces/${qs}/analytics/overview?days=90`)).body.data
    expect(w90.by_day).toHaveLength(90)
    expect(w90.window.mounts).toBeGreaterThanOrEqual(17)
    expect(w90.window.mounts).toBe(w90.by_day.reduce((s: number, p: { mounts: number }) => s + p.mounts, 0))
    for (const days of ['0', '14', '365', 'x']) expect((await get(`/v1/spaces/${qs}/analytics/overview?days=${days}`)).status).toBe(422)
  })

  test('ai-insights: honest observations with their numbers, generated by rules; 10 per hour per Space', async () => {
    const r = await t.request('POST', `/v1/spaces/${qs}/analytics/ai-insights`, { token: viewer })
    // The viewer is a member of the first Space only.
    expect(r.status).toBe(404)
    const ok = await t.request('POST', `/v1/spaces/${qs}/analytics/ai-insights`, { token: owner.token })
    expect(ok.status).toBe(200)
    const d = ok.body.data
    expect(d.period).toEqual({ from: addDays(today, -29), to: today })
    expect(d.generated_by).toBe('rules')
    const text = d.observations.join('\n')
    expect(d.observations[0]).toBe(`17 mounts across 2 Stories between ${addDays(today, -29)} and ${today}: 14 in the last 15 days against 3 in the 15 before (+366.7%).`)
    expect(text).toContain('Fastest-growing: "two" with 7 mounts in the last 15 days against 0 in the 15 before (new).')
    expect(text).toContain('Languages: en 71% (12), de 18% (3); 12% of mounts carried no language.')
    expect(text).toContain('Segments: vip 18% (3); 82% of mounts had no segment.')
    expect(text).toContain('Device shift: mobile went from 100% of mounts in the earlier 15 days to 0% in the last 15 (-100 points).')
    expect(text).toContain('Top referrers: (direct) 12 (71%), https://news.example 5 (29%).')
    for (let i = 0; i < 9; i++) expect((await t.request('POST', `/v1/spaces/${qs}/analytics/ai-insights`, { token: owner.token })).status).toBe(200)
    const limited = await t.request('POST', `/v1/spaces/${qs}/analytics/ai-insights`, { token: owner.token, ip: '192.0.2.99' })
    expect(limited.status).toBe(429)
    expect(limited.body.error).toBe('rate_limited')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    // Another Space has its own budget.
    expect((await t.request('POST', `/v1/spaces/${other}/analytics/ai-insights`, { token: owner.token })).body.data.observations).toEqual([
      `No mounts were recorded between ${addDays(today, -29)} and ${today}.`,
    ])
  })

  test('roles and Spaces: viewers read; no token 401; another tenant and another Space 404', async () => {
    const paths = [`/v1/spaces/${space}/analytics/stories`, `/v1/spaces/${space}/analytics/overview`, `/v1/spaces/${space}/stories/${storyA}/analytics`]
    for (const p of paths) {
      expect((await get(p, viewer)).status).toBe(200)
      expect((await t.request('GET', p)).status).toBe(401)
      expect((await get(p, stranger)).status).toBe(404)
    }
    const scoped = (await t.spaceToken(owner.token, space, 'viewer')).token
    expect((await get(`/v1/spaces/${space}/analytics/overview`, scoped)).status).toBe(200)
    expect((await get(`/v1/spaces/${other}/analytics/overview`, scoped)).status).toBe(404)
    // A Story of another Space, under this Space's path.
    expect((await get(`/v1/spaces/${space}/stories/${otherStory}/analytics`)).status).toBe(404)
    expect((await get(`/v1/spaces/${space}/stories/${crypto.randomUUID()}/analytics`)).status).toBe(404)
    expect((await t.request('POST', `/v1/spaces/${space}/analytics/ai-insights`, { token: stranger })).status).toBe(404)
  })
})

const rollState = async () =>
  (await t.kernel.db.query<{ d: string; m: number; r: number }>('select rolled_until::text as d, rolled_minutes as m, revision as r from analytics_rollup_state'))[0]
const storyTotals = (sid: number) =>
  t.kernel.db.query<{ day: string; story_uuid: string; mounts: number }>(
    'select day::text as day, story_uuid, mounts from analytics_story_daily where space_id = $1 order by day, mounts desc, story_uuid',
    [sid],
  )

describe('rollup and retention', () => {
  test('finished days and slots move into rollups with identical results; raw rows older than 90 days are deleted', async () => {
    const rs = (await t.createSpace(owner.token)).slug
    const rsId = await spaceIdOf(rs)
    await t.request('POST', `/v1/spaces/${rs}/components`, { token: owner.token, body: { name: 'hero', is_root: true, schema: { headline: { type: 'text' } } } })
    const a = await publishedStory(rs, 'a')
    const b = await publishedStory(rs, 'b')
    await t.kernel.jobs.runDueJobs() // writes the cron schedules: the rollup's next tick is at 12:03
    const d0 = dayOf(t.clock.now())
    for (let i = 0; i < 3; i++) await beacon({ story_uuid: a, lang: 'en', device: 'mobile' }, { space: rs })
    await beacon({ story_uuid: b, lang: 'de', referrer: 'https://ref.example/x' }, { space: rs })
    await settle()
    t.clock.advance(86_400_000)
    const d1 = dayOf(t.clock.now())
    await beacon({ story_uuid: a }, { space: rs })
    await settle()

    const snapshot = async () => ({
      stories: (await get(`/v1/spaces/${rs}/analytics/stories?from=${d0}&to=${d1}`)).body,
      weeks: (await get(`/v1/spaces/${rs}/analytics/stories?from=${d0}&to=${d1}&granularity=week`)).body,
      story: (await get(`/v1/spaces/${rs}/stories/${a}/analytics?days=2`)).body,
      overview: (await get(`/v1/spaces/${rs}/analytics/overview`)).body,
    })
    const before = await snapshot()
    expect(before.stories.data.map((s: any) => [s.slug, s.mounts])).toEqual([
      ['a', 4],
      ['b', 1],
    ])
    expect(before.story.data.sparkline.points).toEqual([3, 1])

    await t.kernel.jobs.runDueJobs()
    // Noon: every five minutes that ended at least three minutes ago are rolled up; the rest is read raw.
    expect(await rollState()).toEqual({ d: d1, m: 11 * 60 + 55, r: 0 })
    const daily = await t.kernel.db.query<{ day: string; mounts: number }>('select day::text as day, mounts from analytics_daily where space_id = $1 order by mounts', [rsId])
    expect(daily).toEqual([
      { day: d0, mounts: 1 },
      { day: d0, mounts: 3 },
    ])
    expect(await storyTotals(rsId)).toEqual([
      { day: d0, story_uuid: a, mounts: 3 },
      { day: d0, story_uuid: b, mounts: 1 },
    ])
    const hits = state().rollups.hits
    expect(await snapshot()).toEqual(before)
    expect(await snapshot()).toEqual(before) // the rolled-up day's aggregates now come from memory
    expect(state().rollups.hits).toBeGreaterThan(hits)
    // Re-running changes nothing.
    expect((await rollup(t.kernel.db.db, t.clock.now())).slots).toBe(0)
    expect(await snapshot()).toEqual(before)

    // 91 days later: d0 and d1 are rolled up; raw rows older than 90 days are gone, the numbers are not.
    t.clock.advance(90 * 86_400_000)
    await t.kernel.jobs.runDueJobs()
    const raw = await t.kernel.db.query<{ day: string; n: number }>(
      "select (at at time zone 'UTC')::date::text as day, count(*)::int as n from analytics_events where space_id = $1 group by 1 order by 1",
      [rsId],
    )
    expect(raw).toEqual([{ day: d1, n: 1 }])
    const after = await get(`/v1/spaces/${rs}/analytics/stories?from=${d0}&to=${d1}`)
    expect(after.body).toEqual(before.stories)
    expect(await rollState()).toEqual({ d: dayOf(t.clock.now()), m: 11 * 60 + 55, r: 0 })
    // Beacons of the new today are read raw, next to the rollups.
    await beacon({ story_uuid: b }, { space: rs })
    await settle()
    const now = dayOf(t.clock.now())
    const mixed = await get(`/v1/spaces/${rs}/analytics/stories?from=${addDays(now, -365)}&to=${now}&granularity=month`)
    expect(mixed.body.data.map((s: any) => [s.slug, s.mounts])).toEqual([
      ['a', 4],
      ['b', 2],
    ])
  })

  test('rollups in the middle of a day, across midnight and after a late write leave every answer unchanged', async () => {
    const hs = (await t.createSpace(owner.token)).slug
    const hsId = await spaceIdOf(hs)
    await t.request('POST', `/v1/spaces/${hs}/components`, { token: owner.token, body: { name: 'hero', is_root: true, schema: { headline: { type: 'text' } } } })
    const a = await publishedStory(hs, 'a')
    const b = await publishedStory(hs, 'b')
    // Five minutes into the next day (the clock only moves forward: the rollup state is shared by every test).
    const D = addDays(dayOf(t.clock.now()), 1)
    const at = (day: string, h: number, m: number) => t.clock.set(Date.parse(`${day}T00:00:00Z`) + h * 3_600_000 + m * 60_000)
    at(D, 0, 5)
    await t.kernel.jobs.runDueJobs()
    const send = async (n: number, body: Record<string, unknown>) => {
      for (let i = 0; i < n; i++) await beacon(body, { space: hs })
      await settle()
    }
    await send(2, { story_uuid: a, lang: 'en', device: 'mobile' })
    at(D, 1, 20)
    await send(1, { story_uuid: b, referrer: 'https://ref.example/x' })
    await send(1, { story_uuid: a, lang: 'de', device: 'tablet' })
    at(D, 2, 40)
    await send(1, { story_uuid: a, lang: 'de' })

    const from = addDays(D, -6)
    const snapshot = async () => ({
      stories: (await get(`/v1/spaces/${hs}/analytics/stories?from=${from}&to=${D}`)).body,
      months: (await get(`/v1/spaces/${hs}/analytics/stories?from=${addDays(D, -365)}&to=${D}&granularity=month`)).body,
      story: (await get(`/v1/spaces/${hs}/stories/${a}/analytics?days=7`)).body,
      overview: (await get(`/v1/spaces/${hs}/analytics/overview`)).body,
      insights: (await t.request('POST', `/v1/spaces/${hs}/analytics/ai-insights`, { token: owner.token })).body,
    })
    const before = await snapshot()
    expect(before.stories.data.map((s: any) => [s.slug, s.mounts, s.by_lang])).toEqual([
      ['a', 4, { en: 2, de: 2 }],
      ['b', 1, {}],
    ])
    expect(before.story.data.by_device).toEqual({ mobile: 2, tablet: 1, desktop: 1 })
    expect(before.insights.data.observations[0]).toContain('5 mounts across 2 Stories')

    // 02:40: everything up to 02:35 is rolled up, the last beacon stays raw — the day is part rolled, part raw.
    await t.kernel.jobs.runDueJobs()
    expect(await rollState()).toMatchObject({ d: D, m: 155 })
    expect(await storyTotals(hsId)).toEqual([
      { day: D, story_uuid: a, mounts: 3 },
      { day: D, story_uuid: b, mounts: 1 },
    ])
    expect(await snapshot()).toEqual(before)
    expect(await snapshot()).toEqual(before) // the rolled part's aggregates now come from memory

    // 03:15: 02:35–03:10 is added to the day's rollups (the same rows grow); answers still unchanged.
    at(D, 3, 15)
    await t.kernel.jobs.runDueJobs()
    expect(await rollState()).toMatchObject({ d: D, m: 190 })
    expect(await storyTotals(hsId)).toEqual([
      { day: D, story_uuid: a, mounts: 4 },
      { day: D, story_uuid: b, mounts: 1 },
    ])
    const wide = await t.kernel.db.query<{ lang: string; device: string; mounts: number }>(
      'select lang, device, mounts from analytics_daily where space_id = $1 and story_uuid = $2 order by lang, device',
      [hsId, a],
    )
    expect(wide).toEqual([
      { lang: 'de', device: 'desktop', mounts: 1 },
      { lang: 'de', device: 'tablet', mounts: 1 },
      { lang: 'en', device: 'mobile', mounts: 2 },
    ])
    expect(await snapshot()).toEqual(before)

    // A beacon after the watermark is counted raw next to the cached rollups; the next rollup changes nothing.
    await send(1, { story_uuid: b })
    const later = await snapshot()
    expect(later.stories.data.map((s: any) => [s.slug, s.mounts])).toEqual([
      ['a', 4],
      ['b', 2],
    ])
    at(D, 4, 30)
    const stale = await readWatermark(t.kernel.db.db)
    await t.kernel.jobs.runDueJobs()
    expect(await rollState()).toMatchObject({ d: D, m: 265 })
    expect(await snapshot()).toEqual(later)
    // A query that read the watermark just before that rollup committed: b's beacon of 03:15 is now in the rollups
    // and after the old watermark; read both ways it would count twice. The query notices and reads again.
    const scope = { spaceId: hsId, from, to: D, watermark: stale, now: t.clock.now().getTime() }
    const [ranked] = await groupedSets(t.kernel.db.db, scope, [['story_uuid']], { cache: new RollupCache() })
    expect(Object.fromEntries(ranked.map((g) => [g.story_uuid, g.mounts]))).toEqual({ [a]: 4, [b]: 2 })
    expect(scope.watermark).toEqual(await readWatermark(t.kernel.db.db))

    // Across midnight: D is finished, its last minutes rolled up by the first run of D+1.
    const D1 = addDays(D, 1)
    at(D, 23, 30)
    await t.kernel.jobs.runDueJobs()
    await send(2, { story_uuid: b, lang: 'fr' })
    const range = `/v1/spaces/${hs}/analytics/stories?from=${from}&to=${D1}&granularity=week`
    const crossing = (await get(range)).body
    // A tie: ordered by uuid.
    expect(Object.fromEntries(crossing.data.map((s: any) => [s.slug, s.mounts]))).toEqual({ a: 4, b: 4 })
    at(D1, 0, 30)
    await t.kernel.jobs.runDueJobs()
    expect(await rollState()).toMatchObject({ d: D1, m: 25 })
    expect((await get(range)).body).toEqual(crossing)

    // A late write: beacons accepted at 23:30 on D1 but held back (the database refused them) until after the
    // rollup moved past them. They still count, and cached aggregates of the finished day are dropped.
    const s = state()
    s.buffer.stop()
    try {
      at(D1, 23, 30)
      for (let i = 0; i < 3; i++) await beacon({ story_uuid: a, lang: 'en' }, { space: hs })
      await Promise.allSettled([...s.beacon.inflight])
      expect(s.buffer.pending).toBe(3)
      const D2 = addDays(D1, 1)
      at(D2, 0, 30)
      await t.kernel.jobs.runDueJobs()
      expect(await rollState()).toEqual({ d: D2, m: 25, r: 0 })
      const lateRange = `/v1/spaces/${hs}/analytics/stories?from=${D}&to=${D2}`
      const without = (await get(lateRange)).body
      expect(Object.fromEntries(without.data.map((x: any) => [x.slug, x.mounts]))).toEqual({ a: 4, b: 4 })
      await s.buffer.flush()
      expect(await rollState()).toEqual({ d: D2, m: 25, r: 1 })
      const withLate = (await get(lateRange)).body
      expect(withLate.data.map((x: any) => [x.slug, x.mounts, x.by_lang])).toEqual([
        ['a', 7, { en: 5, de: 2 }],
        ['b', 4, { fr: 2 }],
      ])
      expect(withLate.data[0].by_day.find((d: any) => d.date === D1)).toEqual({ date: D1, mounts: 3 })
      // The late rows are raw rows too, and the next rollup does not count them a second time.
      at(D2, 2, 15)
      await t.kernel.jobs.runDueJobs()
      expect((await get(lateRange)).body).toEqual(withLate)
      expect(await storyTotals(hsId)).toContainEqual({ day: D1, story_uuid: a, mounts: 3 })

      // Held back past the settled instant (three minutes) but not past the watermark: the cached raw minutes must
      // not hide them either.
      at(D2, 2, 16)
      for (let i = 0; i < 2; i++) await beacon({ story_uuid: b }, { space: hs })
      await Promise.allSettled([...s.beacon.inflight])
      at(D2, 2, 21)
      const cached = (await get(lateRange)).body
      expect(cached).toEqual(withLate)
      await s.buffer.flush()
      expect(await rollState()).toEqual({ d: D2, m: 130, r: 2 })
      expect((await get(lateRange)).body.data.map((x: any) => [x.slug, x.mounts])).toEqual([
        ['a', 7],
        ['b', 6],
      ])

      // The page changes (b overtakes a): each Story's counts are cached on their own, so nothing is read in full.
      const one = (await get(`${lateRange}&per_page=1`)).body
      expect(one.data.map((x: any) => [x.slug, x.mounts])).toEqual([['a', 7]])
      const misses = state().rollups.misses
      for (let i = 0; i < 2; i++) await beacon({ story_uuid: b, lang: 'fr' }, { space: hs })
      await settle()
      const two = (await get(`${lateRange}&per_page=1`)).body
      expect(two.data.map((x: any) => [x.slug, x.mounts, x.by_lang])).toEqual([['b', 8, { fr: 4 }]])
      expect(state().rollups.misses).toBe(misses)
    } finally {
      s.buffer.start()
    }
  })
})
