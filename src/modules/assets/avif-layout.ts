/**
 * The size of an AVIF image as its decoder will see it, from the container (ISO BMFF / HEIF): the primary item
 * (`pitm`), its properties (`iprp` → `ipco`, associated in `ipma`), its `ispe` (image spatial extents), and — for a
 * grid — the grid's output size (item data located through `iloc`, in `idat` or the file). Not "the first `ispe`
 * bytes anywhere": a file may carry several (thumbnails, tiles, alpha, a decoy placed first), and the decoder
 * decodes the primary item and the items it is made of.
 *
 * `largestPixels` is the largest extent any image item declares (the primary, a grid's output, every tile, alpha
 * plane or thumbnail): the decoder allocates for each item it decodes, so the pixel cap holds for all of them.
 *
 * Hand-written because it is small and must be strict: image-size reads the first `ispe` in `ipco` (the very bug this
 * replaces), and the ISO BMFF demuxers (mp4box) are streaming players of another scale. Every read is bounded: at most
 * MAX_TOP_BOXES top-level boxes are walked, `meta` is at most MAX_META_BYTES, a level at most MAX_CHILDREN boxes,
 * `iloc` at most MAX_EXTENTS extents, a grid's data at most 64 bytes.
 */

export type AvifLayout =
  | { ok: true; width: number; height: number; largestPixels: number }
  | { ok: false; reason: string }

/** Reads `length` bytes at `offset` (fewer at the end of the file). */
export type ByteReader = (offset: number, length: number) => Promise<Uint8Array>

const MAX_TOP_BOXES = 64
const MAX_META_BYTES = 4 * 1024 * 1024
const MAX_CHILDREN = 100_000
const MAX_EXTENTS = 10_000

const fail = (reason: string): AvifLayout => ({ ok: false, reason })

/** A reader over bytes in memory. */
export const bytesReader =
  (bytes: Uint8Array): ByteReader =>
  async (offset, length) =>
    bytes.subarray(offset, Math.min(bytes.length, offset + length))

/** A reader over a file on disk. */
export const fileReader =
  (path: string): ByteReader =>
  async (offset, length) =>
    new Uint8Array(await Bun.file(path).slice(offset, offset + length).arrayBuffer())

interface Box {
  type: string
  /** Offset of the payload (after the header) and its end, relative to the buffer or file the box is in. */
  start: number
  end: number
}

const fourcc = (b: Uint8Array, at: number) => String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!)

class Cursor {
  private dv: DataView
  constructor(
    readonly b: Uint8Array,
    public at: number,
    readonly end: number,
  ) {
    this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength)
  }
  need(n: number) {
    if (this.at + n > this.end) throw new RangeError('truncated box')
  }
  u8() {
    this.need(1)
    return this.dv.getUint8(this.at++)
  }
  u16() {
    this.need(2)
    const v = this.dv.getUint16(this.at)
    this.at += 2
    return v
  }
  u32() {
    this.need(4)
    const v = this.dv.getUint32(this.at)
    this.at += 4
    return v
  }
  /** An unsigned integer of 0, 4 or 8 bytes (iloc's field sizes); over 2^53 is refused. */
  uint(size: number) {
    if (size === 0) return 0
    if (size === 4) return this.u32()
    if (size === 8) {
      const hi = this.u32()
      const lo = this.u32()
      if (hi > 0x1fffff) throw new RangeError('offset too large')
      return hi * 2 ** 32 + lo
    }
    throw new RangeError('bad field size')
  }
  skip(n: number) {
    this.need(n)
    this.at += n
  }
}

