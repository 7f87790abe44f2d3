// One search index: the published Stories of one Space in one locale, in a compact inverted index of our own.
//
// Layout (figures in docs/search.md):
// - Terms: the index's vocabulary (vocabulary.ts) gives every distinct word a term id, once, and keeps the words in
//   sorted flat arrays for the typo walk and the prefix range.
// - Postings: per term, the documents holding it, each as one 32-bit number: the document's ordinal × 64 + six field
//   bits (headline, lead, body_text, tags, slug, full_path). Term frequency is binary (the fields hold distinct words),
//   so the bits are all BM25 needs besides the field lengths. The bulk of the postings is one Uint32Array in term
//   order (`start[t] .. start[t + 1]`, ascending ordinals); changes since the last compaction are small per-term
//   arrays (`delta`). Ordinals only grow, so each list stays sorted by document and a candidate can be looked up by
//   binary search.
// - Documents: a table by ordinal — the hit (what the API returns), the published version, the six field lengths, a
//   tombstone. An update is a removal (tombstone) and an insertion under a new ordinal; a removed document's postings
//   are skipped by the tombstone and dropped by the next compaction, which runs in the background in slices.
// - A build appends (term, posting) pairs to a chunked log and sorts them into the term-ordered array once, at the end
//   (a counting sort: O(postings)).
//
// A query expands each word once against the vocabulary with its own typo budget, and the last word also to every
// word it begins (bounded by a posting budget, not a word count); the candidates come from the rarest word and are
// only narrowed by the others (a document that cannot match every word is never scored); the score is BM25 with binary
// term frequency, weighted per field and by how the word matched.
import { SEARCH_FIELDS, type SearchField, stopWordsFor, wordsOf } from './text'
import { typoBudget } from './tolerance'
import { type SortedWordsParts, Vocabulary } from './vocabulary'

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
/** Score factor of a word matched through a typo or as a completion of the last query word. */
const DISTANCE_FACTOR = [1, 0.5, 0.3]
const PREFIX_FACTOR = 0.7
/** Typo variants one query word may expand to (closest first, then most frequent). */
export const MAX_TERMS_PER_WORD = 48
/**
 * Completions of the last query word: all of them, unless their postings add up to more than this (then the shortest
 * completions first, until the budget is spent). A budget of postings, not of words, bounds the work of a query
 * without dropping the one long word a Story holds.
 */
export const PREFIX_POSTING_BUDGET = 100_000
/** Query words whose expansions are kept (cleared when full, and when new words enter the index). */
const MAX_CACHED_WORDS = 10_000
const MAX_CACHED_TERMS = 400_000
/** Query words beyond this many are ignored. */
export const MAX_QUERY_WORDS = 8
/** The last query word also matches as a prefix from this many characters on. */
const MIN_PREFIX = 2
// BM25 with binary term frequency: k1 1.2, b 0.3, a field's length against its average capped at 3:1 either way.
const K1 = 1.2
const B = 0.3
const MAX_LENGTH_RATIO = 3

/** Field bits of a posting, in SEARCH_FIELDS order; a posting is ordinal × 64 + bits. */
const FIELDS = SEARCH_FIELDS.length
const SHIFT = 64
const SLUG_BIT = 4
const PATH_BIT = 5
/** Score groups: each field its own, except slug and full_path, which share one (the better of the two counts). */
const GROUP_OF_BIT = [0, 1, 2, 3, 4, 4]
const GROUPS = 5
/** Postings per step of a sliced compaction. */
const COMPACT_STEP = 1 << 16
const LOG_CHUNK = 1 << 16
/**
 * The build log's first chunk starts this small and grows ×4 up to LOG_CHUNK: most Spaces hold a few Stories, and a
 * full first chunk (512 KB for its two arrays) per build was most of the garbage of a walk over many small Spaces.
 */
const LOG_FIRST = 1 << 11
/** Largest ordinal a posting can hold (2^26: 67 million insertions into one index before a rebuild). */
const MAX_ORDINAL = 2 ** 32 / SHIFT - 1

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

/**
 * One Story in one locale, ready for the index: the hit and each field's folded words (text.ts wordsOf; repeats are
 * counted once), or a space-separated string of them (text.ts tokenString).
 */
export interface IndexDocument {
  hit: SearchHit
  fields: Record<SearchField, string | readonly string[]>
  /** The Story's version_no when this snapshot was published (reconciliation compares it with the database). */
  version: number
}

