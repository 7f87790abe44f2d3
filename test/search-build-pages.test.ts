// A cold Space built from its rows reads them in pages of 200 Stories. Spaces of 400 Stories (the last page comes back
// empty) and 401 (a last page of one) answer every Story, the first and the last of each page included, and a Story
// of another Space never.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { searchModule } from '../src/modules/search'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(120_000)

let a: TestApp
const spaces: { slug: string; id: number; stories: number }[] = []

/** n published Stories in the Space, written in bulk SQL: "Article i" with the words `every`, `p<i>` and `s<spaceId>`. */
async function seed(spaceId: number, n: number) {
  await a.kernel.db.query(
    `insert into stories (uuid, space_id, parent_id, lang, name, slug, full_path, depth, is_folder, status, version_no, has_unpublished_changes, published_at, created_at, updated_at)
     select gen_random_uuid(), $1, null, 'en', 'Article ' || i, 'article-' || i, '/article-' || i, 1, false, 'published', 1, false, now(), now(), now()
     from generate_series(0, $2::int - 1) i`,
    [spaceId, n],
  )
  await a.kernel.db.query(
    `insert into story_published (story_id, lang, name, content, version_no, published_at)
     select s.id, 'en', s.name, jsonb_build_object('type', 'doc', 'blocks', jsonb_build_array(jsonb_build_object('component', 'article', '_uid', 'a' || s.id,
       'headline', s.name, 'body', 'every p' || substr(s.slug, 9) || ' ' || $2::text))), 1, now()
     from stories s where s.space_id = $1::int`,
    [spaceId, `s${spaceId}`],
  )
}

beforeAll(async () => {
  // A budget: nothing is built at start, a Space is built from its rows on its first search (no snapshots).
  a = await testApp({ searchMemoryBytes: 64 * 1024 * 1024, searchSnapshotMinStories: 0 })
  const owner = (await a.register()).token
  for (const n of [400, 401]) {
    const slug = (await a.createSpace(owner, { default_lang: 'en' })).slug
    const c = await a.request('POST', `/v1/spaces/${slug}/components`, { token: owner, body: { name: 'article', schema: { headline: { type: 'text' }, body: { type: 'textarea' } } } })
    if (c.status !== 201) throw new Error(`component: ${c.status} ${c.text}`)
    const [row] = await a.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [slug])
    await seed(row.id, n)
    spaces.push({ slug, id: row.id, stories: n })
  }
})

afterAll(async () => {
  await a?.close()
})

const search = async (slug: string, q: string, page = 1) => {
  const r = await a.request('GET', `/v1/cdn/${slug}/search?q=${encodeURIComponent(q)}&per_page=50&page=${page}`)
  expect(r.status).toBe(200)
  return { total: r.body.meta.total as number, slugs: (r.body.data as { slug: string }[]).map((h) => h.slug) }
}

test('a Space of several pages of Stories is built whole from its rows: every Story, from every page', async () => {
  const registry = a.state(searchModule).registry
  expect(registry.stats().indexes).toBe(0)
  for (const space of spaces) {
    const all = await search(space.slug, 'every ')
    expect(all.total).toBe(space.stories)
    const seen = new Set<string>()
    for (let page = 1; page <= Math.ceil(space.stories / 50); page++) for (const s of (await search(space.slug, 'every ', page)).slugs) seen.add(s)
    expect(seen.size).toBe(space.stories)
    // The first and last Story of each page of the build, and the very last one.
    for (const i of [0, 199, 200, 399, space.stories - 1]) expect((await search(space.slug, `p${i} `)).slugs).toEqual([`article-${i}`])
    expect((await search(space.slug, `s${space.id} `)).total).toBe(space.stories)
    const other = spaces.find((s) => s !== space)!
    expect((await search(space.slug, `s${other.id} `)).total).toBe(0)
  }
})
