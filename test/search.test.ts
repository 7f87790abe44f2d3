import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createRuntime } from '../src/app'
import { runReindex } from '../src/cli/reindex'
import type { Database } from '../src/kernel/db'
import { createKernel } from '../src/kernel/kernel'
import { searchModule } from '../src/modules/search'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

let t: TestApp
let owner: string
let space: string
let editor: string
let spaceId: number

const HIT_FIELDS = ['id', 'story_id', 'story_uuid', 'slug', 'full_path', 'lang', 'headline', 'lead', 'status', 'updated_at']

const doc = (...blocks: Record<string, unknown>[]) => ({ type: 'doc', blocks })
let uid = 0
const block = (component: string, fields: Record<string, unknown>) => ({ component, _uid: `b${++uid}`, ...fields })
const article = (f: { headline?: string; lead?: string; body?: string; tags?: string[] }) =>
  doc(block('article', { ...f, body: f.body ?? 'An ordinary paragraph about nothing in particular.' }))

let slugCounter = 0
async function story(body: Record<string, unknown>, s = space, token = editor) {
  const r = await t.request('POST', `/v1/spaces/${s}/stories`, { token, body: { slug: `s${++slugCounter}`, name: `Story ${slugCounter}`, ...body } })
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`)
  return r.body.data as { id: number; uuid: string; slug: string; full_path: string }
}
async function act(uuid: string, what: 'publish' | 'unpublish' | 'archive', s = space) {
  const r = await t.request('POST', `/v1/spaces/${s}/stories/${uuid}/${what}`, { token: editor })
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${r.text}`)
  return r.body.data
}
async function put(uuid: string, body: Record<string, unknown>) {
  const r = await t.request('PUT', `/v1/spaces/${space}/stories/${uuid}`, { token: editor, body })
  if (r.status !== 200) throw new Error(`put: ${r.status} ${r.text}`)
  return r.body.data
}
async function published(body: Record<string, unknown>) {
  const s = await story(body)
  await act(s.uuid, 'publish')
  return s
}
const search = (query: string, s = space) => t.request('GET', `/v1/cdn/${s}/search?${query}`)
const q = (text: string, extra = '') => search(`q=${encodeURIComponent(text)}${extra}`)
const slugsOf = (r: { body: { data: { slug: string }[] } }) => r.body.data.map((h) => h.slug)

async function eventually(check: () => Promise<boolean>, ms = 5000) {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return true
    await Bun.sleep(20)
  }
  return false
}

/** Another instance on the same database: its own kernel (bus), read cache and search registry, as another process has. */
async function otherInstance(database: Database = t.kernel.db) {
  const logs: { msg: string; fields?: Record<string, unknown> }[] = []
  const logger = { ...t.kernel.logger, info: (msg: string, fields?: Record<string, unknown>) => void logs.push({ msg, fields }) }
  const kernel = await createKernel(t.config, { database, clock: t.clock, logger, migrate: false })
  const runtime = createRuntime(kernel)
  await runtime.start()
  const registry = runtime.state(searchModule).registry
  return {
    registry,
    logs,
    search: async (query: string) => {
      const res = await runtime.handle(new Request(`http://localhost/v1/cdn/${space}/search?${query}`, { headers: { 'X-Forwarded-For': '10.250.0.1' } }))
      return { status: res.status, body: (await res.json()) as any }
    },
    close: () => runtime.close(),
  }
}
const others: { close(): Promise<void> }[] = []

beforeAll(async () => {
  t = await testApp()
  owner = (await t.register()).token
  space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })).slug
  editor = (await t.spaceToken(owner, space, 'editor')).token
  const components = [
    {
      name: 'article',
      schema: {
        headline: { type: 'text' },
        lead: { type: 'textarea' },
        body: { type: 'richtext' },
        tags: { type: 'tags' },
        category: { type: 'select', options: ['marzipanoption', 'news'] },
        sections: { type: 'blocks' },
      },
    },
    { name: 'page', schema: { title: { type: 'text' }, intro: { type: 'text' }, sections: { type: 'blocks' } } },
    { name: 'section', is_root: false, schema: { heading: { type: 'text' }, text: { type: 'markdown' }, teaser: { type: 'text' } } },
    { name: 'plain', schema: { text: { type: 'text' } } },
  ]
  for (const c of components) {
    const r = await t.request('POST', `/v1/spaces/${space}/components`, { token: editor, body: c })
    if (r.status !== 201) throw new Error(`component: ${r.status} ${r.text}`)
  }
  const [row] = await t.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [space])
  spaceId = row.id
}, 60_000)

afterAll(async () => {
  for (const o of others) await o.close()
  await t?.close()
}, 60_000)

