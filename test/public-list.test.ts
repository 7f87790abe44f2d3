import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { storiesModule } from '../src/modules/stories'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(120_000)

let t: TestApp
let owner: string
let space: string
let editor: string

const doc = (...blocks: Record<string, unknown>[]) => ({ type: 'doc', blocks })
let uid = 0
const page = (headline: string, more: Record<string, unknown> = {}) => ({ component: 'page', _uid: `p${++uid}`, headline, ...more })

async function story(body: Record<string, unknown>, s = space) {
  const r = await t.request('POST', `/v1/spaces/${s}/stories`, { token: editor, body: { content: doc(page(String(body.name))), ...body } })
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`)
  return r.body.data as { uuid: string; id: number; full_path: string }
}
const put = (uuid: string, body: Record<string, unknown>) => t.request('PUT', `/v1/spaces/${space}/stories/${uuid}`, { token: editor, body })
const act = async (uuid: string, what: string) => {
  const r = await t.request(what === 'delete' ? 'DELETE' : 'POST', `/v1/spaces/${space}/stories/${uuid}${what === 'delete' ? '' : `/${what}`}`, { token: editor })
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text}`)
  return r
}
const list = (query = '', opts: { headers?: Record<string, string>; token?: string } = {}) => t.request('GET', `/v1/cdn/${space}/stories${query}`, opts)
const changes = (query = '') => t.request('GET', `/v1/cdn/${space}/changes${query}`)

beforeAll(async () => {
  t = await testApp()
  owner = (await t.register()).token
  space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })).slug
  editor = (await t.spaceToken(owner, space, 'editor')).token
  const bp = (body: Record<string, unknown>) => t.request('POST', `/v1/spaces/${space}/components`, { token: editor, body })
  await bp({ name: 'teaser', is_root: false, is_nestable: true, schema: { title: { type: 'text' }, target: { type: 'link' } } })
  await bp({
    name: 'page',
    is_root: true,
    schema: {
      headline: { type: 'text' },
      body: { type: 'textarea' },
      link: { type: 'link' },
      author: { type: 'text' },
      related: { type: 'tags' },
      teasers: { type: 'blocks', component_whitelist: ['teaser'] },
    },
  })
  await bp({ name: 'post', is_root: true, schema: { headline: { type: 'text' } } })
}, 180_000)

afterAll(async () => {
  await t?.close()
}, 180_000)

