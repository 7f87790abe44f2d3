// Search snapshots: a Space's compacted indexes (every locale) as one compressed blob, kept in Postgres
// (`search_snapshots`) so that a cold Space is loaded instead of rebuilt from its Stories' rows.
//
// Blob (before zstd): for each index, one record —
//   u32 length of the record | u32 header length | header (JSON, UTF-8) | padding to 8 | the arrays, each padded to 8
// The header holds the locale, the counts, the per-field length sums and the hits (the API's search hits, as arrays,
// without the fields every hit of the index shares); the arrays are the vocabulary's sorted words (forward and
// reversed: characters, term ids, offsets, shared-prefix lengths), the postings and their term offsets, and the
// per-document versions, field lengths, tombstones and posting counts. Loading views the arrays in the decompressed
// buffer without copying them; the jump pointers of the vocabulary are derived (O(words)).
//
// FORMAT changes whenever the layout, or what the index holds for a Story (documents.ts, text.ts), changes: a snapshot
// of another format is ignored and the Space is built from its rows (and a new snapshot written).
import { type IndexParts, SearchIndex, type SearchHit } from './engine'

export const SNAPSHOT_FORMAT = 1

type Row = [story_id: number, story_uuid: string, slug: string, full_path: string, headline: string, lead: string | null, updated_at: number] | 0

interface Header {
  lang: string
  ordinals: number
  words: number
  removals: number
  deadPostings: number
  lengthSums: number[]
  lengthDocs: number[]
  hits: Row[]
  /** Element counts of the arrays, in ARRAYS order. */
  counts: number[]
}

type ArrayName =
  | 'fChars'
  | 'fIds'
  | 'fOffsets'
  | 'fLcp'
  | 'bChars'
  | 'bIds'
  | 'bOffsets'
  | 'bLcp'
  | 'start'
  | 'post'
  | 'versions'
  | 'lengths'
  | 'dead'
  | 'postingCounts'
type Typed = Uint8Array | Uint16Array | Uint32Array
const ARRAYS: [ArrayName, 1 | 2 | 4][] = [
  ['fChars', 2],
  ['fIds', 4],
  ['fOffsets', 4],
  ['fLcp', 1],
  ['bChars', 2],
  ['bIds', 4],
  ['bOffsets', 4],
  ['bLcp', 1],
  ['start', 4],
  ['post', 4],
  ['versions', 4],
  ['lengths', 2],
  ['dead', 1],
  ['postingCounts', 2],
]

const pad8 = (n: number) => (n + 7) & ~7

function arraysOf(p: IndexParts): Record<ArrayName, Typed> {
  const { forward: f, backward: b } = p.vocabulary
  return {
    fChars: f.chars,
    fIds: f.ids,
    fOffsets: f.offsets,
    fLcp: f.lcp,
    bChars: b.chars,
    bIds: b.ids,
    bOffsets: b.offsets,
    bLcp: b.lcp,
    start: p.start,
    post: p.post,
    versions: p.versions,
    lengths: p.lengths,
    dead: p.dead,
    postingCounts: p.postingCounts,
  }
}

function encodeIndex(p: IndexParts): Uint8Array {
  const arrays = arraysOf(p)
  const header: Header = {
    lang: p.lang,
    ordinals: p.ordinals,
    words: p.vocabulary.size,
    removals: p.removals,
    deadPostings: p.deadPostings,
    lengthSums: p.lengthSums,
    lengthDocs: p.lengthDocs,
    hits: p.hits.map((h, o) => (h && !p.dead[o] ? [h.story_id, h.story_uuid, h.slug, h.full_path, h.headline, h.lead, h.updated_at] : 0)),
    counts: ARRAYS.map(([name]) => arrays[name].length),
  }
  const json = new TextEncoder().encode(JSON.stringify(header))
  let size = pad8(8 + json.length)
  for (const [name] of ARRAYS) size += pad8(arrays[name].byteLength)
  const out = new Uint8Array(size)
  const view = new DataView(out.buffer)
  view.setUint32(0, size, true)
  view.setUint32(4, json.length, true)
  out.set(json, 8)
  let at = pad8(8 + json.length)
  for (const [name] of ARRAYS) {
    const a = arrays[name]
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at)
    at += pad8(a.byteLength)
  }
  return out
}