describe('hits', () => {
  test('a Story is searchable as soon as its publish has answered, with exactly the fields of a hit', async () => {
    const s = await story({
      name: 'Lighthouses',
      slug: 'lighthouses',
      content: article({ headline: 'Lighthouse keepers of Brittany', lead: 'Life on the rocks, one storm at a time.', tags: ['maritime'] }),
    })
    expect((await q('lighthouse')).body.data).toEqual([])
    await act(s.uuid, 'publish')
    const r = await q('lighthouse')
    expect(r.status).toBe(200)
    expect(r.headers.get('cache-control')).toBe('no-store')
    expect(r.headers.get('ratelimit-limit')).toBe('600')
    expect(r.body.data).toHaveLength(1)
    const hit = r.body.data[0]
    expect(Object.keys(hit).sort()).toEqual([...HIT_FIELDS].sort())
    expect(hit).toEqual({
      id: `${s.id}:en`,
      story_id: s.id,
      story_uuid: s.uuid,
      slug: 'lighthouses',
      full_path: '/lighthouses',
      lang: 'en',
      headline: 'Lighthouse keepers of Brittany',
      lead: 'Life on the rocks, one storm at a time.',
      status: 'published',
      updated_at: Math.floor(t.clock.now().getTime() / 1000),
    })
    expect(Object.keys(r.body.meta).sort()).toEqual(['page', 'per_page', 'query_time_ms', 'total'])
    expect(r.body.meta).toMatchObject({ total: 1, page: 1, per_page: 20 })
    expect(Number.isInteger(r.body.meta.query_time_ms)).toBe(true)
  })

  test('drafts are not searchable, and a draft edit of a published Story stays out until it is published', async () => {
    await story({ content: article({ headline: 'Unpublished zeppelinmuseum notes' }) })
    expect((await q('zeppelinmuseum')).body.meta.total).toBe(0)
    const s = await published({ content: article({ headline: 'Wandering albatross' }) })
    await put(s.uuid, { content: article({ headline: 'Wandering quetzalcoatl' }) })
    expect((await q('quetzalcoatl')).body.meta.total).toBe(0)
    expect(slugsOf(await q('albatross'))).toEqual([s.slug])
    await act(s.uuid, 'publish')
    expect(slugsOf(await q('quetzalcoatl'))).toEqual([s.slug])
    expect((await q('albatross')).body.meta.total).toBe(0)
  })

  test('headline and lead: the first headline/title and lead/intro/teaser, breadth first; else the Story name and null', async () => {
    const page = await published({
      name: 'Page name',
      content: doc(
        block('page', {
          intro: 'Intro of the gazpacho page',
          sections: [block('section', { heading: 'Deep heading', teaser: 'A nested teaser' })],
        }),
        block('page', { title: 'Gazpacho for the summer' }),
      ),
    })
    const nameOnly = await published({ name: 'Plain gazpacho Story', content: doc(block('plain', { text: 'just text' })) })
    const hits = (await q('gazpacho')).body.data as { story_id: number; headline: string; lead: string | null }[]
    expect(hits.find((h) => h.story_id === page.id)).toMatchObject({ headline: 'Gazpacho for the summer', lead: 'Intro of the gazpacho page' })
    expect(hits.find((h) => h.story_id === nameOnly.id)).toMatchObject({ headline: 'Plain gazpacho Story', lead: null })
  })

  test('body_text is the text of every block with markup stripped; select values and link targets are not text', async () => {
    const s = await published({
      content: doc(
        block('article', {
          headline: 'Markup',
          category: 'marzipanoption',
          body: {
            type: 'doc',
            content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Richtext' }, { type: 'text', text: ' pumpernickel crumbs' }] }],
          },
          sections: [
            block('section', {
              text: 'A [visible anchor](https://example.com/hiddenwaypoint) and <a href="https://example.com/hiddenhref">klabautermann</a> &amp; <b>bold</b>',
            }),
          ],
        }),
      ),
    })
    for (const word of ['pumpernickel', 'klabautermann', 'visible anchor']) expect(slugsOf(await q(word))).toEqual([s.slug])
    for (const word of ['marzipanoption', 'hiddenwaypoint', 'hiddenhref', 'amp']) expect((await q(word)).body.meta.total).toBe(0)
  })

  test('datasource markers ($ds:key.accessor) are not indexed; $$ds: is a literal', async () => {
    const s = await published({
      content: article({
        headline: 'Prices $ds:pricelist.eur.amount today',
        body: 'Exchange: $ds:fx_rates.usd-eur.value and $$ds:literal.example, tomorrow $ds:weather.Berlin.temp_max.',
        tags: ['$ds:tagsource.first', 'plaintag'],
      }),
    })
    const r = await q('prices today')
    expect(r.body.data.map((h: { slug: string }) => h.slug)).toEqual([s.slug])
    expect(r.body.data[0].headline).toBe('Prices today')
    for (const word of ['pricelist', 'fx', 'rates', 'usd', 'weather', 'berlin', 'tagsource', 'amount']) expect((await q(`${word} `)).body.meta.total).toBe(0)
    expect(slugsOf(await q('literal example'))).toEqual([s.slug])
    expect(slugsOf(await q('plaintag'))).toEqual([s.slug])
  })

  test('tags come from tags fields', async () => {
    const s = await published({ content: article({ headline: 'Tagged', tags: ['Sauerkrautfestival', 'two words'] }) })
    expect(slugsOf(await q('sauerkrautfestival', '&attributes=tags'))).toEqual([s.slug])
    expect(slugsOf(await q('two words', '&attributes=tags'))).toEqual([s.slug])
    expect((await q('sauerkrautfestival', '&attributes=headline,lead,body_text')).body.meta.total).toBe(0)
  })

  test('stop words: indexed everywhere; they narrow only a query made of nothing else, where the headline ranks first', async () => {
    const band = await published({ content: article({ headline: 'The Who', body: 'A band that was loud.' }) })
    const bodyOnly = await published({ content: article({ headline: 'Elsewhere', body: 'The who and the what of it.' }) })
    expect(slugsOf(await q('the who '))).toEqual([band.slug, bodyOnly.slug])
    expect(slugsOf(await q('the loud'))).toEqual([band.slug])
    expect(slugsOf(await q('what', '&attributes=body_text'))).toContain(bodyOnly.slug)
  })

  test('case and diacritics do not matter; every word of the query must match', async () => {
    const s = await published({ content: article({ headline: 'Crème brûlée à la Müller', body: 'Vanilla custard' }) })
    expect(slugsOf(await q('CREME BRULEE'))).toEqual([s.slug])
    expect(slugsOf(await q('müller crème'))).toEqual([s.slug])
    expect((await q('brulee chocolate')).body.meta.total).toBe(0)
  })
})

