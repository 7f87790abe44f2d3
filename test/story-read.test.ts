import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Config } from '../src/config'
import { EVENTS_CHANNEL } from '../src/kernel/events'
import { storiesModule } from '../src/modules/stories'
import { StoryCache } from '../src/modules/stories/cache'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

let t: TestApp
let owner: string
let space: string
let spaceName: string
let editor: string

const doc = (...blocks: Record<string, unknown>[]) => ({ type: 'doc', blocks })
let uid = 0
const hero = (headline: string) => ({ component: 'hero', _uid: `h${++uid}`, headline })

async function story(body: Record<string, unknown>, s = space, token = editor) {
  const r = await t.request('POST', `/v1/spaces/${s}/stories`, { token, body: { content: doc(hero(String(body.name))), ...body } })
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`)
  return r.body.data as { uuid: string; id: number; full_path: string }
}
const put = (uuid: string, body: Record<string, unknown>, s = space, token = editor) =>
  t.request('PUT', `/v1/spaces/${s}/stories/${uuid}`, { token, body })
const act = (uuid: string, what: string, s = space, token = editor) =>
  t.request('POST', `/v1/spaces/${s}/stories/${uuid}/${what}`, { token })
const cdn = (path: string, opts: { headers?: Record<string, string>; ip?: string; token?: string } = {}) =>
  t.request('GET', `/v1/cdn/${space}/stories/${path}`, opts)

/** A second instance on the same database, with its own kernel, bus and caches: another process, as far as caching goes. */
async function secondInstance(overrides: Partial<Config> = {}) {
  const other = await t.instance(overrides)
  return { ...other, get: (path: string, headers: Record<string, string> = {}) => other.get(`/v1/cdn/${path}`, headers) }
}
const cacheOf = () => t.state(storiesModule).cache

beforeAll(async () => {
  t = await testApp()
  owner = (await t.register()).token
  const sp = await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de', 'fr', 'pt'] })
  space = sp.slug
  spaceName = sp.name
  editor = (await t.spaceToken(owner, space, 'editor')).token
  await t.request('POST', `/v1/spaces/${space}/components`, {
    token: editor,
    body: { name: 'hero', schema: { headline: { type: 'text', required: true }, theme: { type: 'text', translatable: false } } },
  })
  await t.request('POST', `/v1/spaces/${space}/locales`, { token: owner, body: { code: 'de-CH', fallback: 'fr' } })
}, 60_000)

afterAll(async () => {
  await t?.close()
}, 60_000)

describe('serving published Stories', () => {
  test('a published Story is served with its snapshot and meta', async () => {
    const folder = await story({ name: 'Docs', slug: 'docs', is_folder: true })
    const s = await story({ name: 'Intro', slug: 'intro', parent_uuid: folder.uuid })
    await act(s.uuid, 'publish')
    const r = await cdn('docs/intro')
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(r.body.data).toMatchObject({
      id: s.id,
      uuid: s.uuid,
      name: 'Intro',
      slug: 'intro',
      full_path: '/docs/intro',
      lang: 'en',
      version_no: 1,
    })
    expect(Date.parse(r.body.data.published_at)).not.toBeNaN()
    expect(r.body.data.content).toEqual(doc({ component: 'hero', _uid: expect.any(String), headline: 'Intro' }))
    expect(r.body.meta).toEqual({ cv: expect.any(Number), beacon_url: `http://localhost/v1/cdn/${space}/_beacon`, served_segment: null, datasource_refs: {} })
    expect(Object.keys(r.body.data).sort()).toEqual(
      ['content', 'full_path', 'id', 'lang', 'name', 'published_at', 'slug', 'uuid', 'version_no'].sort(),
    )
  })

  test('headers: strong ETag, Cache-Control from config, Vary', async () => {
    const r = await cdn('docs/intro')
    expect(r.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]+"$/)
    expect(r.headers.get('cache-control')).toBe(
      `public, max-age=${t.config.cdnMaxAge}, stale-while-revalidate=${t.config.cdnStaleWhileRevalidate}`,
    )
    const vary = r.headers.get('vary')!.split(',').map((v) => v.trim())
    expect(vary).toContain('Accept-Language')
    expect(vary).toContain('X-Service-Segment')
    expect(r.headers.get('x-request-id')).toBeTruthy()
    expect(r.headers.get('ratelimit-limit')).toBe('600')
    const again = await cdn('docs/intro')
    expect(again.text).toBe(r.text)
    expect(again.headers.get('etag')).toBe(r.headers.get('etag'))
  })

  test('If-None-Match: 304 without a body; lists, weak form and * match; garbage does not', async () => {
    const first = await cdn('docs/intro')
    const etag = first.headers.get('etag')!
    for (const inm of [etag, `"nope", ${etag}`, `W/${etag}`, '*']) {
      const r = await cdn('docs/intro', { headers: { 'If-None-Match': inm } })
      expect(r.status).toBe(304)
      expect(r.text).toBe('')
      expect(r.headers.get('etag')).toBe(etag)
      expect(r.headers.get('cache-control')).toStartWith('public')
      expect(r.headers.get('vary')).toBe(first.headers.get('vary'))
    }
    for (const garbage of ['garbage', '"', 'W/', ',,,', etag.slice(0, -1), 'x'.repeat(5000)]) {
      const r = await cdn('docs/intro', { headers: { 'If-None-Match': garbage } })
      expect(r.status).toBe(200)
    }
  })

  test('drafts, unknown paths, unknown and archived Spaces are 404', async () => {
    await story({ name: 'Draft only', slug: 'draft-only' })
    expect((await cdn('draft-only')).status).toBe(404)
    expect((await cdn('no/such/path')).status).toBe(404)
    expect((await t.request('GET', '/v1/cdn/no-such-space/stories/docs/intro')).status).toBe(404)
    expect((await t.request('GET', '/v1/cdn/NOT_A_SLUG/stories/docs/intro')).status).toBe(404)
    const gone = (await t.createSpace(owner)).slug
    const s = await story({ name: 'In archived space', slug: 'x', content: doc() }, gone, owner)
    await act(s.uuid, 'publish', gone, owner)
    expect((await t.request('GET', `/v1/cdn/${gone}/stories/x`)).status).toBe(200)
    expect((await t.request('POST', `/v1/spaces/${gone}/archive`, { token: owner })).status).toBe(200)
    expect((await t.request('GET', `/v1/cdn/${gone}/stories/x`)).status).toBe(404)
  })

  // Literal dot segments and backslashes are resolved by URL parsing before any routing (`docs/../docs/intro` is
  // `docs/intro`); what reaches the service encoded must not be decoded into a different path.
  test.each([
    '../docs/intro',
    'docs/%2e%2e/intro',
    'docs/%2E%2E/%2E%2E/x',
    '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    'docs%2Fintro',
    'docs//intro',
    'docs/intro/',
    'docs%5Cintro',
    'd%6Fcs/intro',
    '%00',
    '%ZZ',
    'DOCS/INTRO',
  ])('path %p answers 404', async (path) => {
    const r = await cdn(path)
    expect(r.status).toBe(404)
    expect(r.body.error).toBe('not_found')
  })
})

