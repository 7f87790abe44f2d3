/**
 * How much WebAssembly memory the AVIF decoder needs per pixel (the figures behind AVIF_DECODER_MEMORY_BYTES in
 * src/modules/assets/avif-codec.ts): encodes a noisy N×N image at each bit depth / chroma subsampling / alpha, decodes
 * it with an uncapped decoder in a fresh process each (a WebAssembly memory never shrinks), and prints the memory
 * after the decode. Also shows that a Bun Worker ignores `resourceLimits` (its RSS grows past the limit it was given).
 *
 *   bun scripts/bench/avif-memory.ts [N=2000]
 */
// @ts-nocheck: the emscripten factories ship without usable types.
import decWasmPath from '../../node_modules/@jsquash/avif/codec/dec/avif_dec.wasm' with { type: 'file' }
import encWasmPath from '../../node_modules/@jsquash/avif/codec/enc/avif_enc.wasm' with { type: 'file' }
import decFactory from '@jsquash/avif/codec/dec/avif_dec.js'
import encFactory from '@jsquash/avif/codec/enc/avif_enc.js'

async function load(factory, path: string) {
  const module = await WebAssembly.compile(await Bun.file(path).arrayBuffer())
  let memory: WebAssembly.Memory | null = null
  const m = await factory({
    noInitialRun: true,
    instantiateWasm: (imports, cb) => {
      const i = new WebAssembly.Instance(module, imports)
      memory = Object.values(i.exports).find((v) => v instanceof WebAssembly.Memory) ?? null
      cb(i)
      return i.exports
    },
  })
  return { m, bytes: () => memory!.buffer.byteLength }
}

const [mode, ...rest] = process.argv.slice(2)
if (mode === '--decode') {
  const d = await load(decFactory, decWasmPath)
  const base = d.bytes()
  const file = await Bun.file(rest[0]!).bytes()
  const out = d.m.decode(file, 8)
  const px = out.width * out.height
  console.log(JSON.stringify({ pixels: px, heap_mib: Math.round(d.bytes() / 1048576), bytes_per_pixel: +((d.bytes() - base) / px).toFixed(1) }))
} else if (mode === '--worker') {
  const a: unknown[] = []
  for (let i = 0; i < 400; i++) a.push(new Array(128 * 1024).fill({ i }))
  postMessage(Math.round(process.memoryUsage().rss / 1048576))
} else {
  const n = Number(mode ?? 2000)
  const e = await load(encFactory, encWasmPath)
  for (const [bitDepth, subsample, alpha] of [[8, 1, false], [8, 1, true], [8, 3, false], [10, 1, false], [10, 3, true]] as const) {
    const px = new Uint8Array(n * n * 4)
    for (let i = 0; i < px.length; i += 4) px.set([(i / 4) % 251, Math.floor(i / 4 / n) % 256, (i / 7) % 256, alpha ? (i / 5) % 256 : 255], i)
    const opts = { quality: 50, qualityAlpha: -1, denoiseLevel: 0, tileColsLog2: 0, tileRowsLog2: 0, speed: 9, subsample, chromaDeltaQ: false, sharpness: 0, tune: 0, enableSharpYUV: false, bitDepth }
    const path = `/tmp/avif-memory-${n}-${bitDepth}-${subsample}-${alpha}.avif`
    await Bun.write(path, new Uint8Array(e.m.encode(px, n, n, opts)))
    const child = Bun.spawnSync([process.execPath, import.meta.path, '--decode', path])
    console.log(`${bitDepth}-bit ${subsample === 1 ? '4:2:0' : '4:4:4'}${alpha ? ' + alpha' : ''}: ${child.stdout.toString().trim()}`)
  }
  const w = new Worker(import.meta.path, { argv: ['--worker'], resourceLimits: { maxOldGenerationSizeMb: 64 } } as WorkerOptions)
  const rss = await new Promise((resolve) => (w.onmessage = (m) => resolve(m.data)))
  w.terminate()
  console.log(`a Worker given resourceLimits.maxOldGenerationSizeMb = 64 allocated ~400 MB of objects: process RSS ${rss} MB, not stopped`)
}