describe('relevance', () => {
  test('a headline match ranks above a lead match, above a body match, above a tag match, above a slug match', async () => {
    const word = 'narwhal'
    const bySlug = await published({ slug: `${word}-facts`, content: article({ headline: 'Sea creatures' }) })
    const byTag = await published({ content: article({ headline: 'Arctic', tags: [word] }) })
    const byBody = await published({ content: article({ headline: 'Tusks', body: `The ${word} lives in arctic waters all year.` }) })
    const byLead = await published({ content: article({ headline: 'Whales', lead: `Why the ${word} has a tusk.` }) })
    const byHeadline = await published({ content: article({ headline: `The ${word} explained` }) })
    const r = await q(word)
    expect(r.body.data.map((h: { story_id: number }) => h.story_id)).toEqual([byHeadline.id, byLead.id, byBody.id, byTag.id, bySlug.id])
  })

  test('the field order holds whatever the field lengths: a long headline, a short body, many or few tags', async () => {
    const word = 'cassowary'
    const filler = (n: number) => Array.from({ length: n }, (_, i) => `filler${i % 37}`).join(' ')
    const bySlug = await published({ slug: `${word}`, content: article({ headline: 'Birds', lead: filler(30), body: filler(400) }) })
    const byTag = await published({ content: article({ headline: 'Flightless', lead: filler(30), body: filler(400), tags: [word] }) })
    const byBody = await published({ content: article({ headline: 'Feathers', lead: filler(30), body: `${filler(600)} ${word}` }) })
    const byLead = await published({ content: article({ headline: 'Ratites', lead: `${filler(60)} ${word}`, body: 'Short.', tags: ['a', 'b', 'c', 'd', 'e', 'f'] }) })
    const byHeadline = await published({ content: article({ headline: `${filler(20)} ${word}`, lead: 'x', body: 'y' }) })
    const r = await q(word)
    expect(r.body.data.map((h: { story_id: number }) => h.story_id)).toEqual([byHeadline.id, byLead.id, byBody.id, byTag.id, bySlug.id])
  })

  test('an exact spelling ranks above a typo match, and a Story matching in more fields ranks higher', async () => {
    const typo = await published({ content: article({ headline: 'The harbor at dawn' }) })
    const exact = await published({ content: article({ headline: 'The harbour at dusk' }) })
    const both = await published({ content: article({ headline: 'Harbour lights', body: 'Every harbour has its lights.' }) })
    const ids = (await q('harbour ')).body.data.map((h: { story_id: number }) => h.story_id)
    expect(ids).toEqual([both.id, exact.id, typo.id])
  })
})

