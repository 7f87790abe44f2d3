import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { parseQuery, PREFIX_POSTING_BUDGET, SearchIndex } from '../src/modules/search/engine'
import { SEARCH_FIELDS, storyText, stopWordsFor, stripDatasourceMarkers, stripMarkup, tokenString, wordsOf } from '../src/modules/search/text'
import { editDistance, typoBudget } from '../src/modules/search/tolerance'
import { Vocabulary } from '../src/modules/search/vocabulary'
import { rng } from './helpers/rng'

setDefaultTimeout(60_000)

// The pieces under the public search, checked against plain definitions (the HTTP behaviour is in search.test.ts).

describe('typo budget and distance', () => {
  test('budget by length: up to 4 none, 5 to 8 one, 9 or more two (characters, not bytes)', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20].map((n) => typoBudget('x'.repeat(n)))).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2])
    expect(typoBudget('éé😀é')).toBe(0)
    expect(typoBudget('straße')).toBe(1)
  })

  test('a swap of adjacent characters is one edit', () => {
    expect(editDistance('lantern', 'lantren')).toBe(1)
    expect(editDistance('lantern', 'lamtren')).toBe(2)
    expect(editDistance('lantern', 'lanter')).toBe(1)
    expect(editDistance('lantern', 'lanterne')).toBe(1)
  })
})

describe('vocabulary', () => {
  const alphabet = 'abcdeilmnorstu'
  const r = rng(11)
  const words = new Set<string>()
  while (words.size < 6000) {
    const n = 2 + Math.floor(r() * 11)
    let w = ''
    for (let i = 0; i < n; i++) w += alphabet[Math.floor(r() * alphabet.length)]
    words.add(w)
  }
  const list = [...words]
  const queries: string[] = []
  for (let k = 0; k < 150; k++) {
    let w = list[Math.floor(r() * list.length)]
    // Random edits anywhere, swaps across the middle included (where a split search is most likely to slip).
    for (let e = Math.floor(r() * 3); e > 0; e--) {
      const i = Math.floor(r() * w.length)
      const c = alphabet[Math.floor(r() * alphabet.length)]
      const op = Math.floor(r() * 4)
      if (op === 0) w = w.slice(0, i) + c + w.slice(i + 1)
      else if (op === 1 && w.length > 1) w = w.slice(0, i) + w.slice(i + 1)
      else if (op === 2) w = w.slice(0, i) + c + w.slice(i)
      else if (i > 0) w = w.slice(0, i - 1) + w[i] + w[i - 1] + w.slice(i + 1)
    }
    queries.push(w)
  }
  const brute = (q: string, t: number) =>
    new Map(list.filter((w) => Math.abs(w.length - q.length) <= t && editDistance(q, w) <= t).map((w) => [w, editDistance(q, w)]))

  test('fuzzy finds exactly the words within the budget, with their distances (sorted arrays)', () => {
    const v = new Vocabulary()
    for (const w of list) v.add(w)
    v.compact()
    expect(v.pendingCount).toBe(0)
    for (const q of queries) {
      for (const t of [1, 2]) {
        const got = new Map<string, number>()
        v.fuzzy(q, t, (w, d) => got.set(w, d))
        expect([q, t, [...got].sort()]).toEqual([q, t, [...brute(q, t)].sort()])
      }
    }
  })

  test('words added after a merge are found before the next one; a sliced merge keeps them searchable', async () => {
    const v = new Vocabulary()
    for (const w of list.slice(0, 3000)) v.add(w)
    v.compact()
    for (const w of list.slice(3000)) v.add(w)
    expect(v.pendingCount).toBe(3000)
    for (const q of queries.slice(0, 40)) {
      const got = new Map<string, number>()
      v.fuzzy(q, 2, (w, d) => got.set(w, d))
      expect([...got].sort()).toEqual([...brute(q, 2)].sort())
    }
    let pauses = 0
    const merging = v.compactInSlices(async () => {
      pauses++
      // Mid-merge, everything is still searchable.
      expect(v.has(list[4000])).toBe(true)
    })
    v.add('zzzmeanwhile')
    await merging
    expect(pauses).toBeGreaterThan(0)
    expect(v.pendingCount).toBe(1)
    expect(v.size).toBe(list.length + 1)
    for (const w of [list[0], list[5999], 'zzzmeanwhile']) expect(v.has(w)).toBe(true)
    expect(v.has('nope-not-there')).toBe(false)
  })

  test('a word known twice is kept once; completions are the shortest first', () => {
    const v = new Vocabulary()
    for (const w of ['garden', 'gardens', 'gardener', 'gardeningtools', 'gate']) v.add(w)
    v.compact()
    v.add('garden')
    v.add('gardenia')
    v.compact()
    expect(v.size).toBe(6)
    expect(v.completions('garde', 3)).toEqual(['garden', 'gardens', 'gardener'])
    expect(v.completions('x', 3)).toEqual([])
  })
})