/** A compacted index's state (exportParts / fromParts): what a snapshot stores. */
export interface IndexParts {
  lang: string
  vocabulary: { forward: SortedWordsParts; backward: SortedWordsParts; size: number }
  start: Uint32Array
  post: Uint32Array
  ordinals: number
  /** By ordinal; undefined for a removed document. */
  hits: (SearchHit | undefined)[]
  versions: Uint32Array
  lengths: Uint16Array
  dead: Uint8Array
  postingCounts: Uint16Array
  lengthSums: number[]
  lengthDocs: number[]
  removals: number
  deadPostings: number
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

/** A vocabulary word a query word stands for. */
interface Variant {
  id: number
  factor: number
}

interface Expansion {
  variants: Variant[]
  /** Every variant is a stop word (a stop word typed with a typo): the word is then optional, never a veto. */
  stopOnly: boolean
}

interface Term {
  id: number
  /** idf × typo/prefix factor: field weight and length norm are the per-document part. */
  base: number
}

let indexSerials = 0
/** release(): arrays below this stay with the collector (fast typed arrays live in its cells). */
const RELEASE_MIN_BYTES = 4096
/** release(): a snapshot's shared buffer is detached only from this size (never one of Buffer's pooled slabs). */
const RELEASE_SHARED_MIN_BYTES = 65536
/** Heap bytes a document holds besides the arrays: its hit (object and strings), id, map entry and slots. */
export const DOCUMENT_ALLOWANCE = 900
/** Heap bytes an index holds besides the arrays and documents: its objects, maps, small arrays and vocabulary. */
export const INDEX_ALLOWANCE = 7168

/**
 * Why one class of about 650 lines: the index is a handful of typed arrays (postings, their term offsets, the delta
 * lists, the per-document lengths, tombstones and versions) that every operation reads and rewrites together, and whose
 * layout is the point of the file (the header above). Split into functions, each would take or return the whole set;
 * split into classes, the hot loops (`scoreWord`, `top`, the compaction) would reach through accessors. Helpers that
 * need none of that state already live apart (vocabulary.ts, tolerance.ts, text.ts, the scratch buffers below).
 */
export class SearchIndex {
  /** Every word of every field, with its term id. */
  readonly vocabulary: Vocabulary
  private readonly stop: ReadonlySet<string>

  // ---- Postings ----
  /** Term t's postings in the compacted array: post[start[t] .. start[t + 1]). Terms past start.length - 1 have none. */
  private start = new Uint32Array(1)
  private post = new Uint32Array(0)
  /** Postings added since the last compaction, by term (ascending ordinals, as ordinals only grow). */
  private delta = new Map<number, number[]>()
  /** The delta being merged by a running compaction (still searched until the merged array replaces both). */
  private frozen: Map<number, number[]> | null = null
  private deltaPostings = 0
  /** Postings of removed documents still in the arrays (dropped by the next compaction). */
  private deadPostings = 0
  /** Build mode: (term, posting) pairs appended to a log, sorted into `post` by the first compaction. */
  private bulk: boolean
  private logTerms: Uint32Array[] = []
  private logPosts: Uint32Array[] = []
  private logLength = 0
  private compaction: Generator<void, void> | null = null
  /** A running compaction holds the build log: searches finish it first. */
  private sealing = false
  private compacting: Promise<void> | null = null

  // ---- Documents, by ordinal ----
  private ordinals = 0
  private capacity = 0
  private hits: (SearchHit | undefined)[] = []
  private versions = new Uint32Array(0)
  /** Distinct words per field: lengths[ordinal × 6 + field]. */
  private lengths = new Uint16Array(0)
  private dead = new Uint8Array(0)
  /** Postings each document holds (for the dead-postings count). */
  private postingCounts = new Uint16Array(0)
  private ids = new Map<string, number>()
  /** Sum of lengths and number of documents with the field non-empty, per field: the average is over those. */
  private lengthSums = new Float64Array(FIELDS)
  private lengthDocs = new Float64Array(FIELDS)

  /** Upsert's scratch: field bits by term id, and the terms set in it. */
  private termMasks = new Uint8Array(0)
  private touchedTerms: number[] = []

  /** Query word → its variants: expanding a word (typo walk, prefix range) is most of a query's cost. */
  private expansions = new Map<string, Expansion>()
  private cachedTerms = 0
  readonly cacheStats = { hits: 0, misses: 0 }
  /**
   * The query's per-document score arrays: one for the whole process (a search runs start to end without yielding,
   * so no two use it at once; each use takes a new generation, so marks left by another index never count). Per index
   * it cost 64 bytes per document (at least 64 KB) for every index ever searched.
   */
  private scratch = sharedScratch
  /** Documents removed or replaced since the index was built. */
  removals = 0
  /**
   * Moves whenever an answer could change: a document added, replaced or removed, a compaction swapped in (removed
   * documents leave the word frequencies). The public search's memo of answers holds only while it is unchanged.
   */
  revision = 0

  /** `bulk`: the index is being built off to the side; the first compaction (or search) sorts its postings. */
  constructor(
    readonly lang: string,
    opts: { bulk?: boolean; vocabulary?: Vocabulary } = {},
  ) {
    this.stop = stopWordsFor(lang)
    this.bulk = opts.bulk ?? false
    this.vocabulary = opts.vocabulary ?? new Vocabulary()
  }