describe('typo tolerance per word', () => {
  beforeAll(async () => {
    await published({ slug: 'typo-quay', content: article({ headline: 'Quay' }) })
    await published({ slug: 'typo-tidal', content: article({ headline: 'Tidal' }) })
    await published({ slug: 'typo-seafarer', content: article({ headline: 'Seafarer' }) })
    await published({ slug: 'typo-shipwreck', content: article({ headline: 'Shipwreck' }) })
    await published({ slug: 'typo-lantern', content: article({ headline: 'Lantern' }) })
  })
  const found = async (text: string) => (await q(text)).body.data.map((h: { slug: string }) => h.slug)

  // A trailing space ends the query's last word: no prefix matching, so only the typo budget is at work.
  test.each([
    ['4 characters match exactly', 'quay ', ['typo-quay']],
    ['4 characters with one typo do not match', 'quey ', []],
    ['4 characters with a missing letter (3 typed) do not match', 'qay ', []],
    ['5 characters tolerate one typo', 'tidel ', ['typo-tidal']],
    ['5 characters with two typos do not match', 'tedel ', []],
    ['8 characters tolerate one typo', 'seafaror ', ['typo-seafarer']],
    ['8 characters with two typos do not match', 'seaforor ', []],
    ['9 characters tolerate two typos', 'shiqwrack ', ['typo-shipwreck']],
    ['9 characters with three typos do not match', 'shiqwraxk ', []],
    ['a transposition is one typo', 'lantren ', ['typo-lantern']],
    ['a transposition and a replaced letter are two typos: too many for 7 characters', 'lamtren ', []],
    ['a transposition and a replaced letter are two typos: within the budget of 9 characters', 'shpiwrack ', ['typo-shipwreck']],
    ['a missing letter is one typo', 'lanter ', ['typo-lantern']],
    ['an extra letter is one typo', 'lanterne ', ['typo-lantern']],
    ['a missing letter that leaves 4 characters is not tolerated', 'tida ', []],
  ])('%s (%p)', async (_name, text, expected) => {
    expect(await found(text)).toEqual(expected)
  })

  test('the budget is per word, not per query', async () => {
    await published({ slug: 'typo-pair', content: article({ headline: 'Quay seafarer' }) })
    expect(await found('quay seafaror ')).toEqual(['typo-pair'])
    expect(await found('quey seafarer ')).toEqual([])
  })

  test('the last word of a query also matches as a prefix; other words do not', async () => {
    expect(await found('shipw')).toEqual(['typo-shipwreck'])
    expect(await found('quay seaf')).toEqual(['typo-pair'])
    expect(await found('seaf quay')).toEqual([])
    expect(await found('shipw ')).toEqual([])
  })
})

describe('prefixes and stop-word typos (issue 17)', () => {
  const found = async (text: string) => (await q(text)).body.data.map((h: { slug: string }) => h.slug)

  test('the last word finds every Story holding a completion, however many shorter completions there are', async () => {
    // 40 words beginning with "defe", all shorter than "defendants", in other Stories.
    const letters = 'abcdefghijklmnopqrstuvwxyz'
    const shorter = Array.from({ length: 40 }, (_, i) => `defe${letters[i % 26]}${letters[Math.floor(i / 26)]}`)
    for (let i = 0; i < shorter.length; i += 10) {
      await published({ content: article({ headline: 'Filler', body: shorter.slice(i, i + 10).join(' ') }) })
    }
    const target = await published({ slug: 'fey-target', content: article({ headline: 'The fey ones', body: 'Notes on defendants and their lawyers.' }) })
    const both = await published({ slug: 'existential-target', content: article({ headline: 'Existential dread', body: 'A handkerchief.' }) })
    for (const w of ['hanxa', 'hanxb', 'hanxc', 'handa', 'handb']) await published({ content: article({ headline: `Other ${w}` }) })
    expect(await found('fey defe')).toEqual([target.slug])
    expect(await found('fey defendan')).toEqual([target.slug])
    expect(await found('existential han')).toEqual([both.slug])
    // The completion ranks below the exact word.
    const exact = await published({ slug: 'defe-exact', content: article({ headline: 'defe' }) })
    const completion = await published({ slug: 'defe-completion', content: article({ headline: 'defendable' }) })
    const hits = await found('defe')
    expect(hits.indexOf(exact.slug)).toBe(0)
    expect(hits).toContain(completion.slug)
    expect(hits).toContain(target.slug)
  })

  test('a typo in a stop word never empties the result', async () => {
    const above = await published({ slug: 'above-target', content: article({ headline: 'Views', body: 'The hills rise above the quarrytown.' }) })
    const slim = await published({ slug: 'slim-target', content: article({ headline: 'Cats', body: 'The slim cat liked the fish.' }) })
    await published({ content: article({ headline: 'Questions', body: "What's that? What's this?" }) })
    expect(await found('aabove')).toContain(above.slug)
    expect(await found('aabove quarrytown')).toEqual([above.slug])
    // "wahts" stands only for the stop word "whats" (which is not in the Story): it adds to the score, never vetoes.
    expect(await found('liaked slim wahts')).toEqual([slim.slug])
    expect(await found('liaked slim wahts ')).toEqual([slim.slug])
  })
})

