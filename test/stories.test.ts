import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { DomainEvent } from '../src/kernel/events'
import { publishedSnapshots } from '../src/modules/stories/service'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

let t: TestApp
let owner: string
let space: string
let editor: string
let viewer: string
const events: DomainEvent<any>[] = []

const doc = (...blocks: Record<string, unknown>[]) => ({ type: 'doc', blocks })
let uidCounter = 0
const block = (component: string, fields: Record<string, unknown> = {}) => ({ component, _uid: `b${++uidCounter}`, ...fields })

async function create(body: Record<string, unknown>, token = editor, s = space) {
  return t.request('POST', `/v1/spaces/${s}/stories`, { token, body: { content: doc(), ...body } })
}
async function createOk(body: Record<string, unknown>) {
  const r = await create(body)
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`)
  return r.body.data
}
const put = (uuid: string, body: Record<string, unknown>, token = editor) =>
  t.request('PUT', `/v1/spaces/${space}/stories/${uuid}`, { token, body })
const action = (uuid: string, what: string, token = editor) =>
  t.request('POST', `/v1/spaces/${space}/stories/${uuid}/${what}`, { token })
const get = (uuid: string, query = '', token = viewer) => t.request('GET', `/v1/spaces/${space}/stories/${uuid}${query}`, { token })

async function eventsAfter<T>(fn: () => Promise<T>): Promise<{ result: T; types: string[]; list: DomainEvent<any>[] }> {
  await t.kernel.bus.idle()
  const from = events.length
  const result = await fn()
  await t.kernel.bus.idle()
  const list = events.slice(from)
  return { result, types: list.map((e) => e.type), list }
}

beforeAll(async () => {
  t = await testApp()
  t.kernel.bus.subscribe('*', (e) => {
    events.push(e)
  })
  owner = (await t.register()).token
  space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de', 'fr'] })).slug
  editor = (await t.spaceToken(owner, space, 'editor')).token
  viewer = (await t.spaceToken(owner, space, 'viewer')).token
  const components = [
    {
      name: 'hero',
      schema: {
        headline: { type: 'text', required: true, max_length: 40 },
        subline: { type: 'textarea' },
        theme: { type: 'select', options: ['light', 'dark'], translatable: false },
        image: { type: 'asset' },
      },
    },
    { name: 'text', is_root: false, schema: { body: { type: 'richtext' }, tags: { type: 'tags' } } },
    {
      name: 'section',
      schema: { title: { type: 'text' }, body: { type: 'blocks', component_whitelist: ['text', 'section'] } },
    },
    { name: 'teaser', is_nestable: false, schema: { count: { type: 'number' }, live: { type: 'boolean' }, at: { type: 'datetime' }, link: { type: 'link' } } },
  ]
  for (const c of components) {
    const r = await t.request('POST', `/v1/spaces/${space}/components`, { token: editor, body: c })
    if (r.status !== 201) throw new Error(`component: ${r.status} ${r.text}`)
  }
}, 60_000)

afterAll(async () => {
  await t?.close()
}, 60_000)

describe('creating Stories', () => {
  test('a Story is created as a draft with version 1 in the Space default locale', async () => {
    const { result: r, types } = await eventsAfter(() => create({ name: 'Home', slug: 'home', content: doc(block('hero', { headline: 'Hi' })) }))
    expect(r.status).toBe(201)
    const s = r.body.data
    expect(s).toMatchObject({
      name: 'Home',
      slug: 'home',
      full_path: '/home',
      parent_uuid: null,
      is_folder: false,
      lang: 'en',
      translations: ['en'],
      version_no: 1,
      status: 'draft',
      has_unpublished_changes: true,
      published_at: null,
    })
    expect(Number.isInteger(s.id)).toBe(true)
    expect(s.uuid).toMatch(/^[0-9a-f-]{36}$/)
    expect(s.content.blocks[0].headline).toBe('Hi')
    expect(types).toEqual(['story.created', 'version.created'])
  })

  test('full_path joins the parent path and the slug', async () => {
    const folder = await createOk({ name: 'Blog', slug: 'blog', is_folder: true })
    const post = await createOk({ name: 'First', slug: 'first-post', parent_uuid: folder.uuid })
    expect(post.full_path).toBe('/blog/first-post')
    expect(post.parent_uuid).toBe(folder.uuid)
  })

  test('a duplicate full_path is 409', async () => {
    await createOk({ name: 'Dup', slug: 'dup' })
    const r = await create({ name: 'Dup again', slug: 'dup' })
    expect(r.status).toBe(409)
    expect(r.body.error).toBe('path_taken')
  })

  test.each(['Upper', 'with space', '../etc', 'a/b', '-lead', '', 'x'.repeat(101), 'é'])('slug %p is rejected with 422', async (slug) => {
    const r = await create({ name: 'Bad', slug })
    expect(r.status).toBe(422)
    expect(r.body.errors.slug).toBeDefined()
  })

  test('an unknown parent is 422 and a lang outside the Space is 422', async () => {
    expect((await create({ name: 'x', slug: 'orphan', parent_uuid: crypto.randomUUID() })).status).toBe(422)
    const r = await create({ name: 'x', slug: 'japanese', lang: 'ja' })
    expect(r.status).toBe(422)
    expect(r.body.errors.lang).toBeDefined()
    const g = await create({ name: 'x', slug: 'garbage-lang', lang: 'not a tag!' })
    expect(g.status).toBe(422)
  })

  test('lang is canonicalised', async () => {
    const s = await createOk({ name: 'Deutsch', slug: 'deutsch', lang: 'DE' })
    expect(s.lang).toBe('de')
  })

  test('Stories nest at most 10 levels deep', async () => {
    let parent: string | null = null
    for (let i = 1; i <= 10; i++) parent = (await createOk({ name: `L${i}`, slug: `level-${i}`, parent_uuid: parent })).uuid
    const r = await create({ name: 'too deep', slug: 'level-11', parent_uuid: parent })
    expect(r.status).toBe(422)
  })

  test('viewers cannot write (403); no token is 401; another tenant sees 404', async () => {
    expect((await create({ name: 'v', slug: 'by-viewer' }, viewer)).status).toBe(403)
    expect((await t.request('POST', `/v1/spaces/${space}/stories`, { body: { name: 'x', slug: 'x', content: doc() } })).status).toBe(401)
    const stranger = (await t.register()).token
    expect((await create({ name: 'x', slug: 'stranger' }, stranger)).status).toBe(404)
  })

  test('a 2 MB body is 413', async () => {
    const big = 'x'.repeat(2 * 1024 * 1024)
    const r = await create({ name: 'Big', slug: 'big', content: doc(block('text', { body: big })) })
    expect(r.status).toBe(413)
  })
})

describe('content validation against blueprints', () => {
  const errorsOf = async (content: unknown) => {
    const r = await create({ name: 'v', slug: `v-${++uidCounter}`, content })
    expect(r.status).toBe(422)
    return r.body.errors as Record<string, string[]>
  }

  test.each([[null], [[]], ['doc'], [{ type: 'page', blocks: [] }], [{ type: 'doc' }], [{ type: 'doc', blocks: {} }]])(
    'content %p that is not {type: doc, blocks: []} is 422',
    async (content) => {
      const errors = await errorsOf(content)
      expect(Object.keys(errors)[0]).toStartWith('content')
    },
  )

  test('errors are keyed by block_path', async () => {
    const errors = await errorsOf(
      doc(
        block('hero', { headline: 'ok' }),
        block('nope'),
        block('hero', { headline: 'x'.repeat(41), theme: 'neon', image: 'not-an-asset', extra: 1 }),
        block('hero', {}),
        block('teaser', { count: '3', live: 'yes', at: 'yesterday', link: { url: 'javascript:alert(1)' } }),
        // Impossible dates are refused, not rolled over into March.
        block('teaser', { at: '2026-02-30' }),
        block('teaser', { at: '2026-04-31T10:00:00Z' }),
        block('teaser', { at: '2028-02-29T10:00:00Z' }),
      ),
    )
    expect(errors['blocks/5/at']).toEqual(['must be an ISO 8601 date or date-time'])
    expect(errors['blocks/6/at']).toEqual(['must be an ISO 8601 date or date-time'])
    expect(errors['blocks/7/at']).toBeUndefined()
    expect(errors['blocks/1/component'][0]).toContain('unknown component')
    expect(errors['blocks/2/headline'][0]).toContain('at most 40')
    expect(errors['blocks/2/theme']).toBeDefined()
    expect(errors['blocks/2/image']).toBeDefined()
    expect(errors['blocks/2/extra']).toBeDefined()
    expect(errors['blocks/3/headline']).toEqual(['is required'])
    expect(errors['blocks/4/count']).toEqual(['must be a number'])
    expect(errors['blocks/4/live']).toBeDefined()
    expect(errors['blocks/4/at']).toBeDefined()
    expect(errors['blocks/4/link/url']).toBeDefined()
  })

  test('nested blocks are validated, with whitelist, is_root and is_nestable', async () => {
    const errors = await errorsOf(
      doc(
        block('section', { body: [block('text', { body: 1 }), block('hero', { headline: 'x' }), block('teaser')] }),
        block('text', { body: 'top-level text is not a root component' }),
      ),
    )
    expect(errors['blocks/0/body/0/body']).toBeDefined()
    expect(errors['blocks/0/body/1/component'][0]).toContain('not allowed here')
    expect(errors['blocks/0/body/2/component']).toBeDefined()
    expect(errors['blocks/1/component'][0]).toContain('top level')
  })

  test('blocks deeper than 8 levels are 422', async () => {
    let inner: Record<string, unknown> = block('text', { body: 'deep' })
    for (let i = 0; i < 9; i++) inner = block('section', { body: [inner] })
    const errors = await errorsOf(doc(inner))
    expect(Object.values(errors).flat().join(' ')).toContain('at most 8 levels')
  })

  test('duplicate _uid and missing _uid are 422', async () => {
    const errors = await errorsOf(doc({ component: 'hero', _uid: 'same', headline: 'a' }, { component: 'hero', _uid: 'same', headline: 'b' }, { component: 'hero', headline: 'c' }))
    expect(errors['blocks/1/_uid']).toBeDefined()
    expect(errors['blocks/2/_uid']).toBeDefined()
  })

  test('valid nested content is accepted', async () => {
    const s = await createOk({
      name: 'Nested',
      slug: 'nested',
      content: doc(
        block('section', { title: 'S', body: [block('text', { body: { type: 'doc', content: [] }, tags: ['a', 'b'] })] }),
        block('teaser', { count: 3, live: true, at: '2026-01-02T03:04:05Z', link: { story_uuid: crypto.randomUUID() } }),
      ),
    })
    expect(s.content.blocks).toHaveLength(2)
  })
})

describe('component blueprints', () => {
  test('list, get and update a blueprint', async () => {
    const list = await t.request('GET', `/v1/spaces/${space}/components`, { token: viewer })
    expect(list.status).toBe(200)
    expect(list.body.data.map((c: { name: string }) => c.name)).toContain('hero')
    const one = await t.request('GET', `/v1/spaces/${space}/components/hero`, { token: viewer })
    expect(one.body.data).toMatchObject({ name: 'hero', is_root: true, is_nestable: true })
    const upd = await t.request('PUT', `/v1/spaces/${space}/components/teaser`, {
      token: editor,
      body: { display_name: 'Teaser card' },
    })
    expect(upd.status).toBe(200)
    expect(upd.body.data.display_name).toBe('Teaser card')
    expect(upd.body.data.schema.count.type).toBe('number')
  })

  test("a blueprint's fields keep the author's order in every answer (the database would sort them by length)", async () => {
    const order = ['headline', 'subheadline_long', 'body', 'cta', 'a', 'image']
    const schema = Object.fromEntries(order.map((k) => [k, { type: 'text' }]))
    const created = await t.request('POST', `/v1/spaces/${space}/components`, { token: editor, body: { name: 'ordered', schema } })
    expect(created.status).toBe(201)
    expect(Object.keys(created.body.data.schema)).toEqual(order)
    const one = await t.request('GET', `/v1/spaces/${space}/components/ordered`, { token: viewer })
    expect(Object.keys(one.body.data.schema)).toEqual(order)
    const list = await t.request('GET', `/v1/spaces/${space}/components`, { token: viewer })
    expect(Object.keys(list.body.data.find((c: { name: string }) => c.name === 'ordered').schema)).toEqual(order)
    // A new schema brings its own order; a change without one keeps it.
    const reordered = ['image', 'a', 'body', 'headline', 'zz_last_but_long_name', 'cta']
    const put = await t.request('PUT', `/v1/spaces/${space}/components/ordered`, {
      token: editor,
      body: { schema: Object.fromEntries(reordered.map((k) => [k, { type: 'text' }])) },
    })
    expect(Object.keys(put.body.data.schema)).toEqual(reordered)
    const renamed = await t.request('PUT', `/v1/spaces/${space}/components/ordered`, { token: editor, body: { display_name: 'Ordered' } })
    expect(Object.keys(renamed.body.data.schema)).toEqual(reordered)
    expect(Object.keys((await t.request('GET', `/v1/spaces/${space}/components/ordered`, { token: viewer })).body.data.schema)).toEqual(reordered)
  })

  test('invalid blueprints are 422 and duplicates 409', async () => {
    const bad = await t.request('POST', `/v1/spaces/${space}/components`, {
      token: editor,
      body: { name: 'bad', schema: { a: { type: 'colour' }, b: { type: 'select' }, _uid: { type: 'text' }, c: { type: 'number', max_length: 3 } } },
    })
    expect(bad.status).toBe(422)
    expect(Object.keys(bad.body.errors).sort()).toEqual(['schema/_uid', 'schema/a/type', 'schema/b/options', 'schema/c/max_length'])
    const badName = await t.request('POST', `/v1/spaces/${space}/components`, { token: editor, body: { name: 'Bad Name' } })
    expect(badName.status).toBe(422)
    const dup = await t.request('POST', `/v1/spaces/${space}/components`, { token: editor, body: { name: 'hero' } })
    expect(dup.status).toBe(409)
    expect((await t.request('POST', `/v1/spaces/${space}/components`, { token: viewer, body: { name: 'x' } })).status).toBe(403)
  })

  test('deleting a blueprint that Stories use is 409; an unused one goes', async () => {
    const used = await t.request('DELETE', `/v1/spaces/${space}/components/text`, { token: editor })
    expect(used.status).toBe(409)
    expect(used.body.error).toBe('component_in_use')
    await t.request('POST', `/v1/spaces/${space}/components`, { token: editor, body: { name: 'unused' } })
    expect((await t.request('DELETE', `/v1/spaces/${space}/components/unused`, { token: editor })).status).toBe(204)
    expect((await t.request('GET', `/v1/spaces/${space}/components/unused`, { token: viewer })).status).toBe(404)
  })
})

describe('reading and listing', () => {
  test('unknown uuids, malformed uuids and another Space’s Story are 404', async () => {
    expect((await get(crypto.randomUUID())).status).toBe(404)
    expect((await get('not-a-uuid')).status).toBe(404)
    const otherSpace = (await t.createSpace(owner)).slug
    const foreign = await create({ name: 'Foreign', slug: 'foreign' }, owner, otherSpace)
    expect(foreign.status).toBe(201)
    expect((await get(foreign.body.data.uuid)).status).toBe(404)
    expect((await put(foreign.body.data.uuid, { name: 'hijack' })).status).toBe(404)
    expect((await action(foreign.body.data.uuid, 'publish')).status).toBe(404)
  })

  test('the listing is paginated with meta.total and filters by status, parent and q', async () => {
    const folder = await createOk({ name: 'News', slug: 'news', is_folder: true })
    let last = ''
    for (let i = 0; i < 5; i++) last = (await createOk({ name: `News item ${i}`, slug: `item-${i}`, parent_uuid: folder.uuid })).uuid
    await action(last, 'publish')
    const page = await t.request('GET', `/v1/spaces/${space}/stories?parent_uuid=${folder.uuid}&per_page=2&page=2`, { token: viewer })
    expect(page.status).toBe(200)
    expect(page.body.meta).toMatchObject({ total: 5, page: 2, per_page: 2 })
    expect(page.body.data.map((s: { slug: string }) => s.slug)).toEqual(['item-2', 'item-3'])
    expect(page.body.data[0].content).toBeUndefined()
    const q = await t.request('GET', `/v1/spaces/${space}/stories?q=news%20item%203`, { token: viewer })
    expect(q.body.data.map((s: { full_path: string }) => s.full_path)).toEqual(['/news/item-3'])
    const published = await t.request('GET', `/v1/spaces/${space}/stories?status=published`, { token: viewer })
    expect(published.body.data.every((s: { status: string }) => s.status === 'published')).toBe(true)
    const all = await t.request('GET', `/v1/spaces/${space}/stories?per_page=100`, { token: viewer })
    expect(new Set(all.body.data.map((s: { status: string }) => s.status))).toEqual(new Set(['draft', 'published']))
    expect((await t.request('GET', `/v1/spaces/${space}/stories?per_page=1000`, { token: viewer })).status).toBe(422)
    expect((await t.request('GET', `/v1/spaces/${space}/stories?status=gone`, { token: viewer })).status).toBe(422)
  })
})

describe('saving, versions and translations', () => {
  test('every save writes a version and increments version_no', async () => {
    const s = await createOk({ name: 'Versioned', slug: 'versioned', content: doc(block('hero', { headline: 'v1' })) })
    const { result: r, types, list } = await eventsAfter(() => put(s.uuid, { content: doc(block('hero', { headline: 'v2' })) }))
    expect(r.status).toBe(200)
    expect(r.body.data.version_no).toBe(2)
    expect(types).toEqual(['version.created'])
    expect(list[0].payload).toEqual({
      story: { id: s.id, uuid: s.uuid, slug: 'versioned', full_path: '/versioned', lang: 'en', version_no: 2, status: 'draft' },
    })
    await put(s.uuid, { name: 'Versioned again' })
    const versions = await t.request('GET', `/v1/spaces/${space}/stories/${s.uuid}/versions`, { token: viewer })
    expect(versions.body.meta.total).toBe(3)
    expect(versions.body.data.map((v: { version_no: number }) => v.version_no)).toEqual([3, 2, 1])
    expect(versions.body.data[0]).toMatchObject({ lang: 'en', name: 'Versioned again' })
    expect(versions.body.data[0].author).toEqual({ user_id: expect.any(Number), name: expect.any(String) })
    const v1 = await t.request('GET', `/v1/spaces/${space}/stories/${s.uuid}/versions/1`, { token: viewer })
    expect(v1.body.data.content.blocks[0].headline).toBe('v1')
    expect((await t.request('GET', `/v1/spaces/${space}/stories/${s.uuid}/versions/99`, { token: viewer })).status).toBe(404)

    const restored = await t.request('POST', `/v1/spaces/${space}/stories/${s.uuid}/versions/1/restore`, { token: editor })
    expect(restored.status).toBe(200)
    expect(restored.body.data.version_no).toBe(4)
    expect(restored.body.data.content.blocks[0].headline).toBe('v1')
    expect(restored.body.data.name).toBe('Versioned')
  })

  test('expected_version_no that is not current is 409 version_conflict', async () => {
    const s = await createOk({ name: 'Concurrent', slug: 'concurrent' })
    expect((await put(s.uuid, { name: 'A', expected_version_no: 1 })).status).toBe(200)
    const r = await put(s.uuid, { name: 'B', expected_version_no: 1 })
    expect(r.status).toBe(409)
    expect(r.body.error).toBe('version_conflict')
  })

  test('a save in another locale writes that translation; GET ?lang reads it', async () => {
    const s = await createOk({ name: 'Welcome', slug: 'welcome', content: doc(block('hero', { headline: 'Welcome' })) })
    const noContent = await put(s.uuid, { lang: 'de', name: 'Willkommen' })
    expect(noContent.status).toBe(422)
    const de = await put(s.uuid, { lang: 'de', name: 'Willkommen', content: doc(block('hero', { headline: 'Willkommen' })) })
    expect(de.status).toBe(200)
    expect(de.body.data).toMatchObject({ lang: 'de', primary_lang: 'en', name: 'Willkommen', translations: ['de', 'en'], version_no: 2 })
    const en = await get(s.uuid)
    expect(en.body.data).toMatchObject({ lang: 'en', name: 'Welcome' })
    expect(en.body.data.content.blocks[0].headline).toBe('Welcome')
    expect((await get(s.uuid, '?lang=de')).body.data.content.blocks[0].headline).toBe('Willkommen')
    expect((await get(s.uuid, '?lang=fr')).status).toBe(404)
    expect((await get(s.uuid, '?lang=%3Cscript%3E')).status).toBe(422)
    expect((await put(s.uuid, { lang: 'ja', content: doc() })).status).toBe(422)
  })
})

describe('moves', () => {
  test('changing slug or parent rewrites the paths of the whole subtree', async () => {
    const a = await createOk({ name: 'A', slug: 'move-a' })
    const b = await createOk({ name: 'B', slug: 'b', parent_uuid: a.uuid })
    const c = await createOk({ name: 'C', slug: 'c', parent_uuid: b.uuid })
    const target = await createOk({ name: 'T', slug: 'target' })
    const r = await put(a.uuid, { slug: 'moved-a', parent_uuid: target.uuid })
    expect(r.status).toBe(200)
    expect(r.body.data.full_path).toBe('/target/moved-a')
    expect((await get(b.uuid)).body.data.full_path).toBe('/target/moved-a/b')
    expect((await get(c.uuid)).body.data.full_path).toBe('/target/moved-a/b/c')
    const back = await put(a.uuid, { parent_uuid: null })
    expect(back.body.data.full_path).toBe('/moved-a')
    expect((await get(c.uuid)).body.data.full_path).toBe('/moved-a/b/c')
  })

  test('a move under itself or a descendant is 422; onto a taken path 409', async () => {
    const a = await createOk({ name: 'A', slug: 'cycle-a' })
    const b = await createOk({ name: 'B', slug: 'b', parent_uuid: a.uuid })
    expect((await put(a.uuid, { parent_uuid: a.uuid })).status).toBe(422)
    expect((await put(a.uuid, { parent_uuid: b.uuid })).status).toBe(422)
    await createOk({ name: 'Taken', slug: 'taken' })
    const r = await put(a.uuid, { slug: 'taken' })
    expect(r.status).toBe(409)
    // The failed move left everything as it was.
    expect((await get(b.uuid)).body.data.full_path).toBe('/cycle-a/b')
  })
})

describe('publishing lifecycle and events', () => {
  test('publish, republish with changes, no-op without, unpublish', async () => {
    const s = await createOk({ name: 'Pub', slug: 'pub', content: doc(block('hero', { headline: 'one' })) })
    const first = await eventsAfter(() => action(s.uuid, 'publish'))
    expect(first.result.status).toBe(200)
    expect(first.result.body.data).toMatchObject({ status: 'published', has_unpublished_changes: false })
    expect(first.result.body.data.published_at).not.toBeNull()
    expect(first.types).toEqual(['story.published'])
    expect(first.list[0].payload).toEqual({
      story: { id: s.id, uuid: s.uuid, slug: 'pub', full_path: '/pub', lang: 'en', version_no: 1, status: 'published' },
    })
    const noop = await eventsAfter(() => action(s.uuid, 'publish'))
    expect(noop.types).toEqual([])
    await put(s.uuid, { content: doc(block('hero', { headline: 'two' })) })
    expect((await get(s.uuid)).body.data.has_unpublished_changes).toBe(true)
    const again = await eventsAfter(() => action(s.uuid, 'publish'))
    expect(again.types).toEqual(['story.published'])
    expect(again.list[0].payload.story).toMatchObject({ version_no: 2 })
    const un = await eventsAfter(() => action(s.uuid, 'unpublish'))
    expect(un.result.body.data.status).toBe('draft')
    expect(un.types).toEqual(['story.unpublished'])
    expect((await eventsAfter(() => action(s.uuid, 'unpublish'))).types).toEqual([])
  })

  test('folders cannot be published', async () => {
    const f = await createOk({ name: 'Folder', slug: 'pub-folder', is_folder: true })
    expect((await action(f.uuid, 'publish')).status).toBe(422)
  })

  test('archive emits unpublished and deleted once; hard delete afterwards emits nothing', async () => {
    const s = await createOk({ name: 'Arch', slug: 'arch' })
    await action(s.uuid, 'publish')
    const arch = await eventsAfter(() => action(s.uuid, 'archive'))
    expect(arch.result.body.data.status).toBe('archived')
    expect(arch.types.sort()).toEqual(['story.deleted', 'story.unpublished'])
    expect((await eventsAfter(() => action(s.uuid, 'archive'))).types).toEqual([])
    expect((await put(s.uuid, { name: 'edit' })).status).toBe(409)
    expect((await action(s.uuid, 'publish')).status).toBe(409)
    const listed = await t.request('GET', `/v1/spaces/${space}/stories?q=arch`, { token: viewer })
    expect(listed.body.data.find((x: { uuid: string }) => x.uuid === s.uuid)).toBeUndefined()
    const archived = await t.request('GET', `/v1/spaces/${space}/stories?status=archived`, { token: viewer })
    expect(archived.body.data.find((x: { uuid: string }) => x.uuid === s.uuid)).toBeDefined()
    const del = await eventsAfter(() => t.request('DELETE', `/v1/spaces/${space}/stories/${s.uuid}`, { token: editor }))
    expect(del.result.status).toBe(204)
    expect(del.types).toEqual([])
    expect((await get(s.uuid)).status).toBe(404)
  })

  test('hard delete of a published Story emits unpublished and deleted; versions go with it', async () => {
    const s = await createOk({ name: 'Del', slug: 'del' })
    await action(s.uuid, 'publish')
    const del = await eventsAfter(() => t.request('DELETE', `/v1/spaces/${space}/stories/${s.uuid}`, { token: editor }))
    expect(del.types.sort()).toEqual(['story.deleted', 'story.unpublished'])
    expect(del.list.find((e) => e.type === 'story.deleted')!.payload.story).toMatchObject({ uuid: s.uuid, status: 'deleted' })
    expect((await t.request('GET', `/v1/spaces/${space}/stories/${s.uuid}/versions`, { token: viewer })).status).toBe(404)
    const rows = await t.kernel.db.query<{ n: number }>('select count(*)::int as n from story_versions where story_id = $1', [s.id])
    expect(rows[0].n).toBe(0)
  })

  test('a Story with children cannot be hard-deleted (409)', async () => {
    const p = await createOk({ name: 'Parent', slug: 'del-parent' })
    await createOk({ name: 'Child', slug: 'child', parent_uuid: p.uuid })
    const r = await t.request('DELETE', `/v1/spaces/${space}/stories/${p.uuid}`, { token: editor })
    expect(r.status).toBe(409)
    expect(r.body.error).toBe('has_children')
  })
})

describe('children and tree', () => {
  test('children to a depth, and the whole tree paginated by root', async () => {
    const sub = (await t.createSpace(owner)).slug
    const mk = async (name: string, parent?: string) => {
      const r = await create({ name, slug: name, parent_uuid: parent ?? null }, owner, sub)
      expect(r.status).toBe(201)
      return r.body.data.uuid as string
    }
    const r1 = await mk('r1')
    const a = await mk('a', r1)
    await mk('a1', a)
    await mk('b', r1)
    await mk('r2')
    await mk('r3')
    const kids = await t.request('GET', `/v1/spaces/${sub}/stories/${r1}/children`, { token: owner })
    expect(kids.status).toBe(200)
    expect(kids.body.data.map((n: { slug: string }) => n.slug)).toEqual(['a', 'b'])
    expect(kids.body.data[0].has_children).toBe(true)
    expect(kids.body.data[1].has_children).toBe(false)
    const deep = await t.request('GET', `/v1/spaces/${sub}/stories/${r1}/children?depth=2`, { token: owner })
    expect(deep.body.data[0].children.map((n: { full_path: string }) => n.full_path)).toEqual(['/r1/a/a1'])
    expect((await t.request('GET', `/v1/spaces/${sub}/stories/${r1}/children?depth=0`, { token: owner })).status).toBe(422)
    expect((await t.request('GET', `/v1/spaces/${sub}/stories/${crypto.randomUUID()}/children`, { token: owner })).status).toBe(404)

    const tree = await t.request('GET', `/v1/spaces/${sub}/stories/tree?per_page=2`, { token: owner })
    expect(tree.status).toBe(200)
    expect(tree.body.meta).toMatchObject({ total: 3, page: 1, per_page: 2 })
    expect(tree.body.data.map((n: { slug: string }) => n.slug)).toEqual(['r1', 'r2'])
    expect(tree.body.data[0].children[0].children[0].slug).toBe('a1')
    const page2 = await t.request('GET', `/v1/spaces/${sub}/stories/tree?per_page=2&page=2`, { token: owner })
    expect(page2.body.data.map((n: { slug: string }) => n.slug)).toEqual(['r3'])
  })
})

describe('bulk', () => {
  test('per-item results; one failure does not undo the others', async () => {
    const a = await createOk({ name: 'Bulk A', slug: 'bulk-a' })
    const b = await createOk({ name: 'Bulk B', slug: 'bulk-b' })
    const folder = await createOk({ name: 'Bulk F', slug: 'bulk-f', is_folder: true })
    const missing = crypto.randomUUID()
    const r = await t.request('POST', `/v1/spaces/${space}/stories/bulk`, {
      token: editor,
      body: { action: 'publish', uuids: [a.uuid, missing, folder.uuid, b.uuid] },
    })
    expect(r.status).toBe(200)
    expect(r.body.meta).toEqual({ succeeded: 2, failed: 2 })
    expect(r.body.data[0]).toMatchObject({ uuid: a.uuid, ok: true, status: 'published' })
    expect(r.body.data[1]).toMatchObject({ uuid: missing, ok: false, status_code: 404, error: 'not_found' })
    expect(r.body.data[2]).toMatchObject({ uuid: folder.uuid, ok: false, status_code: 422 })
    expect(r.body.data[3]).toMatchObject({ ok: true })
    expect((await get(b.uuid)).body.data.status).toBe('published')
  })

  test('bulk move and bulk delete (children before parents)', async () => {
    const dest = await createOk({ name: 'Dest', slug: 'bulk-dest', is_folder: true })
    const x = await createOk({ name: 'X', slug: 'bulk-x' })
    const y = await createOk({ name: 'Y', slug: 'bulk-y' })
    const mv = await t.request('POST', `/v1/spaces/${space}/stories/bulk`, {
      token: editor,
      body: { action: 'move', uuids: [x.uuid, y.uuid, dest.uuid], parent_uuid: dest.uuid },
    })
    expect(mv.body.data.map((d: { ok: boolean }) => d.ok)).toEqual([true, true, false])
    expect(mv.body.data[0].full_path).toBe('/bulk-dest/bulk-x')
    const noParent = await t.request('POST', `/v1/spaces/${space}/stories/bulk`, { token: editor, body: { action: 'move', uuids: [x.uuid] } })
    expect(noParent.status).toBe(422)
    const del = await t.request('POST', `/v1/spaces/${space}/stories/bulk`, {
      token: editor,
      body: { action: 'delete', uuids: [dest.uuid, x.uuid, y.uuid] },
    })
    expect(del.body.meta).toEqual({ succeeded: 3, failed: 0 })
    expect(del.body.data.map((d: { uuid: string }) => d.uuid)).toEqual([dest.uuid, x.uuid, y.uuid])
  })

  test('bulk needs the editor role and 1 to 100 uuids', async () => {
    expect((await t.request('POST', `/v1/spaces/${space}/stories/bulk`, { token: viewer, body: { action: 'publish', uuids: [crypto.randomUUID()] } })).status).toBe(403)
    expect((await t.request('POST', `/v1/spaces/${space}/stories/bulk`, { token: editor, body: { action: 'publish', uuids: [] } })).status).toBe(422)
    expect((await t.request('POST', `/v1/spaces/${space}/stories/bulk`, { token: editor, body: { action: 'explode', uuids: ['x'] } })).status).toBe(422)
  })
})

describe('locales', () => {
  test('list, add with fallback, validate, delete', async () => {
    const s = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })).slug
    const list = await t.request('GET', `/v1/spaces/${s}/locales`, { token: owner })
    expect(list.body.data.map((l: { code: string }) => l.code)).toEqual(['en', 'de'])
    expect(list.body.data[0].is_default).toBe(true)
    const add = await t.request('POST', `/v1/spaces/${s}/locales`, { token: owner, body: { code: 'de-at', fallback: 'de' } })
    expect(add.status).toBe(201)
    expect(add.body.data).toMatchObject({ code: 'de-AT', fallback: 'de', is_default: false })
    expect((await t.request('POST', `/v1/spaces/${s}/locales`, { token: owner, body: { code: 'de-AT' } })).status).toBe(409)
    expect((await t.request('POST', `/v1/spaces/${s}/locales`, { token: owner, body: { code: 'not a tag' } })).status).toBe(422)
    expect((await t.request('POST', `/v1/spaces/${s}/locales`, { token: owner, body: { code: 'fr', fallback: 'it' } })).status).toBe(422)
    expect((await t.request('DELETE', `/v1/spaces/${s}/locales/en`, { token: owner })).status).toBe(409)
    expect((await t.request('DELETE', `/v1/spaces/${s}/locales/de`, { token: owner })).status).toBe(204)
    const after = await t.request('GET', `/v1/spaces/${s}/locales`, { token: owner })
    expect(after.body.data).toEqual([
      { code: 'en', fallback: null, is_default: true, position: 0 },
      { code: 'de-AT', fallback: null, is_default: false, position: 2 },
    ])
    expect((await t.request('DELETE', `/v1/spaces/${s}/locales/de`, { token: owner })).status).toBe(404)
  })
})

describe('locale settings', () => {
  test('PATCH moves a locale and changes its fallback; cycles, strangers and bad places are 422 naming the field', async () => {
    const s = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de', 'fr'] })).slug
    const patch = (code: string, body: unknown, token = owner) => t.request('PATCH', `/v1/spaces/${s}/locales/${code}`, { token, body })
    const codes = async () => (await t.request('GET', `/v1/spaces/${s}/locales`, { token: owner })).body.data.map((l: { code: string }) => l.code)

    const moved = await eventsAfter(() => patch('fr', { position: 0 }))
    expect(moved.result.status).toBe(200)
    expect(moved.result.body.data).toEqual({ code: 'fr', fallback: null, is_default: false, position: 0 })
    expect(moved.types).toContain('space.locales_changed')
    expect(await codes()).toEqual(['fr', 'en', 'de'])
    expect((await patch('fr', { position: 2 })).body.data.position).toBe(2)
    expect(await codes()).toEqual(['en', 'de', 'fr'])
    const positions = (await t.request('GET', `/v1/spaces/${s}/locales`, { token: owner })).body.data.map((l: { position: number }) => l.position)
    expect(positions).toEqual([0, 1, 2])

    const fb = await eventsAfter(() => patch('fr', { fallback: 'de' }))
    expect(fb.result.body.data).toMatchObject({ code: 'fr', fallback: 'de', position: 2 })
    expect(fb.types).toContain('space.locales_changed')
    // de → fr would close the circle fr → de → fr.
    const cycle = await patch('de', { fallback: 'fr' })
    expect(cycle.status).toBe(422)
    expect(Object.keys(cycle.body.errors)).toEqual(['fallback'])
    expect((await patch('de', { fallback: 'de' })).status).toBe(422)
    const stranger = await patch('de', { fallback: 'it' })
    expect(stranger.status).toBe(422)
    expect(JSON.stringify(stranger.body)).toContain('fallback')
    const far = await patch('de', { position: 3 })
    expect(far.status).toBe(422)
    expect(JSON.stringify(far.body)).toContain('position')
    expect((await patch('de', { position: -1 })).status).toBe(422)
    expect((await patch('de', { position: 1.5 })).status).toBe(422)
    expect((await patch('it', { position: 0 })).status).toBe(404)
    expect((await patch('not a tag', { position: 0 })).status).toBe(404)

    // Removing the fallback; a no-op change emits nothing.
    expect((await patch('fr', { fallback: null })).body.data.fallback).toBeNull()
    const same = await eventsAfter(() => patch('fr', { fallback: null, position: 2 }))
    expect(same.result.status).toBe(200)
    expect(same.types).not.toContain('space.locales_changed')
    expect(await codes()).toEqual(['en', 'de', 'fr'])
  })

  test('only admins change locales', async () => {
    expect((await t.request('PATCH', `/v1/spaces/${space}/locales/en`, { token: editor, body: { position: 0 } })).status).toBe(403)
    expect((await t.request('PATCH', `/v1/spaces/${space}/locales/en`, { token: viewer, body: { position: 0 } })).status).toBe(403)
    expect((await t.request('PATCH', `/v1/spaces/${space}/locales/en`, { body: { position: 0 } })).status).toBe(401)
  })
})

describe('listing totals', () => {
  test('meta.total stays exact through creates, publishes, archives and deletes', async () => {
    const real = async (where: string) =>
      (await t.kernel.db.query<{ n: number }>(`select count(*)::int as n from stories s join spaces sp on sp.id = s.space_id where sp.slug = $1 and ${where}`, [space]))[0].n
    const total = async (query: string) => (await t.request('GET', `/v1/spaces/${space}/stories?per_page=1${query}`, { token: viewer })).body.meta.total
    expect(await total('')).toBe(await real(`s.status <> 'archived'`))
    for (const status of ['draft', 'published', 'archived']) expect(await total(`&status=${status}`)).toBe(await real(`s.status = '${status}'`))
    expect(await total('')).toBeGreaterThan(20)
  })
})

describe('published snapshots for other modules', () => {
  test('only published Stories, every locale, paged by id; drafts never leak', async () => {
    const s = await createOk({ name: 'Indexed', slug: 'indexed', content: doc(block('hero', { headline: 'Public' })) })
    await put(s.uuid, { lang: 'fr', content: doc(block('hero', { headline: 'Publique' })) })
    await action(s.uuid, 'publish')
    await put(s.uuid, { content: doc(block('hero', { headline: 'Secret draft' })) })
    const [snap] = await publishedSnapshots(t.kernel, { storyIds: [s.id] })
    expect(snap).toMatchObject({ uuid: s.uuid, full_path: '/indexed', status: 'published', primary_lang: 'en' })
    expect(snap.locales.map((l) => [l.lang, l.content.blocks[0].headline])).toEqual([
      ['en', 'Public'],
      ['fr', 'Publique'],
    ])
    const page = await publishedSnapshots(t.kernel, { limit: 2 })
    expect(page.length).toBeLessThanOrEqual(2)
    const next = await publishedSnapshots(t.kernel, { afterId: page[page.length - 1].id, limit: 1000 })
    expect(next.every((x) => x.id > page[page.length - 1].id && x.status === 'published')).toBe(true)
    expect(await publishedSnapshots(t.kernel, { storyIds: [] })).toEqual([])
  })
})
