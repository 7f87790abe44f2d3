// One search index: the published Stories of one Space in one locale, held in an Orama database.
//
// How Orama is used, and why (measurements in docs/search.md):
// - Orama stores only the six searchable fields, each already reduced to its distinct folded words joined by spaces
//   (text.ts); its tokenizer only splits on spaces, its sorter is off. Stop words are left out of lead and body_text.
//   Hit metadata (uuid, path, headline, lead, dates) lives in an array by Orama's internal id, not in Orama.
// - The index component is Orama's with three hooks replaced. Term frequency is not stored: Orama's tokenizer removes
//   duplicates anyway, so its per-document frequency table only ever held 1/length for every word of every document
//   (the largest structure of a naive index, filled by a loop quadratic in the document length); field lengths stay
//   for BM25's length normalisation, and a word's document frequency is the size of its postings. Insertion keeps a
//   word → node map per field, so a known word gets the document without a walk down the tree.
// - A query is not one Orama search() call: Orama's tolerance is one number per query, counts any word that merely
//   starts with the term as a match, knows no transpositions, and collects postings with a quadratic de-duplication.
//   Here each query word is expanded once against the index's vocabulary with its own typo budget (vocabulary.ts),
//   the variants' postings are taken from each field's Orama tree, the candidates come from the rarest word and are
//   only narrowed by the others (a document that cannot match every word is never scored), and the score is BM25 with
//   binary term frequency, weighted per field and by how the word matched.
import { type AnyOrama, components, count, create, insert, remove } from '@orama/orama'
import { SEARCH_FIELDS, type SearchField, wordsOf } from './text'
import { exactNode, type RadixNode, typoBudget } from './tolerance'
import { Vocabulary } from './vocabulary'

/**
 * Field weights, in the spec's order (4.4). Consecutive fields differ by ×1.6 to ×2, more than length normalisation
 * can make up (below: at most ×1.49 between the shortest and the longest field), so for a given word a headline
 * match ranks above a lead match, above a body match, above a tag match, above a slug match, whatever the lengths.
 */
export const FIELD_WEIGHTS: Record<SearchField, number> = {
  headline: 16,
  lead: 8,
  body_text: 4,
  tags: 2,
  slug: 1.25,
  full_path: 1,
}
/** Score factor of a word matched through a typo or as a prefix of the last query word. */
const DISTANCE_FACTOR = [1, 0.5, 0.3]
const PREFIX_FACTOR = 0.7
/** Vocabulary words one query word may expand to, per field (closest first, then most frequent). */
export const MAX_TERMS_PER_WORD = 48
/** Query words whose expansions are kept (cleared when full, and by every change to the index). */
const MAX_CACHED_WORDS = 10_000
/** Query words beyond this many are ignored. */
export const MAX_QUERY_WORDS = 8
/** The last query word also matches as a prefix from this many characters on, standing for at most so many words. */
const MIN_PREFIX = 2
const MAX_PREFIX_WORDS = 32
// BM25 with binary term frequency: k1 1.2, b 0.3, a field's length against its average capped at 3:1 either way.
const K1 = 1.2
const B = 0.3
const MAX_LENGTH_RATIO = 3

const SCHEMA = {
  headline: 'string',
  lead: 'string',
  body_text: 'string',
  tags: 'string',
  slug: 'string',
  full_path: 'string',
} as const

/** A search hit as the API returns it (spec 2, Search hit). */
export interface SearchHit {
  id: string
  story_id: number
  story_uuid: string
  slug: string
  full_path: string
  lang: string
  headline: string
  lead: string | null
  status: string
  updated_at: number
}

/** One Story in one locale, ready for the index: the hit and the field token strings (text.ts tokenString). */
export interface IndexDocument {
  hit: SearchHit
  fields: Record<SearchField, string>
  /** The Story's version_no when this snapshot was published (reconciliation compares it with the database). */
  version: number
}

export interface ParsedQuery {
  words: string[]
  /** Whether the last word may also match as a prefix (the query does not end with a space or punctuation). */
  lastIsPrefix: boolean
}

export function parseQuery(q: string): ParsedQuery {
  const all = wordsOf(q)
  const words = [...new Set(all)].slice(0, MAX_QUERY_WORDS)
  const lastIsPrefix = all.length > 0 && words[words.length - 1] === all[all.length - 1] && /[\p{L}\p{N}]$/u.test(q)
  return { words, lastIsPrefix }
}

export interface SearchOptions {
  fields: readonly SearchField[]
  offset: number
  limit: number
  /** Words that do not narrow the result (stop words when the query has other words). */
  optional?: ReadonlySet<string>
}