describe('parameters', () => {
  test('lang picks the locale (default: the Space default); an unknown or invalid locale is 422', async () => {
    const s = await story({ content: article({ headline: 'Bicycle workshop' }) })
    await put(s.uuid, { lang: 'de', name: 'Fahrrad', content: article({ headline: 'Fahrradwerkstatt am Fluss', lead: 'Reparaturen' }) })
    await act(s.uuid, 'publish')
    expect((await q('bicycle')).body.data.map((h: { id: string }) => h.id)).toEqual([`${s.id}:en`])
    expect((await q('fahrradwerkstatt')).body.meta.total).toBe(0)
    const de = await q('fahrradwerkstatt', '&lang=DE')
    expect(de.body.data).toHaveLength(1)
    expect(de.body.data[0]).toMatchObject({ id: `${s.id}:de`, lang: 'de', headline: 'Fahrradwerkstatt am Fluss', lead: 'Reparaturen' })
    for (const lang of ['fr', 'not a tag!']) {
      const r = await q('bicycle', `&lang=${encodeURIComponent(lang)}`)
      expect(r.status).toBe(422)
      expect(r.body.error).toBe('validation_failed')
      expect(Object.keys(r.body.errors)).toEqual(['lang'])
      expect(r.headers.get('cache-control')).toBe('no-store')
    }
  })

  test('per_page and page walk through every hit once, in a stable order', async () => {
    for (let i = 0; i < 7; i++) await published({ content: article({ headline: `Pagination kumquat ${i}` }) })
    const seen: string[] = []
    for (const page of [1, 2, 3]) {
      const r = await q('kumquat', `&per_page=3&page=${page}`)
      expect(r.body.meta).toMatchObject({ total: 7, page, per_page: 3 })
      expect(r.body.data).toHaveLength(page < 3 ? 3 : 1)
      seen.push(...r.body.data.map((h: { id: string }) => h.id))
    }
    expect(new Set(seen).size).toBe(7)
    expect((await q('kumquat', '&per_page=50')).body.data.map((h: { id: string }) => h.id)).toEqual(seen)
    expect((await q('kumquat', '&page=9')).body).toMatchObject({ data: [], meta: { total: 7, page: 9 } })
    expect((await q('kumquat')).body.meta.per_page).toBe(20)
    for (const bad of ['per_page=0', 'per_page=51', 'per_page=2.5', 'per_page=abc', 'page=0', 'page=-1']) {
      const r = await q('kumquat', `&${bad}`)
      expect(r.status).toBe(422)
      expect(Object.keys(r.body.errors)).toEqual([bad.split('=')[0]])
    }
  })

  test('attributes restricts the fields searched; an unknown field is 422', async () => {
    const s = await published({ content: article({ headline: 'Orchids', body: 'Growing vanilla orchids indoors' }) })
    expect(slugsOf(await q('vanilla', '&attributes=body_text'))).toContain(s.slug)
    expect((await q('orchids vanilla', '&attributes=headline')).body.meta.total).toBe(0)
    expect(slugsOf(await q('orchids vanilla', '&attributes=headline,%20body_text'))).toEqual([s.slug])
    expect(slugsOf(await q(s.slug, '&attributes=slug'))).toEqual([s.slug])
    for (const bad of ['title', 'headline,title', ',', 'HEADLINE']) {
      const r = await q('orchids', `&attributes=${encodeURIComponent(bad)}`)
      expect(r.status).toBe(422)
      expect(Object.keys(r.body.errors)).toEqual(['attributes'])
    }
  })

  test('q is required, 1 to 256 characters', async () => {
    for (const query of ['', 'q=', `q=${'a'.repeat(257)}`, 'q=%20%20']) {
      const r = await search(query)
      expect(r.status).toBe(422)
      expect(Object.keys(r.body.errors)).toEqual(['q'])
    }
    expect((await search(`q=${'a'.repeat(256)}`)).status).toBe(200)
    expect((await q('!!! ...')).body).toMatchObject({ data: [], meta: { total: 0 } })
  })

  test('an unknown or archived Space is 404', async () => {
    expect((await q('anything', '').then(() => search('q=x', 'no-such-space'))).status).toBe(404)
    const gone = (await t.createSpace(owner)).slug
    const s = await story({ name: 'Vanishing', content: doc() }, gone, owner)
    await t.request('POST', `/v1/spaces/${gone}/stories/${s.uuid}/publish`, { token: owner })
    expect((await search('q=vanishing', gone)).body.meta.total).toBe(1)
    expect((await t.request('POST', `/v1/spaces/${gone}/archive`, { token: owner })).status).toBe(200)
    expect((await search('q=vanishing', gone)).status).toBe(404)
  })

  test('Spaces are separate indexes', async () => {
    const other = (await t.createSpace(owner)).slug
    const s = await story({ name: 'Separate walrus', content: doc() }, other, owner)
    await t.request('POST', `/v1/spaces/${other}/stories/${s.uuid}/publish`, { token: owner })
    expect(slugsOf(await search('q=walrus', other))).toEqual([s.slug])
    expect((await q('walrus')).body.meta.total).toBe(0)
  })
})