describe('publishing reaches the public surface', () => {
  test('edits wait for the next publish; unpublish and archive hide the Story', async () => {
    const s = await story({ name: 'Life', slug: 'life' })
    expect((await cdn('life')).status).toBe(404) // cached as a 404 now
    await act(s.uuid, 'publish')
    expect((await cdn('life')).body.data.content.blocks[0].headline).toBe('Life')
    await put(s.uuid, { name: 'Life v2', content: doc(hero('Edited')) })
    const stale = await cdn('life')
    expect(stale.body.data.content.blocks[0].headline).toBe('Life')
    expect(stale.body.data.name).toBe('Life')
    expect(stale.body.data.version_no).toBe(1)
    await act(s.uuid, 'publish')
    const fresh = await cdn('life')
    expect(fresh.body.data.content.blocks[0].headline).toBe('Edited')
    expect(fresh.body.data).toMatchObject({ name: 'Life v2', version_no: 2 })
    expect(fresh.headers.get('etag')).not.toBe(stale.headers.get('etag'))
    await act(s.uuid, 'unpublish')
    expect((await cdn('life')).status).toBe(404)
    await act(s.uuid, 'publish')
    expect((await cdn('life')).status).toBe(200)
    await act(s.uuid, 'archive')
    expect((await cdn('life')).status).toBe(404)
  })

  test('hard delete removes the Story from the public surface', async () => {
    const s = await story({ name: 'Doomed', slug: 'doomed' })
    await act(s.uuid, 'publish')
    expect((await cdn('doomed')).status).toBe(200)
    expect((await t.request('DELETE', `/v1/spaces/${space}/stories/${s.uuid}`, { token: editor })).status).toBe(204)
    expect((await cdn('doomed')).status).toBe(404)
  })

  test('moves take effect at once: the snapshot answers under the new path, the old path is 404', async () => {
    const parent = await story({ name: 'Shop', slug: 'shop', is_folder: true })
    const child = await story({ name: 'Shoes', slug: 'shoes', parent_uuid: parent.uuid })
    await act(child.uuid, 'publish')
    await put(child.uuid, { content: doc(hero('unpublished edit')) })
    expect((await cdn('shop/shoes')).status).toBe(200)
    await put(parent.uuid, { slug: 'store' })
    expect((await cdn('shop/shoes')).status).toBe(404)
    const moved = await cdn('store/shoes')
    expect(moved.status).toBe(200)
    expect(moved.body.data.full_path).toBe('/store/shoes')
    expect(moved.body.data.content.blocks[0].headline).toBe('Shoes')
  })

  test('a cached 404 expires after a minute even when no notification arrives', async () => {
    const s = await story({ name: 'Lost notification', slug: 'lost-notification' })
    expect((await cdn('lost-notification')).status).toBe(404)
    // Published by a process whose NOTIFY this one missed: simulated by publishing with the cache then forgetting it.
    await act(s.uuid, 'publish')
    const id = await spaceId()
    const rows = await t.kernel.db.query<{ id: number }>('select id from stories where uuid = $1', [s.uuid])
    await t.kernel.db.query(`update stories set status = 'draft' where id = $1`, [rows[0].id])
    expect((await cdn('lost-notification')).status).toBe(404) // cached 404 (refilled from the draft state)
    await t.kernel.db.query(`update stories set status = 'published' where id = $1`, [rows[0].id])
    expect((await cdn('lost-notification')).status).toBe(404)
    t.clock.advance(61_000)
    expect((await cdn('lost-notification')).status).toBe(200)
    expect(cacheOf().story(id, '/lost-notification', t.clock.now().getTime())).toBeTruthy()
  })

  test('a cache hit does not read the database', async () => {
    const s = await story({ name: 'Cached', slug: 'cached' })
    await act(s.uuid, 'publish')
    expect((await cdn('cached')).body.data.name).toBe('Cached')
    // Behind the service's back: the cache keeps answering what was published until an invalidation.
    await t.kernel.db.query(`update story_published set name = 'Changed behind the back' where story_id = $1`, [s.id])
    expect((await cdn('cached')).body.data.name).toBe('Cached')
    await put(s.uuid, { name: 'Cached 2' })
    await act(s.uuid, 'publish')
    expect((await cdn('cached')).body.data.name).toBe('Cached 2')
  })
})

