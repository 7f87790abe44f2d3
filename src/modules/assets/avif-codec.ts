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

async function instantiate(factory, path: string) {
  const module = await WebAssembly.compile(await Bun.file(path).arrayBuffer())
  return factory({
    noInitialRun: true,
    instantiateWasm: (imports, callback) => {
      const instance = new WebAssembly.Instance(module, imports)
      callback(instance)
      return instance.exports
    },
  })
}

let encoder: Promise<any> | null = null
let decoder: Promise<any> | null = null

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

export const avifCodec: AvifCodec = {
  async encode(img: Rgba, quality: number): Promise<Uint8Array> {
    encoder ??= instantiate(encFactory, encWasmPath)
    const m = await encoder
    const out = m.encode(img.data, img.width, img.height, { ...ENCODE_DEFAULTS, quality })
    if (!out) throw new Error('AVIF encoding failed')
    return new Uint8Array(out)
  },
  async decode(bytes: Uint8Array): Promise<Rgba> {
    decoder ??= instantiate(decFactory, decWasmPath)
    const m = await decoder
    const out = m.decode(bytes, 8)
    if (!out) throw new Error('AVIF decoding failed')
    return { data: new Uint8Array(out.data.buffer, out.data.byteOffset, out.data.byteLength), width: out.width, height: out.height }
  },
}