/** The child boxes of the bytes `[start, end)` of `b`. */
function children(b: Uint8Array, start: number, end: number): Box[] {
  const out: Box[] = []
  let at = start
  while (at < end) {
    if (out.length >= MAX_CHILDREN) throw new RangeError('too many boxes')
    if (at + 8 > end) throw new RangeError('truncated box header')
    const c = new Cursor(b, at, end)
    let size = c.u32()
    const type = fourcc(b, at + 4)
    c.at = at + 8
    if (size === 1) size = c.uint(8)
    else if (size === 0) size = end - at
    const header = c.at - at
    if (size < header || at + size > end) throw new RangeError(`box ${type} overruns its parent`)
    out.push({ type, start: at + header, end: at + size })
    at += size
  }
  return out
}

interface Meta {
  primary: number
  types: Map<number, string>
  /** Property boxes of `ipco`, in order (associations index them from 1). */
  properties: Box[]
  associations: Map<number, number[]>
  locations: Map<number, { method: number; base: number; extents: { offset: number; length: number }[] }>
  idat: Box | null
}

function parseMeta(b: Uint8Array, box: Box): Meta {
  const meta: Meta = { primary: -1, types: new Map(), properties: [], associations: new Map(), locations: new Map(), idat: null }
  // `meta` is a FullBox: version and flags first.
  for (const child of children(b, box.start + 4, box.end)) {
    const c = new Cursor(b, child.start, child.end)
    switch (child.type) {
      case 'pitm': {
        const version = c.u8()
        c.skip(3)
        meta.primary = version === 0 ? c.u16() : c.u32()
        break
      }
      case 'iinf': {
        const version = c.u8()
        c.skip(3)
        if (version === 0) c.u16()
        else c.u32()
        for (const infe of children(b, c.at, child.end)) {
          if (infe.type !== 'infe') continue
          const e = new Cursor(b, infe.start, infe.end)
          const v = e.u8()
          e.skip(3)
          if (v < 2) continue // no item_type before version 2
          const id = v === 2 ? e.u16() : e.u32()
          e.u16() // item_protection_index
          e.need(4)
          meta.types.set(id, fourcc(b, e.at))
        }
        break
      }
      case 'iloc': {
        const version = c.u8()
        c.skip(3)
        const sizes = c.u8()
        const more = c.u8()
        const offsetSize = sizes >> 4
        const lengthSize = sizes & 15
        const baseSize = more >> 4
        const indexSize = version === 1 || version === 2 ? more & 15 : 0
        const count = version < 2 ? c.u16() : c.u32()
        // Extents of zero-byte fields read nothing: bound them by count, not by the box's size.
        let totalExtents = 0
        for (let i = 0; i < count; i++) {
          const id = version < 2 ? c.u16() : c.u32()
          const method = version === 1 || version === 2 ? c.u16() & 15 : 0
          c.u16() // data_reference_index
          const base = c.uint(baseSize)
          const extentCount = c.u16()
          totalExtents += extentCount
          if (totalExtents > MAX_EXTENTS) throw new RangeError('too many item extents')
          const extents: { offset: number; length: number }[] = []
          for (let j = 0; j < extentCount; j++) {
            if (indexSize) c.uint(indexSize)
            extents.push({ offset: c.uint(offsetSize), length: c.uint(lengthSize) })
          }
          meta.locations.set(id, { method, base, extents })
        }
        break
      }
      case 'iprp':
        for (const p of children(b, child.start, child.end)) {
          if (p.type === 'ipco') meta.properties = children(b, p.start, p.end)
          else if (p.type === 'ipma') {
            const a = new Cursor(b, p.start, p.end)
            const version = a.u8()
            const flags = (a.u8() << 16) | a.u16()
            const entries = a.u32()
            for (let i = 0; i < entries; i++) {
              const id = version < 1 ? a.u16() : a.u32()
              const n = a.u8()
              const list = meta.associations.get(id) ?? []
              for (let j = 0; j < n; j++) list.push(flags & 1 ? a.u16() & 0x7fff : a.u8() & 0x7f)
              meta.associations.set(id, list)
            }
          }
        }
        break
      case 'idat':
        meta.idat = child
        break
    }
  }
  return meta
}