describe('text', () => {
  test('folding: case, diacritics, apostrophes; words split on anything else', () => {
    expect(wordsOf("Crème Brûlée, don't STOP—ÆØÅ straße 42")).toEqual(['creme', 'brulee', 'dont', 'stop', 'æøa', 'straße', '42'])
    expect(tokenString('the cat and the hat', stopWordsFor('en-GB'))).toBe('cat hat')
    expect(tokenString('der Hund und die Katze', stopWordsFor('de'))).toBe('hund katze')
    expect(stopWordsFor('ja').size).toBe(0)
  })

  test('markup: tags, script/style contents, entities, Markdown links', () => {
    expect(wordsOf(stripMarkup('<p>Hello <script>evil()</script><a href="/x">world</a> &amp; caf&eacute; &#233;t&#xE9;</p>'))).toEqual([
      'hello',
      'world',
      'cafe',
      'ete',
    ])
    expect(wordsOf(stripMarkup('See [the docs](https://example.com/secret "t") and ![alt text](img.png)'))).toEqual([
      'see',
      'the',
      'docs',
      'and',
      'alt',
      'text',
    ])
  })

  test('datasource markers: key [a-z][a-z0-9_]*, dot-separated accessor segments; $$ds: escapes', () => {
    expect(stripDatasourceMarkers('a $ds:prices.eur b')).toBe('a   b')
    expect(stripDatasourceMarkers('$ds:k_1.a-b.C_9.x')).toBe(' ')
    expect(stripDatasourceMarkers('$$ds:prices.eur')).toBe('$ds:prices.eur')
    expect(stripDatasourceMarkers('$$$ds:prices.eur')).toBe('$$ds:prices.eur')
    // Not markers: no accessor, a key starting with a digit or a capital.
    for (const t of ['$ds:prices', '$ds:1x.y', '$ds:Prices.eur', 'ds:prices.eur']) expect(stripDatasourceMarkers(t)).toBe(t)
    expect(wordsOf(stripMarkup('<p>Now $ds:shop.price.gross &amp; more</p>'))).toEqual(['now', 'more'])
  })

  test('storyText: field types from blueprints decide what is text, tags, or neither', () => {
    const blueprints = new Map([
      [
        'a',
        {
          name: 'a',
          display_name: 'a',
          is_root: true,
          is_nestable: true,
          schema: {
            title: { type: 'text' as const },
            teaser: { type: 'textarea' as const },
            kind: { type: 'select' as const, options: ['x'] },
            labels: { type: 'tags' as const },
            more: { type: 'blocks' as const },
            when: { type: 'datetime' as const },
          },
        },
      ],
    ])
    const content = {
      type: 'doc',
      blocks: [
        { component: 'a', _uid: '1', kind: 'x', labels: ['Red', 'Blue'], when: '2026-01-01', more: [{ component: 'a', _uid: '2', title: 'Nested title' }] },
        { component: 'a', _uid: '3', title: 'Top title', teaser: 'The teaser' },
        { component: 'unknown', _uid: '4', anything: 'Free text' },
      ],
    }
    expect(storyText(content, 'Name', blueprints)).toEqual({
      headline: 'Top title',
      lead: 'The teaser',
      body: 'Free text\nNested title',
      tags: ['Red', 'Blue'],
    })
    expect(storyText({ type: 'doc', blocks: [] }, '  Only   the name ', blueprints)).toEqual({ headline: 'Only the name', lead: null, body: '', tags: [] })
    expect(storyText('garbage', 'N', blueprints).headline).toBe('N')
  })
})