  /**
   * The index's whole state as arrays, for a snapshot (snapshot.ts); null unless it is compacted (no build log, no
   * delta, no pending words, no compaction running). The arrays are the index's own: encode them before it changes.
   */
  exportParts(): IndexParts | null {
    if (this.bulk || this.logLength || this.delta.size || this.frozen || this.compaction || this.compacting) return null
    const vocabulary = this.vocabulary.exportSorted()
    if (!vocabulary || this.start.length - 1 > vocabulary.size) return null
    const n = this.ordinals
    return {
      lang: this.lang,
      vocabulary,
      start: this.start,
      post: this.post,
      ordinals: n,
      hits: this.hits.slice(0, n),
      versions: this.versions.subarray(0, n),
      lengths: this.lengths.subarray(0, n * FIELDS),
      dead: this.dead.subarray(0, n),
      postingCounts: this.postingCounts.subarray(0, n),
      lengthSums: [...this.lengthSums],
      lengthDocs: [...this.lengthDocs],
      removals: this.removals,
      deadPostings: this.deadPostings,
    }
  }

  /** An index from exportParts()'s arrays (used as given: the caller hands them over). */
  static fromParts(p: IndexParts): SearchIndex {
    const idx = new SearchIndex(p.lang, { vocabulary: Vocabulary.fromSorted(p.vocabulary.forward, p.vocabulary.backward, p.vocabulary.size) })
    const n = p.ordinals
    if (p.hits.length !== n || p.versions.length !== n || p.lengths.length !== n * FIELDS || p.dead.length !== n || p.postingCounts.length !== n)
      throw new Error('search snapshot: document arrays disagree')
    if (p.start.length < 1 || p.start.length - 1 > p.vocabulary.size || p.start[p.start.length - 1] !== p.post.length)
      throw new Error('search snapshot: postings disagree')
    idx.start = p.start as Uint32Array<ArrayBuffer>
    idx.post = p.post as Uint32Array<ArrayBuffer>
    idx.ordinals = n
    idx.capacity = n
    idx.hits = p.hits
    idx.versions = p.versions as Uint32Array<ArrayBuffer>
    idx.lengths = p.lengths as Uint16Array<ArrayBuffer>
    idx.dead = p.dead as Uint8Array<ArrayBuffer>
    idx.postingCounts = p.postingCounts as Uint16Array<ArrayBuffer>
    idx.lengthSums = Float64Array.from(p.lengthSums)
    idx.lengthDocs = Float64Array.from(p.lengthDocs)
    idx.removals = p.removals
    idx.deadPostings = p.deadPostings
    idx.partsBuffers = new Set([p.start.buffer, p.post.buffer, p.versions.buffer, p.lengths.buffer, p.dead.buffer, p.postingCounts.buffer])
    for (const w of [p.vocabulary.forward, p.vocabulary.backward]) for (const a of [w.chars, w.ids, w.offsets, w.lcp]) idx.partsBuffers.add(a.buffer)
    for (let o = 0; o < n; o++) {
      const hit = p.hits[o]
      if (hit && !p.dead[o]) idx.ids.set(hit.id, o)
    }
    return idx
  }

  /** Unique per index object in this process (the search memo tells indexes apart by it without holding them). */
  readonly serial = ++indexSerials

  /** The buffers of a snapshot the index was decoded from (fromParts): shared by the Space's locales, viewed in place. */
  private partsBuffers: Set<ArrayBufferLike> | null = null
  /** True once release() freed the arrays: the index answers nothing more (its Space is read afresh). */
  released = false

  /** Whether release() would free the arrays now (not released yet, no compaction running). */
  get releasable(): boolean {
    return !this.released && !this.compaction && !this.compacting && !this.vocabulary.compactingNow
  }

