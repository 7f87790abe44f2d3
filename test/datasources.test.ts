import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { createRuntime } from '../src/app'
import { rowsOf } from '../src/kernel/db'
import { createKernel } from '../src/kernel/kernel'
import { defineModule } from '../src/kernel/module'
import { MODULES } from '../src/modules'
import type { ReadRequest } from '../src/kernel/read'
import { datasourcesModule } from '../src/modules/datasources'
import { claimDueDatasources } from '../src/modules/datasources/service'
import { nextCronRun } from '../src/kernel/jobs'
import { migrations } from '../db/migrations'
import { replaceMarkers, scanMarkers } from '../src/modules/datasources/markers'
import { storiesModule } from '../src/modules/stories'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(30_000)

const SECRET_KEY = '5a'.repeat(32)
const API_KEY = 'Bearer sk_live_do-not-show-me-0123456789'

let t: TestApp
let owner: string
let space: string
let editor: string
let viewer: string
let uid = 0

// ---- a real HTTP source on 127.0.0.1 ----

const hits: Record<string, number> = {}
const seenHeaders: Record<string, Headers> = {}
const seenQuery: Record<string, string> = {}
let goodBody: unknown = { data: { items: [{ id: 'a', name: 'Alpha', price: 10 }, { id: 'b', name: 'Beta', price: 20 }] } }
const HUGE = JSON.stringify(Array.from({ length: 60_000 }, (_, i) => `${i}`.padStart(100, 'x')))