describe('fast path and memo of answers (issue 32)', () => {
  const memo = () => t.state(searchModule).memo
  /** The same request through Elysia alone (app.app.handle: the regular route, no fast path). */
  /** The memo serves only an index with no update queued or being applied (until then the route waits for them). */
  const quiet = async () => expect(await eventually(async () => t.state(searchModule).registry.readyIndex(spaceId, 'en') !== undefined)).toBe(true)
  let ip = 0
  const viaElysia = async (query: string, headers: Record<string, string> = {}) => {
    const res = await t.app.app.handle(new Request(`http://localhost/v1/cdn/${space}/search?${query}`, { headers: { 'X-Forwarded-For': `10.250.0.${++ip}`, ...headers } }))
    return { status: res.status, headers: res.headers, body: await res.json() }
  }

  test('the fast path answers what the Elysia route answers: body, Cache-Control, CORS, RateLimit-*, request id', async () => {
    await published({ name: 'Fast xylovarnish', content: article({ headline: 'Xylovarnish tusks', lead: 'Jorumkite of the vexillumq' }) })
    const origin = { Origin: 'https://shop.example' }
    for (const query of ['q=xylovarnish', 'q=xylovarn&per_page=5&page=1', 'q=jorumkite+vexillumq&attributes=lead,%20headline', 'q=XYLOVARNISH&lang=EN']) {
      await quiet()
      const hitsBefore = memo().hits + memo().misses
      await search(query) // the memo holds it now: the next answer is the memoised one
      const res = await t.app.handle(new Request(`http://localhost/v1/cdn/${space}/search?${query}`, { headers: { 'X-Forwarded-For': `10.251.0.${++ip}`, ...origin } }))
      const fast = { status: res.status, headers: res.headers, body: await res.json() }
      expect(memo().hits + memo().misses).toBeGreaterThan(hitsBefore) // answered by the fast path
      const slow = await viaElysia(query, origin)
      expect(fast.status).toBe(200)
      expect(slow.status).toBe(200)
      expect({ ...fast.body, meta: { ...fast.body.meta, query_time_ms: 0 } }).toEqual({ ...slow.body, meta: { ...slow.body.meta, query_time_ms: 0 } })
      expect(fast.body.meta.total).toBe(1)
      const names = (h: Headers) => [...h.keys()].sort()
      expect(names(fast.headers)).toEqual(names(slow.headers))
      for (const h of ['content-type', 'cache-control', 'ratelimit-limit', 'ratelimit-policy', 'access-control-allow-origin', 'vary', 'access-control-expose-headers']) {
        expect(`${h}: ${fast.headers.get(h)}`).toBe(`${h}: ${slow.headers.get(h)}`)
      }
      expect(fast.headers.get('x-request-id')).toBeTruthy()
      expect(fast.headers.get('ratelimit-remaining')).toBe('599')
      expect(slow.headers.get('ratelimit-remaining')).toBe('599')
    }
  })

  test('a repeated search is served from the memo; a publish, republish or unpublish is seen by the very next search', async () => {
    const word = 'quokkamemo'
    expect((await q(word)).body.meta.total).toBe(0)
    await quiet()
    expect((await q(word)).body.meta.total).toBe(0) // the fast path's answer, memoised
    const hits0 = memo().hits
    expect((await q(word)).body.meta.total).toBe(0)
    expect(memo().hits).toBe(hits0 + 1)
    const s = await published({ name: 'Memo one', content: article({ headline: `The ${word} smiles` }) })
    const r1 = await q(word)
    expect(slugsOf(r1)).toEqual([s.slug])
    // The same search again, at once and from the memo, is the new answer too.
    await quiet()
    expect(slugsOf(await q(word))).toEqual([s.slug])
    const hits1 = memo().hits
    expect(slugsOf(await q(word))).toEqual([s.slug])
    expect(memo().hits).toBe(hits1 + 1)
    await put(s.uuid, { content: article({ headline: `The ${word} frowns` }) })
    await act(s.uuid, 'publish')
    expect((await q(`${word} frowns`)).body.data.map((h: { headline: string }) => h.headline)).toEqual([`The ${word} frowns`])
    expect((await q(word)).body.data[0].headline).toBe(`The ${word} frowns`)
    await act(s.uuid, 'unpublish')
    expect((await q(word)).body.meta.total).toBe(0)
    // Paging and locale are part of the key.
    const s2 = await published({ name: 'Memo two', content: article({ headline: `Another ${word}` }) })
    await act(s.uuid, 'publish')
    expect((await q(word, '&per_page=1')).body.data).toHaveLength(1)
    expect((await q(word, '&per_page=1&page=2')).body.data).toHaveLength(1)
    expect(new Set([...(await q(word)).body.data.map((h: { slug: string }) => h.slug)])).toEqual(new Set([s.slug, s2.slug]))
  })

  test('bad parameters, unknown Spaces and unusual query strings still get the regular answers', async () => {
    expect((await search('q=')).status).toBe(422)
    expect((await search('q=a&q=b')).status).toBe((await viaElysia('q=a&q=b')).status)
    expect((await search('q=%E0%A4%A')).status).toBe((await viaElysia('q=%E0%A4%A')).status)
    expect((await search('q=x&per_page=51')).status).toBe(422)
    expect((await search('q=x&per_page=05')).status).toBe(422)
    expect((await search('q=x&lang=xx')).status).toBe(422)
    expect((await search('q=x&attributes=nope')).status).toBe(422)
    expect((await search('q=x', 'no-such-space')).status).toBe(404)
    expect((await search('q=x&unknown=1')).status).toBe((await viaElysia('q=x&unknown=1')).status)
  })
})