  /**
   * Frees the index's large arrays at once (an evicted index): their bytes go back to the allocator now instead of at
   * the collector's next full collection, which under a steady churn of cold Spaces comes only once the heap has grown
   * to a multiple of what it keeps (kernel/memory.ts). The arrays are detached (ArrayBuffer transfer to length 0), so
   * nothing that still holds the index may use it: the registry releases only indexes no build, update, compaction or
   * snapshot is using, and a search that got the index before it was released asks again (`released`). Not done while
   * a compaction runs (it holds arrays of its own): the collector frees that index as before. Returns the bytes freed.
   */
  release(): number {
    if (!this.releasable) return 0
    this.released = true
    const buffers = new Set<ArrayBufferLike>()
    const add = (a: ArrayBufferView) => {
      // Small arrays live in the collector's own cells (fast typed arrays): materialising their buffer costs more.
      if (a.byteLength < RELEASE_MIN_BYTES) return
      const b = a.buffer
      // A snapshot's buffer is the decompressed blob (never a pooled Buffer at this size); an array of the index's own
      // is exactly its buffer. Anything else (a view into a buffer someone else may hold) is left to the collector.
      if (this.partsBuffers?.has(b) ? b.byteLength >= RELEASE_SHARED_MIN_BYTES : a.byteOffset === 0 && a.byteLength === b.byteLength) buffers.add(b)
    }
    for (const a of [this.start, this.post, this.versions, this.lengths, this.dead, this.postingCounts, this.termMasks, ...this.logTerms, ...this.logPosts]) add(a)
    for (const a of this.vocabulary.arrays()) add(a)
    let freed = 0
    for (const b of buffers) {
      const buffer = b as ArrayBuffer & { transfer?: (n: number) => ArrayBuffer; detached?: boolean }
      if (buffer.detached || typeof buffer.transfer !== 'function') continue
      freed += buffer.byteLength
      buffer.transfer(0)
    }
    this.hits = []
    this.ids.clear()
    this.expansions.clear()
    this.delta.clear()
    this.logTerms = []
    this.logPosts = []
    this.logLength = 0
    this.ordinals = 0
    this.capacity = 0
    this.start = new Uint32Array(1)
    this.post = new Uint32Array(0)
    this.versions = new Uint32Array(0)
    this.lengths = new Uint16Array(0)
    this.dead = new Uint8Array(0)
    this.postingCounts = new Uint16Array(0)
    this.termMasks = new Uint8Array(0)
    this.vocabulary.clear()
    this.revision++
    return freed
  }

  get size(): number {
    return this.ids.size
  }

  /**
   * Memory this index holds, estimated in bytes: its typed arrays exactly, plus a fixed allowance per document for its
   * hit and id (strings and objects) and per pending posting, and one per index for its objects, maps and small arrays.
   * What SEARCH_MEMORY_MB is counted against. The allowances are measured: the JavaScript heap with the indexes of a
   * few thousand Spaces and without them, after full collections (docs/search.md, "Memory").
   */
  get approxBytes(): number {
    return (
      this.vocabulary.approxBytes +
      this.start.byteLength +
      this.post.byteLength +
      (this.deltaPostings + this.logLength) * 8 +
      this.versions.byteLength +
      this.lengths.byteLength +
      this.dead.byteLength +
      this.postingCounts.byteLength +
      this.termMasks.byteLength +
      this.ordinals * DOCUMENT_ALLOWANCE +
      this.cachedTerms * 16 +
      INDEX_ALLOWANCE
    )
  }

  /** Ordinals given out (live and removed documents): the size of the per-document table. */
  get ordinalCount(): number {
    return this.ordinals
  }

  has(id: string): boolean {
    return this.ids.has(id)
  }

  hit(id: string): SearchHit | undefined {
    const o = this.ids.get(id)
    return o === undefined ? undefined : this.hits[o]
  }

  /** Every document: its hit and published version. */
  *documents(): IterableIterator<{ hit: SearchHit; version: number }> {
    for (const o of this.ids.values()) yield { hit: this.hits[o]!, version: this.versions[o] }
  }

  /** Forgets cached query-word expansions (they are also dropped when new words enter the index). */
  clearCache(): void {
    if (this.expansions.size) this.expansions.clear()
    this.cachedTerms = 0
  }

  /** Postings held, in the compacted array, the build log and the deltas (removed documents' included until compacted). */
  get postingCount(): number {
    return this.post.length + this.logLength + this.deltaPostings + this.frozenPostings()
  }

  private frozenPostings(): number {
    let n = 0
    if (this.frozen) for (const list of this.frozen.values()) n += list.length
    return n
  }

  private grow(min: number) {
    if (min <= this.capacity) return
    const cap = Math.max(min, Math.ceil(this.capacity * 1.5), 256)
    const versions = new Uint32Array(cap)
    versions.set(this.versions)
    const lengths = new Uint16Array(cap * FIELDS)
    lengths.set(this.lengths)
    const dead = new Uint8Array(cap)
    dead.set(this.dead)
    const counts = new Uint16Array(cap)
    counts.set(this.postingCounts)
    this.versions = versions
    this.lengths = lengths
    this.dead = dead
    this.postingCounts = counts
    this.capacity = cap
  }