let sourcePort = 0
const source: ReturnType<typeof Bun.serve> = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  idleTimeout: 60,
  async fetch(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname
    hits[path] = (hits[path] ?? 0) + 1
    seenHeaders[path] = req.headers
    seenQuery[path] = new URL(req.url).search
    switch (path) {
      case '/good':
        return Response.json(goodBody)
      case '/scalars':
        return Response.json({ list: [1, 'two', true] })
      case '/bad':
        return new Response('{"data": [1, 2', { headers: { 'content-type': 'application/json' } })
      case '/500':
        return new Response('boom', { status: 500 })
      case '/slow':
        await Bun.sleep(11_000)
        return Response.json({ data: { items: [] } })
      case '/huge':
        return new Response(HUGE, { headers: { 'content-type': 'application/json' } })
      case '/redirect':
        return new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${sourcePort}/good` } })
      default:
        return new Response('not found', { status: 404 })
    }
  },
})
sourcePort = source.port!
const src = (path: string) => `http://127.0.0.1:${sourcePort}${path}`

// ---- helpers ----

const base = () => `/v1/spaces/${space}/datasources`
const create = (body: Record<string, unknown>, token = editor) => t.request('POST', base(), { token, body })
const httpJson = (key: string, config: Record<string, unknown> = {}) =>
  create({ key, label: key, type: 'http_json', config: { url: src('/good'), json_path: '$.data.items', cron: '0 0 1 1 *', ...config } })
const sync = (key: string, token = editor) => t.request('POST', `${base()}/${key}/sync`, { token })

function sign(secret: string, timestamp: number | string, body: string) {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`
}
const now = () => Math.floor(t.clock.now().getTime() / 1000)

/** Pushes get distinct timestamps inside the window (the test clock stands still): each is signed anew, as a sender does. */
let pushSeq = 0
async function push(key: string, body: unknown, opts: { secret?: string; timestamp?: number | string | null; signature?: string | null; s?: string; raw?: string } = {}) {
  const text = opts.raw ?? JSON.stringify(body)
  const ts = opts.timestamp === undefined ? now() - (pushSeq++ % 250) : opts.timestamp
  const headers: Record<string, string> = { 'Content-Type': 'application/json' }
  if (ts !== null) headers['X-Service-Timestamp'] = String(ts)
  const signature = opts.signature !== undefined ? opts.signature : opts.secret ? sign(opts.secret, ts ?? '', text) : null
  if (signature !== null) headers['X-Service-Signature'] = signature
  return t.request('POST', `/v1/spaces/${opts.s ?? space}/datasources/${key}/webhook`, { raw: text, headers })
}

async function pushSource(key: string, schema: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  const r = await create({ key, label: key, type: 'webhook_push', config: { secret_hash: 'auto', schema, ...extra } })
  expect(r.status).toBe(201)
  return r.body.data.webhook_secret as string
}

const doc = (...headlines: string[]) => ({ type: 'doc', blocks: headlines.map((h) => ({ component: 'hero', _uid: `h${++uid}`, headline: h })) })

async function publishStory(slug: string, content: unknown) {
  const r = await t.request('POST', `/v1/spaces/${space}/stories`, { token: editor, body: { name: slug, slug, content } })
  expect(r.status).toBe(201)
  const p = await t.request('POST', `/v1/spaces/${space}/stories/${r.body.data.uuid}/publish`, { token: editor })
  expect(p.status).toBe(200)
  return r.body.data.uuid as string
}
/** Waits for another instance to apply a change it hears of through NOTIFY. */
async function eventually(check: () => Promise<boolean>) {
  for (let i = 0; i < 100; i++) {
    if (await check()) return
    await Bun.sleep(20)
  }
}
const read = (path: string, headers: Record<string, string> = {}) => t.request('GET', `/v1/cdn/${space}/stories/${path}`, { headers })
const headlines = (body: any) => body.data.content.blocks.map((b: { headline: string }) => b.headline)

beforeAll(async () => {
  t = await testApp({ outboundAllowPrivate: true, secretKey: SECRET_KEY })
  owner = (await t.register()).token
  space = (await t.createSpace(owner, { default_lang: 'en' })).slug
  editor = (await t.spaceToken(owner, space, 'editor')).token
  viewer = (await t.spaceToken(owner, space, 'viewer')).token
  const c = await t.request('POST', `/v1/spaces/${space}/components`, {
    token: editor,
    body: { name: 'hero', schema: { headline: { type: 'text' } } },
  })
  expect(c.status).toBe(201)
}, 180_000)

afterAll(async () => {
  source.stop(true)
  await t?.close()
}, 60_000)

// ---- management ----

describe('managing datasources', () => {
  test('an http_json datasource is created with its settings checked; header values come back masked', async () => {
    const r = await httpJson('products', { headers: { Authorization: API_KEY, 'X-Tenant': 'acme' } })
    expect(r.status).toBe(201)
    expect(r.body.data).toMatchObject({
      key: 'products',
      type: 'http_json',
      status: 'never_synced',
      revision: 0,
      entry_count: 0,
      last_synced_at: null,
      last_error: null,
      config: { url: src('/good'), json_path: '$.data.items', cron: '0 0 1 1 *', headers: { Authorization: '••••', 'X-Tenant': '••••' } },
    })
    expect(r.text).not.toContain('sk_live')
    expect(r.body.data.webhook_secret).toBeUndefined()
    const list = await t.request('GET', base(), { token: viewer })
    expect(list.status).toBe(200)
    expect(list.body.data.map((d: { key: string }) => d.key)).toContain('products')
    const one = await t.request('GET', `${base()}/products`, { token: viewer })
    expect(one.body.data.config.headers).toEqual({ Authorization: '••••', 'X-Tenant': '••••' })
    expect(one.text).not.toContain('sk_live')
    expect(one.text).not.toContain('acme')
  })

  test('keys, types, JSONPath, cron, URLs and headers are validated', async () => {
    for (const key of ['Products', 'my-key', 'a.b', '1abc', '', 'x'.repeat(65)]) {
      const r = await httpJson(key)
      expect(r.status).toBe(422)
    }
    expect((await httpJson('products')).status).toBe(409)
    const badPath = await httpJson('badpath', { json_path: '$[?(@.a == 1)' })
    expect(badPath.status).toBe(422)
    expect(badPath.body.errors['config.json_path'][0]).toContain('JSONPath')
    // Script is never evaluated: a filter with a function call that RFC 9535 does not define is refused at save.
    expect((await httpJson('script', { json_path: '$[?@.constructor.constructor("return 1")()]' })).status).toBe(422)
    const badCron = await httpJson('badcron', { cron: '* * *' })
    expect(badCron.status).toBe(422)
    expect(badCron.body.errors['config.cron']).toBeDefined()
    expect((await httpJson('badcron2', { cron: '61 * * * *' })).status).toBe(422)
    expect((await httpJson('badurl', { url: 'ftp://example.com/x' })).status).toBe(422)
    const tooMany = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']))
    expect((await httpJson('manyheaders', { headers: tooMany })).status).toBe(422)
    expect((await httpJson('badheader', { headers: { 'Bad Header': 'v' } })).status).toBe(422)
    // Settings of the other type are refused; missing ones are reported.
    const mixed = await httpJson('mixed', { schema: { a: 'string' } })
    expect(mixed.status).toBe(422)
    expect(mixed.body.errors['config.schema']).toBeDefined()
    const missing = await create({ key: 'missing', label: 'm', type: 'http_json', config: {} })
    expect(missing.status).toBe(422)
    expect(Object.keys(missing.body.errors).sort()).toEqual(['config.cron', 'config.json_path', 'config.url'])
    const badType = await create({ key: 'badtype', label: 'x', type: 'csv', config: {} })
    expect(badType.status).toBe(422)
    const schemaType = await create({ key: 'badschema', label: 'x', type: 'webhook_push', config: { schema: { a: 'date' } } })
    expect(schemaType.status).toBe(422)
    const shortSecret = await create({ key: 'short', label: 'x', type: 'webhook_push', config: { secret_hash: 'too-short' } })
    expect(shortSecret.status).toBe(422)
  })

  test('private addresses are refused unless SERVICE_OUTBOUND_ALLOW_PRIVATE', async () => {
    const strict = await t.instance({ outboundAllowPrivate: false })
    try {
      const res = await strict.runtime.handle(
        new Request(`http://localhost${base()}`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${editor}`, 'Content-Type': 'application/json', 'X-Forwarded-For': '10.9.9.9' },
          body: JSON.stringify({ key: 'private', label: 'p', type: 'http_json', config: { url: src('/good'), json_path: '$', cron: '* * * * *' } }),
        }),
      )
      expect(res.status).toBe(422)
      const body: any = await res.json()
      expect(body.errors['config.url'][0]).toContain('loopback')
    } finally {
      await strict.close()
    }
  })

  test('viewers read, editors write; the type cannot change; PATCH keeps masked header values', async () => {
    expect((await httpJson('byviewer', {}).then(() => create({ key: 'v2', label: 'v', type: 'webhook_push', config: {} }, viewer))).status).toBe(403)
    expect((await t.request('PATCH', `${base()}/products`, { token: viewer, body: { label: 'x' } })).status).toBe(403)
    expect((await t.request('DELETE', `${base()}/products`, { token: viewer })).status).toBe(403)
    expect((await sync('products', viewer)).status).toBe(403)
    expect((await t.request('GET', `${base()}/products/entries`, { token: viewer })).status).toBe(200)
    expect((await t.request('GET', `${base()}`)).status).toBe(401)

    const typeChange = await t.request('PATCH', `${base()}/products`, { token: editor, body: { type: 'webhook_push' } })
    expect(typeChange.status).toBe(422)
    expect(typeChange.body.errors.type).toBeDefined()

    const patched = await t.request('PATCH', `${base()}/products`, {
      token: editor,
      body: { label: 'Products', config: { headers: { Authorization: '••••', 'X-Extra': 'new' } } },
    })
    expect(patched.status).toBe(200)
    expect(patched.body.data.label).toBe('Products')
    expect(patched.body.data.config.headers).toEqual({ Authorization: '••••', 'X-Extra': '••••' })
    // The masked value kept the stored API key: the pull sends it.
    expect((await sync('products')).body.data.status).toBe('ok')
    expect(seenHeaders['/good'].get('authorization')).toBe(API_KEY)
    expect(seenHeaders['/good'].get('x-extra')).toBe('new')
    expect(seenHeaders['/good'].get('x-tenant')).toBeNull()
    const unknownMask = await t.request('PATCH', `${base()}/products`, { token: editor, body: { config: { headers: { 'X-New': '••••' } } } })
    expect(unknownMask.status).toBe(422)

    expect((await t.request('DELETE', `${base()}/byviewer`, { token: editor })).status).toBe(204)
    expect((await t.request('GET', `${base()}/byviewer`, { token: editor })).status).toBe(404)
    expect((await t.request('GET', `${base()}/no_such`, { token: editor })).status).toBe(404)
    expect((await t.request('GET', `${base()}/Not-A-Key`, { token: editor })).status).toBe(404)
  })

  test('a webhook_push secret is shown once (create, rotate), then only as a fingerprint; never stored in clear', async () => {
    const r = await create({ key: 'pushed', label: 'Pushed', type: 'webhook_push', config: { secret_hash: 'auto', schema: { id: 'string' } } })
    expect(r.status).toBe(201)
    const secret = r.body.data.webhook_secret
    expect(typeof secret).toBe('string')
    expect(secret.length).toBeGreaterThanOrEqual(43)
    expect(r.body.data.config).toEqual({ allow_unsigned: false, schema: { id: 'string' }, secret_fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/) })
    const got = await t.request('GET', `${base()}/pushed`, { token: editor })
    expect(got.text).not.toContain(secret)
    expect(got.body.data.webhook_secret).toBeUndefined()
    const listed = await t.request('GET', base(), { token: editor })
    expect(listed.text).not.toContain(secret)
    expect(listed.text).not.toContain('sk_live')

    const own = 'my-own-secret-that-is-long-enough-0123456789'
    const withOwn = await create({ key: 'ownsecret', label: 'x', type: 'webhook_push', config: { secret_hash: own } })
    expect(withOwn.status).toBe(201)
    expect(withOwn.body.data.webhook_secret).toBeUndefined()
    expect(withOwn.text).not.toContain(own)
    expect((await push('ownsecret', { a: 1 }, { secret: own })).status).toBe(200)

    const rotated = await t.request('POST', `${base()}/pushed/rotate-secret`, { token: editor })
    expect(rotated.status).toBe(200)
    const fresh = rotated.body.data.webhook_secret
    expect(fresh).not.toBe(secret)
    expect(rotated.body.data.config.secret_fingerprint).not.toBe(r.body.data.config.secret_fingerprint)
    expect((await push('pushed', { id: 'x' }, { secret })).status).toBe(401)
    expect((await push('pushed', { id: 'x' }, { secret: fresh })).status).toBe(200)
    expect((await t.request('POST', `${base()}/products/rotate-secret`, { token: editor })).status).toBe(422)

    // A URL carrying an API key (user-info or query) is shown masked to every reader, sealed at rest, and sent as is.
    const keyed = src('/good').replace('http://', 'http://apiuser:s3cret-pass@') + '?api_key=sk_live_in_query&format=json'
    const withKey = await httpJson('keyed', { url: keyed })
    expect(withKey.status).toBe(201)
    const masked = src('/good').replace('http://', 'http://••••:••••@') + '?api_key=••••&format=••••'
    expect(withKey.body.data.config.url).toBe(masked)
    for (const token of [viewer, editor]) {
      const got = await t.request('GET', `${base()}/keyed`, { token })
      expect(got.body.data.config.url).toBe(masked)
      expect(got.text).not.toContain('sk_live_in_query')
      expect(got.text).not.toContain('s3cret-pass')
      expect((await t.request('GET', base(), { token })).text).not.toContain('sk_live_in_query')
    }
    // Sent back masked (an editor saving the form unchanged), the stored values stay; a changed value replaces its own.
    const same = await t.request('PATCH', `${base()}/keyed`, { token: editor, body: { config: { url: masked, json_path: '$.data.items' } } })
    expect(same.status).toBe(200)
    expect((await sync('keyed')).status).toBe(200)
    expect(seenQuery['/good']).toBe('?api_key=sk_live_in_query&format=json')
    expect(seenHeaders['/good'].get('authorization')).toBe(`Basic ${btoa('apiuser:s3cret-pass')}`)
    const changed = await t.request('PATCH', `${base()}/keyed`, { token: editor, body: { config: { url: masked.replace('format=••••', 'format=xml') } } })
    expect(changed.status).toBe(200)
    expect(changed.body.data.config.url).toBe(masked)
    expect((await sync('keyed')).status).toBe(200)
    expect(seenQuery['/good']).toBe('?api_key=sk_live_in_query&format=xml')
    const noSuch = await t.request('PATCH', `${base()}/keyed`, { token: editor, body: { config: { url: `${masked}&other=••••` } } })
    expect(noSuch.status).toBe(422)
    expect(Object.keys(noSuch.body.errors)).toContain('config.url')

    // At rest: sealed, never the plain values.
    const rows = rowsOf<Record<string, unknown>>(await t.kernel.db.db.execute(sql`select * from datasources`))
    const dump = JSON.stringify(rows)
    for (const plain of [secret, fresh, own, API_KEY, 'acme', 'sk_live_in_query', 's3cret-pass']) expect(dump).not.toContain(plain)
  })
})