describe('updates', () => {
  test('unpublish, archive and delete take a Story out; a republish replaces its words', async () => {
    const a = await published({ content: article({ headline: 'Axolotl one' }) })
    const b = await published({ content: article({ headline: 'Axolotl two' }) })
    const c = await published({ content: article({ headline: 'Axolotl three' }) })
    expect((await q('axolotl')).body.meta.total).toBe(3)
    await act(a.uuid, 'unpublish')
    await act(b.uuid, 'archive')
    expect((await t.request('DELETE', `/v1/spaces/${space}/stories/${c.uuid}`, { token: editor })).status).toBe(204)
    expect((await q('axolotl')).body.meta.total).toBe(0)
    await put(a.uuid, { content: article({ headline: 'Salamander one' }) })
    await act(a.uuid, 'publish')
    expect(slugsOf(await q('salamander'))).toEqual([a.slug])
    expect((await q('axolotl')).body.meta.total).toBe(0)
  })

  test('the background compaction after updates merges new words and drops removed Stories; answers stay the same', async () => {
    const a = await published({ content: article({ headline: 'Compaction quokkaisland', body: 'Marsupials everywhere.' }) })
    const b = await published({ content: article({ headline: 'Compaction wombatburrow' }) })
    await act(b.uuid, 'unpublish')
    const idx = (await t.state(searchModule).registry.index(spaceId, 'en'))!
    const before = (await q('quokkaisland marsupials')).body
    expect(before.data.map((h: { id: string }) => h.id)).toEqual([`${a.id}:en`])
    // A second after the last update the index merges its new words and postings (in slices, in the background).
    expect(await eventually(async () => idx.vocabulary.pendingCount === 0 && !idx.needsCompaction, 8000)).toBe(true)
    expect((await q('quokkaisland marsupials')).body.data).toEqual(before.data)
    expect(slugsOf(await q('quokkaislnd '))).toEqual([a.slug])
    expect((await q('wombatburrow')).body.meta.total).toBe(0)
  })

  test('moves: a renamed Story and the Stories of a moved folder are found under their new path', async () => {
    const folder = await story({ slug: 'reef', is_folder: true })
    const child = await published({ slug: 'coral', parent_uuid: folder.uuid, content: article({ headline: 'Coral spawning' }) })
    const lone = await published({ slug: 'kelp', content: article({ headline: 'Kelp forests' }) })
    expect((await q('coral')).body.data[0].full_path).toBe('/reef/coral')
    await put(folder.uuid, { slug: 'barrier-reef' })
    expect((await q('coral')).body.data[0]).toMatchObject({ story_id: child.id, full_path: '/barrier-reef/coral', slug: 'coral' })
    expect(slugsOf(await q('barrier', '&attributes=full_path'))).toEqual(['coral'])
    expect(slugsOf(await q('coral', '&attributes=full_path'))).toEqual(['coral'])
    expect((await q('barrier', '&attributes=slug')).body.meta.total).toBe(0)
    await put(lone.uuid, { slug: 'giant-kelp', parent_uuid: folder.uuid })
    expect((await q('kelp')).body.data[0]).toMatchObject({ story_id: lone.id, slug: 'giant-kelp', full_path: '/barrier-reef/giant-kelp' })
    expect(slugsOf(await q('giant', '&attributes=slug'))).toEqual(['giant-kelp'])
  })

  test('another instance on the same database follows through NOTIFY, and builds from the database when it starts', async () => {
    const before = await published({ content: article({ headline: 'Starting platypus' }) })
    const other = await otherInstance()
    others.push(other)
    await other.registry.initialBuild
    expect((await other.search('q=platypus')).body.data.map((h: { id: string }) => h.id)).toEqual([`${before.id}:en`])
    // Start-up logs what it builds and how long it took.
    const started = other.logs.find((l) => l.msg === 'search: building indexes')
    const built = other.logs.find((l) => l.msg === 'search: indexes built')
    expect(started?.fields?.spaces).toBeGreaterThanOrEqual(1)
    expect(built?.fields).toMatchObject({ spaces: started!.fields!.spaces, documents: expect.any(Number), ms: expect.any(Number) })
    expect(other.logs.some((l) => l.msg === 'search: index built' && l.fields?.space === space)).toBe(true)

    const s = await published({ content: article({ headline: 'Echidna burrows' }) })
    expect(await eventually(async () => (await other.search('q=echidna')).body.meta.total === 1)).toBe(true)
    await act(s.uuid, 'unpublish')
    expect(await eventually(async () => (await other.search('q=echidna')).body.meta.total === 0)).toBe(true)
    await put(before.uuid, { slug: 'moved-platypus' })
    expect(await eventually(async () => (await other.search('q=platypus')).body.data[0]?.full_path === '/moved-platypus')).toBe(true)
  })

  test('while the start-up build has not reached a Space, its search answers 503 index_warming with Retry-After at once', async () => {
    const kernel = await createKernel(t.config, { database: t.kernel.db, clock: t.clock, migrate: false })
    const runtime = createRuntime(kernel) // not started: the start-up build has not run
    try {
      const res = await runtime.handle(new Request(`http://localhost/v1/cdn/${space}/search?q=platypus`, { headers: { 'X-Forwarded-For': '10.250.0.2' } }))
      expect(res.status).toBe(503)
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
      const body = (await res.json()) as { error: string; message: string }
      expect(body.error).toBe('index_warming')
      // That request started the Space's build: once it is done, the same search answers.
      const again = () => runtime.handle(new Request(`http://localhost/v1/cdn/${space}/search?q=platypus`, { headers: { 'X-Forwarded-For': '10.250.0.2' } }))
      expect(await eventually(async () => (await again()).status === 200)).toBe(true)
    } finally {
      await runtime.close()
    }
  })

  test('an instance that missed notifications catches up when it reconciles with the database', async () => {
    // A database handle whose LISTEN never delivers: the instance hears nothing from the others.
    const deaf: Database = { ...t.kernel.db, listen: async () => async () => {} }
    const other = await otherInstance(deaf)
    others.push(other)
    await other.search('q=warmup')
    await other.registry.initialBuild
    expect(await other.registry.reconcile()).toBe(0)
    const s = await published({ content: article({ headline: 'Unheard pangolin' }) })
    await Bun.sleep(100)
    expect((await other.search('q=pangolin')).body.meta.total).toBe(0)
    expect(await other.registry.reconcile()).toBeGreaterThanOrEqual(1)
    expect((await other.search('q=pangolin')).body.data.map((h: { id: string }) => h.id)).toEqual([`${s.id}:en`])
    expect(await other.registry.reconcile()).toBe(0)
  })
})