describe('GET /cdn/{space}/stories', () => {
  let a: { uuid: string }, b: { uuid: string }, c: { uuid: string }
  beforeAll(async () => {
    const blog = await story({ name: 'Blog', slug: 'blog', is_folder: true })
    a = await story({ name: 'Alpha', slug: 'alpha', parent_uuid: blog.uuid })
    b = await story({ name: 'Beta', slug: 'beta', parent_uuid: blog.uuid, content: doc({ component: 'post', _uid: 'x1', headline: 'Beta' }) })
    c = await story({ name: 'Gamma', slug: 'gamma' })
    await put(a.uuid, { lang: 'de', name: 'Alpha DE', content: doc(page('Alpha auf Deutsch')) })
    for (const s of [c, b, a]) {
      t.clock.advance(1000)
      await act(s.uuid, 'publish')
    }
    await story({ name: 'Draft only', slug: 'draft-only', parent_uuid: blog.uuid })
  })

  test('published Stories only, each exactly as the single read serves it, with the same headers', async () => {
    const r = await list()
    expect(r.status).toBe(200)
    expect(r.body.data.map((s: { full_path: string }) => s.full_path)).toEqual(['/blog/alpha', '/blog/beta', '/gamma'])
    expect(r.body.meta).toEqual({ cv: expect.any(Number), per_page: 25, next_cursor: null })
    const single = await t.request('GET', `/v1/cdn/${space}/stories/blog/alpha`)
    expect(r.body.data[0]).toEqual({ ...single.body.data, meta: single.body.meta })
    expect(r.body.meta.cv).toBe(single.body.meta.cv)
    for (const h of ['cache-control', 'vary', 'content-type']) expect(r.headers.get(h)).toBe(single.headers.get(h))
    expect(r.headers.get('etag')).toMatch(/^"[\w-]{27}"$/)
    const again = await list('', { headers: { 'If-None-Match': r.headers.get('etag')! } })
    expect(again.status).toBe(304)
    expect(again.headers.get('etag')).toBe(r.headers.get('etag'))
    expect(again.headers.get('vary')).toBe(single.headers.get('vary'))
  })

  test('a list read fills the same in-process cache the single read answers from', async () => {
    const cache = t.state(storiesModule).cache
    cache.clear()
    expect(cache.stats.stories).toBe(0)
    await list('?starts_with=blog/')
    expect(cache.stats.stories).toBe(2)
    // The single read now answers from memory: the fast path serves it synchronously (no load).
    const before = cache.stats.stories
    expect((await t.request('GET', `/v1/cdn/${space}/stories/blog/beta`)).status).toBe(200)
    expect(cache.stats.stories).toBe(before)
  })

  test('lang with the fallback chain, per Story', async () => {
    const r = await list('?lang=de')
    expect(r.body.data.map((s: { lang: string; name: string }) => [s.lang, s.name])).toEqual([
      ['de', 'Alpha DE'],
      ['en', 'Beta'],
      ['en', 'Gamma'],
    ])
    expect((await list('?lang=no_such!')).status).toBe(422)
  })

  test('filters: starts_with, by_uuids, by_paths, content_type, is_folder', async () => {
    const paths = async (q: string) => (await list(q)).body.data.map((s: { full_path: string }) => s.full_path)
    expect(await paths('?starts_with=blog/')).toEqual(['/blog/alpha', '/blog/beta'])
    expect(await paths('?starts_with=/gam')).toEqual(['/gamma'])
    expect(await paths(`?by_uuids=${c.uuid},${a.uuid.toUpperCase()}`)).toEqual(['/blog/alpha', '/gamma'])
    expect(await paths('?by_paths=gamma,/blog/beta,nowhere')).toEqual(['/blog/beta', '/gamma'])
    expect(await paths('?content_type=post')).toEqual(['/blog/beta'])
    expect(await paths('?content_type=page')).toEqual(['/blog/alpha', '/gamma'])
    expect(await paths('?is_folder=true')).toEqual([])
    expect(await paths('?is_folder=false')).toEqual(['/blog/alpha', '/blog/beta', '/gamma'])
  })

  test('sort_by: name, published_at, first_published_at, full_path, asc and desc', async () => {
    const names = async (q: string) => (await list(q)).body.data.map((s: { name: string }) => s.name)
    expect(await names('?sort_by=full_path:desc')).toEqual(['Gamma', 'Beta', 'Alpha'])
    expect(await names('?sort_by=name:desc')).toEqual(['Gamma', 'Beta', 'Alpha'])
    expect(await names('?sort_by=published_at:asc')).toEqual(['Gamma', 'Beta', 'Alpha'])
    // Re-publishing moves published_at, not first_published_at.
    t.clock.advance(1000)
    await put(c.uuid, { content: doc(page('Gamma again')) })
    await act(c.uuid, 'publish')
    expect(await names('?sort_by=published_at:desc')).toEqual(['Gamma', 'Alpha', 'Beta'])
    expect(await names('?sort_by=first_published_at:desc')).toEqual(['Alpha', 'Beta', 'Gamma'])
    expect((await list('?sort_by=random')).status).toBe(422)
  })

  test('excluding_fields leaves fields out of the top-level blocks', async () => {
    const r = await list('?excluding_fields=headline&by_paths=gamma')
    expect(r.body.data[0].content.blocks[0]).toEqual({ component: 'page', _uid: expect.any(String) })
    expect((await list('?excluding_fields=Bad-Field')).status).toBe(422)
  })

  test('version=draft lists drafts for a preview token or a bearer, privately; others get 401', async () => {
    expect((await list('?version=draft')).status).toBe(401)
    const pt = (await t.request('POST', `/v1/spaces/${space}/preview-tokens`, { token: owner, body: {} })).body.data.token
    const r = await list('?version=draft&starts_with=blog/', { token: pt })
    expect(r.status).toBe(200)
    expect(r.body.data.map((s: { full_path: string }) => s.full_path)).toEqual(['/blog/alpha', '/blog/beta', '/blog/draft-only'])
    expect(r.body.data[2].published_at).toBeNull()
    // Folders are never published; among drafts they are listed (and filtered by is_folder).
    const folders = await list('?version=draft&is_folder=true', { token: pt })
    expect(folders.body.data.map((s: { full_path: string }) => s.full_path)).toEqual(['/blog'])
    expect(r.headers.get('cache-control')).toBe('private, no-store')
    const viewer = (await t.spaceToken(owner, space, 'viewer')).token
    expect((await list('?version=draft&is_folder=false&starts_with=blog/', { token: viewer })).body.data).toHaveLength(3)
  })

  test('hostile parameters answer 422 naming them', async () => {
    for (const [q, field] of [
      ['?cursor=%%%', 'cursor'],
      [`?cursor=${Buffer.from('["full_path:asc","published",null,1]').toString('base64url')}`, 'cursor'],
      [`?cursor=${Buffer.from('["name:asc","published","x","/a"]').toString('base64url')}`, 'cursor'],
      [`?sort_by=published_at:asc&cursor=${Buffer.from('["published_at:asc","published","yesterday","/a"]').toString('base64url')}`, 'cursor'],
      ['?by_uuids=nope', 'by_uuids'],
      ['?by_paths=../etc', 'by_paths'],
      ['?per_page=101', 'per_page'],
      ['?per_page=0', 'per_page'],
      ['?starts_with=%2E%2E', 'starts_with'],
      ['?resolve_relations=page', 'resolve_relations'],
      ['?content_type=Nope!', 'content_type'],
    ] as const) {
      const r = await list(q)
      expect([r.status, Object.keys(r.body.errors ?? {})]).toEqual([422, [field]])
    }
    expect((await t.request('GET', '/v1/cdn/no-such-space/stories')).status).toBe(404)
  })
})