// ---- pulls ----

describe('pulling http_json sources', () => {
  test('a sync pulls, applies the JSONPath and answers the count, a sample and the revision', async () => {
    const created = await httpJson('catalog')
    expect(created.status).toBe(201)
    const r = await sync('catalog')
    expect(r.status).toBe(200)
    expect(r.body.data).toEqual({ entries: 2, sample: { id: 'a', name: 'Alpha', price: 10 }, revision: 1, status: 'ok', ignored: false, error: null })
    const ds = (await t.request('GET', `${base()}/catalog`, { token: editor })).body.data
    expect(ds).toMatchObject({ status: 'ok', revision: 1, entry_count: 2, last_error: null })
    expect(Date.parse(ds.last_synced_at)).not.toBeNaN()
    // Unchanged data: no new revision.
    expect((await sync('catalog')).body.data.revision).toBe(1)
    // Several matches are the entries; scalar items become {value}.
    expect((await httpJson('names', { json_path: '$.data.items[*].name' })).status).toBe(201)
    expect((await sync('names')).body.data).toMatchObject({ entries: 2, sample: { value: 'Alpha' } })
    expect((await httpJson('scalars', { url: src('/scalars'), json_path: '$.list' })).status).toBe(201)
    await sync('scalars')
    const entries = await t.request('GET', `${base()}/scalars/entries`, { token: viewer })
    expect(entries.body).toEqual({ data: [{ value: 1 }, { value: 'two' }, { value: true }], meta: { total: 3, page: 1, per_page: 25, revision: 1 } })
  })

  test('the pull emits datasource.synced with the documented payload', async () => {
    const rows = rowsOf<{ type: string; payload: any }>(
      await t.kernel.db.db.execute(sql`select type, payload from events where type = 'datasource.synced' order by id desc limit 1`),
    )
    expect(rows.length).toBe(1)
    const body = t.kernel.events.webhookBody('datasource.synced', rows[0].payload)
    expect(body).toEqual({
      datasource: { key: 'scalars', label: 'scalars', type: 'http_json', entries: 3, synced_at: expect.any(String) },
    })
    expect(t.kernel.events.publicTypes()).toContain('datasource.synced')
  })

  test('a failed pull answers 502 sync_failed with the reason; the last good entries stay', async () => {
    const cases: [string, string][] = [
      ['/bad', 'not valid JSON'],
      ['/500', 'answered 500'],
      ['/redirect', 'redirects are not followed'],
      ['/huge', 'larger than 5 MB'],
      ['/nothing', 'answered 404'],
    ]
    for (const [path, message] of cases) {
      await t.request('PATCH', `${base()}/catalog`, { token: editor, body: { config: { url: src(path), headers: { Authorization: API_KEY } } } })
      const before = hits['/good'] ?? 0
      const entriesBefore = (await t.request('GET', `${base()}/catalog/entries`, { token: editor })).body
      const r = await sync('catalog')
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 502, error: 'sync_failed' })
      expect(Object.keys(r.body).sort()).toEqual(['error', 'message'])
      expect(r.body.message).toContain(message)
      // The answer is the shared error body: no sample of the data, nothing of the stored headers.
      expect(r.text).not.toContain('sk_live')
      // The last good data stays, entry for entry.
      expect((await t.request('GET', `${base()}/catalog/entries`, { token: editor })).body).toEqual(entriesBefore)
      // The redirect was not followed.
      expect(hits['/good'] ?? 0).toBe(before)
      const ds = (await t.request('GET', `${base()}/catalog`, { token: editor })).body.data
      expect(ds).toMatchObject({ status: 'error', revision: 1, entry_count: 2 })
      expect(ds.last_error).toContain(message)
      const entries = await t.request('GET', `${base()}/catalog/entries`, { token: editor })
      expect(entries.body.meta.total).toBe(2)
    }
    // Nothing listening: the reason names the failure, not more than the configured URL says.
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
    const closedPort = closed.port!
    closed.stop(true)
    await t.request('PATCH', `${base()}/catalog`, { token: editor, body: { config: { url: `http://127.0.0.1:${closedPort}/feed` } } })
    const refused = await sync('catalog')
    expect({ status: refused.status, error: refused.body.error }).toEqual({ status: 502, error: 'sync_failed' })
    expect(refused.body.message).toContain('connection_failed')
    expect(refused.text).not.toContain('sk_live')
    // A JSONPath that matches nothing is a failure too (an unexpected shape must not wipe the data).
    await t.request('PATCH', `${base()}/catalog`, { token: editor, body: { config: { url: src('/good'), json_path: '$.nope' } } })
    const nothing = await sync('catalog')
    expect({ status: nothing.status, error: nothing.body.error }).toEqual({ status: 502, error: 'sync_failed' })
    expect(nothing.body.message).toContain('matched nothing')
    expect((await t.request('GET', `${base()}/catalog`, { token: editor })).body.data).toMatchObject({ status: 'error', entry_count: 2, revision: 1 })
    await t.request('PATCH', `${base()}/catalog`, { token: editor, body: { config: { json_path: '$.data.items' } } })
    expect((await sync('catalog')).body.data).toMatchObject({ status: 'ok', entries: 2, revision: 1, error: null })
  })

  test('a source that does not answer within 10 s fails the pull', async () => {
    expect((await httpJson('slow', { url: src('/slow') })).status).toBe(201)
    const started = performance.now()
    const r = await sync('slow')
    const took = performance.now() - started
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 502, error: 'sync_failed' })
    expect(r.body.message).toContain('timeout')
    expect(took).toBeGreaterThan(9_000)
    expect(took).toBeLessThan(11_000)
  }, 30_000)

  test('sync of a webhook_push datasource is ignored', async () => {
    const r = await sync('pushed')
    expect(r.status).toBe(200)
    expect(r.body.data.ignored).toBe(true)
  })

  test('entries are paginated and searchable', async () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ id: `e${i}`, title: i % 3 === 0 ? `Fizz ${i}` : `Plain ${i}`, meta: { tag: i === 7 ? 'NeedLE' : 'x' } }))
    const secret = await pushSource('paged')
    expect((await push('paged', many, { secret })).status).toBe(200)
    const p1 = await t.request('GET', `${base()}/paged/entries`, { token: viewer })
    expect(p1.body.meta).toEqual({ total: 30, page: 1, per_page: 25, revision: 1 })
    expect(p1.body.data.length).toBe(25)
    const p2 = await t.request('GET', `${base()}/paged/entries?page=2&per_page=10`, { token: viewer })
    expect(p2.body.data.map((e: { id: string }) => e.id)).toEqual(['e10', 'e11', 'e12', 'e13', 'e14', 'e15', 'e16', 'e17', 'e18', 'e19'])
    const q = await t.request('GET', `${base()}/paged/entries?q=fizz`, { token: viewer })
    expect(q.body.meta.total).toBe(10)
    const nested = await t.request('GET', `${base()}/paged/entries?q=needle`, { token: viewer })
    expect(nested.body.data.map((e: { id: string }) => e.id)).toEqual(['e7'])
    expect((await t.request('GET', `${base()}/paged/entries?per_page=101`, { token: viewer })).status).toBe(422)
    expect((await t.request('GET', `${base()}/paged/entries?page=0`, { token: viewer })).status).toBe(422)
    // The same page through the module's service (what GraphQL serves).
    const svc = t.state(datasourcesModule)
    const spaceId = rowsOf<{ id: number }>(await t.kernel.db.db.execute(sql`select id from spaces where slug = ${space}`))[0].id
    const page = await svc.entries(spaceId, 'paged', { page: 3, perPage: 10, q: 'plain' })
    expect(page?.meta).toEqual({ total: 20, page: 3, per_page: 10, revision: 1 })
    expect(await svc.entries(spaceId, 'nope')).toBeNull()
  })
})