export interface SearchResult {
  total: number
  hits: SearchHit[]
}

interface Variant {
  word: string
  node: RadixNode
  factor: number
  /** The field whose tree holds the node (slug for the last segment of a full_path). */
  from: SearchField
}

interface Term {
  docs: Set<number>
  /** weight × idf × typo/prefix factor: the document's length norm is the only per-document part. */
  base: number
  from: SearchField
}

interface IndexStore {
  indexes: Record<string, { node: RadixNode & { insert(word: string, id: number): void } }>
  fieldLengths: Record<string, Record<number, number | undefined>>
  avgFieldLength: Record<string, number | undefined>
  /** Sum of lengths and number of documents with the field non-empty (added here): the average is over those. */
  lengthTotals?: Record<string, { sum: number; docs: number }>
  /** Word → its node, per field (added here): Orama never replaces or deletes a word's node once made. */
  words?: Record<string, Map<string, RadixNode>>
  /** Words new to some field since the index last collected them (for the vocabulary). */
  newWords?: string[]
}

/**
 * Orama's index component with term frequencies left out (see the file comment), and insertion through a word → node
 * map per field: a known word's postings get the document directly instead of through a walk down the tree from its
 * root (a pointer chase per level), which halves the build time. New words still go in through Orama's tree.
 */
const oramaIndex = (() => {
  const base = components.index.createIndex()
  return {
    ...base,
    insert(
      implementation: { insertDocumentScoreParameters: (...a: unknown[]) => void },
      index: IndexStore,
      prop: string,
      _id: unknown,
      internalId: number,
      value: unknown,
      _type: unknown,
      language: string | undefined,
      tokenizer: { tokenize(raw: string, language?: string, prop?: string, withCache?: boolean): string[] },
      docsCount: number,
    ) {
      const tokens = tokenizer.tokenize(value as string, language, prop, false)
      implementation.insertDocumentScoreParameters(index, prop, internalId, tokens, docsCount)
      const tree = index.indexes[prop].node
      const words = ((index.words ??= {})[prop] ??= new Map())
      const fresh = (index.newWords ??= [])
      for (const token of tokens) {
        const node = words.get(token)
        if (node) node.d.add(internalId)
        else {
          tree.insert(token, internalId)
          words.set(token, exactNode(tree, token)!)
          fresh.push(token)
        }
      }
    },
    insertDocumentScoreParameters(index: IndexStore, prop: string, internalId: unknown, tokens: string[], docsCount: number) {
      // The average length is over documents that have the field: most have no tags, and an average near zero would
      // make every tagged document's tags look very long.
      const totals = ((index.lengthTotals ??= {})[prop] ??= { sum: 0, docs: 0 })
      if (tokens.length) {
        totals.sum += tokens.length
        totals.docs++
      }
      index.avgFieldLength[prop] = totals.docs ? totals.sum / totals.docs : 0
      index.fieldLengths[prop][internalId as number] = tokens.length
    },
    insertTokenScoreParameters() {},
    removeDocumentScoreParameters(index: IndexStore & { sharedInternalDocumentStore: never }, prop: string, id: unknown, docsCount: number) {
      const internalId = components.internalDocumentIDStore.getInternalDocumentId(index.sharedInternalDocumentStore, id as string)
      const len = index.fieldLengths[prop][internalId] ?? 0
      const totals = ((index.lengthTotals ??= {})[prop] ??= { sum: 0, docs: 0 })
      if (len) {
        totals.sum -= len
        totals.docs--
      }
      index.avgFieldLength[prop] = totals.docs ? totals.sum / totals.docs : 0
      delete index.fieldLengths[prop][internalId]
    },
    removeTokenScoreParameters() {},
  }
})()

const spaceTokenizer = {
  language: 'none',
  normalizationCache: new Map<string, string>(),
  tokenize: (raw: string) => (raw ? raw.split(' ') : []),
}

export class SearchIndex {
  private db: AnyOrama
  /** Hit metadata and published version by Orama internal document id. */
  private hits: (SearchHit | undefined)[] = []
  private versions: number[] = []
  private internalIds = new Map<string, number>()
  /**
   * Every word of every field, so a query word is expanded to its typo variants once rather than once per field; the
   * variants are then looked up exactly in each field's tree. Words are never removed from it (a variant without
   * postings costs one lookup); a rebuild starts afresh.
   */
  readonly vocabulary = new Vocabulary()
  /**
   * Query word → its variants' nodes per field. Expanding a word (typo walk, exact lookups in six trees) is most of a
   * query's cost and words repeat across queries far more than documents change: cleared by every change.
   */
  private expansions = new Map<string, Map<SearchField, Variant[]>>()
  readonly cacheStats = { hits: 0, misses: 0 }
  private scratch = new Scratch()
  /** Documents removed since the index was built: their vocabulary stays in Orama's trees until a rebuild. */
  removals = 0

