// The words of one index and their term ids, for expanding a query word to its typo variants and completions.
//
// A typo search walks the trie of all words depth first, carrying one row of the edit-distance table per character
// and leaving a branch once every cell of the row is over the budget. On a radix tree of Map-linked nodes (Orama's,
// which the first version used) every step is a pointer chase into a large heap and a two-typo search visits tens of
// thousands of steps. Here the trie is implicit in one sorted, flat character array: word n starts at offsets[n] and
// shares lcp[n] characters with word n-1, so rows are reused along shared prefixes and a word whose prefix is already
// dead is skipped in a few steps. The same words are also kept reversed, for the split search below. About 30 times
// faster than a walk over Map-linked nodes, and a few MB per 100,000 words.
//
// Split search (pigeonhole): a guarded walk only keeps a branch while the path matches the start of the query within a
// smaller budget, which prunes the shallow levels of the trie where an unguarded walk keeps nearly every prefix alive;
// walks over the reversed words guard the end of the query the same way. Distances are exact either way.
// - One typo: q[0..p-1) is an exact prefix of the word, or q[p..m) an exact suffix (a swap across the cut, of q[p-1]
//   and q[p], leaves both intact).
// - Two typos, 7+ characters: cut the query into thirds A, B, C with one gap character after A and after B. An edit
//   touches at most one third (a swap of a gap character with its neighbour touches that neighbour's third only), so:
//   A is exact (walk from the front), or C is exact (walk over the reversed words), or A and C take one edit each and
//   A + gap + B is within one edit (walk from the front).
// - Two typos, shorter words: halves, one within one edit (a swap across the cut counts in both halves: 3 ≥ c1 + c2,
//   so one half has at most 1).

/** Longest word kept (text.ts MAX_WORD_LENGTH) plus the typo budget. */
const MAX_DEPTH = 48

/** Words sorted by UTF-16 code units, back to back, with shared-prefix lengths, jump pointers and term ids. */
interface SortedWords {
  chars: Uint16Array
  /** The term id of word n (the index's posting lists are by term id, which never changes once given). */
  ids: Uint32Array
  /** Word n is chars[offsets[n] .. offsets[n + 1]). */
  offsets: Uint32Array
  /** Characters word n shares with word n - 1. */
  lcp: Uint8Array
  /** The first word after n that shares fewer characters with its predecessor than word n does. */
  next: Uint32Array
}

const EMPTY: SortedWords = { chars: new Uint16Array(0), ids: new Uint32Array(0), offsets: new Uint32Array(1), lcp: new Uint8Array(0), next: new Uint32Array(0) }

const reverseBuffer = new Uint16Array(64)
/** A word's UTF-16 code units in reverse order (the same reversal for words and queries, so matching is consistent). */
function reverse(w: string): string {
  const n = w.length
  if (n > reverseBuffer.length) return w.split('').reverse().join('')
  for (let k = 0; k < n; k++) reverseBuffer[k] = w.charCodeAt(n - 1 - k)
  return String.fromCharCode.apply(null, reverseBuffer.subarray(0, n) as unknown as number[])
}

/** Words merged (or built) per step of a sliced compaction. */
const STEP = 8192
/** Up to this many new words are sorted in one call (about 60 ms), more in runs merged between pauses. */
const NATIVE_SORT = 200_000

/** Two sorted lists as one, yielding every STEP words. */
function* mergeSorted(a: string[], b: string[]): Generator<void, string[]> {
  const out = new Array<string>(a.length + b.length)
  let i = 0
  let j = 0
  let k = 0
  while (i < a.length && j < b.length) {
    out[k++] = a[i] <= b[j] ? a[i++] : b[j++]
    if ((k & (STEP - 1)) === 0) yield
  }
  while (i < a.length) out[k++] = a[i++]
  while (j < b.length) out[k++] = b[j++]
  return out
}

