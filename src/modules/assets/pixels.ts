import { deflateSync, inflateSync } from 'node:zlib'

/**
 * Raw RGBA pixels and the smallest PNG reader/writer the transform pipeline needs. Bun.Image decodes, orients and
 * resizes, but has no crop, pad or raw-pixel output: the pipeline asks it for an uncompressed PNG (level 0) and
 * reads the pixels here, crops or pads them, and hands a PNG back (or the pixels to the AVIF encoder).
 */
export interface Rgba {
  data: Uint8Array // width * height * 4
  width: number
  height: number
}

const SIGNATURE = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

function chunk(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + body.length)
  const dv = new DataView(out.buffer)
  dv.setUint32(0, body.length)
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i)
  out.set(body, 8)
  dv.setUint32(8 + body.length, Bun.hash.crc32(out.subarray(4, 8 + body.length)) >>> 0)
  return out
}

/** RGBA → PNG (colour type 6, no filters). Level 0 stores the rows: fast, for handing pixels to Bun.Image. */
export function encodePng(img: Rgba, level = 0): Uint8Array {
  const { width, height, data } = img
  const stride = width * 4
  const raw = new Uint8Array((stride + 1) * height)
  for (let y = 0; y < height; y++) raw.set(data.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1)
  const ihdr = new Uint8Array(13)
  const dv = new DataView(ihdr.buffer)
  dv.setUint32(0, width)
  dv.setUint32(4, height)
  ihdr[8] = 8
  ihdr[9] = 6
  const parts = [SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level })), chunk('IEND', new Uint8Array(0))]
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c
  const pa = Math.abs(p - a)
  const pb = Math.abs(p - b)
  const pc = Math.abs(p - c)
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c
}

/** PNG → RGBA, for non-interlaced 8- or 16-bit grey, grey+alpha, RGB and RGBA (what Bun.Image writes). */
export function decodePng(png: Uint8Array): Rgba {
  const dv = new DataView(png.buffer, png.byteOffset, png.byteLength)
  for (let i = 0; i < 8; i++) if (png[i] !== SIGNATURE[i]) throw new Error('not a PNG')
  let at = 8
  let width = 0
  let height = 0
  let depth = 8
  let colour = 6
  const idat: Uint8Array[] = []
  while (at + 8 <= png.length) {
    const len = dv.getUint32(at)
    const type = String.fromCharCode(png[at + 4]!, png[at + 5]!, png[at + 6]!, png[at + 7]!)
    const body = png.subarray(at + 8, at + 8 + len)
    if (type === 'IHDR') {
      width = dv.getUint32(at + 8)
      height = dv.getUint32(at + 12)
      depth = png[at + 16]!
      colour = png[at + 17]!
      if (png[at + 20] !== 0) throw new Error('interlaced PNG')
    } else if (type === 'IDAT') idat.push(body)
    else if (type === 'IEND') break
    at += 12 + len
  }
  const channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[colour as 0 | 2 | 4 | 6]
  if (!channels || (depth !== 8 && depth !== 16)) throw new Error(`unsupported PNG (colour ${colour}, depth ${depth})`)
  const bpp = (channels * depth) / 8
  const stride = width * bpp
  const raw = inflateSync(idat.length === 1 ? idat[0]! : Buffer.concat(idat))
  const rows = new Uint8Array(stride * height)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!
    const src = y * (stride + 1) + 1
    const dst = y * stride
    const prev = dst - stride
    for (let x = 0; x < stride; x++) {
      const v = raw[src + x]!
      const a = x >= bpp ? rows[dst + x - bpp]! : 0
      const b = y > 0 ? rows[prev + x]! : 0
      const c = x >= bpp && y > 0 ? rows[prev + x - bpp]! : 0
      rows[dst + x] =
        filter === 0 ? v : filter === 1 ? v + a : filter === 2 ? v + b : filter === 3 ? v + ((a + b) >> 1) : v + paeth(a, b, c)
    }
  }
  if (channels === 4 && depth === 8) return { data: rows, width, height }
  const out = new Uint8Array(width * height * 4)
  const step = depth / 8
  for (let i = 0, n = width * height; i < n; i++) {
    const s = i * bpp
    const px = (k: number) => rows[s + k * step]!
    const o = i * 4
    if (channels >= 3) {
      out[o] = px(0)
      out[o + 1] = px(1)
      out[o + 2] = px(2)
      out[o + 3] = channels === 4 ? px(3) : 255
    } else {
      out[o] = out[o + 1] = out[o + 2] = px(0)
      out[o + 3] = channels === 2 ? px(1) : 255
    }
  }
  return { data: out, width, height }
}

/** The `w`×`h` window at (`x`, `y`). */
export function crop(img: Rgba, x: number, y: number, w: number, h: number): Rgba {
  const out = new Uint8Array(w * h * 4)
  for (let row = 0; row < h; row++) {
    const s = ((y + row) * img.width + x) * 4
    out.set(img.data.subarray(s, s + w * 4), row * w * 4)
  }
  return { data: out, width: w, height: h }
}

/** `img` centred on a `w`×`h` canvas of one colour (RGBA). */
export function pad(img: Rgba, w: number, h: number, background: [number, number, number, number]): Rgba {
  const out = new Uint8Array(w * h * 4)
  for (let i = 0; i < out.length; i += 4) out.set(background, i)
  const x = Math.floor((w - img.width) / 2)
  const y = Math.floor((h - img.height) / 2)
  for (let row = 0; row < img.height; row++) {
    out.set(img.data.subarray(row * img.width * 4, (row + 1) * img.width * 4), ((y + row) * w + x) * 4)
  }
  return { data: out, width: w, height: h }
}

/** Peak signal-to-noise ratio of two equally sized images over RGB, in dB (tests and benches). */
export function psnr(a: Rgba, b: Rgba): number {
  if (a.width !== b.width || a.height !== b.height) throw new Error('sizes differ')
  let sum = 0
  let n = 0
  for (let i = 0; i < a.data.length; i += 4) {
    for (let k = 0; k < 3; k++) {
      const d = a.data[i + k]! - b.data[i + k]!
      sum += d * d
      n++
    }
  }
  return sum === 0 ? Infinity : 10 * Math.log10((255 * 255) / (sum / n))
}