  constructor(readonly lang: string) {
    this.db = create({
      schema: SCHEMA,
      // Results are ordered here (score, then date); Orama's sorter would keep a sorted copy of every field.
      sort: { enabled: false },
      components: { tokenizer: spaceTokenizer as never, index: oramaIndex as never },
    }) as AnyOrama
  }

  get size(): number {
    return count(this.db)
  }

  has(id: string): boolean {
    return this.internalIds.has(id)
  }

  hit(id: string): SearchHit | undefined {
    const internal = this.internalIds.get(id)
    return internal === undefined ? undefined : this.hits[internal]
  }

  /** Every document: its hit and published version. */
  *documents(): IterableIterator<{ hit: SearchHit; version: number }> {
    for (const [, internal] of this.internalIds) yield { hit: this.hits[internal]!, version: this.versions[internal] }
  }

  /** Forgets cached query-word expansions (they are also dropped by every change). */
  clearCache(): void {
    if (this.expansions.size) this.expansions.clear()
  }

  upsert(doc: IndexDocument): void {
    this.clearCache()
    const id = doc.hit.id
    if (this.internalIds.has(id)) this.remove(id)
    insert(this.db, { id, ...doc.fields } as never)
    const fresh = this.store.newWords
    if (fresh?.length) {
      for (const w of fresh) this.vocabulary.add(w)
      fresh.length = 0
    }
    const internal = this.db.internalDocumentIDStore.idToInternalId.get(id) as number
    this.internalIds.set(id, internal)
    this.hits[internal] = doc.hit
    this.versions[internal] = doc.version
  }

  remove(id: string): boolean {
    const internal = this.internalIds.get(id)
    if (internal === undefined) return false
    this.clearCache()
    remove(this.db, id)
    this.internalIds.delete(id)
    this.hits[internal] = undefined
    this.removals++
    return true
  }

  private get store(): IndexStore {
    return this.db.data.index as unknown as IndexStore
  }

  /**
   * The vocabulary words a query word stands for, with their score factor: itself or words within its typo budget
   * (closer is better), and for the last word of a query also the words it begins.
   */
  private variants(word: string, asPrefix: boolean): Map<string, number> {
    const found = new Map<string, number>()
    const budget = typoBudget(word)
    if (budget === 0) {
      if (this.vocabulary.has(word)) found.set(word, DISTANCE_FACTOR[0])
    } else {
      this.vocabulary.fuzzy(word, budget, (w, dist) => {
        const f = DISTANCE_FACTOR[dist]
        if ((found.get(w) ?? 0) < f) found.set(w, f)
      })
    }
    if (asPrefix && word.length >= MIN_PREFIX) {
      for (const w of this.vocabulary.completions(word, MAX_PREFIX_WORDS)) {
        if (!found.has(w)) found.set(w, w === word ? DISTANCE_FACTOR[0] : PREFIX_FACTOR)
      }
    }
    return found
  }

  /** The nodes of a word's variants in one field, at most MAX_TERMS_PER_WORD, best factor then most frequent. */
  private lookup(field: SearchField, variants: Map<string, number>): Variant[] {
    let found: Variant[] = []
    // full_path is indexed without its last segment, which is the slug (documents.ts): its words are in slug's tree.
    for (const from of field === 'full_path' ? (['full_path', 'slug'] as const) : [field]) {
      const words = this.store.words?.[from]
      if (!words) continue
      for (const [w, factor] of variants) {
        const node = words.get(w)
        if (node && node.d.size > 0) found.push({ word: w, node, factor, from })
      }
    }
    if (found.length > MAX_TERMS_PER_WORD) {
      found.sort((a, b) => b.factor - a.factor || b.node.d.size - a.node.d.size)
      found = found.slice(0, MAX_TERMS_PER_WORD)
    }
    return found
  }

  /**
   * How many documents hold a word, estimated as its largest postings over the fields (the exact count, a union of
   * sets, is not worth it): one idf per word for every field, so the field weights alone order the fields.
   */
  private documentFrequency(word: string): number {
    let df = 0
    const words = this.store.words
    if (!words) return 0
    for (const field of SEARCH_FIELDS) {
      const n = words[field]?.get(word)?.d.size ?? 0
      if (n > df) df = n
    }
    return df
  }