/** Sorts in runs of STEP words and merges them pairwise, yielding between steps. */
function* sortSteps(words: string[]): Generator<void, string[]> {
  let runs: string[][] = []
  for (let i = 0; i < words.length; i += STEP) {
    runs.push(words.slice(i, i + STEP).sort())
    yield
  }
  while (runs.length > 1) {
    const next: string[][] = []
    for (let i = 0; i < runs.length; i += 2) next.push(i + 1 < runs.length ? yield* mergeSorted(runs[i], runs[i + 1]) : runs[i])
    runs = next
  }
  return runs[0] ?? []
}

/** Runs a step generator to completion at once. */
function finish<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next()
    if (r.done) return r.value
  }
}

function wordAt(s: SortedWords, n: number): string {
  return String.fromCharCode(...s.chars.subarray(s.offsets[n], s.offsets[n + 1]))
}

/** Compares word n with `w` by UTF-16 code units (the order of JS `<`). */
function compareAt(s: SortedWords, n: number, w: string): number {
  const start = s.offsets[n]
  const len = s.offsets[n + 1] - start
  const max = len < w.length ? len : w.length
  for (let k = 0; k < max; k++) {
    const d = s.chars[start + k] - w.charCodeAt(k)
    if (d !== 0) return d
  }
  return len - w.length
}