describe('cursor paging through 10,000 Stories while others are published and unpublished', () => {
  const N = 10_000
  let spaceId: number
  let churn: { uuid: string }[] = []

  beforeAll(async () => {
    const [row] = await t.kernel.db.query<{ id: number; tenant_id: number }>('select id from spaces where slug = $1', [space])
    spaceId = row.id
    // Seeded in two statements (10,000 creates and publishes through HTTP would take minutes on the embedded database):
    // Stories under /bulk/ with their published snapshot, as publish leaves them.
    await t.kernel.db.query(
      `insert into stories (uuid, space_id, lang, name, slug, full_path, depth, is_folder, status, version_no, has_unpublished_changes,
         published_at, first_published_at, created_at, updated_at)
       select gen_random_uuid(), $1, 'en', 'Bulk ' || lpad(i::text, 5, '0'), 'b' || lpad(i::text, 5, '0'), '/bulk/b' || lpad(i::text, 5, '0'), 2, false,
         'published', 1, false, now() - (i % 97) * interval '1 second', now() - (i % 89) * interval '1 second', now(), now()
       from generate_series(1, $2::int) i`,
      [spaceId, N],
    )
    await t.kernel.db.query(
      `insert into story_published (story_id, lang, name, content, version_no, published_at)
       select id, 'en', name, jsonb_build_object('type', 'doc', 'blocks', jsonb_build_array(jsonb_build_object('component', 'post', '_uid', 'u' || id, 'headline', name))),
         1, published_at
       from stories where space_id = $1 and full_path like '/bulk/%'`,
      [spaceId],
    )
    for (let i = 0; i < 30; i++) churn.push(await story({ name: `Churn ${i}`, slug: `churn-${i}` }))
    await t.request('POST', `/v1/spaces/${space}/stories/bulk`, { token: editor, body: { action: 'publish', uuids: churn.filter((_, i) => i % 2).map((s) => s.uuid) } })
  })

  async function pageThrough(query: string) {
    const seen = new Map<string, number>()
    let cursor: string | null = ''
    let pages = 0
    while (cursor !== null) {
      const r = await list(`?per_page=100${query}${cursor ? `&cursor=${cursor}` : ''}`)
      expect(r.status).toBe(200)
      for (const s of r.body.data as { uuid: string; full_path: string }[]) seen.set(s.full_path, (seen.get(s.full_path) ?? 0) + 1)
      cursor = r.body.meta.next_cursor
      // Meanwhile: publish some, unpublish others (outside and inside the range being paged).
      const x = churn[pages % churn.length]
      await t.request('POST', `/v1/spaces/${space}/stories/${x.uuid}/${pages % 2 ? 'unpublish' : 'publish'}`, { token: editor })
      pages++
    }
    return { seen, pages }
  }

  test('by full path: every Story that stays published exactly once, none twice', async () => {
    const { seen, pages } = await pageThrough('&starts_with=/bulk/')
    expect(pages).toBe(N / 100)
    expect(seen.size).toBe(N)
    expect([...seen.values()].every((n) => n === 1)).toBe(true)
    for (let i = 1; i <= N; i++) expect(seen.get(`/bulk/b${String(i).padStart(5, '0')}`)).toBe(1)
  })

  test('by first_published_at descending (ties by path): the same', async () => {
    const { seen } = await pageThrough('&starts_with=/bulk/&sort_by=first_published_at:desc')
    expect(seen.size).toBe(N)
    expect([...seen.values()].every((n) => n === 1)).toBe(true)
  })
})