describe('locales', () => {
  let uuid: string
  beforeAll(async () => {
    const s = await story({ name: 'Greeting', slug: 'greeting', content: doc({ ...hero('Hello'), _uid: 'g1', theme: 'blue' }) })
    uuid = s.uuid
    await put(uuid, { lang: 'de', name: 'Gruß', content: doc({ ...hero('Hallo'), _uid: 'g1', theme: 'red' }) })
    await put(uuid, { lang: 'fr', name: 'Salut', content: doc({ ...hero('Bonjour'), _uid: 'g1' }) })
    await act(uuid, 'publish')
  })

  const served = async (query: string, headers: Record<string, string> = {}) => {
    const r = await cdn(`greeting${query}`, { headers })
    expect(r.status).toBe(200)
    return r.body.data as { lang: string; name: string; content: { blocks: { headline: string; theme?: string }[] } }
  }

  test('the requested locale is served, with its name', async () => {
    const de = await served('?lang=de')
    expect(de).toMatchObject({ lang: 'de', name: 'Gruß' })
    expect(de.content.blocks[0].headline).toBe('Hallo')
  })

  test('untranslatable fields show the Story’s own-locale value', async () => {
    expect((await served('?lang=de')).content.blocks[0].theme).toBe('blue')
    expect((await served('?lang=fr')).content.blocks[0].theme).toBe('blue')
  })

  test('fallback chain: explicit fallback, then language subtag, then default', async () => {
    expect((await served('?lang=de-CH')).lang).toBe('fr') // explicit fallback of de-CH
    expect((await served('?lang=de-AT')).lang).toBe('de') // not a Space locale: language subtag
    expect((await served('?lang=pt')).lang).toBe('en') // a Space locale without content: default
    expect((await served('?lang=ja')).lang).toBe('en')
    expect((await served('?lang=DE')).lang).toBe('de')
  })

  test('without lang: the best Accept-Language match, else the default', async () => {
    expect((await served('', { 'Accept-Language': 'fr-CA, de;q=0.9' })).lang).toBe('fr')
    expect((await served('', { 'Accept-Language': 'ja, de;q=0.5, fr;q=0.8' })).lang).toBe('fr')
    expect((await served('', { 'Accept-Language': 'ja' })).lang).toBe('en')
    expect((await served('', { 'Accept-Language': ';;;garbage,,q=x' })).lang).toBe('en')
    expect((await served('')).lang).toBe('en')
  })

  test('a malformed lang is 422', async () => {
    for (const bad of ['not a tag', '%3Cscript%3E', 'x'.repeat(50), 'en_US!']) {
      const r = await cdn(`greeting?lang=${bad}`)
      expect(r.status).toBe(422)
      expect(r.body.errors.lang).toBeDefined()
    }
  })

  test('locale changes reach the public read at once', async () => {
    expect((await served('?lang=pt')).lang).toBe('en')
    await t.request('DELETE', `/v1/spaces/${space}/locales/pt`, { token: owner })
    await t.request('POST', `/v1/spaces/${space}/locales`, { token: owner, body: { code: 'pt', fallback: 'fr' } })
    expect((await served('?lang=pt')).lang).toBe('fr')
  })
})