  upsert(doc: IndexDocument): void {
    this.revision++
    const id = doc.hit.id
    if (this.ids.has(id)) this.remove(id)
    if (this.ordinals >= MAX_ORDINAL) throw new Error('search index: too many insertions; rebuild it')
    const o = this.ordinals++
    this.grow(this.ordinals)
    const words = this.vocabulary.size
    // The document's terms and their field bits, in a term-indexed scratch array (cleared again below).
    const touched = this.touchedTerms
    touched.length = 0
    for (let f = 0; f < FIELDS; f++) {
      const text = doc.fields[SEARCH_FIELDS[f]]
      if (!text || !text.length) continue
      const list = typeof text === 'string' ? text.split(' ') : text
      // Distinct words: a repeated word sets its bit once and counts once.
      let n = 0
      const bit = 1 << f
      for (const w of list) {
        const t = this.vocabulary.intern(w)
        if (t < 0) continue
        if (t >= this.termMasks.length) {
          const grown = new Uint8Array(Math.max(1024, t * 2))
          grown.set(this.termMasks)
          this.termMasks = grown
        }
        const m = this.termMasks[t]
        if (m & bit) continue
        n++
        if (m === 0) touched.push(t)
        this.termMasks[t] = m | bit
      }
      this.lengths[o * FIELDS + f] = n > 0xffff ? 0xffff : n
      if (n) {
        this.lengthSums[f] += n
        this.lengthDocs[f]++
      }
    }
    // New words may be variants of cached query words.
    if (this.vocabulary.size !== words) this.clearCache()
    const base = o * SHIFT
    const masks = this.termMasks
    if (this.bulk) {
      for (const t of touched) {
        const mask = masks[t]
        masks[t] = 0
        const chunk = this.logLength >>> 16
        const at = this.logLength & (LOG_CHUNK - 1)
        if (chunk === this.logTerms.length) {
          const size = chunk === 0 ? LOG_FIRST : LOG_CHUNK
          this.logTerms.push(new Uint32Array(size))
          this.logPosts.push(new Uint32Array(size))
        } else if (at === this.logTerms[chunk].length) {
          // Only the first chunk starts short: grown in place of the old one (same addressing, i >>> 16).
          const size = Math.min(LOG_CHUNK, at * 4)
          const terms = new Uint32Array(size)
          terms.set(this.logTerms[chunk])
          const posts = new Uint32Array(size)
          posts.set(this.logPosts[chunk])
          this.logTerms[chunk] = terms
          this.logPosts[chunk] = posts
        }
        this.logTerms[chunk][at] = t
        this.logPosts[chunk][at] = base + mask
        this.logLength++
      }
    } else {
      for (const t of touched) {
        const mask = masks[t]
        masks[t] = 0
        const list = this.delta.get(t)
        if (list) list.push(base + mask)
        else this.delta.set(t, [base + mask])
      }
      this.deltaPostings += touched.length
    }
    this.postingCounts[o] = touched.length > 0xffff ? 0xffff : touched.length
    this.ids.set(id, o)
    this.hits[o] = doc.hit
    this.versions[o] = doc.version
  }

  remove(id: string): boolean {
    const o = this.ids.get(id)
    if (o === undefined) return false
    this.revision++
    this.ids.delete(id)
    this.hits[o] = undefined
    this.dead[o] = 1
    for (let f = 0; f < FIELDS; f++) {
      const n = this.lengths[o * FIELDS + f]
      if (n) {
        this.lengthSums[f] -= n
        this.lengthDocs[f]--
      }
    }
    this.deadPostings += this.postingCounts[o]
    this.removals++
    return true
  }

  // ---- Compaction ----

  /** Whether a compaction would do anything worth its cost (new words to merge, a build log, enough churn). */
  get needsCompaction(): boolean {
    return (
      this.vocabulary.pendingCount > 0 ||
      this.logLength > 0 ||
      this.deltaPostings + this.deadPostings >= Math.max(4096, this.post.length >>> 5)
    )
  }

  /** Merges everything at once (tools, tests, and a search of an index still in build mode). */
  compact(): void {
    this.vocabulary.compact()
    this.compaction ??= this.beginCompaction()
    this.finishCompaction()
  }

  private finishCompaction() {
    const steps = this.compaction
    if (!steps) return
    while (!steps.next().done) {}
  }

  /**
   * The same in slices with `pause()` between them, in the background: the vocabulary merge, then the postings (the
   * delta and the build log merged into the term-ordered array, removed documents' postings dropped). Searches go on
   * meanwhile against the old array plus the deltas; the merged array replaces them at the end of the last slice.
   */
  compactInSlices(pause: () => Promise<void>): Promise<void> {
    this.compacting ??= (async () => {
      try {
        await this.vocabulary.compactInSlices(pause)
        if (!this.logLength && this.deltaPostings + this.deadPostings === 0) return
        const steps = (this.compaction ??= this.beginCompaction())
        while (!steps.next().done) await pause()
      } finally {
        this.compacting = null
      }
    })()
    return this.compacting
  }