// ---- schedule ----

describe('helpers of the admin screens', () => {
  test('test-path tries a JSONPath against the last pull (also one whose stored path matched nothing); nothing changes', async () => {
    expect((await httpJson('tried', { json_path: '$.nothing' })).status).toBe(201)
    const before = await t.request('POST', `${base()}/tried/test-path`, { token: editor, body: { json_path: '$.data.items' } })
    expect(before.status).toBe(200)
    expect(before.body.data).toEqual({ pulled_at: null, matches: 0, entries: 0, sample: [] })
    expect((await sync('tried')).status).toBe(502)
    const hitsBefore = hits['/good']
    const r = await t.request('POST', `${base()}/tried/test-path`, { token: editor, body: { json_path: '$.data.items' } })
    expect(r.status).toBe(200)
    expect(r.body.data).toMatchObject({ matches: 1, entries: 2, sample: [{ id: 'a', name: 'Alpha', price: 10 }, { id: 'b', name: 'Beta', price: 20 }] })
    expect(Date.parse(r.body.data.pulled_at)).not.toBeNaN()
    const names = await t.request('POST', `${base()}/tried/test-path`, { token: editor, body: { json_path: '$..name' } })
    expect(names.body.data).toMatchObject({ matches: 2, entries: 2, sample: [{ value: 'Alpha' }, { value: 'Beta' }] })
    expect((await t.request('POST', `${base()}/tried/test-path`, { token: editor, body: { json_path: '$.none' } })).body.data).toMatchObject({ matches: 0, entries: 0, sample: [] })
    // Nothing fetched, nothing stored.
    expect(hits['/good']).toBe(hitsBefore)
    expect((await t.request('GET', `${base()}/tried`, { token: editor })).body.data).toMatchObject({ status: 'error', entry_count: 0, config: { json_path: '$.nothing' } })
    const bad = await t.request('POST', `${base()}/tried/test-path`, { token: editor, body: { json_path: '$[' } })
    expect(bad.status).toBe(422)
    expect(Object.keys(bad.body.errors)).toEqual(['json_path'])
    expect((await t.request('POST', `${base()}/tried/test-path`, { token: viewer, body: { json_path: '$' } })).status).toBe(403)
    expect((await t.request('POST', `${base()}/nope/test-path`, { token: editor, body: { json_path: '$' } })).status).toBe(404)
    await pushSource('pushed_only')
    expect((await t.request('POST', `${base()}/pushed_only/test-path`, { token: editor, body: { json_path: '$' } })).status).toBe(422)
  })

  test('cron-preview answers the next runs; a bad expression is 422 keyed cron; next_run_at is in the view', async () => {
    const r = await t.request('POST', `${base()}/cron-preview`, { token: viewer, body: { cron: '30 6 * * 1', count: 3 } })
    expect(r.status).toBe(200)
    const runs = r.body.data.runs.map((x: string) => new Date(x))
    expect(runs).toHaveLength(3)
    for (const d of runs) expect([d.getUTCDay(), d.getUTCHours(), d.getUTCMinutes()]).toEqual([1, 6, 30])
    expect(runs[1].getTime() - runs[0].getTime()).toBe(7 * 86_400_000)
    expect((await t.request('POST', `${base()}/cron-preview`, { token: viewer, body: { cron: '* *' } })).body.errors).toHaveProperty('cron')
    expect((await t.request('POST', `${base()}/cron-preview`, { token: viewer, body: { cron: '0 0 * * *', count: 11 } })).status).toBe(422)
    expect((await httpJson('scheduled', { cron: '15 3 * * *' })).status).toBe(201)
    const ds = (await t.request('GET', `${base()}/scheduled`, { token: viewer })).body.data
    expect(new Date(ds.next_run_at).getUTCMinutes()).toBe(15)
  })

  test('usage lists the Stories whose drafts hold the key\'s markers', async () => {
    await pushSource('used')
    const one = await t.request('POST', `/v1/spaces/${space}/stories`, { token: editor, body: { name: 'Uses it', slug: 'uses-it', content: doc('Price $ds:used.0.price') } })
    expect(one.status).toBe(201)
    await t.request('POST', `/v1/spaces/${space}/stories`, { token: editor, body: { name: 'Other', slug: 'uses-other', content: doc('$ds:usedx.0.price') } })
    const r = await t.request('GET', `${base()}/used/usage`, { token: viewer })
    expect(r.status).toBe(200)
    expect(r.body.data).toEqual({ stories: [{ uuid: one.body.data.uuid, name: 'Uses it', full_path: '/uses-it', langs: ['en'] }], truncated: false })
    expect((await t.request('GET', `${base()}/nope/usage`, { token: viewer })).status).toBe(404)
  })
})

describe('the scheduler', () => {
  test('a moved clock pulls a due datasource once per tick; one not due is left alone', async () => {
    expect((await httpJson('minutely', { url: src('/good?m'), cron: '* * * * *' })).status).toBe(201)
    expect((await httpJson('yearly', { url: src('/good?y'), cron: '0 0 1 1 *' })).status).toBe(201)
    await t.kernel.jobs.runDueJobs()
    const before = hits['/good'] ?? 0
    t.clock.advance(60_000)
    await t.kernel.jobs.runDueJobs()
    const ds = (await t.request('GET', `${base()}/minutely`, { token: editor })).body.data
    expect(ds.status).toBe('ok')
    expect(ds.revision).toBe(1)
    expect((await t.request('GET', `${base()}/yearly`, { token: editor })).body.data.status).toBe('never_synced')
    // Only the minutely source was called.
    expect((hits['/good'] ?? 0) - before).toBe(1)
    await t.kernel.jobs.runDueJobs()
    expect((hits['/good'] ?? 0) - before).toBe(1)
    t.clock.advance(60_000)
    await t.kernel.jobs.runDueJobs()
    expect((hits['/good'] ?? 0) - before).toBe(2)
  })

  test('two instances racing one tick pull once', async () => {
    const other = await t.instance()
    try {
      await other.kernel.jobs.runDueJobs()
      const before = hits['/good'] ?? 0
      t.clock.advance(60_000)
      await Promise.all([t.kernel.jobs.runDueJobs(), other.kernel.jobs.runDueJobs()])
      expect((hits['/good'] ?? 0) - before).toBe(1)
      const jobs = rowsOf<{ n: number }>(
        await t.kernel.db.db.execute(sql`select count(*)::int as n from jobs where queue = 'datasources.sync' and status = 'done'`),
      )
      expect(Number(jobs[0].n)).toBeGreaterThanOrEqual(3)
    } finally {
      await other.close()
      // Leave no minutely source behind for the tests below.
      await t.request('DELETE', `${base()}/minutely`, { token: editor })
    }
  })
})