describe('preview', () => {
  test('?version=draft serves the latest draft to a Space token, privately', async () => {
    const s = await story({ name: 'Preview me', slug: 'preview-me' })
    const viewerToken = (await t.spaceToken(owner, space, 'viewer')).token
    const r = await cdn('preview-me?version=draft', { token: viewerToken })
    expect(r.status).toBe(200)
    expect(r.headers.get('cache-control')).toBe('private, no-store')
    expect(r.body.data).toMatchObject({ name: 'Preview me', version_no: 1, published_at: null })
    await act(s.uuid, 'publish')
    await put(s.uuid, { content: doc(hero('Draft edit')) })
    expect((await cdn('preview-me')).body.data.content.blocks[0].headline).toBe('Preview me')
    expect((await cdn('preview-me?version=draft', { token: viewerToken })).body.data.content.blocks[0].headline).toBe('Draft edit')
  })

  test('preview needs a token with access to the Space', async () => {
    expect((await cdn('preview-me?version=draft')).status).toBe(401)
    const other = await t.register()
    const otherSpace = (await t.createSpace(other.token)).slug
    const foreign = (await t.spaceToken(other.token, otherSpace, 'admin')).token
    expect((await cdn('preview-me?version=draft', { token: foreign })).status).toBe(404)
    expect((await cdn('preview-me?version=latest')).status).toBe(422)
  })
})