  /**
   * Freezes what is to be merged (the build log, the delta, which documents are removed) and returns the merge in
   * steps; changes made meanwhile go to a fresh delta and tombstones, as usual.
   */
  private beginCompaction(): Generator<void, void> {
    const terms = this.vocabulary.size
    const oldStart = this.start
    const oldPost = this.post
    const logTerms = this.logTerms
    const logPosts = this.logPosts
    const logLength = this.logLength
    const frozen = this.delta
    this.logTerms = []
    this.logPosts = []
    this.logLength = 0
    this.bulk = false
    this.sealing = logLength > 0
    this.frozen = frozen
    this.delta = new Map()
    this.deltaPostings = 0
    const deadAt = this.dead.slice(0, this.ordinals)
    const self = this
    return (function* () {
      try {
        const before = oldPost.length + logLength + [...frozen.values()].reduce((n, l) => n + l.length, 0)
        const counts = new Uint32Array(terms + 1)
        const oldTerms = oldStart.length - 1
        let work = 0
        for (let t = 0; t < oldTerms; t++) {
          const end = oldStart[t + 1]
          let n = 0
          for (let i = oldStart[t]; i < end; i++) if (!deadAt[Math.floor(oldPost[i] / SHIFT)]) n++
          counts[t] += n
          work += end - oldStart[t]
          if (work >= COMPACT_STEP) {
            work = 0
            yield
          }
        }
        for (let i = 0; i < logLength; i++) {
          const c = i >>> 16
          const k = i & (LOG_CHUNK - 1)
          if (!deadAt[Math.floor(logPosts[c][k] / SHIFT)]) counts[logTerms[c][k]]++
          if (k === LOG_CHUNK - 1) yield
        }
        for (const [t, list] of frozen) for (const p of list) if (!deadAt[Math.floor(p / SHIFT)]) counts[t]++
        yield
        const start = new Uint32Array(terms + 1)
        let total = 0
        for (let t = 0; t < terms; t++) {
          start[t] = total
          total += counts[t]
        }
        start[terms] = total
        const post = new Uint32Array(total)
        const cursor = start.slice(0, terms)
        for (let t = 0; t < oldTerms; t++) {
          const end = oldStart[t + 1]
          let at = cursor[t]
          for (let i = oldStart[t]; i < end; i++) {
            const p = oldPost[i]
            if (!deadAt[Math.floor(p / SHIFT)]) post[at++] = p
          }
          cursor[t] = at
          work += end - oldStart[t]
          if (work >= COMPACT_STEP) {
            work = 0
            yield
          }
        }
        // The log holds ordinals in ascending order, all above the compacted array's: appended in order, each term's
        // list stays sorted.
        for (let i = 0; i < logLength; i++) {
          const c = i >>> 16
          const k = i & (LOG_CHUNK - 1)
          const p = logPosts[c][k]
          if (!deadAt[Math.floor(p / SHIFT)]) post[cursor[logTerms[c][k]]++] = p
          if (k === LOG_CHUNK - 1) {
            logTerms[c] = EMPTY_U32
            logPosts[c] = EMPTY_U32
            yield
          }
        }
        for (const [t, list] of frozen) for (const p of list) if (!deadAt[Math.floor(p / SHIFT)]) post[cursor[t]++] = p
        self.start = start
        self.post = post
        self.frozen = null
        self.revision++
        self.deadPostings = Math.max(0, self.deadPostings - (before - total))
      } finally {
        self.compaction = null
        self.sealing = false
      }
    })()
  }

  // ---- Queries ----

  /** Documents holding term t (removed ones included until compacted). */
  private frequency(t: number): number {
    let n = t < this.start.length - 1 ? this.start[t + 1] - this.start[t] : 0
    const d = this.delta.get(t)
    if (d) n += d.length
    const f = this.frozen?.get(t)
    if (f) n += f.length
    return n
  }

