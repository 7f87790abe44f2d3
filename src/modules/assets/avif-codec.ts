// @ts-nocheck: `with { type: 'file' }` is a Bun import attribute TypeScript does not type; the emscripten factories
// ship without usable types.
// AVIF encode and decode through @jsquash/avif (libavif + aom / dav1d compiled to WASM). The .wasm files are imported
// as files so `bun build --compile` embeds them; the module is compiled from those bytes and handed to the
// emscripten factory (no fetch, no file lookup next to the script). Loaded only inside transform Workers.
import encWasmPath from '../../../node_modules/@jsquash/avif/codec/enc/avif_enc.wasm' with { type: 'file' }
import decWasmPath from '../../../node_modules/@jsquash/avif/codec/dec/avif_dec.wasm' with { type: 'file' }
import encFactory from '@jsquash/avif/codec/enc/avif_enc.js'
import decFactory from '@jsquash/avif/codec/dec/avif_dec.js'
import type { AvifCodec } from './transform'
import type { Rgba } from './pixels'

/**
 * The AVIF decoder's memory cap: its WebAssembly memory may not grow past this (the build's own maximum is 2 GiB).
 * Bun's Workers take no heap limit (`resourceLimits` is accepted and ignored), and a WebAssembly memory lies outside
 * any JavaScript heap limit anyway: this is the limit that holds. Measured: an 8-bit 4:2:0 image needs about 17 bytes
 * a pixel (50 megapixels: 810 MiB), a 10-bit 4:4:4 one with alpha about 52.
 */
export const AVIF_DECODER_MEMORY_BYTES = 1024 * 1024 * 1024
/** After a decode that left more memory than this, the instance is dropped (a WebAssembly memory never shrinks). */
const KEEP_DECODER_BYTES = 256 * 1024 * 1024
const PAGE = 65536

/** Reads one unsigned LEB128 at `at`: [value, next offset]. */
function leb(b: Uint8Array, at: number): [number, number] {
  let value = 0
  let shift = 0
  for (;;) {
    const byte = b[at++]!
    value += (byte & 0x7f) * 2 ** shift
    if (!(byte & 0x80)) return [value, at]
    shift += 7
  }
}
function lebBytes(n: number): number[] {
  const out: number[] = []
  do {
    let byte = n & 0x7f
    n = Math.floor(n / 128)
    if (n) byte |= 0x80
    out.push(byte)
  } while (n)
  return out
}

/**
 * The module's bytes with the maximum of its (one, own) memory lowered to `maxBytes`: growing past it fails, so the
 * allocation fails (malloc answers NULL and the decoder an error) instead of the process taking the memory. A module
 * that imports its memory, or has another than one, is refused: the cap could not be enforced.
 */
export function capWasmMemory(wasm: Uint8Array, maxBytes: number): Uint8Array {
  const maxPages = Math.max(1, Math.floor(maxBytes / PAGE))
  for (let at = 8; at < wasm.length; ) {
    const id = wasm[at]!
    const [size, start] = leb(wasm, at + 1)
    const end = start + size
    if (id === 5) {
      let [count, p] = leb(wasm, start)
      if (count !== 1) throw new Error(`the WebAssembly module has ${count} memories`)
      const flags = wasm[p++]!
      if (flags & ~1) throw new Error('the WebAssembly memory is shared or 64-bit')
      const [min, q] = leb(wasm, p)
      const [max, r] = flags & 1 ? leb(wasm, q) : [Infinity, q]
      if (r !== end) throw new Error('unexpected memory section')
      const pages = Math.max(min, Math.min(max, maxPages))
      const body = [1, 1, ...lebBytes(min), ...lebBytes(pages)]
      const section = new Uint8Array([5, ...lebBytes(body.length), ...body])
      const out = new Uint8Array(at + section.length + (wasm.length - end))
      out.set(wasm.subarray(0, at))
      out.set(section, at)
      out.set(wasm.subarray(end), at + section.length)
      return out
    }
    at = end
  }
  throw new Error('the WebAssembly module has no memory of its own')
}

async function instantiate(factory, path: string, maxMemoryBytes?: number) {
  let bytes = new Uint8Array(await Bun.file(path).arrayBuffer())
  if (maxMemoryBytes !== undefined) bytes = capWasmMemory(bytes, maxMemoryBytes)
  const module = await WebAssembly.compile(bytes)
  let memory: WebAssembly.Memory | null = null
  const m = await factory({
    noInitialRun: true,
    instantiateWasm: (imports, callback) => {
      const instance = new WebAssembly.Instance(module, imports)
      memory = Object.values(instance.exports).find((v) => v instanceof WebAssembly.Memory) ?? null
      callback(instance)
      return instance.exports
    },
  })
  return { m, memory: () => memory?.buffer.byteLength ?? 0 }
}

let encoder: Promise<any> | null = null

/** Speed 9 (the fastest usable preset: ~150–220 ms for 800 px), 4:2:0, 8 bit. */
const ENCODE_DEFAULTS = {
  quality: 50,
  qualityAlpha: -1,
  denoiseLevel: 0,
  tileColsLog2: 0,
  tileRowsLog2: 0,
  speed: 9,
  subsample: 1,
  chromaDeltaQ: false,
  sharpness: 0,
  tune: 0,
  enableSharpYUV: false,
  bitDepth: 8,
}

/** An AVIF codec whose decoder runs in at most `decoderMemoryBytes` of WebAssembly memory. */
export function createAvifCodec(decoderMemoryBytes = AVIF_DECODER_MEMORY_BYTES): AvifCodec {
  let decoder: Promise<{ m: any; memory: () => number }> | null = null
  return {
    async encode(img: Rgba, quality: number): Promise<Uint8Array> {
      encoder ??= instantiate(encFactory, encWasmPath).then((x) => x.m)
      const m = await encoder
      const out = m.encode(img.data, img.width, img.height, { ...ENCODE_DEFAULTS, quality })
      if (!out) throw new Error('AVIF encoding failed')
      return new Uint8Array(out)
    },
    async decode(bytes: Uint8Array, maxPixels: number): Promise<Rgba> {
      decoder ??= instantiate(decFactory, decWasmPath, decoderMemoryBytes)
      const d = await decoder
      let out: { data: Uint8ClampedArray; width: number; height: number } | null = null
      try {
        out = d.m.decode(bytes, 8)
      } catch {
        // An abort inside the module (an allocation it could not survive) leaves it unusable: start a new one.
        decoder = null
        throw new Error(`AVIF decoding failed (it needs more than ${Math.round(decoderMemoryBytes / 1048576)} MiB, or the data is damaged)`)
      }
      // A WebAssembly memory never shrinks: after a large image, let the instance (and its memory) go.
      if (d.memory() > KEEP_DECODER_BYTES) decoder = null
      if (!out) throw new Error(`AVIF decoding failed (the data is damaged, or the image needs more than ${Math.round(decoderMemoryBytes / 1048576)} MiB to decode)`)
      if (out.width * out.height > maxPixels) throw Object.assign(new Error(`the AVIF image has more than ${maxPixels} pixels`), { code: 'image_too_large' })
      return { data: new Uint8Array(out.data.buffer, out.data.byteOffset, out.data.byteLength), width: out.width, height: out.height }
    },
  }
}

export const avifCodec: AvifCodec = createAvifCodec()