/** The first index whose word is not below `w`. */
function lowerBound(s: SortedWords, w: string): number {
  let lo = 0
  let hi = s.lcp.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (compareAt(s, mid, w) < 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * `old` with the sorted `fresh` words merged in (their term ids from `idOf`); a word present in both is kept once.
 * O(words), yielding every STEP.
 */
function* mergeSteps(old: SortedWords, fresh: string[], idOf: (w: string) => number): Generator<void, SortedWords> {
  const oldCount = old.lcp.length
  let chars = new Uint16Array(old.offsets[oldCount] + fresh.reduce((n, w) => n + w.length, 0))
  let offsets = new Uint32Array(oldCount + fresh.length + 1)
  let lcp = new Uint8Array(oldCount + fresh.length)
  let ids = new Uint32Array(oldCount + fresh.length)
  let i = 0
  let j = 0
  let k = 0
  let pos = 0
  let prevStart = 0
  let prevLen = 0
  const put = (fromOld: boolean) => {
    offsets[k] = pos
    let id: number
    if (fromOld) {
      const a = old.offsets[i]
      const b = old.offsets[i + 1]
      chars.set(old.chars.subarray(a, b), pos)
      pos += b - a
      id = old.ids[i]
      i++
    } else {
      const w = fresh[j++]
      for (let c = 0; c < w.length; c++) chars[pos + c] = w.charCodeAt(c)
      pos += w.length
      id = idOf(w)
    }
    const start = offsets[k]
    const len = pos - start
    let l = 0
    if (k > 0) {
      const max = Math.min(len, prevLen, 255)
      while (l < max && chars[prevStart + l] === chars[start + l]) l++
      if (l === len && len === prevLen) {
        // A fresh word already there (known from another field): keep one.
        pos = start
        return
      }
    }
    lcp[k] = l
    ids[k] = id
    prevStart = start
    prevLen = len
    k++
  }
  let step = 0
  while (i < oldCount || j < fresh.length) {
    put(j >= fresh.length || (i < oldCount && compareAt(old, i, fresh[j]) <= 0))
    if (++step === STEP) {
      step = 0
      yield
    }
  }
  offsets[k] = pos
  if (k < lcp.length) {
    chars = chars.slice(0, pos)
    offsets = offsets.slice(0, k + 1)
    lcp = lcp.slice(0, k)
    ids = ids.slice(0, k)
  }
  return { chars, ids, offsets, lcp, next: jumpPointers(lcp) }
}

/** Jump pointers over runs of words that share a prefix, so a dead prefix is skipped in O(its length). */
function jumpPointers(lcp: Uint8Array): Uint32Array {
  const k = lcp.length
  const next = new Uint32Array(k)
  const stack: number[] = []
  for (let n = 0; n < k; n++) {
    while (stack.length && lcp[n] < lcp[stack[stack.length - 1]]) next[stack.pop()!] = n
    stack.push(n)
  }
  for (const n of stack) next[n] = k
  return next
}

/** A vocabulary's sorted arrays as a snapshot holds them (snapshot.ts); the jump pointers are derived on loading. */
export interface SortedWordsParts {
  chars: Uint16Array
  ids: Uint32Array
  offsets: Uint32Array
  lcp: Uint8Array
}

/**
 * The depth-first walk of the implicit trie of `s`: every word within `maxDist` edits of `q` (optimal string
 * alignment) that the guard lets through. Guard: until the path has matched q[0..guardLen) within `guardDist` edits,
 * a branch lives only while some cell i <= guardLen of its row is within guardDist; after that, while any cell is
 * within maxDist. With guardLen = q.length and guardDist = maxDist it is the plain walk. Only the diagonal band
 * |i - j| <= maxDist of the table is computed; cells just outside it hold `over`, all a neighbouring row reads there.
 */
function walk(
  s: SortedWords,
  q: Uint16Array,
  maxDist: number,
  guardLen: number,
  guardDist: number,
  onMatch: (n: number, distance: number) => void,
): void {
  const m = q.length
  const width = m + 2
  const over = maxDist + 1
  const rows = new Uint8Array(width * (MAX_DEPTH + 1))
  for (let i = 0; i <= m; i++) rows[i] = i < over ? i : over
  rows[m + 1] = over
  // passed[j]: the path's first j characters already matched q[0..guardLen) within guardDist.
  const passed = new Uint8Array(MAX_DEPTH + 1)
  passed[0] = guardLen <= guardDist ? 1 : 0
  const { chars, offsets, lcp, next } = s
  const count = lcp.length
  // Past m + maxDist characters no word can match: such a prefix is as good as dead for every word sharing it.
  const limit = m + maxDist + 1
  let valid = 0
  let dead = MAX_DEPTH + 1
  for (let n = 0; n < count; n++) {
    const shared = lcp[n]
    if (dead <= shared) {
      // Every word up to the next one sharing fewer than `dead` characters has the dead prefix too.
      let p = n
      while (p < count && lcp[p] >= dead) p = next[p]
      n = p - 1
      continue
    }
    const base = offsets[n]
    const wlen = offsets[n + 1] - base
    let j = valid < shared ? valid : shared
    dead = MAX_DEPTH + 1
    const len = wlen < limit ? wlen : limit
    while (j < len) {
      const ch = chars[base + j]
      const last = j > 0 ? chars[base + j - 1] : -1
      j++
      const cur = j * width
      const prev = cur - width
      const prevPrev = prev - width
      const lo = j - maxDist > 1 ? j - maxDist : 1
      const hi = j + maxDist < m ? j + maxDist : m
      rows[cur] = j < over ? j : over
      if (lo > 1) rows[cur + lo - 1] = over
      let min = lo > 1 ? over : rows[cur]
      let minGuarded = min
      for (let i = lo; i <= hi; i++) {
        const qc = q[i - 1]
        let v = rows[prev + i - 1] + (qc === ch ? 0 : 1)
        const del = rows[prev + i] + 1
        if (del < v) v = del
        const ins = rows[cur + i - 1] + 1
        if (ins < v) v = ins
        if (i > 1 && j > 1 && qc === last && q[i - 2] === ch) {
          const tr = rows[prevPrev + i - 2] + 1
          if (tr < v) v = tr
        }
        if (v > over) v = over
        rows[cur + i] = v
        if (v < min) min = v
        if (i <= guardLen && v < minGuarded) minGuarded = v
      }
      if (hi < m) rows[cur + hi + 1] = over
      const through = passed[j - 1] === 1 || (guardLen >= lo - 1 && guardLen <= hi && rows[cur + guardLen] <= guardDist)
      passed[j] = through ? 1 : 0
      if (through ? min > maxDist : minGuarded > guardDist) {
        dead = j
        break
      }
    }
    valid = j
    if (dead > MAX_DEPTH) {
      if (len < wlen) dead = len
      else if (m - j <= maxDist && j - m <= maxDist) {
        const d = rows[j * width + m]
        if (d <= maxDist) onMatch(n, d)
      }
    }
  }
}

/**
 * The words of one index and their term ids. A word gets its id the first time it is seen (intern) and keeps it for
 * the life of the index; the posting lists (engine.ts) are arrays by term id.
 */
export class Vocabulary {
  private forward: SortedWords = EMPTY
  /** The same words, each reversed (for the second half of a split search). */
  private backward: SortedWords = EMPTY
  /** Words (and their ids) added since the last compaction: searched one by one until merged in. */
  private pending = new Map<string, number>()
  private nextId = 0

  /** Distinct words; also the number of term ids given out (ids are 0 .. size - 1). */
  get size(): number {
    return this.nextId
  }

  /** Memory the word arrays hold, estimated in bytes (the resident-search budget, SEARCH_MEMORY_MB). */
  get approxBytes(): number {
    let n = this.pending.size * 64
    for (const w of [this.forward, this.backward]) n += w.chars.byteLength + w.ids.byteLength + w.offsets.byteLength + w.lcp.byteLength + w.next.byteLength
    return n
  }

  /** A compaction is running (it holds arrays of its own). */
  get compactingNow(): boolean {
    return this.compacting !== null
  }

  /** The sorted arrays (SearchIndex.release frees them). */
  arrays(): ArrayBufferView[] {
    const out: ArrayBufferView[] = []
    for (const w of [this.forward, this.backward]) out.push(w.chars, w.ids, w.offsets, w.lcp, w.next)
    return out
  }

  /** Forgets every word (after SearchIndex.release detached the arrays). */
  clear(): void {
    this.forward = EMPTY
    this.backward = EMPTY
    this.pending.clear()
    this.nextId = 0
  }

  /** Words waiting to be merged into the sorted arrays. */
  get pendingCount(): number {
    return this.pending.size
  }

  /** The term id of a word, or -1. */
  idOf(word: string): number {
    const p = this.pending.get(word)
    if (p !== undefined) return p
    const n = lowerBound(this.forward, word)
    return n < this.forward.lcp.length && compareAt(this.forward, n, word) === 0 ? this.forward.ids[n] : -1
  }

  has(word: string): boolean {
    return this.idOf(word) >= 0
  }

  /**
   * The term id of a word, given now if the word is new (it is searchable at once and merged into the sorted arrays by
   * compact()). -1 for a word too long to be a word.
   */
  intern(word: string): number {
    if (word.length === 0 || word.length > MAX_DEPTH - 3) return -1
    const known = this.idOf(word)
    if (known >= 0) return known
    const id = this.nextId++
    this.pending.set(word, id)
    if (this.compacting) this.addedMeanwhile.push(word)
    return id
  }

  /** intern(), for callers that only need the word known. */
  add(word: string): void {
    this.intern(word)
  }

  /** The sorted arrays, for a snapshot; null while words are pending or a compaction runs (compact first). */
  exportSorted(): { forward: SortedWordsParts; backward: SortedWordsParts; size: number } | null {
    if (this.pending.size || this.compacting) return null
    const part = (s: SortedWords): SortedWordsParts => ({ chars: s.chars, ids: s.ids, offsets: s.offsets, lcp: s.lcp })
    return { forward: part(this.forward), backward: part(this.backward), size: this.nextId }
  }

  /** A vocabulary from exportSorted()'s arrays (used as given, not copied). */
  static fromSorted(forward: SortedWordsParts, backward: SortedWordsParts, size: number): Vocabulary {
    const v = new Vocabulary()
    const whole = (p: SortedWordsParts): SortedWords =>
      p.lcp.length ? { chars: p.chars, ids: p.ids, offsets: p.offsets, lcp: p.lcp, next: jumpPointers(p.lcp) } : EMPTY
    v.forward = whole(forward)
    v.backward = whole(backward)
    v.nextId = size
    return v
  }

  /** Merges the pending words into the sorted arrays at once: O(words). For tools and tests; the service slices it. */
  compact(): void {
    if (!this.pending.size || this.compacting) return
    const pending = this.pending
    const fresh = [...pending.keys()]
    this.forward = finish(mergeSteps(this.forward, fresh.slice().sort(), (w) => pending.get(w)!))
    const reversed = new Map<string, number>()
    for (const [w, id] of pending) reversed.set(reverse(w), id)
    this.backward = finish(mergeSteps(this.backward, [...reversed.keys()].sort(), (w) => reversed.get(w)!))
    this.pending = new Map()
  }

  private compacting: Promise<void> | null = null
  private addedMeanwhile: string[] = []

  /**
   * The same in steps of a few milliseconds with `pause()` between them (a merge of 100,000 words would otherwise
   * stall the event loop for a quarter of a second). The words being merged stay pending, and so searchable, until
   * the merged arrays replace the old ones; words added meanwhile wait for the next compaction.
   */
  compactInSlices(pause: () => Promise<void>): Promise<void> {
    if (!this.pending.size) return this.compacting ?? Promise.resolve()
    this.compacting ??= this.runCompaction(pause).finally(() => {
      this.compacting = null
    })
    return this.compacting
  }

  private async runCompaction(pause: () => Promise<void>): Promise<void> {
    const pending = this.pending
    const fresh = [...pending.keys()]
    const run = async <T>(steps: Generator<void, T>): Promise<T> => {
      for (;;) {
        const r = steps.next()
        if (r.done) return r.value
        await pause()
      }
    }
    // The engine's sort is ~30 times faster than merging sorted runs in JS (0.3 ms per 1,000 words): one go up to
    // NATIVE_SORT words, runs merged between pauses beyond.
    const sorted = async (words: string[]) => (words.length <= NATIVE_SORT ? words.sort() : await run(sortSteps(words)))
    const forward = await run(mergeSteps(this.forward, await sorted(fresh), (w) => pending.get(w)!))
    // Reversed word → id, with the very strings that are sorted (their hashes are computed once).
    const reversed = new Map<string, number>()
    let i = 0
    for (const [w, id] of pending) {
      reversed.set(reverse(w), id)
      if ((++i & (STEP - 1)) === 0) await pause()
    }
    await pause()
    const backward = await run(mergeSteps(this.backward, await sorted([...reversed.keys()]), (w) => reversed.get(w)!))
    this.forward = forward
    this.backward = backward
    const meanwhile = new Map<string, number>()
    for (const w of this.addedMeanwhile) meanwhile.set(w, pending.get(w)!)
    this.pending = meanwhile
    this.addedMeanwhile = []
  }

  /**
   * Every word within `maxDist` edits of `word` (inserted, missing or replaced character, or two adjacent characters
   * swapped: optimal string alignment distance), with its distance and term id.
   */
  fuzzy(word: string, maxDist: number, onMatch: (word: string, distance: number, id: number) => void): void {
    const m = word.length
    if (m === 0 || m + maxDist + 1 >= MAX_DEPTH) return
    const q = new Uint16Array(m)
    for (let i = 0; i < m; i++) q[i] = word.charCodeAt(i)
    const fw = this.forward
    const bw = this.backward
    if (maxDist === 0 || m < 4) {
      walk(fw, q, maxDist, m, maxDist, (n, d) => onMatch(wordAt(fw, n), d, fw.ids[n]))
    } else {
      const seen = new Set<number>()
      const onFw = (n: number, d: number) => {
        const id = fw.ids[n]
        if (seen.has(id)) return
        seen.add(id)
        onMatch(wordAt(fw, n), d, id)
      }
      const onBw = (n: number, d: number) => {
        const id = bw.ids[n]
        if (seen.has(id)) return
        seen.add(id)
        onMatch(reverse(wordAt(bw, n)), d, id)
      }
      const rq = q.slice().reverse()
      if (maxDist === 1) {
        const p = (m >> 1) + 1
        walk(fw, q, 1, p - 1, 0, onFw)
        walk(bw, rq, 1, m - p, 0, onBw)
      } else if (maxDist === 2 && m >= 7) {
        // Thirds with a gap character after the first and the second: A = q[0..c1-1), B = q[c1..c2-1), C = q[c2..m).
        const c1 = Math.max(2, Math.round(m / 3))
        const c2 = Math.max(c1 + 2, Math.round((2 * m) / 3))
        walk(fw, q, 2, c1 - 1, 0, onFw)
        walk(bw, rq, 2, m - c2, 0, onBw)
        walk(fw, q, 2, c2 - 1, 1, onFw)
      } else {
        const p = m >> 1
        walk(fw, q, maxDist, p, maxDist - 1, onFw)
        walk(bw, rq, maxDist, m - p, maxDist - 1, onBw)
      }
    }
    for (const [w, id] of this.pending) {
      const d = boundedDistance(word, w, maxDist)
      if (d <= maxDist) onMatch(w, d, id)
    }
  }

  /**
   * Every word beginning with `prefix` (itself included), in one pass over its range of the sorted words: the term id,
   * the word's length, and the word itself on demand (making the string is the costly part).
   */
  prefixRange(prefix: string, onMatch: (id: number, length: number, word: () => string) => void): void {
    const s = this.forward
    const count = s.lcp.length
    const m = prefix.length
    const first = lowerBound(s, prefix)
    for (let n = first; n < count; n++) {
      const start = s.offsets[n]
      const len = s.offsets[n + 1] - start
      // Sorted order: the words beginning with the prefix are one run; a word sharing m characters with its
      // predecessor in the run is in it too, so only the first and those sharing fewer are compared.
      if (len < m) break
      if (n === first || s.lcp[n] < m) {
        let ok = true
        for (let k = 0; k < m; k++) {
          if (s.chars[start + k] !== prefix.charCodeAt(k)) {
            ok = false
            break
          }
        }
        if (!ok) break
      }
      onMatch(s.ids[n], len, () => wordAt(s, n))
    }
    for (const [w, id] of this.pending) if (w.startsWith(prefix)) onMatch(id, w.length, () => w)
  }

  /** Up to `cap` words beginning with `prefix`, the shortest first (tools and tests; the index uses prefixRange). */
  completions(prefix: string, cap: number): string[] {
    const found: string[] = []
    this.prefixRange(prefix, (_id, _len, word) => found.push(word()))
    found.sort((a, b) => a.length - b.length || (a < b ? -1 : 1))
    if (found.length > cap) found.length = cap
    return found
  }
}

/** Optimal string alignment distance of two words, or maxDist + 1 once it is certainly larger. */
export function boundedDistance(a: string, b: string, maxDist: number): number {
  const m = a.length
  const n = b.length
  if (Math.abs(m - n) > maxDist) return maxDist + 1
  let prevPrev = new Array<number>(n + 1).fill(0)
  let prev = Array.from({ length: n + 1 }, (_, j) => j)
  let cur = new Array<number>(n + 1).fill(0)
  for (let i = 1; i <= m; i++) {
    cur[0] = i
    let min = i
    for (let j = 1; j <= n; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) {
        v = Math.min(v, prevPrev[j - 2] + 1)
      }
      cur[j] = v
      if (v < min) min = v
    }
    if (min > maxDist) return maxDist + 1
    ;[prevPrev, prev, cur] = [prev, cur, prevPrev]
  }
  return prev[n] <= maxDist ? prev[n] : maxDist + 1
}
