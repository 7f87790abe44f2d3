/**
 * AVIF containers built box by box around the AV1 data of a real (tiny) encoded image: to say one size in the primary
 * item's `ispe` and another in a decoy `ispe` placed first, or to break the container on purpose.
 */
import { avifCodec } from '../../src/modules/assets/avif-codec'

const enc = new TextEncoder()

function u32(n: number) {
  const b = new Uint8Array(4)
  new DataView(b.buffer).setUint32(0, n)
  return b
}
function u16(n: number) {
  const b = new Uint8Array(2)
  new DataView(b.buffer).setUint16(0, n)
  return b
}
function cat(...parts: Uint8Array[]) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}
export function box(type: string, ...payload: Uint8Array[]) {
  const body = cat(...payload)
  return cat(u32(8 + body.length), enc.encode(type), body)
}
const full = (type: string, version: number, flags: number, ...payload: Uint8Array[]) =>
  box(type, new Uint8Array([version, (flags >> 16) & 255, (flags >> 8) & 255, flags & 255]), ...payload)
export const ispe = (w: number, h: number) => full('ispe', 0, 0, u32(w), u32(h))

/** The child boxes of a box payload, raw (header included). */
function childBoxes(b: Uint8Array, start: number, end: number) {
  const out: { type: string; raw: Uint8Array; start: number; end: number }[] = []
  for (let at = start; at < end; ) {
    const size = new DataView(b.buffer, b.byteOffset + at, 4).getUint32(0)
    out.push({ type: String.fromCharCode(...b.subarray(at + 4, at + 8)), raw: b.subarray(at, at + size), start: at + 8, end: at + size })
    at += size
  }
  return out
}

export interface Av1Parts {
  /** The `ipco` properties of the encoded image other than `ispe` (pixi, av1C, colr), raw. */
  properties: Uint8Array[]
  /** The AV1 data of its one item. */
  data: Uint8Array
  width: number
  height: number
}

/** Encodes a small image and takes its AV1 data and properties apart. */
export async function av1Parts(width = 64, height = 64): Promise<Av1Parts> {
  const px = new Uint8Array(width * height * 4)
  for (let i = 0; i < px.length; i += 4) px.set([(i / 4) % width, 90, 160, 255], i)
  const file = await avifCodec.encode({ data: px, width, height }, 50)
  const top = childBoxes(file, 0, file.length)
  const meta = top.find((b) => b.type === 'meta')!
  const iprp = childBoxes(file, meta.start + 4, meta.end).find((b) => b.type === 'iprp')!
  const ipco = childBoxes(file, iprp.start, iprp.end).find((b) => b.type === 'ipco')!
  const properties = childBoxes(file, ipco.start, ipco.end)
    .filter((p) => p.type !== 'ispe')
    .map((p) => p.raw.slice())
  const mdat = top.find((b) => b.type === 'mdat')!
  return { properties, data: file.slice(mdat.start, mdat.end), width, height }
}

/**
 * An AVIF file: item 1 (primary) and, with `decoy`, item 2 (another AV1 item on the same data, e.g. a thumbnail),
 * whose `ispe` is the first one in `ipco`. Both items use the encoded image's other properties.
 */
export function craftAvif(parts: Av1Parts, primary: { w: number; h: number }, decoy?: { w: number; h: number }): Uint8Array {
  const props = [...(decoy ? [ispe(decoy.w, decoy.h)] : []), ispe(primary.w, primary.h), ...parts.properties]
  const first = decoy ? 2 : 1 // 1-based index of the primary's ispe
  const rest = parts.properties.map((_, i) => first + 1 + i)
  const items = decoy ? [1, 2] : [1]
  const assoc = (id: number) => {
    const list = id === 1 ? [first, ...rest] : [1, ...rest]
    return cat(u16(id), new Uint8Array([list.length]), new Uint8Array(list.map((i, k) => (k > 0 ? 0x80 : 0) | i)))
  }
  const infe = (id: number) => full('infe', 2, 0, u16(id), u16(0), enc.encode('av01'), new Uint8Array([0]))
  const metaWith = (dataOffset: number) =>
    full(
      'meta',
      0,
      0,
      full('hdlr', 0, 0, u32(0), enc.encode('pict'), u32(0), u32(0), u32(0), new Uint8Array([0])),
      full('pitm', 0, 0, u16(1)),
      full('iloc', 0, 0, new Uint8Array([0x44, 0x00]), u16(items.length), ...items.map((id) => cat(u16(id), u16(0), u16(1), u32(dataOffset), u32(parts.data.length)))),
      full('iinf', 0, 0, u16(items.length), ...items.map(infe)),
      box('iprp', box('ipco', ...props), full('ipma', 0, 0, u32(items.length), ...items.map(assoc))),
    )
  const ftyp = box('ftyp', enc.encode('avif'), u32(0), enc.encode('avifmif1miaf'))
  const offset = ftyp.length + metaWith(0).length + 8
  return cat(ftyp, metaWith(offset), box('mdat', parts.data))
}