describe('the schedule by next_run_at', () => {
  const nextRunAt = async (key: string) => {
    const [r] = rowsOf<{ at: string | Date | null }>(await t.kernel.db.db.execute(sql`select next_run_at as at from datasources where key = ${key}`))
    return r.at === null ? null : new Date(r.at).getTime()
  }
  const cleanup = async (...keys: string[]) => {
    for (const k of keys) await t.request('DELETE', `${base()}/${k}`, { token: editor })
  }

  test('a datasource is pulled when its next_run_at has passed, not a minute before', async () => {
    // An hourly cron whose minute is five minutes ahead of the test clock: due in four to five minutes.
    const cron = `${(t.clock.now().getUTCMinutes() + 5) % 60} * * * *`
    expect((await httpJson('hourly', { url: src('/good?hourly'), cron })).status).toBe(201)
    try {
      const at = await nextRunAt('hourly')
      expect(at).toBe(nextCronRun(cron, t.clock.now()).getTime())
      expect(at! - t.clock.ms()).toBeGreaterThan(120_000)
      await t.kernel.jobs.runDueJobs()
      const before = hits['/good'] ?? 0
      // The minute before it is due: the tick runs, the source is not called.
      t.clock.set(at! - 60_000)
      await t.kernel.jobs.runDueJobs()
      expect((hits['/good'] ?? 0) - before).toBe(0)
      expect((await t.request('GET', `${base()}/hourly`, { token: editor })).body.data.status).toBe('never_synced')
      // Its minute: pulled once, and next_run_at moved on to the next hour.
      t.clock.set(at!)
      await t.kernel.jobs.runDueJobs()
      expect((hits['/good'] ?? 0) - before).toBe(1)
      expect((await t.request('GET', `${base()}/hourly`, { token: editor })).body.data.status).toBe('ok')
      expect(await nextRunAt('hourly')).toBe(at! + 3_600_000)
      await t.kernel.jobs.runDueJobs()
      expect((hits['/good'] ?? 0) - before).toBe(1)
    } finally {
      await cleanup('hourly')
    }
  })

  test('changing the cron moves next_run_at; other changes keep it; a push datasource has none', async () => {
    expect((await httpJson('moving', { cron: '0 0 1 1 *' })).status).toBe(201)
    try {
      expect(await nextRunAt('moving')).toBe(nextCronRun('0 0 1 1 *', t.clock.now()).getTime())
      const patch = (body: Record<string, unknown>) => t.request('PATCH', `${base()}/moving`, { token: editor, body })
      expect((await patch({ config: { cron: '30 * * * *' } })).status).toBe(200)
      const moved = await nextRunAt('moving')
      expect(moved).toBe(nextCronRun('30 * * * *', t.clock.now()).getTime())
      expect((await patch({ label: 'renamed' })).status).toBe(200)
      expect((await patch({ config: { json_path: '$.data' } })).status).toBe(200)
      expect(await nextRunAt('moving')).toBe(moved)
      // A refused change leaves it as it was.
      expect((await patch({ config: { cron: '61 * * * *' } })).status).toBe(422)
      expect(await nextRunAt('moving')).toBe(moved)
      expect((await create({ key: 'pushed_nrun', label: 'p', type: 'webhook_push', config: {} })).status).toBe(201)
      expect(await nextRunAt('pushed_nrun')).toBeNull()
    } finally {
      await cleanup('moving', 'pushed_nrun')
    }
  })

  test('the tick schedules http_json rows stored without next_run_at', async () => {
    expect((await httpJson('legacy', { cron: '0 0 1 1 *' })).status).toBe(201)
    try {
      await t.kernel.db.db.execute(sql`update datasources set next_run_at = null where key = 'legacy'`)
      t.clock.advance(60_000)
      await t.kernel.jobs.runDueJobs()
      expect(await nextRunAt('legacy')).toBe(nextCronRun('0 0 1 1 *', t.clock.now()).getTime())
    } finally {
      await cleanup('legacy')
    }
  })

  test('two runtimes claiming at once take each due datasource once', async () => {
    const keys = Array.from({ length: 12 }, (_, i) => `race${i}`)
    for (const k of keys) expect((await httpJson(k, { url: src(`/good?${k}`), cron: '0 0 1 1 *' })).status).toBe(201)
    // On Postgres the other runtime opens its own pool (as another process would); on PGlite it shares the one database.
    const other = t.config.databaseUrl
      ? await (async () => {
          const kernel = await createKernel(t.config, { clock: t.clock, migrate: false })
          const runtime = createRuntime(kernel)
          await runtime.start()
          return { kernel, close: () => runtime.close() }
        })()
      : await t.instance()
    try {
      // All due a minute ago (as after an instance was down); claimed in batches of two by both runtimes at once.
      const due = new Date(t.clock.ms() - 61_234)
      await t.kernel.db.db.execute(sql`update datasources set next_run_at = ${due.toISOString()}::timestamptz where key like 'race%'`)
      const [a, b] = await Promise.all([claimDueDatasources(t.kernel, t.clock.now(), 2), claimDueDatasources(other.kernel, t.clock.now(), 2)])
      const ids = rowsOf<{ id: number }>(await t.kernel.db.db.execute(sql`select id from datasources where key like 'race%' order by id`)).map((r) => Number(r.id))
      expect([...a, ...b].sort((x, y) => x - y)).toEqual(ids)
      // One pull job each, and every one moved on to its next tick.
      const jobs = rowsOf<{ n: number }>(
        await t.kernel.db.db.execute(sql`select count(*)::int as n from jobs where queue = 'datasources.sync' and dedupe_key like ${`%:${due.toISOString()}`}`),
      )
      expect(Number(jobs[0].n)).toBe(ids.length)
      for (const k of keys) expect(await nextRunAt(k)).toBe(nextCronRun('0 0 1 1 *', t.clock.now()).getTime())
      expect(await claimDueDatasources(other.kernel, t.clock.now())).toEqual([])
      const before = hits['/good'] ?? 0
      await Promise.all([t.kernel.jobs.runDueJobs(), other.kernel.jobs.runDueJobs()])
      expect((hits['/good'] ?? 0) - before).toBe(ids.length)
    } finally {
      await other.close()
      await cleanup(...keys)
    }
  })

  test('the migration adds the column and a partial index, and is a no-op when built beforehand', async () => {
    const idx = rowsOf<{ indexname: string; indexdef: string }>(
      await t.kernel.db.db.execute(sql`select indexname, indexdef from pg_indexes where tablename = 'datasources' and indexname = 'datasources_next_run_at_idx'`),
    )
    expect(idx[0].indexdef).toMatch(/\(next_run_at\) WHERE \(?next_run_at IS NOT NULL/)
    const [{ n: before }] = rowsOf<{ n: number }>(await t.kernel.db.db.execute(sql`select count(*)::int as n from pg_indexes where tablename = 'datasources'`))
    const statements = migrations
      .find((m) => m.tag.endsWith('_datasource_next_run'))!
      .sql.split('--> statement-breakpoint')
      .map((s) => s.replace(/^--.*$/gm, '').trim())
      .filter(Boolean)
    expect(statements.length).toBe(3)
    for (const s of statements) {
      expect(s).toContain('IF NOT EXISTS')
      await t.kernel.db.db.execute(sql.raw(s))
    }
    const [{ n: after }] = rowsOf<{ n: number }>(await t.kernel.db.db.execute(sql`select count(*)::int as n from pg_indexes where tablename = 'datasources'`))
    expect(Number(after)).toBe(Number(before))
  })
})

// ---- pushes ----

describe('signed pushes', () => {
  let secret: string
  beforeAll(async () => {
    secret = await pushSource('prices', { sku: 'string', amount: 'number', qty: 'integer', tags: 'array', info: 'object', live: 'boolean' })
  })

  test('a signed push replaces the entry set and bumps the revision', async () => {
    const r = await push('prices', [{ sku: 'a', amount: 1.5 }, { sku: 'b', amount: 2 }], { secret })
    expect(r.status).toBe(200)
    expect(r.body.data).toEqual({ entries: 2, revision: 1, changed: true })
    const one = await push('prices', { sku: 'c', amount: 3, qty: 1, tags: [], info: {}, live: true }, { secret })
    expect(one.body.data).toEqual({ entries: 1, revision: 2, changed: true })
    const entries = await t.request('GET', `${base()}/prices/entries`, { token: viewer })
    expect(entries.body.data).toEqual([{ sku: 'c', amount: 3, qty: 1, tags: [], info: {}, live: true }])
    // Fields keep the order they were sent in.
    expect(Object.keys(entries.body.data[0])).toEqual(['sku', 'amount', 'qty', 'tags', 'info', 'live'])
    // The same data again, signed anew (another timestamp): accepted, nothing changes.
    const same = await push('prices', { sku: 'c', amount: 3, qty: 1, tags: [], info: {}, live: true }, { secret })
    expect(same.body.data).toEqual({ entries: 1, revision: 2, changed: false })
    const ds = (await t.request('GET', `${base()}/prices`, { token: viewer })).body.data
    expect(ds).toMatchObject({ status: 'ok', revision: 2, entry_count: 1 })
  })

  test('bad or missing signatures are 401 invalid_signature', async () => {
    const body = [{ sku: 'x' }]
    const missing = await push('prices', body)
    expect(missing.status).toBe(401)
    expect(missing.body.error).toBe('invalid_signature')
    expect((await push('prices', body, { secret: 'another-secret-of-at-least-32-characters!!' })).body.error).toBe('invalid_signature')
    expect((await push('prices', body, { signature: 'sha256=zz' })).body.error).toBe('invalid_signature')
    // The signature covers the exact bytes: a signature of other bytes does not pass.
    const ts = now()
    const tampered = await push('prices', null, { raw: '[{"sku":"y"}]', timestamp: ts, signature: sign(secret, ts, '[{"sku":"x"}]') })
    expect(tampered.body.error).toBe('invalid_signature')
    // No timestamp: nothing was signed with it.
    expect((await push('prices', body, { timestamp: null, signature: sign(secret, '', JSON.stringify(body)) })).body.error).toBe('invalid_signature')
    expect((await t.request('GET', `${base()}/prices/entries`, { token: viewer })).body.data[0].sku).toBe('c')
  })

  test('a signed push sent again inside the window is refused (409 push_replayed), on any instance; the data stays', async () => {
    const old = [{ sku: 'old', amount: 1 }]
    const ts = now()
    const oldSignature = sign(secret, ts, JSON.stringify(old))
    expect((await push('prices', old, { timestamp: ts, signature: oldSignature })).status).toBe(200)
    t.clock.advance(1000)
    const current = [{ sku: 'new', amount: 2 }]
    const fresh = await push('prices', current, { secret })
    expect(fresh.status).toBe(200)
    const revision = fresh.body.data.revision
    // A captured copy of the old push, replayed 100 s later, would roll the data back: refused.
    t.clock.advance(100_000)
    const replay = await push('prices', old, { timestamp: ts, signature: oldSignature })
    expect(replay.status).toBe(409)
    expect(replay.body.error).toBe('push_replayed')
    expect(replay.body.message).toContain('X-Service-Timestamp')
    // Also through another instance on the same database.
    const other = await t.instance()
    try {
      const res = await other.runtime.handle(
        new Request(`http://localhost/v1/spaces/${space}/datasources/prices/webhook`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Service-Timestamp': String(ts), 'X-Service-Signature': oldSignature, 'X-Forwarded-For': '10.1.2.3' },
          body: JSON.stringify(old),
        }),
      )
      expect(res.status).toBe(409)
    } finally {
      await other.runtime.close()
    }
    const entries = await t.request('GET', `${base()}/prices/entries`, { token: viewer })
    expect(entries.body.data).toEqual(current)
    expect((await t.request('GET', `${base()}/prices`, { token: viewer })).body.data.revision).toBe(revision)
    // Past the window the timestamp refuses it by itself, and the remembered signature is forgotten.
    t.clock.advance(301_000)
    expect((await push('prices', old, { timestamp: ts, signature: oldSignature })).body.error).toBe('stale_timestamp')
    const { maintainDatasources } = await import('../src/modules/datasources/service')
    await maintainDatasources(t.kernel)
    const kept = rowsOf<{ n: number }>(await t.kernel.db.db.execute(sql`select count(*)::int as n from datasource_push_signatures where expires_at < ${t.clock.now().toISOString()}::timestamptz`))
    expect(Number(kept[0]!.n)).toBe(0)
  })

  test('timestamps more than 300 s away are 401 stale_timestamp, past or future', async () => {
    const body = [{ sku: 'x' }]
    for (const ts of [now() - 301, now() + 301]) {
      const r = await push('prices', body, { secret, timestamp: ts })
      expect(r.status).toBe(401)
      expect(r.body.error).toBe('stale_timestamp')
    }
    expect((await push('prices', body, { secret, timestamp: 'yesterday' })).body.error).toBe('stale_timestamp')
    expect((await push('prices', [{ sku: 'edge', amount: 1 }], { secret, timestamp: now() - 299 })).status).toBe(200)
  })

  test('unknown Space, unknown datasource and http_json datasources are 404', async () => {
    expect((await push('prices', {}, { secret, s: 'no-such-space' })).status).toBe(404)
    expect((await push('nope', {}, { secret })).status).toBe(404)
    expect((await push('catalog', {}, { secret })).status).toBe(404)
    expect((await push('Bad-Key', {}, { secret })).status).toBe(404)
  })

  test('a body over 1 MB is 413', async () => {
    const big = JSON.stringify([{ sku: 'x'.repeat(1024 * 1024) }])
    const ts = now()
    const r = await push('prices', null, { raw: big, timestamp: ts, signature: sign(secret, ts, big) })
    expect(r.status).toBe(413)
  })

  test('rows that do not fit the schema are 422 keyed <index>.<field>, and nothing is stored', async () => {
    const before = (await t.request('GET', `${base()}/prices`, { token: viewer })).body.data.revision
    const r = await push(
      'prices',
      [{ sku: 'ok', amount: 1 }, { sku: 5, qty: 1.5 }, 'nope', { sku: 'a', extra: true, tags: 'x', info: [], live: 'yes', amount: 'cheap' }],
      { secret },
    )
    expect(r.status).toBe(422)
    expect(Object.keys(r.body.errors).sort()).toEqual(['1.qty', '1.sku', '2', '3.amount', '3.extra', '3.info', '3.live', '3.tags'])
    expect((await t.request('GET', `${base()}/prices`, { token: viewer })).body.data.revision).toBe(before)
    expect((await push('prices', 'just a string', { secret })).status).toBe(422)
  })

  test('allow_unsigned skips the signature check only', async () => {
    const r = await create({ key: 'open', label: 'open', type: 'webhook_push', config: { allow_unsigned: true, schema: { n: 'integer' } } })
    expect(r.status).toBe(201)
    expect((await push('open', { n: 1 }, { timestamp: null })).status).toBe(200)
    expect((await push('open', { n: 2 }, { signature: 'sha256=bogus' })).status).toBe(200)
    expect((await push('open', { n: 3 }, { timestamp: now() - 1000 })).body.error).toBe('stale_timestamp')
    expect((await push('open', { n: 'x' })).status).toBe(422)
  })

  test('120 pushes a minute per datasource, then 429', async () => {
    await pushSource('limited')
    let last = 0
    for (let i = 0; i < 121; i++) last = (await push('limited', {}, { signature: 'sha256=00' })).status
    expect(last).toBe(429)
    // Another datasource has its own budget.
    expect((await push('open', { n: 9 }, { timestamp: null })).status).toBe(200)
  })
})