/** The compressed snapshot of a Space's indexes, or null when one of them is not compacted (try again later). */
export function encodeSnapshot(indexes: ReadonlyMap<string, SearchIndex>): Uint8Array | null {
  const records: Uint8Array[] = []
  for (const idx of indexes.values()) {
    const parts = idx.exportParts()
    if (!parts) return null
    records.push(encodeIndex(parts))
  }
  const whole = new Uint8Array(records.reduce((n, r) => n + r.length, 0))
  let at = 0
  for (const r of records) {
    whole.set(r, at)
    at += r.length
  }
  return Bun.zstdCompressSync(whole, { level: 3 })
}

/** The indexes of a snapshot. Throws on a blob that does not hold what its headers say (the caller rebuilds). */
export function decodeSnapshot(compressed: Uint8Array): Map<string, SearchIndex> {
  let bytes = Bun.zstdDecompressSync(compressed) as Uint8Array
  // The arrays are viewed in place: their offsets in the blob are multiples of 8, so the buffer must start on one.
  if (bytes.byteOffset % 8) bytes = bytes.slice()
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const decoder = new TextDecoder()
  const out = new Map<string, SearchIndex>()
  let at = 0
  while (at < bytes.length) {
    if (at + 8 > bytes.length) throw new Error('search snapshot: truncated')
    const size = view.getUint32(at, true)
    const jsonLength = view.getUint32(at + 4, true)
    if (size < 8 || at + size > bytes.length || 8 + jsonLength > size) throw new Error('search snapshot: bad record')
    const header = JSON.parse(decoder.decode(bytes.subarray(at + 8, at + 8 + jsonLength))) as Header
    let p = at + pad8(8 + jsonLength)
    const arrays = {} as Record<ArrayName, Typed>
    ARRAYS.forEach(([name, width], i) => {
      const n = header.counts[i]
      if (!Number.isInteger(n) || n < 0 || p + n * width > at + size) throw new Error('search snapshot: bad array')
      const off = bytes.byteOffset + p
      arrays[name] = width === 1 ? new Uint8Array(bytes.buffer, off, n) : width === 2 ? new Uint16Array(bytes.buffer, off, n) : new Uint32Array(bytes.buffer, off, n)
      p += pad8(n * width)
    })
    const lang = header.lang
    const hits: (SearchHit | undefined)[] = header.hits.map((r) =>
      r === 0
        ? undefined
        : { id: `${r[0]}:${lang}`, story_id: r[0], story_uuid: r[1], slug: r[2], full_path: r[3], lang, headline: r[4], lead: r[5], status: 'published', updated_at: r[6] },
    )
    const parts: IndexParts = {
      lang,
      vocabulary: {
        forward: { chars: arrays.fChars as Uint16Array, ids: arrays.fIds as Uint32Array, offsets: arrays.fOffsets as Uint32Array, lcp: arrays.fLcp as Uint8Array },
        backward: { chars: arrays.bChars as Uint16Array, ids: arrays.bIds as Uint32Array, offsets: arrays.bOffsets as Uint32Array, lcp: arrays.bLcp as Uint8Array },
        size: header.words,
      },
      start: arrays.start as Uint32Array,
      post: arrays.post as Uint32Array,
      ordinals: header.ordinals,
      hits,
      versions: arrays.versions as Uint32Array,
      lengths: arrays.lengths as Uint16Array,
      dead: arrays.dead as Uint8Array,
      postingCounts: arrays.postingCounts as Uint16Array,
      lengthSums: header.lengthSums,
      lengthDocs: header.lengthDocs,
      removals: header.removals,
      deadPostings: header.deadPostings,
    }
    out.set(lang, SearchIndex.fromParts(parts))
    at += size
  }
  return out
}