  /**
   * The vocabulary words a query word stands for, with their score factor: itself or words within its typo budget
   * (closer is better; at most MAX_TERMS_PER_WORD, best factor then most frequent), and for the last word of a query
   * also every word it begins (the shortest first should their postings exceed PREFIX_POSTING_BUDGET).
   */
  private expand(word: string, asPrefix: boolean): Expansion {
    const key = `${asPrefix ? '>' : '='}${word}`
    const cached = this.expansions.get(key)
    if (cached) {
      this.cacheStats.hits++
      return cached
    }
    this.cacheStats.misses++
    const found = new Map<number, number>()
    let stopOnly = true
    const budget = typoBudget(word)
    if (budget === 0) {
      const id = this.vocabulary.idOf(word)
      if (id >= 0) {
        found.set(id, DISTANCE_FACTOR[0])
        stopOnly = this.stop.has(word)
      }
    } else {
      const typos: { id: number; factor: number; df: number }[] = []
      this.vocabulary.fuzzy(word, budget, (w, dist, id) => {
        typos.push({ id, factor: DISTANCE_FACTOR[dist], df: this.frequency(id) })
        if (!this.stop.has(w)) stopOnly = false
      })
      if (typos.length > MAX_TERMS_PER_WORD) {
        typos.sort((a, b) => b.factor - a.factor || b.df - a.df)
        typos.length = MAX_TERMS_PER_WORD
      }
      for (const v of typos) found.set(v.id, v.factor)
    }
    if (asPrefix && word.length >= MIN_PREFIX) {
      const completions: { id: number; len: number; df: number }[] = []
      let total = 0
      let checked = 0
      this.vocabulary.prefixRange(word, (id, len, w) => {
        if (len === word.length) return // the word itself: matched exactly above
        const df = this.frequency(id)
        if (df === 0) return
        completions.push({ id, len, df })
        total += df
        // A completion that is not a stop word makes the word required; past a few, one surely is not.
        if (stopOnly && (++checked > 64 || !this.stop.has(w()))) stopOnly = false
      })
      if (total > PREFIX_POSTING_BUDGET) completions.sort((a, b) => a.len - b.len || b.df - a.df)
      let spent = 0
      for (const c of completions) {
        if (spent >= PREFIX_POSTING_BUDGET) break
        spent += c.df
        if ((found.get(c.id) ?? 0) < PREFIX_FACTOR) found.set(c.id, PREFIX_FACTOR)
      }
    }
    const variants: Variant[] = []
    for (const [id, factor] of found) variants.push({ id, factor })
    const expansion = { variants, stopOnly: stopOnly && variants.length > 0 }
    if (this.expansions.size >= MAX_CACHED_WORDS || this.cachedTerms + variants.length > MAX_CACHED_TERMS) this.clearCache()
    this.expansions.set(key, expansion)
    this.cachedTerms += variants.length
    return expansion
  }

  /**
   * Scores one word over the fields in `bitWeight`: per field the best of the word's terms, summed over fields (slug
   * and full_path: the better of the two, so a slug match weighs 1.25, not 2.25, and stays below a tag match as the
   * spec orders them). With `within` (the candidates so far), only those documents count, visited from whichever side
   * is cheaper. Returns the documents scored; their scores are in scratch.word.
   */
  private scoreWord(terms: Term[], bitWeight: Float64Array, fieldMask: number, within: number[] | null): number[] {
    const sc = this.scratch
    const wordGen = sc.next('word')
    const candGen = sc.gens.cand
    const touched: number[] = []
    const { dead, lengths } = this
    const best = sc.best
    const wordMark = sc.wordMark
    const candMark = sc.candMark
    const avg = new Float64Array(FIELDS)
    for (let f = 0; f < FIELDS; f++) avg[f] = this.lengthDocs[f] ? this.lengthSums[f] / this.lengthDocs[f] : 1
    const bitBase = new Float64Array(FIELDS)
    const visit = (p: number) => {
      const doc = Math.floor(p / SHIFT)
      const m = p & fieldMask
      if (m === 0 || dead[doc]) return
      if (wordMark[doc] !== wordGen) {
        wordMark[doc] = wordGen
        const g = doc * GROUPS
        best[g] = best[g + 1] = best[g + 2] = best[g + 3] = best[g + 4] = 0
        touched.push(doc)
      }
      for (let f = 0; f < FIELDS; f++) {
        if ((m & (1 << f)) === 0) continue
        let r = (lengths[doc * FIELDS + f] || avg[f]) / avg[f]
        if (r > MAX_LENGTH_RATIO) r = MAX_LENGTH_RATIO
        else if (r < 1 / MAX_LENGTH_RATIO) r = 1 / MAX_LENGTH_RATIO
        const v = (bitBase[f] * (K1 + 1)) / (1 + K1 * (1 - B + B * r))
        const slot = doc * GROUPS + GROUP_OF_BIT[f]
        if (v > best[slot]) best[slot] = v
      }
    }
    const scan = (list: ArrayLike<number>, lo: number, hi: number) => {
      const n = hi - lo
      if (n <= 0) return
      if (within && within.length * 12 < n) {
        // Few candidates, long list: look each candidate up (the list is sorted by ordinal).
        for (const doc of within) {
          const key = doc * SHIFT
          let a = lo
          let b = hi
          while (a < b) {
            const mid = (a + b) >>> 1
            if (list[mid] < key) a = mid + 1
            else b = mid
          }
          if (a < hi && list[a] < key + SHIFT) visit(list[a])
        }
      } else if (within) {
        for (let i = lo; i < hi; i++) {
          const p = list[i]
          if (candMark[Math.floor(p / SHIFT)] === candGen) visit(p)
        }
      } else {
        for (let i = lo; i < hi; i++) visit(list[i])
      }
    }
    const compacted = this.start.length - 1
    for (const term of terms) {
      for (let f = 0; f < FIELDS; f++) bitBase[f] = bitWeight[f] * term.base
      const t = term.id
      if (t < compacted) scan(this.post, this.start[t], this.start[t + 1])
      const fr = this.frozen?.get(t)
      if (fr) scan(fr, 0, fr.length)
      const d = this.delta.get(t)
      if (d) scan(d, 0, d.length)
    }
    const word = sc.word
    for (const doc of touched) {
      const g = doc * GROUPS
      word[doc] = best[g] + best[g + 1] + best[g + 2] + best[g + 3] + best[g + 4]
    }
    return touched
  }