describe('content-service reindex', () => {
  test('every running instance rebuilds and reports; the command shows progress and a summary', async () => {
    await published({ content: article({ headline: 'Reindexed okapi' }) })
    const lines: string[] = []
    const report = await runReindex(t.config, { space }, { database: t.kernel.db, print: (l) => lines.push(l), ackMs: 300 })
    expect(report.instances.length).toBeGreaterThanOrEqual(1)
    expect(report.instances.every((i) => i.status === 'done')).toBe(true)
    const mine = report.instances.find((i) => i.instance === t.state(searchModule).registry.instanceId)!
    expect(mine).toMatchObject({ status: 'done', spaces: 1 })
    expect(mine.documents).toBeGreaterThan(10)
    expect(lines.some((l) => /Stories \(100%\)/.test(l))).toBe(true)
    expect(lines.at(-1)).toMatch(/instance\(s\) rebuilt in/)
    expect((await q('okapi')).body.meta.total).toBe(1)
  })

  test('an unknown Space is an error; without DATABASE_URL the command explains why it cannot reach the server', async () => {
    await expect(runReindex(t.config, { space: 'no-such-space' }, { database: t.kernel.db, print: () => {} })).rejects.toThrow(/no live Space/)
    await expect(runReindex({ ...t.config, databaseUrl: null }, {}, { print: () => {} })).rejects.toThrow(/DATABASE_URL/)
  })

  test('the index keeps answering during a rebuild', async () => {
    const rebuilding = t.state(searchModule).registry.rebuild(spaceId)
    expect((await q('okapi')).body.meta.total).toBe(1)
    await rebuilding
    expect((await q('okapi')).body.meta.total).toBe(1)
  })
})