// ---- markers ----

describe('markers in Story reads', () => {
  let secret: string
  beforeAll(async () => {
    secret = await pushSource('shop')
    const r = await push(
      'shop',
      [
        { id: 'p1', name: 'Pen', price: 2.5, stock: { count: 7, where: ['A', 'B'] }, live: true },
        { key: 'ink', name: 'Ink', price: 9, nothing: null },
        { slug: 'pad', name: 'Pad "A5"', price: 4 },
        { id: 42, name: 'Numbered' },
      ],
      { secret },
    )
    expect(r.status).toBe(200)
    await pushSource('empty')
  })

  test('every accessor form, escapes, unknown keys and datasources without data', async () => {
    await publishStory(
      'markers',
      doc(
        'index: $ds:shop.0.name / $ds:shop.1.price',
        'id: $ds:shop.p1.name, key: $ds:shop.ink.name, slug: $ds:shop.pad.name, an index wins over a numeric id: [$ds:shop.42.name] $ds:shop.3.name',
        'field of the first: $ds:shop.name and $ds:shop.live',
        'walk: $ds:shop.p1.stock.count, $ds:shop.p1.stock.where.1',
        'not scalar: [$ds:shop.p1.stock] [$ds:shop.p1.stock.where] null: [$ds:shop.ink.nothing] missing: [$ds:shop.9.name] [$ds:shop.p1.nope]',
        'escape: $$ds:shop.0.name and $$ds:',
        'unknown: [$ds:nosuch.0.name] empty: [$ds:empty.0.name] not a marker: $ds:Shop.x $ds:shop',
        'end of sentence: $ds:shop.0.name.',
      ),
    )
    const r = await read('markers')
    expect(r.status).toBe(200)
    expect(headlines(r.body)).toEqual([
      'index: Pen / 9',
      'id: Pen, key: Ink, slug: Pad "A5", an index wins over a numeric id: [] Numbered',
      'field of the first: Pen and true',
      'walk: 7, B',
      'not scalar: [] [] null: [] missing: [] []',
      'escape: $ds:shop.0.name and $ds:',
      'unknown: [] empty: [] not a marker: $ds:Shop.x $ds:shop',
      'end of sentence: Pen.',
    ])
    expect(r.body.meta.datasource_refs).toEqual({ shop: 17, nosuch: 1, empty: 1 })
    // A draft preview resolves them too (never cached).
    const preview = await t.request('GET', `/v1/cdn/${space}/stories/markers?version=draft`, { token: editor })
    expect(preview.status).toBe(200)
    expect(headlines(preview.body)[0]).toBe('index: Pen / 9')
    expect(preview.body.meta.datasource_refs.shop).toBe(17)
    // The cached read serves the same body.
    const again = await read('markers')
    expect(again.headers.get('etag')).toBe(r.headers.get('etag'))
    expect(again.text).toBe(r.text)
  })

  test('a push changes the body and the ETag at once; an unchanged revision keeps the cached body', async () => {
    await publishStory('price', doc('Pen costs $ds:shop.p1.price'))
    const first = await read('price')
    expect(headlines(first.body)).toEqual(['Pen costs 2.5'])
    const cached = await read('price')
    expect(cached.headers.get('etag')).toBe(first.headers.get('etag'))
    expect((await read('price', { 'If-None-Match': first.headers.get('etag')! })).status).toBe(304)

    // A push to another datasource does not touch this Story's render key.
    expect((await push('open', { n: 77 }, { timestamp: null })).status).toBe(200)
    expect((await read('price')).headers.get('etag')).toBe(first.headers.get('etag'))

    expect((await push('shop', [{ id: 'p1', price: 3 }], { secret })).status).toBe(200)
    const after = await read('price')
    expect(headlines(after.body)).toEqual(['Pen costs 3'])
    expect(after.headers.get('etag')).not.toBe(first.headers.get('etag'))
    expect((await read('price', { 'If-None-Match': first.headers.get('etag')! })).status).toBe(200)
    // Served from the cache from now on: the in-memory copy is not asked again.
    const store = t.state(datasourcesModule).store
    const original = store.entries.bind(store)
    let loads = 0
    store.entries = (...args) => {
      loads++
      return original(...args)
    }
    try {
      for (let i = 0; i < 5; i++) expect((await read('price')).headers.get('etag')).toBe(after.headers.get('etag'))
      expect(loads).toBe(0)
    } finally {
      store.entries = original
    }
  })

  test('a cached read of a Story with markers is synchronous (the fast path), also right after a push', async () => {
    await publishStory('sync', doc('$ds:shop.p1.price / $ds:prices.0.sku / $ds:open.n'))
    const pipeline = t.state(storiesModule).pipeline
    const req = (): ReadRequest => ({
      spaceSlug: space,
      rawPath: 'sync',
      lang: undefined,
      acceptLanguage: null,
      origin: 'http://localhost',
      request: new Request('http://localhost/'),
      clientIp: '127.0.0.1',
      viaTrustedProxy: false,
      preview: false,
    })
    await pipeline.read(req())
    await pipeline.read(req())
    const cached = pipeline.read(req())
    expect(cached instanceof Promise).toBe(false)
    expect((await read('sync')).body.meta.datasource_refs).toEqual({ shop: 1, prices: 1, open: 1 })
    expect((await push('shop', [{ id: 'p1', price: 3.5 }], { secret })).status).toBe(200)
    const rerender = await pipeline.read(req())
    expect(new TextDecoder().decode(await rerender.rendered.body.arrayBuffer())).toContain('3.5 / ')
    expect(pipeline.read(req()) instanceof Promise).toBe(false)
    expect((await push('shop', [{ id: 'p1', price: 3 }], { secret })).status).toBe(200)
  })

  test('an offline datasource renders empty and the body is not cached', async () => {
    await publishStory('offline', doc('[$ds:shop.p1.price]'))
    const store = t.state(datasourcesModule).store
    const original = store.entries.bind(store)
    store.entries = () => Promise.reject(new Error('database unreachable'))
    try {
      const r = await read('offline')
      expect(headlines(r.body)).toEqual(['[]'])
      expect(r.body.meta.datasource_refs).toEqual({ shop: 1 })
    } finally {
      store.entries = original
    }
    expect(headlines((await read('offline')).body)).toEqual(['[3]'])
  })

  test('another instance sees a push at once (LISTEN/NOTIFY)', async () => {
    await publishStory('remote', doc('stock $ds:shop.p1.price'))
    const other = await t.instance()
    try {
      const path = `/v1/cdn/${space}/stories/remote`
      expect(headlines((await other.get(path)).body)).toEqual(['stock 3'])
      expect(headlines((await other.get(path)).body)).toEqual(['stock 3'])
      expect((await push('shop', [{ id: 'p1', price: 4 }], { secret })).status).toBe(200)
      let seen: string[] = []
      for (let i = 0; i < 50; i++) {
        seen = headlines((await other.get(path)).body)
        if (seen[0] === 'stock 4') break
        await Bun.sleep(20)
      }
      expect(seen).toEqual(['stock 4'])
    } finally {
      await other.close()
    }
  })

  test('deleting a datasource empties its markers; creating the key again fills them', async () => {
    const s2 = await pushSource('temp')
    await push('temp', { v: 'one' }, { secret: s2 })
    await publishStory('temp', doc('[$ds:temp.v]'))
    expect(headlines((await read('temp')).body)).toEqual(['[one]'])
    expect(headlines((await read('temp')).body)).toEqual(['[one]'])
    expect((await t.request('DELETE', `${base()}/temp`, { token: editor })).status).toBe(204)
    expect(headlines((await read('temp')).body)).toEqual(['[]'])
    const s3 = await pushSource('temp')
    await push('temp', { v: 'two' }, { secret: s3 })
    expect(headlines((await read('temp')).body)).toEqual(['[two]'])
  })

  test('markers inside variants picked by an earlier read step are resolved, keyed by the variant', async () => {
    // A stand-in for personalisation: a step above datasources that swaps the content by a request header.
    const variants = defineModule({
      name: 'test_variants',
      readSteps: () => [
        {
          name: 'test_variants',
          select(ctx) {
            const v = ctx.req.request.headers.get('x-test-variant')
            if (v) {
              ctx.keyParts.push(`variant:${v}`)
              ctx.decisions.test_variants = v
            }
          },
          transform(ctx, draft) {
            const v = ctx.decisions.test_variants as string | undefined
            if (v) draft.contentJson = JSON.stringify({ type: 'doc', blocks: [{ component: 'hero', _uid: 'v', headline: `variant ${v}: $ds:shop.${v}.name` }] })
          },
        },
      ],
    })
    const modules = [...MODULES]
    modules.splice(modules.indexOf(datasourcesModule), 0, variants)
    const k = await createKernel(t.config, { clock: t.clock, database: t.kernel.db, migrate: false })
    const rt = createRuntime(k, { modules })
    await rt.start()
    try {
      await publishStory('variant', doc('base $ds:shop.0.price'))
      const get = async (v?: string) => {
        const res = await rt.handle(
          new Request(`http://localhost/v1/cdn/${space}/stories/variant`, { headers: v ? { 'X-Test-Variant': v, 'X-Forwarded-For': '10.1.1.1' } : {} }),
        )
        return (await res.json()) as any
      }
      expect(headlines(await get())).toEqual(['base 4'])
      expect(headlines(await get('0'))).toEqual(['variant 0: '])
      await push('shop', [{ id: 'p1', name: 'Pencil', price: 5 }, { name: 'Other' }], { secret })
      await eventually(async () => headlines(await get())[0] === 'base 5')
      for (let i = 0; i < 2; i++) {
        expect(headlines(await get())).toEqual(['base 5'])
        expect(headlines(await get('0'))).toEqual(['variant 0: Pencil'])
        expect(headlines(await get('1'))).toEqual(['variant 1: Other'])
      }
      await push('shop', [{ id: 'p1', name: 'Brush', price: 6 }], { secret })
      await eventually(async () => headlines(await get('0'))[0] === 'variant 0: Brush')
      expect(headlines(await get('0'))).toEqual(['variant 0: Brush'])
      expect(headlines(await get('1'))).toEqual(['variant 1: '])
    } finally {
      await rt.close()
    }
  })
})