function ispeOf(b: Uint8Array, box: Box): { width: number; height: number } {
  const c = new Cursor(b, box.start, box.end)
  c.skip(4) // version and flags
  return { width: c.u32(), height: c.u32() }
}

/** The layout of the AVIF file that `read` reads (`size` bytes). */
export async function avifLayout(read: ByteReader, size: number): Promise<AvifLayout> {
  try {
    // Top-level boxes: find the one `meta` (its header is read, then the box whole).
    let at = 0
    let metaBox: { offset: number; size: number; header: number } | null = null
    for (let i = 0; at < size; i++) {
      if (i >= MAX_TOP_BOXES) return fail(`more than ${MAX_TOP_BOXES} top-level boxes`)
      const h = await read(at, 16)
      if (h.length < 8) return fail('truncated box header')
      const c = new Cursor(h, 0, h.length)
      let boxSize = c.u32()
      const type = fourcc(h, 4)
      c.at = 8
      if (boxSize === 1) boxSize = c.uint(8)
      else if (boxSize === 0) boxSize = size - at
      if (boxSize < c.at || at + boxSize > size) return fail(`box ${type} overruns the file`)
      if (type === 'meta') {
        if (metaBox) return fail('more than one meta box')
        metaBox = { offset: at, size: boxSize, header: c.at }
      }
      at += boxSize
    }
    if (!metaBox) return fail('no meta box')
    if (metaBox.size > MAX_META_BYTES) return fail('the meta box is too large')
    const b = await read(metaBox.offset, metaBox.size)
    if (b.length !== metaBox.size) return fail('truncated meta box')
    const meta = parseMeta(b, { type: 'meta', start: metaBox.header, end: metaBox.size })

    if (meta.primary < 0) return fail('no primary item (pitm)')
    const primaryType = meta.types.get(meta.primary)
    if (primaryType !== 'av01' && primaryType !== 'grid') return fail(`the primary item is ${primaryType ? `of type ${primaryType}` : 'not described'}, not an AV1 image or grid`)
    const spatial = (id: number) =>
      (meta.associations.get(id) ?? []).map((i) => meta.properties[i - 1]).filter((p): p is Box => p !== undefined && p.type === 'ispe')
    const own = spatial(meta.primary)
    if (own.length !== 1) return fail(own.length ? 'the primary item has more than one ispe' : 'the primary item has no ispe')
    const { width, height } = ispeOf(b, own[0]!)
    if (!width || !height) return fail('the primary item has no size')

    let largestPixels = width * height
    for (const p of meta.properties) {
      if (p.type !== 'ispe') continue
      const e = ispeOf(b, p)
      largestPixels = Math.max(largestPixels, e.width * e.height)
    }
    if (primaryType === 'grid') {
      // ImageGrid: version, flags, rows - 1, columns - 1, output width and height (16 or 32 bits by flags & 1).
      const loc = meta.locations.get(meta.primary)
      const extent = loc?.extents[0]
      if (!loc || !extent || loc.extents.length !== 1 || extent.length > 64) return fail('the grid has no readable description')
      let data: Uint8Array
      if (loc.method === 0) data = await read(loc.base + extent.offset, extent.length || 64)
      else if (loc.method === 1 && meta.idat) {
        const from = meta.idat.start + loc.base + extent.offset
        data = b.subarray(from, Math.min(meta.idat.end, from + (extent.length || 64)))
      } else return fail('the grid has no readable description')
      const g = new Cursor(data, 0, data.length)
      g.u8()
      const flags = g.u8()
      g.u8()
      g.u8()
      const gw = flags & 1 ? g.u32() : g.u16()
      const gh = flags & 1 ? g.u32() : g.u16()
      largestPixels = Math.max(largestPixels, gw * gh)
    }
    return { ok: true, width, height, largestPixels }
  } catch (err) {
    return fail(err instanceof RangeError ? err.message : 'not a readable AVIF container')
  }
}