describe('index', () => {
  const doc = (id: number, fields: Partial<Record<(typeof SEARCH_FIELDS)[number], string>>) => ({
    hit: {
      id: `${id}:en`,
      story_id: id,
      story_uuid: '00000000-0000-4000-8000-000000000000',
      slug: `s${id}`,
      full_path: `/s${id}`,
      lang: 'en',
      headline: fields.headline ?? '',
      lead: null,
      status: 'published',
      updated_at: id,
    },
    fields: { headline: '', lead: '', body_text: '', tags: '', slug: '', full_path: '', ...fields },
    version: 1,
  })
  const all = { fields: SEARCH_FIELDS, offset: 0, limit: 20 }

  test('replacing and removing documents changes what matches; stop words only weigh in', () => {
    const idx = new SearchIndex('en')
    idx.upsert(doc(1, { headline: 'the quiet harbour', body_text: 'boats' }))
    idx.upsert(doc(2, { headline: 'harbour', body_text: 'boats' }))
    expect(idx.search(parseQuery('harbour'), all).hits.map((h) => h.story_id)).toEqual([2, 1])
    // "the" is a stop word: it does not narrow, but where it matches (headline) it adds.
    expect(idx.search(parseQuery('the harbour'), { ...all, optional: stopWordsFor('en') }).hits.map((h) => h.story_id)).toEqual([1, 2])
    idx.upsert(doc(2, { headline: 'lighthouse' }))
    expect(idx.search(parseQuery('harbour'), all).total).toBe(1)
    expect(idx.remove('1:en')).toBe(true)
    expect(idx.remove('1:en')).toBe(false)
    expect(idx.search(parseQuery('harbour'), all).total).toBe(0)
    expect(idx.size).toBe(1)
  })

  test('parseQuery: at most 8 distinct words; the last one is a prefix unless the query ends with a separator', () => {
    expect(parseQuery('a b a c')).toEqual({ words: ['a', 'b', 'c'], lastIsPrefix: true })
    expect(parseQuery('foo bar ')).toEqual({ words: ['foo', 'bar'], lastIsPrefix: false })
    expect(parseQuery('one two three four five six seven eight nine').words).toHaveLength(8)
    expect(parseQuery('!!!').words).toEqual([])
  })

  test('a query word standing only for stop words is optional; a stop word typed wrong still finds its Stories', () => {
    const idx = new SearchIndex('en')
    idx.upsert(doc(1, { body_text: 'slim cat liked fish' }))
    idx.upsert(doc(2, { body_text: 'whats up above' }))
    const opts = { ...all, optional: stopWordsFor('en') }
    expect(idx.search(parseQuery('liaked slim wahts'), opts).hits.map((h) => h.story_id)).toEqual([1])
    expect(idx.search(parseQuery('aabove'), opts).hits.map((h) => h.story_id)).toEqual([2])
    // A word with no match at all still vetoes.
    expect(idx.search(parseQuery('slim zzzzzz'), opts).total).toBe(0)
  })

  test('prefix: every completion is a candidate, exact before completions, bounded by postings, not words', () => {
    const idx = new SearchIndex('en')
    for (let i = 0; i < 60; i++) idx.upsert(doc(i + 1, { body_text: `defe${i.toString(36)}x` }))
    idx.upsert(doc(100, { body_text: 'defendants' }))
    idx.upsert(doc(101, { body_text: 'defe' }))
    const r = idx.search(parseQuery('defe'), { ...all, limit: 100 })
    expect(r.total).toBe(62)
    expect(r.hits[0].story_id).toBe(101)
    expect(PREFIX_POSTING_BUDGET).toBeGreaterThanOrEqual(10_000)
  })

  test('build mode, delta, tombstones and compaction answer alike', async () => {
    const r = rng(5)
    const words = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}${'abcdefgh'[i % 8]}ord`)
    const fields = (seed: number) => {
      const pick = () => words[Math.floor(r() * words.length)]
      return { headline: `${pick()} ${pick()}`, body_text: Array.from({ length: 20 + (seed % 15) }, pick).join(' '), tags: pick() }
    }
    const bulk = new SearchIndex('en', { bulk: true })
    const live = new SearchIndex('en')
    const docs = Array.from({ length: 300 }, (_, i) => doc(i + 1, fields(i)))
    for (const d of docs) {
      bulk.upsert(d)
      live.upsert(d)
    }
    // Churn: replace a third, remove a sixth.
    for (let i = 0; i < 300; i += 3) {
      const d = doc(i + 1, fields(i + 7))
      bulk.upsert(d)
      live.upsert(d)
    }
    for (let i = 1; i < 300; i += 6) {
      bulk.remove(`${i + 1}:en`)
      live.remove(`${i + 1}:en`)
    }
    const queries = Array.from({ length: 60 }, (_, k) => {
      const w = words[Math.floor(r() * words.length)]
      return k % 3 === 0 ? w.slice(0, 3) : k % 3 === 1 ? `${w} ${words[Math.floor(r() * words.length)]} ` : `${w.slice(0, -1)}x `
    })
    const answer = (idx: SearchIndex) => queries.map((q) => idx.search(parseQuery(q), { ...all, limit: 300 }))
    // Until compacted, removed documents still count in a word's document frequency (idf): the same documents
    // match, the order may differ slightly.
    const matched = (rs: { hits: { id: string }[] }[]) => rs.map((r) => r.hits.map((h) => h.id).sort())
    const before = answer(live)
    expect(matched(answer(bulk))).toEqual(matched(before))
    expect(before.filter((r) => r.total > 0).length).toBeGreaterThan(30)
    expect(live.needsCompaction).toBe(true)
    const postings = live.postingCount
    await live.compactInSlices(async () => {
      // Searchable while compacting, against the old arrays and the frozen delta.
      expect(live.search(parseQuery(queries[1]), { ...all, limit: 300 })).toEqual(before[1])
    })
    expect(live.postingCount).toBeLessThan(postings)
    const after = answer(live)
    expect(after).toEqual(answer(bulk))
    expect(matched(after)).toEqual(matched(before))
    // Changes after a compaction go to the delta again and are found at once.
    live.upsert(doc(999, { headline: 'brandnewword' }))
    expect(live.search(parseQuery('brandnewwrod '), all).hits.map((h) => h.story_id)).toEqual([999])
    live.compact()
    expect(live.search(parseQuery('brandnew'), all).hits.map((h) => h.story_id)).toEqual([999])
    expect(live.size).toBe(300 - 50 + 1)
  })

  test('pages are stable: equal scores fall back to the most recent, then the id', () => {
    const idx = new SearchIndex('en')
    for (let i = 1; i <= 30; i++) idx.upsert(doc(i, { headline: 'same words' }))
    const pages = [0, 1, 2].flatMap((p) => idx.search(parseQuery('same'), { ...all, offset: p * 10, limit: 10 }).hits.map((h) => h.story_id))
    expect(pages).toEqual(Array.from({ length: 30 }, (_, i) => 30 - i))
  })
})