describe('markers with the real personalisation module', () => {
  test('a variant that references a datasource its Story default does not is resolved, and follows pushes', async () => {
    const secret = await pushSource('crew', { slug: 'string', name: 'string' })
    expect((await push('crew', [{ slug: 'lead', name: 'Ada' }], { secret })).status).toBe(200)
    const seg = await t.request('POST', `/v1/spaces/${space}/audience-segments`, {
      token: editor,
      body: { key: 'crew-fans', label: 'Crew fans', priority: 1, rules: [{ type: 'query', key: 'fan', operator: 'eq', value: 'yes' }] },
    })
    expect(seg.status).toBe(201)
    const created = await t.request('POST', `/v1/spaces/${space}/stories`, { token: editor, body: { name: 'crew', slug: 'crew', content: doc('Plain default') } })
    expect(created.status).toBe(201)
    const uuid = created.body.data.uuid
    const v = await t.request('POST', `/v1/spaces/${space}/stories/${uuid}/variants`, {
      token: editor,
      body: { audience_segment_id: seg.body.data.id, content: doc('Led by $ds:crew.lead.name') },
    })
    expect(v.status).toBe(201)
    expect((await t.request('POST', `/v1/spaces/${space}/stories/${uuid}/publish`, { token: editor })).status).toBe(200)
    const fan = () => read('crew', { 'X-Service-Segment': 'crew-fans' })
    const plain = await read('crew')
    expect(headlines(plain.body)).toEqual(['Plain default'])
    expect(plain.body.meta.datasource_refs).toEqual({})
    let r = await fan()
    expect(headlines(r.body)).toEqual(['Led by Ada'])
    expect(r.body.meta).toMatchObject({ served_segment: 'crew-fans', datasource_refs: { crew: 1 } })
    const etag = r.headers.get('etag')
    // Selected from a request signal (no header): the same variant, resolved the same way.
    expect(headlines((await read('crew?fan=yes')).body)).toEqual(['Led by Ada'])
    expect((await push('crew', [{ slug: 'lead', name: 'Grace' }], { secret })).status).toBe(200)
    for (let i = 0; i < 2; i++) {
      r = await fan()
      expect(headlines(r.body)).toEqual(['Led by Grace'])
      expect(r.headers.get('etag')).not.toBe(etag)
    }
    expect(headlines((await read('crew')).body)).toEqual(['Plain default'])
  })
})

