import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { storiesModule } from '../src/modules/stories'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

// The fast path's memo of whole public reads (src/modules/stories/read-memo.ts): repeated reads of a URL are answered
// from it, and it must never serve what a full read would not — after a change on this instance or another, for
// another Accept-Language, another segment, or once the entries it was built from expire.

let t: TestApp
let owner: string
let space: string
let editor: string

const doc = (headline: string) => ({ type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline }] })

async function publish(slug: string, headline: string, extra: Record<string, unknown> = {}) {
  const r = await t.request('POST', `/v1/spaces/${space}/stories`, { token: editor, body: { name: slug, slug, content: doc(headline), ...extra } })
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`)
  await t.request('POST', `/v1/spaces/${space}/stories/${r.body.data.uuid}/publish`, { token: editor })
  return r.body.data as { uuid: string; id: number }
}
const headline = (r: { body: any }) => r.body.data.content.blocks[0].headline as string
const cdn = (path: string, headers: Record<string, string> = {}) => t.request('GET', `/v1/cdn/${space}/stories/${path}`, { headers })
const memo = () => t.state(storiesModule).memo

beforeAll(async () => {
  t = await testApp()
  owner = (await t.register()).token
  space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })).slug
  editor = (await t.spaceToken(owner, space, 'editor')).token
  await t.request('POST', `/v1/spaces/${space}/components`, { token: editor, body: { name: 'hero', schema: { headline: { type: 'text', required: true } } } })
}, 60_000)

afterAll(async () => {
  await t?.close()
}, 60_000)

describe('the read memo', () => {
  test('repeated reads are memoised, with the same bytes and headers as the first', async () => {
    await publish('same', 'Same')
    const first = await cdn('same') // a cold read (from the database) is not memoised; the next one is
    const before = memo().size
    const second = await cdn('same')
    expect(memo().size).toBe(before + 1)
    const third = await cdn('same')
    for (const r of [second, third]) {
      expect(r.text).toBe(first.text)
      expect(r.headers.get('etag')).toBe(first.headers.get('etag'))
      expect(r.headers.get('cache-control')).toBe(first.headers.get('cache-control'))
      expect(r.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'))
    }
  })

  test('a publish drops it: the next read serves the new version, here and on another instance', async () => {
    const s = await publish('changing', 'One')
    const other = await t.instance()
    try {
      const read2 = async () => (await other.get(`/v1/cdn/${space}/stories/changing`)).body.data.content.blocks[0].headline
      for (let i = 0; i < 3; i++) {
        expect(headline(await cdn('changing'))).toBe('One')
        expect(await read2()).toBe('One')
      }
      await t.request('PUT', `/v1/spaces/${space}/stories/${s.uuid}`, { token: editor, body: { content: doc('Two') } })
      await t.request('POST', `/v1/spaces/${space}/stories/${s.uuid}/publish`, { token: editor })
      expect(headline(await cdn('changing'))).toBe('Two')
      // The other instance learns of it through NOTIFY.
      const until = Date.now() + 5000
      while ((await read2()) !== 'Two' && Date.now() < until) await Bun.sleep(20)
      expect(await read2()).toBe('Two')
    } finally {
      await other.close()
    }
  })

  test('an unpublish drops it: 404 at once', async () => {
    const s = await publish('going', 'Going')
    for (let i = 0; i < 3; i++) expect((await cdn('going')).status).toBe(200)
    await t.request('POST', `/v1/spaces/${space}/stories/${s.uuid}/unpublish`, { token: editor })
    expect((await cdn('going')).status).toBe(404)
  })

  test('each Accept-Language is its own entry', async () => {
    const s = await publish('hello', 'Hello')
    await t.request('PUT', `/v1/spaces/${space}/stories/${s.uuid}`, { token: editor, body: { lang: 'de', content: doc('Hallo') } })
    await t.request('POST', `/v1/spaces/${space}/stories/${s.uuid}/publish`, { token: editor })
    for (let i = 0; i < 3; i++) {
      expect(headline(await cdn('hello', { 'accept-language': 'de-DE,de;q=0.9' }))).toBe('Hallo')
      expect(headline(await cdn('hello'))).toBe('Hello')
      expect(headline(await cdn('hello', { 'accept-language': 'fr, en;q=0.5' }))).toBe('Hello')
      expect((await cdn('hello', { 'accept-language': 'de' })).headers.get('content-language')).toBe('de')
    }
  })

  test('it expires with the cached entries it was built from (a notification lost)', async () => {
    const s = await publish('behind', 'Before')
    for (let i = 0; i < 3; i++) expect(headline(await cdn('behind'))).toBe('Before')
    // Behind the service's back (no event): the caches — and so the memo — keep answering until their safety TTL.
    await t.kernel.db.query(`update story_published set content = $2::jsonb where story_id = $1`, [s.id, JSON.stringify(doc("After"))])
    expect(headline(await cdn('behind'))).toBe('Before')
    t.clock.advance(10 * 60_000 + 1)
    expect(headline(await cdn('behind'))).toBe('After')
  })

  test('an entry reloaded after its TTL leaves the memo of other paths alone; a publish does not', async () => {
    const cache = t.state(storiesModule).cache
    await publish('old-one', 'Old')
    expect(headline(await cdn('old-one'))).toBe('Old')
    t.clock.advance(10 * 60_000 + 1)
    const g = cache.generation
    expect(headline(await cdn('old-one'))).toBe('Old') // expired: loaded again and stored over the old entry
    expect(cache.generation).toBe(g)
    await publish('new-one', 'New')
    expect(cache.generation).toBeGreaterThanOrEqual(g)
    const s = await publish('bumped', 'Bumped')
    expect(headline(await cdn('bumped'))).toBe('Bumped')
    const before = cache.generation
    await t.request('POST', `/v1/spaces/${space}/stories/${s.uuid}/unpublish`, { token: editor })
    expect(cache.generation).toBeGreaterThan(before)
  })

  test('it holds no body the Story cache dropped, and counts no body bytes of its own', async () => {
    const state = t.state(storiesModule)
    await publish('linked', 'Linked')
    const url = `http://localhost/v1/cdn/${space}/stories/linked`
    for (let i = 0; i < 2; i++) expect(headline(await cdn('linked'))).toBe('Linked')
    const entry = memo().memo.peekEntry(url)
    expect(entry).toBeDefined()
    const story = entry!.value.story
    expect(story.memoUrls?.has(url)).toBe(true)
    // The memo's bytes are its own (URL, keys): far less than the body it serves, which the Story cache counts.
    const body = entry!.value.plain!.rendered.body.size
    expect(memo().memo.stats.bytes).toBeLessThan(memo().memo.stats.entries * 1024)
    expect(body).toBeGreaterThan(0)
    // The Story leaves the Story cache without any event (an eviction): the memo entry goes with it.
    state.cache.entries.delete(`${story.spaceId}${story.fullPath}`)
    expect(memo().memo.peekEntry(url)).toBeUndefined()
    expect(story.memoUrls).toBeUndefined()
    for (let i = 0; i < 2; i++) expect(headline(await cdn('linked'))).toBe('Linked')
    const again = memo().memo.peekEntry(url)!.value.story
    expect(again).not.toBe(story)
    // The Story loses its bodies (the Space's content version moved on): the memo entry goes too.
    state.cache.dropRenders(again)
    expect(memo().memo.peekEntry(url)).toBeUndefined()
    expect(again.memoUrls).toBeUndefined()
    for (let i = 0; i < 2; i++) expect(headline(await cdn('linked'))).toBe('Linked')
    // The memo evicting an entry unlinks it from its Story; a cleared Story cache leaves the memo empty of it.
    const third = memo().memo.peekEntry(url)!.value.story
    memo().memo.delete(url)
    expect(third.memoUrls).toBeUndefined()
    for (let i = 0; i < 2; i++) expect(headline(await cdn('linked'))).toBe('Linked')
    state.cache.clear()
    expect(memo().memo.peekEntry(url)).toBeUndefined()
  })

  test("a change in one Space drops that Space's memoised reads only", async () => {
    const other = (await t.createSpace(owner, { default_lang: 'en' })).slug
    const otherEditor = (await t.spaceToken(owner, other, 'editor')).token
    await t.request('POST', `/v1/spaces/${other}/components`, { token: otherEditor, body: { name: 'hero', schema: { headline: { type: 'text', required: true } } } })
    const r = await t.request('POST', `/v1/spaces/${other}/stories`, { token: otherEditor, body: { name: 'theirs', slug: 'theirs', content: doc('Theirs') } })
    await t.request('POST', `/v1/spaces/${other}/stories/${r.body.data.uuid}/publish`, { token: otherEditor })
    await publish('ours', 'Ours')
    const theirs = () => t.request('GET', `/v1/cdn/${other}/stories/theirs`)
    for (let i = 0; i < 2; i++) {
      expect(headline(await theirs())).toBe('Theirs')
      expect(headline(await cdn('ours'))).toBe('Ours')
    }
    const keys = () => [`http://localhost/v1/cdn/${other}/stories/theirs`, `http://localhost/v1/cdn/${space}/stories/ours`].map((u) => memo().memo.peekEntry(u) !== undefined)
    expect(keys()).toEqual([true, true])
    // A publish in this Space: its entries go, the other Space's stay (and still serve what a full read would).
    await publish('ours-too', 'Ours too')
    expect(keys()).toEqual([true, false])
    expect(headline(await theirs())).toBe('Theirs')
    expect(headline(await cdn('ours'))).toBe('Ours')
    // A resync drops them all.
    t.kernel.bus.resync()
    expect(keys()).toEqual([false, false])
  })

  test('personalised reads: the header short-cut and the signals each resolve as a full read would', async () => {
    const s = await publish('offer', 'Default offer')
    const seg = async (key: string, rules: unknown[], priority: number) => {
      const r = await t.request('POST', `/v1/spaces/${space}/audience-segments`, { token: editor, body: { key, label: key, priority, rules } })
      if (r.status !== 201) throw new Error(`segment: ${r.status} ${r.text}`)
      return r.body.data.id as number
    }
    const vip = await seg('vip', [{ type: 'cookie', key: 'tier', operator: 'eq', value: 'gold' }], 1)
    await seg('news', [{ type: 'referrer', operator: 'contains', value: 'news.example' }], 2)
    await t.request('POST', `/v1/spaces/${space}/stories/${s.uuid}/variants`, { token: editor, body: { audience_segment_id: vip, content: doc('VIP offer') } })
    await t.request('POST', `/v1/spaces/${space}/stories/${s.uuid}/publish`, { token: editor })
    for (let i = 0; i < 3; i++) {
      const gold = await cdn('offer', { cookie: 'tier=gold' })
      expect(headline(gold)).toBe('VIP offer')
      expect(gold.headers.get('x-service-segment')).toBe('vip')
      expect(gold.headers.get('cache-control')).toStartWith('private')
      const news = await cdn('offer', { referer: 'https://news.example/today' })
      expect(headline(news)).toBe('Default offer')
      expect(news.body.meta.served_segment).toBe('news')
      const plain = await cdn('offer')
      expect(headline(plain)).toBe('Default offer')
      expect(plain.body.meta.served_segment).toBeNull()
      expect(plain.headers.get('x-service-segment')).toBeNull()
      const named = await cdn('offer', { 'x-service-segment': 'vip' })
      expect(headline(named)).toBe('VIP offer')
      expect(named.headers.get('cache-control')).toStartWith('public')
      const unknown = await cdn('offer', { 'x-service-segment': 'nobody', cookie: 'tier=gold' })
      expect(headline(unknown)).toBe('VIP offer')
      expect(unknown.headers.get('cache-control')).toStartWith('private')
    }
    // A Cookie header past the memo's key length is read in full every time, and still resolves.
    for (let i = 0; i < 2; i++) expect(headline(await cdn('offer', { cookie: `pad=${'x'.repeat(600)}; tier=gold` }))).toBe('VIP offer')
    // A segment edit is an event: the memo follows it at once.
    await t.request('PATCH', `/v1/spaces/${space}/audience-segments/vip`, { token: editor, body: { active: false } })
    const after = await cdn('offer', { cookie: 'tier=gold' })
    expect(headline(after)).toBe('Default offer')
    expect(after.body.meta.served_segment).toBeNull()
  })
})