  /** A query word's terms in the given fields, with their score bases (idf from the current postings). */
  private expand(word: string, asPrefix: boolean, fields: readonly SearchField[], docsCount: number): Map<SearchField, Term[]> {
    const key = `${asPrefix ? '>' : '='}${word}`
    let cached = this.expansions.get(key)
    if (cached) this.cacheStats.hits++
    else {
      this.cacheStats.misses++
      if (this.expansions.size >= MAX_CACHED_WORDS) this.expansions.clear()
      this.expansions.set(key, (cached = new Map()))
    }
    let variants: Map<string, number> | null = null
    const idfs = new Map<string, number>()
    const idfOf = (w: string) => {
      let idf = idfs.get(w)
      if (idf === undefined) {
        const df = this.documentFrequency(w)
        idfs.set(w, (idf = Math.log(1 + (docsCount - df + 0.5) / (df + 0.5))))
      }
      return idf
    }
    const out = new Map<SearchField, Term[]>()
    for (const field of fields) {
      let list = cached.get(field)
      if (!list) {
        variants ??= this.variants(word, asPrefix)
        list = variants.size ? this.lookup(field, variants) : []
        cached.set(field, list)
      }
      const weight = FIELD_WEIGHTS[field]
      out.set(
        field,
        list.map(({ word: w, node, factor, from }) => ({ docs: node.d, base: weight * idfOf(w) * factor, from })),
      )
    }
    return out
  }

  /**
   * Scores one word: per field the best of the word's terms, summed over fields — except slug and full_path, where
   * the path contains the slug: the better of the two counts, so a slug match weighs 1.25, not 2.25, and stays below
   * a body or tag match as the spec orders them. With `within` (the candidates so far), only those documents are
   * looked at, from whichever side is smaller. Returns the documents scored; their scores are in scratch.word.
   */
  private scoreWord(terms: Map<SearchField, Term[]>, within: number[] | null): number[] {
    const sc = this.scratch
    const store = this.store
    const wordGen = sc.next('word')
    const touched: number[] = []
    const groups: Term[][] = []
    let path: Term[] = []
    for (const [field, list] of terms) {
      if (!list.length) continue
      if (field === 'slug' || field === 'full_path') path = path.concat(list)
      else groups.push(list)
    }
    if (path.length) groups.push(path)
    const candGen = sc.gens.cand
    for (const list of groups) {
      const single = list.length === 1
      const bestGen = single ? 0 : sc.next('best')
      const bestTouched: number[] = []
      for (const term of list) {
        const lengths = store.fieldLengths[term.from]
        const avg = store.avgFieldLength[term.from] || 1
        const base = term.base
        const docs = term.docs
        const visit = (doc: number) => {
          let r = (lengths[doc] ?? avg) / avg
          if (r > MAX_LENGTH_RATIO) r = MAX_LENGTH_RATIO
          else if (r < 1 / MAX_LENGTH_RATIO) r = 1 / MAX_LENGTH_RATIO
          const v = (base * (K1 + 1)) / (1 + K1 * (1 - B + B * r))
          if (single) {
            if (sc.wordMark[doc] !== wordGen) {
              sc.wordMark[doc] = wordGen
              sc.word[doc] = v
              touched.push(doc)
            } else sc.word[doc] += v
          } else if (sc.bestMark[doc] !== bestGen) {
            sc.bestMark[doc] = bestGen
            sc.best[doc] = v
            bestTouched.push(doc)
          } else if (sc.best[doc] < v) sc.best[doc] = v
        }
        if (within && within.length < docs.size) {
          for (const doc of within) if (docs.has(doc)) visit(doc)
        } else if (within) {
          for (const doc of docs) if (sc.candMark[doc] === candGen) visit(doc)
        } else {
          for (const doc of docs) visit(doc)
        }
      }
      for (const doc of bestTouched) {
        if (sc.wordMark[doc] !== wordGen) {
          sc.wordMark[doc] = wordGen
          sc.word[doc] = sc.best[doc]
          touched.push(doc)
        } else sc.word[doc] += sc.best[doc]
      }
    }
    return touched
  }