describe('OG card', () => {
  test('an SVG card with the headline and the Space name, XML-escaped', async () => {
    const s = await story({ name: 'OG', slug: 'og', content: doc(hero('Fish & <Chips> "quoted" \u0001')) })
    await act(s.uuid, 'publish')
    const r = await t.request('GET', `/v1/cdn/${space}/stories/${s.uuid}/og.svg`)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8')
    // Embeddable as an <img> by pages with COEP: require-corp.
    expect(r.headers.get('cross-origin-resource-policy')).toBe('cross-origin')
    expect(r.text).toContain('width="1200" height="630"')
    expect(r.text).toContain('Fish &amp; &lt;Chips&gt; &quot;quoted&quot;')
    expect(r.text).not.toContain('<Chips>')
    expect(r.text).not.toContain('\u0001')
    expect(r.text).toContain(spaceName)
    const etag = r.headers.get('etag')!
    expect((await t.request('GET', `/v1/cdn/${space}/stories/${s.uuid}/og.svg`, { headers: { 'If-None-Match': etag } })).status).toBe(304)
  })

  test('unpublished, unknown and malformed uuids are 404', async () => {
    const s = await story({ name: 'Hidden', slug: 'og-hidden' })
    expect((await t.request('GET', `/v1/cdn/${space}/stories/${s.uuid}/og.svg`)).status).toBe(404)
    expect((await t.request('GET', `/v1/cdn/${space}/stories/${crypto.randomUUID()}/og.svg`)).status).toBe(404)
    expect((await t.request('GET', `/v1/cdn/${space}/stories/nope/og.svg`)).status).toBe(404)
  })
})

describe('configuration', () => {
  test('PUBLIC_URL builds the beacon URL; SERVICE_BEACON_ENABLED=false omits it', async () => {
    const s = await story({ name: 'Beacon', slug: 'beacon' })
    await act(s.uuid, 'publish')
    const withUrl = await secondInstance({ publicUrl: 'https://content.example.com' })
    const a = await withUrl.get(`${space}/stories/beacon`)
    expect(a.body.meta.beacon_url).toBe(`https://content.example.com/v1/cdn/${space}/_beacon`)
    await withUrl.close()
    const off = await secondInstance({ beaconEnabled: false })
    const b = await off.get(`${space}/stories/beacon`)
    expect(b.status).toBe(200)
    expect('beacon_url' in b.body.meta).toBe(false)
    expect(b.body.meta).toEqual({ cv: expect.any(Number), served_segment: null, datasource_refs: {} })
    await off.close()
  })

  test('a default locale change reaches the next read at once', async () => {
    const sp = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })).slug
    const s = await story({ name: 'Default', slug: 'default', content: doc() }, sp, owner)
    await put(s.uuid, { lang: 'de', content: doc() }, sp, owner)
    await act(s.uuid, 'publish', sp, owner)
    expect((await t.request('GET', `/v1/cdn/${sp}/stories/default`)).body.data.lang).toBe('en')
    await t.request('PATCH', `/v1/spaces/${sp}`, { token: owner, body: { default_lang: 'de' } })
    expect((await t.request('GET', `/v1/cdn/${sp}/stories/default`)).body.data.lang).toBe('de')
  })
})

