// Search resident on demand (SEARCH_MEMORY_MB): start-up builds nothing and readiness does not wait for search; a
// Space's index is built on its first search; the least recently searched Spaces are dropped while the resident ones
// exceed the budget. Two instances share one database: a Space evicted on the first while the second publishes in it
// answers the new content on the first's next search. (The search suite, test/search.test.ts, runs without the
// setting and is unchanged.)
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { createRuntime } from '../src/app'
import { createKernel } from '../src/kernel/kernel'
import { searchModule } from '../src/modules/search'
import { type TestApp, testApp } from './helpers/app'
import { secondInstance } from './helpers/instance'

setDefaultTimeout(120_000)

let a: TestApp
let owner: string
const spaces: { slug: string; id: number; editor: string }[] = []
let b: Awaited<ReturnType<typeof secondInstance>>

const doc = (headline: string, body: string) => ({ type: 'doc', blocks: [{ component: 'article', _uid: 'b1', headline, body }] })

/** A second instance on the same database, without a budget (it builds every index, as an embedded install does). */
const otherInstance = () => secondInstance(a, { searchMemoryBytes: null }, '10.251.0.1')

const registry = () => a.state(searchModule).registry
const search = (slug: string, q: string) => a.request('GET', `/v1/cdn/${slug}/search?q=${encodeURIComponent(q)}`)

beforeAll(async () => {
  // A budget of one byte: every Space built evicts every other (the one just searched always stays).
  a = await testApp({ searchMemoryBytes: 1 })
  owner = (await a.register()).token
  for (const word of ['aardvark', 'bumblebee']) {
    const slug = (await a.createSpace(owner, { default_lang: 'en' })).slug
    const editor = (await a.spaceToken(owner, slug, 'editor')).token
    const c = await a.request('POST', `/v1/spaces/${slug}/components`, { token: editor, body: { name: 'article', schema: { headline: { type: 'text' }, body: { type: 'textarea' } } } })
    if (c.status !== 201) throw new Error(`component: ${c.status} ${c.text}`)
    const s = await a.request('POST', `/v1/spaces/${slug}/stories`, { token: editor, body: { slug: word, name: word, content: doc(`About the ${word}`, `Notes on the ${word}.`) } })
    if (s.status !== 201) throw new Error(`story: ${s.status} ${s.text}`)
    const p = await a.request('POST', `/v1/spaces/${slug}/stories/${s.body.data.uuid}/publish`, { token: editor })
    if (p.status !== 200) throw new Error(`publish: ${p.status} ${p.text}`)
    const [row] = await a.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [slug])
    spaces.push({ slug, id: row.id, editor })
  }
  b = await otherInstance()
})

afterAll(async () => {
  await b?.runtime.close()
  await a?.close()
})

test('with SEARCH_MEMORY_MB nothing is built at start and the instance is ready at once', async () => {
  const kernel = await createKernel(a.config, { database: a.kernel.db, clock: a.clock, migrate: false })
  const runtime = createRuntime(kernel)
  await runtime.start()
  try {
    const r = runtime.state(searchModule).registry
    expect(r.warm).toBe(true)
    expect(r.stats().indexes).toBe(0)
    const res = await runtime.handle(new Request('http://localhost/v1/health/ready'))
    expect(res.status).toBe(200)
  } finally {
    await runtime.close()
  }
})

test('a Space evicted on one instance while another publishes in it answers the new content on its next search', async () => {
  const [first, second] = spaces
  // First search builds the Space's index (no 503: the instance is ready).
  const r1 = await search(first.slug, 'aardvark')
  expect(r1.status).toBe(200)
  expect(r1.body.data.map((h: { slug: string }) => h.slug)).toEqual(['aardvark'])
  const held = registry().readyIndex(first.id, 'en')
  expect(held).not.toBeUndefined()
  expect(held?.released).toBe(false)
  // Searching the second Space puts the instance over its budget: the first, least recently searched, goes, and its
  // index's arrays are freed at once (released: whoever still holds it asks again).
  expect((await search(second.slug, 'bumblebee')).body.data).toHaveLength(1)
  expect(registry().readyIndex(first.id, 'en')).toBeUndefined()
  expect(held?.released).toBe(true)
  expect(registry().stats().spaces).toBe(1)
  expect(registry().memory().evictions).toBeGreaterThanOrEqual(1)

  // The other instance publishes a new Story in the evicted Space.
  const s = await b.request('POST', `/v1/spaces/${first.slug}/stories`, first.editor, { slug: 'capybara', name: 'capybara', content: doc('About the capybara', 'Notes on the capybara.') })
  expect(s.status).toBe(201)
  expect((await b.request('POST', `/v1/spaces/${first.slug}/stories/${s.body.data.uuid}/publish`, first.editor)).status).toBe(200)
  // Its event reaches this instance, which does not load a Space nobody searched for.
  await Bun.sleep(300)
  expect(registry().readyIndex(first.id, 'en')).toBeUndefined()

  // The next search here reads the Space afresh and finds the new Story.
  const r2 = await search(first.slug, 'capybara')
  expect(r2.status).toBe(200)
  expect(r2.body.data.map((h: { slug: string }) => h.slug)).toEqual(['capybara'])
  expect(registry().memory().bytes).toBeGreaterThan(0)
})

test('SEARCH_MEMORY_MB is unset by default (every index resident) and taken in MB when set', async () => {
  const { loadConfig } = await import('../src/config')
  expect(loadConfig({}).searchMemoryBytes).toBeNull()
  expect(loadConfig({ SEARCH_MEMORY_MB: '128' }).searchMemoryBytes).toBe(128 * 1024 * 1024)
  expect(() => loadConfig({ SEARCH_MEMORY_MB: '0' })).toThrow()
})