  search(query: ParsedQuery, opts: SearchOptions): SearchResult {
    const docsCount = this.size
    if (!query.words.length || docsCount === 0) return { total: 0, hits: [] }
    const last = query.words.length - 1
    const expanded = query.words.map((word, i) => {
      const terms = this.expand(word, i === last && query.lastIsPrefix, opts.fields, docsCount)
      let estimate = 0
      for (const list of terms.values()) for (const t of list) estimate += t.docs.size
      return { word, terms, estimate }
    })
    let required = expanded.filter((w) => !opts.optional?.has(w.word))
    let optional = expanded.filter((w) => opts.optional?.has(w.word))
    if (!required.length) {
      required = optional
      optional = []
    }
    const sc = this.scratch
    sc.ensure(this.db.internalDocumentIDStore.internalIdToId.length + 1)
    // Rarest word first: it bounds the candidates; every other word only narrows them.
    required.sort((a, b) => a.estimate - b.estimate)
    let candidates: number[] | null = null
    for (const w of required) {
      if (w.estimate === 0) return { total: 0, hits: [] }
      const scored = this.scoreWord(w.terms, candidates)
      const gen = sc.next('cand')
      for (const doc of scored) {
        sc.cand[doc] = candidates === null ? sc.word[doc] : sc.cand[doc] + sc.word[doc]
        sc.candMark[doc] = gen
      }
      candidates = scored
      if (candidates.length === 0) return { total: 0, hits: [] }
    }
    for (const w of optional) for (const doc of this.scoreWord(w.terms, candidates)) sc.cand[doc] += sc.word[doc]
    return { total: candidates!.length, hits: this.top(candidates!, sc.cand, opts.offset, opts.limit) }
  }

  /** The page [offset, offset+limit) by score, then most recently updated, then id (a stable order for paging). */
  private top(docs: number[], scores: Float64Array, offset: number, limit: number): SearchHit[] {
    const k = offset + limit
    if (offset >= docs.length) return []
    const hits = this.hits
    const before = (a: number, b: number) => {
      const sa = scores[a]
      const sb = scores[b]
      if (sa !== sb) return sa > sb
      const ua = hits[a]!.updated_at
      const ub = hits[b]!.updated_at
      return ua !== ub ? ua > ub : a < b
    }
    let ids: number[]
    if (k >= docs.length || k > 1000) {
      ids = docs.slice().sort((a, b) => (before(a, b) ? -1 : 1))
    } else {
      // A min-heap of the k best: O(n log k) instead of sorting every candidate.
      const heap: number[] = []
      const down = (i: number) => {
        for (;;) {
          const l = 2 * i + 1
          const r = l + 1
          let w = i
          if (l < heap.length && before(heap[w], heap[l])) w = l
          if (r < heap.length && before(heap[w], heap[r])) w = r
          if (w === i) return
          ;[heap[i], heap[w]] = [heap[w], heap[i]]
          i = w
        }
      }
      for (const doc of docs) {
        if (heap.length < k) {
          heap.push(doc)
          let i = heap.length - 1
          while (i > 0) {
            const p = (i - 1) >> 1
            if (!before(heap[p], heap[i])) break
            ;[heap[i], heap[p]] = [heap[p], heap[i]]
            i = p
          }
        } else if (before(doc, heap[0])) {
          heap[0] = doc
          down(0)
        }
      }
      ids = heap.sort((a, b) => (before(a, b) ? -1 : 1))
    }
    return ids.slice(offset, k).map((i) => hits[i]!)
  }
}

/**
 * Per-document working arrays of a query, indexed by Orama's internal id and reused across queries (a search runs
 * start to end without yielding, so one set per index serves every request). A mark equal to the current generation
 * says the slot holds this query's value; bumping the generation clears a whole array in O(1).
 */
class Scratch {
  best = new Float64Array(0)
  bestMark = new Uint32Array(0)
  word = new Float64Array(0)
  wordMark = new Uint32Array(0)
  cand = new Float64Array(0)
  candMark = new Uint32Array(0)
  gens = { best: 0, word: 0, cand: 0 }

  ensure(size: number) {
    if (this.best.length >= size) return
    const n = Math.max(size, Math.ceil(this.best.length * 1.5), 1024)
    this.best = new Float64Array(n)
    this.bestMark = new Uint32Array(n)
    this.word = new Float64Array(n)
    this.wordMark = new Uint32Array(n)
    this.cand = new Float64Array(n)
    this.candMark = new Uint32Array(n)
    this.gens = { best: 0, word: 0, cand: 0 }
  }

  next(which: 'best' | 'word' | 'cand'): number {
    if (this.gens[which] >= 0xfffffffe) {
      this[`${which}Mark`].fill(0)
      this.gens[which] = 0
    }
    return ++this.gens[which]
  }
}

export { SEARCH_FIELDS }