describe('the in-memory copy and changes racing its loads', () => {
  /** A Space of its own (nothing of it cached yet) with one pushed datasource; its database id. */
  async function freshSpace() {
    const slug = (await t.createSpace(owner, { default_lang: 'en' })).slug
    const r = await t.request('POST', `/v1/spaces/${slug}/datasources`, {
      token: owner,
      body: { key: 'race', label: 'race', type: 'webhook_push', config: { secret_hash: 'auto', schema: {} } },
    })
    expect(r.status).toBe(201)
    const [row] = await t.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [slug])
    return row.id
  }
  /** The change as another instance's NOTIFY delivers it: after its commit, while this instance may be loading. */
  const changed = (spaceId: number, revision: number) =>
    t.kernel.bus.publish(
      [{ id: 0, type: 'datasource.changed', spaceId, payload: { key: 'race', id: 1, revision }, createdAt: t.clock.now() }],
      { origin: 'remote' },
    )

  test('a read right after a change never joins a load that started before it, and that load is not kept', async () => {
    const spaceId = await freshSpace()
    const store = t.state(datasourcesModule).store
    const before = store.refs(spaceId)
    expect(before).toBeInstanceOf(Promise)
    changed(spaceId, 2)
    const after = store.refs(spaceId)
    expect(after).not.toBe(before)
    await Promise.all([before, after])
    // The load that started after the change is what is cached now.
    expect(store.refs(spaceId)).toBe(await after)
  })

  test('a resync discards loads in flight, also for Spaces that had nothing cached yet', async () => {
    const spaceId = await freshSpace()
    const store = t.state(datasourcesModule).store
    const before = store.refs(spaceId)
    expect(before).toBeInstanceOf(Promise)
    t.kernel.bus.resync()
    await before
    expect(store.refs(spaceId)).toBeInstanceOf(Promise)
  })
})

describe('marker grammar', () => {
  test('scan and replace on JSON text', () => {
    const json = JSON.stringify({ a: 'x $ds:k.0.v y $$ds:k.0.v', b: ['$ds:k.name\n"q"'] })
    expect(scanMarkers(json)).toEqual(new Map([['k', 2]]))
    const out = JSON.parse(replaceMarkers(json, new Map([['k', [{ v: 'a"b\\c', name: 'line\nbreak' }]]])))
    expect(out).toEqual({ a: 'x a"b\\c y $ds:k.0.v', b: ['line\nbreak\n"q"'] })
  })
})
