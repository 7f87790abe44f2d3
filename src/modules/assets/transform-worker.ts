// A transform Worker (one per IMAGE_CONCURRENCY slot): decodes, resizes and encodes off the main thread, so public
// reads keep flowing during a burst of transforms. Listed as an extra entrypoint in scripts/build.ts so the compiled
// executable carries it. The AVIF encoder (WASM) is warmed up when the Worker starts: its first encode is slow.
import { setPriority } from 'node:os'
import { avifCodec } from './avif-codec'
import { transform, type TransformRequest } from './transform'

declare const self: Worker

const codec = async () => avifCodec

self.onmessage = async (event: MessageEvent<{ id: number; req: TransformRequest } | { warm: true } | { nice: number }>) => {
  const msg = event.data
  if ('nice' in msg) {
    // On Linux a thread has its own nice value: this lowers only this Worker's thread (IMAGE_NICE), never the main
    // thread that answers reads. Where the OS refuses, transforms simply run at normal priority.
    try {
      setPriority(msg.nice)
    } catch {}
    return
  }
  if ('warm' in msg) {
    try {
      const px = new Uint8Array(16 * 16 * 4).fill(128)
      await avifCodec.encode({ data: px, width: 16, height: 16 }, 50)
    } catch {}
    self.postMessage({ warm: true })
    return
  }
  try {
    const out = await transform(msg.req, codec)
    self.postMessage({ id: msg.id, ok: true, bytes: out }, [out.buffer as ArrayBuffer])
  } catch (err) {
    const e = err as { code?: string; message?: string }
    self.postMessage({ id: msg.id, ok: false, code: e?.code ?? null, message: String(e?.message ?? err) })
  }
}