describe('several instances', () => {
  test('a publish on one instance invalidates the cache of another through NOTIFY', async () => {
    const other = await secondInstance()
    const s = await story({ name: 'Shared', slug: 'shared' })
    expect((await other.get(`${space}/stories/shared`)).status).toBe(404) // cached 404 on the other instance
    await act(s.uuid, 'publish')
    let status = 0
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await other.get(`${space}/stories/shared`)).status
      if (status !== 200) await Bun.sleep(10)
    }
    expect(status).toBe(200)
    await put(s.uuid, { content: doc(hero('v2')) })
    await act(s.uuid, 'publish')
    let headline = ''
    for (let i = 0; i < 100 && headline !== 'v2'; i++) {
      headline = (await other.get(`${space}/stories/shared`)).body.data.content.blocks[0].headline
      if (headline !== 'v2') await Bun.sleep(10)
    }
    expect(headline).toBe('v2')
    await other.close()
  })

  test('an instance ignores its own notifications', async () => {
    const s = await story({ name: 'Own', slug: 'own-notify' })
    await act(s.uuid, 'publish')
    await cdn('own-notify')
    const id = await spaceId()
    const before = cacheOf().epoch(id)
    const wire = (instance: string) =>
      JSON.stringify({
        i: instance,
        e: [{ id: 0, t: 'story.published', s: id, p: { story: { id: s.id, full_path: '/own-notify' } }, c: new Date().toISOString() }],
      })
    await t.kernel.db.query('select pg_notify($1, $2)', [EVENTS_CHANNEL, wire(t.kernel.instanceId)])
    await Bun.sleep(50)
    expect(cacheOf().epoch(id)).toBe(before)
    expect(cacheOf().story(id, '/own-notify', t.clock.now().getTime())).toBeDefined()
    // The same message from another instance does invalidate.
    await t.kernel.db.query('select pg_notify($1, $2)', [EVENTS_CHANNEL, wire('another')])
    for (let i = 0; i < 50 && cacheOf().epoch(id) === before; i++) await Bun.sleep(10)
    expect(cacheOf().epoch(id)).toBeGreaterThan(before)
    expect(cacheOf().story(id, '/own-notify', t.clock.now().getTime())).toBeUndefined()
  })
})

async function spaceId() {
  const rows = await t.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [space])
  return rows[0].id
}

describe('rate limits', () => {
  test('600 story reads per minute per IP, then 429', async () => {
    const ip = '10.99.0.1'
    let last = 0
    for (let i = 0; i < 600; i++) last = (await cdn('docs/intro', { ip })).status
    expect(last).toBe(200)
    const r = await cdn('docs/intro', { ip })
    expect(r.status).toBe(429)
    expect(r.headers.get('retry-after')).toBeTruthy()
  })

  test('the OG card has its own limit of 300 per minute', () => {
    const rule = t.kernel.rateLimiter.table.match('GET', `/v1/cdn/${space}/stories/7b0d7a8e-4a4e-4a5f-9a8e-1c2d3e4f5a6b/og.svg`)
    expect(rule).toMatchObject({ limit: 300, windowSeconds: 60 })
    expect(t.kernel.rateLimiter.table.match('GET', `/v1/cdn/${space}/stories/a/b/c`)).toMatchObject({ limit: 600, windowSeconds: 60 })
  })
})

describe('the read cache', () => {
  const make = (maxBytes = 1_000_000) => new StoryCache({ maxBytes, now: () => t.clock.now().getTime() })
  const entry = (spaceId: number, fullPath: string, bytes: number) => ({
    spaceId,
    id: 1,
    uuid: crypto.randomUUID(),
    slug: fullPath.slice(1),
    fullPath,
    lang: 'en',
    snapshots: new Map(),
    renders: new Map(),
    bytes,
  })

  test('a load that raced with an invalidation is not stored', () => {
    const c = make()
    const epoch = c.epoch(7)
    c.invalidatePaths(7, ['/a'])
    expect(c.storeStory(7, '/a', entry(7, '/a', 100), epoch)).toBe(false)
    expect(c.story(7, '/a', t.clock.now().getTime())).toBeUndefined()
    expect(c.storeStory(7, '/a', entry(7, '/a', 100), c.epoch(7))).toBe(true)
  })

  test('the byte budget evicts the oldest entries first', () => {
    const c = make(1000)
    const now = () => t.clock.now().getTime()
    for (const p of ['/a', '/b', '/c']) c.storeStory(1, p, entry(1, p, 400), c.epoch(1))
    expect(c.story(1, '/a', now())).toBeUndefined()
    expect(c.story(1, '/b', now())).toBeDefined()
    expect(c.story(1, '/c', now())).toBeDefined()
    expect(c.stats.bytes).toBe(800)
  })

  test('invalidating a Space drops its paths only', () => {
    const c = make()
    c.storeStory(1, '/x', null, c.epoch(1))
    c.storeStory(2, '/x', null, c.epoch(2))
    c.invalidateSpace(1)
    const now = t.clock.now().getTime()
    expect(c.story(1, '/x', now)).toBeUndefined()
    expect(c.story(2, '/x', now)).toBeNull()
  })
})