describe('GET /cdn/{space}/changes and meta.cv', () => {
  let feedSpace: string
  const feed = (q = '') => t.request('GET', `/v1/cdn/${feedSpace}/changes${q}`)

  test('published, unpublished, moved (the whole subtree) and deleted, after a cursor, latest per Story', async () => {
    feedSpace = (await t.createSpace(owner)).slug
    const ed = (await t.spaceToken(owner, feedSpace, 'editor')).token
    await t.request('POST', `/v1/spaces/${feedSpace}/components`, { token: ed, body: { name: 'page', schema: { headline: { type: 'text' } } } })
    const mk = async (body: Record<string, unknown>) =>
      (await t.request('POST', `/v1/spaces/${feedSpace}/stories`, { token: ed, body: { content: doc(page('x')), ...body } })).body.data as { uuid: string }
    const go = (uuid: string, what: string, method = 'POST') =>
      t.request(method, `/v1/spaces/${feedSpace}/stories/${uuid}${what ? `/${what}` : ''}`, { token: ed })

    const start = await feed()
    expect(start.body).toEqual({ data: [], meta: { cv: 0, next_cursor: '0', has_more: false } })
    const folder = await mk({ name: 'Docs', slug: 'docs', is_folder: true })
    const one = await mk({ name: 'One', slug: 'one', parent_uuid: folder.uuid })
    const two = await mk({ name: 'Two', slug: 'two', parent_uuid: folder.uuid })
    const three = await mk({ name: 'Three', slug: 'three' })
    await go(one.uuid, 'publish')
    await go(two.uuid, 'publish')
    await go(three.uuid, 'publish')
    const read = await t.request('GET', `/v1/cdn/${feedSpace}/stories/three`)
    expect(read.body.meta.cv).toBe(3)
    const after3 = await feed()
    expect(after3.body.data.map((c: { kind: string; full_path: string; cv: number }) => [c.kind, c.full_path, c.cv])).toEqual([
      ['published', '/docs/one', 1],
      ['published', '/docs/two', 2],
      ['published', '/three', 3],
    ])
    expect(after3.body.meta).toEqual({ cv: 3, next_cursor: '3', has_more: false })

    // Draft saves change nothing public: no change, same cv.
    await t.request('PUT', `/v1/spaces/${feedSpace}/stories/${three.uuid}`, { token: ed, body: { content: doc(page('draft')) } })
    expect((await feed('?since=3')).body.data).toEqual([])

    await t.request('PUT', `/v1/spaces/${feedSpace}/stories/${folder.uuid}`, { token: ed, body: { slug: 'guides' } })
    await go(two.uuid, 'unpublish')
    await go(three.uuid, 'archive')
    const since = await feed('?since=3')
    expect(since.body.data.map((c: Record<string, unknown>) => [c.kind, c.uuid, c.full_path, c.from_path])).toEqual([
      ['moved', one.uuid, '/guides/one', '/docs/one'],
      ['unpublished', two.uuid, '/guides/two', undefined],
      ['deleted', three.uuid, '/three', undefined],
    ])
    expect(since.body.meta.cv).toBe(7)
    // The single read's cv moved with them, and so did its body and ETag.
    const moved = await t.request('GET', `/v1/cdn/${feedSpace}/stories/guides/one`)
    expect(moved.body.meta.cv).toBe(7)

    // Paging: per_page and has_more; the last page's cursor is the head.
    const p1 = await feed('?per_page=2')
    expect(p1.body.data).toHaveLength(2)
    expect(p1.body.meta.has_more).toBe(true)
    const p2 = await feed(`?per_page=2&since=${p1.body.meta.next_cursor}`)
    expect(p2.body.meta).toEqual({ cv: 7, next_cursor: '7', has_more: false })
    // From the start: the latest change of each Story only.
    expect((await feed()).body.data.map((c: { uuid: string }) => c.uuid).sort()).toEqual([one.uuid, two.uuid, three.uuid].sort())

    // Deleting a published Story.
    await go(one.uuid, 'publish')
    await go(one.uuid, '', 'DELETE')
    const last = await feed('?since=7')
    expect(last.body.data.map((c: { kind: string }) => c.kind)).toEqual(['deleted'])
    expect(last.headers.get('etag')).toMatch(/^"/)
    expect((await t.request('GET', `/v1/cdn/${feedSpace}/changes?since=7`, { headers: { 'If-None-Match': last.headers.get('etag')! } })).status).toBe(304)
  })

  test('the cursor holds on another instance (the numbers live in the database)', async () => {
    const other = await t.instance()
    try {
      const here = await feed('?since=2')
      const there = await other.get(`/v1/cdn/${feedSpace}/changes?since=2`)
      expect(there.body).toEqual(here.body)
    } finally {
      await other.close()
    }
  })

  test('hostile cursors answer 422', async () => {
    for (const q of ['?since=-1', '?since=abc', '?since=1e3', '?since=99999999999999999999', '?per_page=0', '?per_page=1001']) {
      expect((await feed(q)).status).toBe(422)
    }
    expect((await t.request('GET', '/v1/cdn/no-such/changes')).status).toBe(404)
  })

  test('any publish in the Space moves meta.cv, the body and the ETag of every Story read', async () => {
    const x = await story({ name: 'Cv one', slug: 'cv-one' })
    const y = await story({ name: 'Cv two', slug: 'cv-two' })
    await act(x.uuid, 'publish')
    const before = await t.request('GET', `/v1/cdn/${space}/stories/cv-one`)
    await act(y.uuid, 'publish')
    const after = await t.request('GET', `/v1/cdn/${space}/stories/cv-one`)
    expect(after.body.meta.cv).toBeGreaterThan(before.body.meta.cv)
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'))
    expect(after.body.data).toEqual(before.body.data)
  })
})

describe('resolve_links and resolve_relations', () => {
  test('links to Stories get the current full_path and name; relations land in rels, never inline', async () => {
    const target = await story({ name: 'Target', slug: 'target' })
    const hidden = await story({ name: 'Hidden', slug: 'hidden' })
    const authorStory = await story({ name: 'Ann Author', slug: 'ann' })
    await act(target.uuid, 'publish')
    await act(authorStory.uuid, 'publish')
    const content = doc(
      page('With links', {
        link: { story_uuid: target.uuid },
        author: authorStory.uuid,
        related: [target.uuid, hidden.uuid],
        teasers: [{ component: 'teaser', _uid: 't1', title: 'T', target: { story_uuid: hidden.uuid } }],
      }),
    )
    const src = await story({ name: 'Source', slug: 'source', content })
    await act(src.uuid, 'publish')

    const plain = await t.request('GET', `/v1/cdn/${space}/stories/source`)
    expect(plain.body.data.content.blocks[0].link).toEqual({ story_uuid: target.uuid })
    expect(plain.body.rels).toBeUndefined()

    const r = await t.request('GET', `/v1/cdn/${space}/stories/source?resolve_links=story&resolve_relations=page.author,page.related`)
    expect(r.status).toBe(200)
    const block = r.body.data.content.blocks[0]
    expect(block.link).toEqual({ story_uuid: target.uuid, full_path: '/target', name: 'Target' })
    expect(block.teasers[0].target).toEqual({ story_uuid: hidden.uuid, full_path: null, name: null })
    // The relation fields keep their uuids; the Stories are in rels (published ones only).
    expect(block.author).toBe(authorStory.uuid)
    expect(r.body.rels.map((s: { full_path: string }) => s.full_path).sort()).toEqual(['/ann', '/target'])
    expect(r.body.rels[0].meta.cv).toBe(r.body.meta.cv)
    expect(r.headers.get('etag')).not.toBe(plain.headers.get('etag'))
    expect(r.headers.get('cache-control')).toBe(plain.headers.get('cache-control'))
    const again = await t.request('GET', `/v1/cdn/${space}/stories/source?resolve_links=story&resolve_relations=page.author,page.related`, {
      headers: { 'If-None-Match': r.headers.get('etag')! },
    })
    expect(again.status).toBe(304)

    // On the list: rels collected over the page.
    const l = await list('?by_paths=source&resolve_relations=page.author&resolve_links=story')
    expect(l.body.data[0].content.blocks[0].link.full_path).toBe('/target')
    expect(l.body.rels.map((s: { uuid: string }) => s.uuid)).toEqual([authorStory.uuid])
  })

  test('at most 50 Stories are resolved per read; the other uuids are listed in meta.rel_uuids', async () => {
    const targets = (await list('?starts_with=/bulk/&per_page=60')).body.data.map((s: { uuid: string }) => s.uuid)
    expect(targets).toHaveLength(60)
    const src = await story({ name: 'Many', slug: 'many', content: doc(page('Many', { related: targets })) })
    await act(src.uuid, 'publish')
    const r = await t.request('GET', `/v1/cdn/${space}/stories/many?resolve_relations=page.related&excluding_fields=body`)
    expect(r.body.rels).toHaveLength(50)
    expect(r.body.meta.rel_uuids).toEqual(targets.slice(50))
  })
})