  search(query: ParsedQuery, opts: SearchOptions): SearchResult {
    if (this.logLength > 0) this.compact()
    else if (this.sealing) this.finishCompaction()
    const docsCount = this.size
    if (!query.words.length || docsCount === 0) return { total: 0, hits: [] }
    // Weight of each field bit for the fields asked for. full_path is indexed without its last segment, the slug
    // (documents.ts): a full_path search also looks at the slug bit.
    const bitWeight = new Float64Array(FIELDS)
    for (const field of opts.fields) {
      const f = SEARCH_FIELDS.indexOf(field)
      bitWeight[f] = Math.max(bitWeight[f], FIELD_WEIGHTS[field])
      if (f === PATH_BIT) bitWeight[SLUG_BIT] = Math.max(bitWeight[SLUG_BIT], FIELD_WEIGHTS.full_path)
    }
    let fieldMask = 0
    for (let f = 0; f < FIELDS; f++) if (bitWeight[f] > 0) fieldMask |= 1 << f
    const last = query.words.length - 1
    const words = query.words.map((word, i) => {
      const { variants, stopOnly } = this.expand(word, i === last && query.lastIsPrefix)
      const terms: Term[] = []
      let estimate = 0
      for (const v of variants) {
        const df = this.frequency(v.id)
        if (df === 0) continue
        estimate += df
        terms.push({ id: v.id, base: Math.log(1 + (docsCount - df + 0.5) / (df + 0.5)) * v.factor })
      }
      // A stop word, or a word that only stands for stop words (a typo in one), does not narrow the result.
      const optional = opts.optional !== undefined && (opts.optional.has(word) || stopOnly)
      return { word, terms, estimate, optional }
    })
    let required = words.filter((w) => !w.optional)
    let optional = words.filter((w) => w.optional)
    if (!required.length) {
      required = optional
      optional = []
    }
    const sc = this.scratch
    sc.ensure(this.ordinals + 1)
    // Rarest word first: it bounds the candidates; every other word only narrows them.
    required.sort((a, b) => a.estimate - b.estimate)
    let candidates: number[] | null = null
    for (const w of required) {
      if (w.estimate === 0) return { total: 0, hits: [] }
      const scored = this.scoreWord(w.terms, bitWeight, fieldMask, candidates)
      const gen = sc.next('cand')
      for (const doc of scored) {
        sc.cand[doc] = candidates === null ? sc.word[doc] : sc.cand[doc] + sc.word[doc]
        sc.candMark[doc] = gen
      }
      candidates = scored
      if (candidates.length === 0) return { total: 0, hits: [] }
    }
    for (const w of optional) {
      if (w.terms.length) for (const doc of this.scoreWord(w.terms, bitWeight, fieldMask, candidates)) sc.cand[doc] += sc.word[doc]
    }
    return { total: candidates!.length, hits: this.top(candidates!, sc.cand, opts.offset, opts.limit) }
  }

  /** The page [offset, offset+limit) by score, then most recently updated, then ordinal (a stable order for paging). */
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

const EMPTY_U32 = new Uint32Array(0)

/**
 * Per-document working arrays of a query, indexed by ordinal and reused across queries (a search runs start to end
 * without yielding, so one set per index serves every request). A mark equal to the current generation says the slot
 * holds this query's value; bumping the generation clears a whole array in O(1). `best` holds GROUPS slots per document.
 */
class Scratch {
  best = new Float64Array(0)
  word = new Float64Array(0)
  wordMark = new Uint32Array(0)
  cand = new Float64Array(0)
  candMark = new Uint32Array(0)
  gens = { word: 0, cand: 0 }

  ensure(size: number) {
    if (this.word.length >= size) return
    const n = Math.max(size, Math.ceil(this.word.length * 1.5), 1024)
    this.best = new Float64Array(n * GROUPS)
    this.word = new Float64Array(n)
    this.wordMark = new Uint32Array(n)
    this.cand = new Float64Array(n)
    this.candMark = new Uint32Array(n)
    this.gens = { word: 0, cand: 0 }
  }

  next(which: 'word' | 'cand'): number {
    if (this.gens[which] >= 0xfffffffe) {
      this[`${which}Mark`].fill(0)
      this.gens[which] = 0
    }
    return ++this.gens[which]
  }
}

const sharedScratch = new Scratch()

export { SEARCH_FIELDS }
