import { expect, setDefaultTimeout, test } from 'bun:test'
import { parseQuery, SearchIndex } from '../src/modules/search/engine'
import { decodeSnapshot, encodeSnapshot } from '../src/modules/search/snapshot'
import { SEARCH_FIELDS } from '../src/modules/search/text'
import { rng } from './helpers/rng'

setDefaultTimeout(60_000)

// A snapshot loads into an index that answers every query exactly as the index it was taken from, and keeps working
// as an index (updates, removals, compaction) afterwards. The service side (Postgres, cold loads) is in
// search-on-demand.test.ts.

const r = rng(7)
const words = Array.from({ length: 900 }, (_, i) => `${'bcdfglmnprst'[i % 12]}${i.toString(36)}${['ar', 'ien', 'ouse', 'ält'][i % 4]}`)
const pick = () => words[Math.floor(r() ** 2 * words.length)]
const text = (n: number) => Array.from({ length: n }, pick).join(' ')
const doc = (id: number, lang: string, version = 1) => ({
  hit: {
    id: `${id}:${lang}`,
    story_id: id,
    story_uuid: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`,
    slug: `s${id}`,
    full_path: `/f/s${id}`,
    lang,
    headline: text(3),
    lead: id % 3 ? text(6) : null,
    status: 'published',
    updated_at: 1_700_000_000 + id,
  },
  fields: { headline: text(3), lead: text(6), body_text: text(80), tags: text(2), slug: `s${id}`, full_path: 'f' },
  version,
})
const all = { fields: SEARCH_FIELDS, offset: 0, limit: 50 }
const queries = [...Array.from({ length: 40 }, () => pick()), ...Array.from({ length: 20 }, () => `${pick()} ${pick().slice(0, 3)}`), 'zzzz', words[5].slice(0, 2)]
// Typos: one character changed in a long word.
for (let i = 0; i < 20; i++) {
  const w = words[i * 7]
  queries.push(`${w.slice(0, 2)}x${w.slice(3)}`)
}

function answers(idx: SearchIndex) {
  return queries.map((q) => {
    const res = idx.search(parseQuery(q), all)
    return { q, total: res.total, hits: res.hits.map((h) => [h.id, h.headline, h.lead, h.full_path, h.updated_at]) }
  })
}

test('a snapshot answers every query like the index it was taken from, in every locale', () => {
  const en = new SearchIndex('en', { bulk: true })
  const de = new SearchIndex('de', { bulk: true })
  for (let i = 1; i <= 400; i++) {
    en.upsert(doc(i, 'en'))
    if (i % 4 === 0) de.upsert(doc(i, 'de'))
  }
  en.compact()
  de.compact()
  // Updates and removals after the build: tombstones and new ordinals in the snapshot too.
  for (let i = 1; i <= 30; i++) en.upsert(doc(i * 3, 'en', 2))
  for (let i = 1; i <= 10; i++) en.remove(`${i * 7}:en`)
  en.compact()
  const source = new Map([
    ['en', en],
    ['de', de],
  ])
  const blob = encodeSnapshot(source)!
  expect(blob).toBeInstanceOf(Uint8Array)
  const loaded = decodeSnapshot(blob)
  expect([...loaded.keys()].sort()).toEqual(['de', 'en'])
  for (const [lang, idx] of source) {
    const copy = loaded.get(lang)!
    expect(copy.size).toBe(idx.size)
    expect(copy.ordinalCount).toBe(idx.ordinalCount)
    expect([...copy.documents()].sort((a, b) => a.hit.story_id - b.hit.story_id)).toEqual([...idx.documents()].sort((a, b) => a.hit.story_id - b.hit.story_id))
    expect(answers(copy)).toEqual(answers(idx))
  }
  // The version of a replaced document travels.
  expect([...loaded.get('en')!.documents()].find((d) => d.hit.story_id === 3)!.version).toBe(2)
  expect(loaded.get('en')!.has('7:en')).toBe(false)
})

test('a loaded index takes updates, removals and compactions like any other', async () => {
  const idx = new SearchIndex('en', { bulk: true })
  for (let i = 1; i <= 200; i++) idx.upsert(doc(i, 'en'))
  idx.compact()
  const copy = decodeSnapshot(encodeSnapshot(new Map([['en', idx]]))!).get('en')!
  const added = doc(500, 'en')
  added.fields.body_text = 'quokkaesque marsupials'
  const replaced = doc(11, 'en', 3)
  for (const target of [idx, copy]) {
    target.upsert(added)
    target.remove('10:en')
    target.upsert(replaced)
  }
  expect(copy.search(parseQuery('quokkaesque'), all).hits.map((h) => h.story_id)).toEqual([500])
  expect(answers(copy)).toEqual(answers(idx))
  await copy.compactInSlices(() => Promise.resolve())
  idx.compact()
  expect(answers(copy)).toEqual(answers(idx))
  // And it snapshots again.
  expect(answers(decodeSnapshot(encodeSnapshot(new Map([['en', copy]]))!).get('en')!)).toEqual(answers(idx))
})

test('an index with uncompacted changes gives no snapshot; a damaged blob is refused', () => {
  const idx = new SearchIndex('en')
  idx.upsert(doc(1, 'en'))
  expect(encodeSnapshot(new Map([['en', idx]]))).toBeNull()
  idx.compact()
  const blob = encodeSnapshot(new Map([['en', idx]]))!
  const raw = Bun.zstdDecompressSync(blob) as Uint8Array
  expect(() => decodeSnapshot(Bun.zstdCompressSync(raw.subarray(0, raw.length - 40)))).toThrow()
  expect(() => decodeSnapshot(new Uint8Array([1, 2, 3]))).toThrow()
})

test('a build log past its first chunk (more than 65,536 postings) answers like an index filled one document at a time', () => {
  const docs = Array.from({ length: 2500 }, (_, i) => doc(i + 1, 'en'))
  const bulk = new SearchIndex('en', { bulk: true })
  const oneByOne = new SearchIndex('en')
  for (const d of docs) {
    bulk.upsert(d)
    oneByOne.upsert(d)
  }
  expect(bulk.postingCount).toBeGreaterThan(3 * 65_536)
  bulk.compact()
  oneByOne.compact()
  expect(answers(bulk)).toEqual(answers(oneByOne))
  expect(answers(decodeSnapshot(encodeSnapshot(new Map([['en', bulk]]))!).get('en')!)).toEqual(answers(oneByOne))
})

test('release() frees an index’s arrays at once (built or loaded from a snapshot) and leaves every other index answering', () => {
  const docs = Array.from({ length: 300 }, (_, i) => doc(i + 1, 'en'))
  const build = () => {
    const idx = new SearchIndex('en', { bulk: true })
    for (const d of docs) idx.upsert(structuredClone(d))
    idx.compact()
    return idx
  }
  const en = build()
  const keep = build()
  const before = answers(keep)
  const blob = encodeSnapshot(new Map([['en', en]]))!
  const loaded = decodeSnapshot(blob).get('en')!
  const loadedKeep = decodeSnapshot(blob).get('en')!
  expect(answers(loaded)).toEqual(before)

  expect(en.released).toBe(false)
  const revision = en.revision
  expect(en.release()).toBeGreaterThan(50_000)
  expect(en.released).toBe(true)
  expect(en.revision).toBeGreaterThan(revision)
  // Nothing more to answer (the registry asks again for a released index); a second release is a no-op.
  expect(en.search(parseQuery(queries[0]), all)).toEqual({ total: 0, hits: [] })
  expect(en.size).toBe(0)
  expect(en.release()).toBe(0)
  // A snapshot-loaded index frees its decoded blob (shared by the Space's locales, viewed in place).
  expect(loaded.release()).toBeGreaterThan(50_000)
  // The other indexes — built from the same documents, or decoded from the same stored blob — are untouched.
  expect(answers(keep)).toEqual(before)
  expect(answers(loadedKeep)).toEqual(before)
})
