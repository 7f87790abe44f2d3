import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { rename, rm, unlink, writeFile } from 'node:fs/promises'
import { setPriority, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Kernel } from '../../kernel/kernel'
import type { TransformRequest } from './transform'

/**
 * The image transform service of one process: a pool of transform Workers (IMAGE_CONCURRENCY), single-flight per
 * variant (a hundred requests for one new variant run one transform), and a disk cache of the results under
 * `<DATA_DIR>/cache/images` kept under IMAGE_CACHE_MB by dropping the least recently used files.
 */
export interface Variant {
  key: string // file name in the cache: <asset uuid>.<params hash>.<format>
  assetUuid: string
}

type Job = { req: TransformRequest; resolve: (b: Uint8Array) => void; reject: (e: unknown) => void }

export class TransformError extends Error {
  constructor(
    message: string,
    readonly code: string | null,
    /** The transform itself refused the source (it will again): not a Worker that died or a shutdown. */
    readonly refused = false,
  ) {
    super(message)
  }
}

/** How long a source the transform refused is answered from memory, without running it again. */
const REFUSED_TTL_MS = 10 * 60_000
const MAX_REFUSED = 10_000

/**
 * Inside the compiled executable the Worker is an entrypoint of its own (scripts/build.ts), found by its path from
 * the project root; from source, next to this file.
 */
const WORKER_SPECIFIER = import.meta.url.includes('$bunfs')
  ? './src/modules/assets/transform-worker.ts'
  : new URL('./transform-worker.ts', import.meta.url).href

/**
 * Bun.Image decodes, resizes and encodes on Bun's native thread pool ("Bun Pool N" threads), not on the Worker's own
 * thread, so lowering the Worker's priority alone leaves that work at the main thread's. On Linux each thread has its
 * own nice value: this lowers the pool's threads to `nice` (once per thread; the pool may grow, so it is called on
 * every transform — a read of /proc/self/task, microseconds against a transform's tens of milliseconds). Public reads
 * never use the pool (their bodies are in memory), so during a burst of transforms the main thread keeps a core first.
 */
const lowered = new Set<string>()
function lowerPoolThreads(nice: number) {
  if (nice <= 0 || process.platform !== 'linux') return
  let tids: string[]
  try {
    tids = readdirSync('/proc/self/task')
  } catch {
    return
  }
  for (const tid of tids) {
    if (lowered.has(tid)) continue
    try {
      if (!readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').startsWith('Bun Pool')) continue
      setPriority(Number(tid), nice)
    } catch {}
    lowered.add(tid)
  }
}

class WorkerPool {
  private idle: Worker[] = []
  private all: Worker[] = []
  private queue: Job[] = []
  private pending = new Map<number, Job>()
  private busy = new Map<Worker, number>()
  private seq = 0
  private size: number
  private closed = false
  private warmed = false

  constructor(
    size: number,
    private nice: number,
  ) {
    this.size = size
  }

  private spawn(): Worker {
    const w = new Worker(WORKER_SPECIFIER)
    // First message: lower this Worker's thread priority, so public reads on the main thread win a busy core.
    if (this.nice > 0) w.postMessage({ nice: this.nice })
    w.onmessage = (e: MessageEvent) => {
      const msg = e.data
      if (msg.warm) return
      const job = this.pending.get(msg.id)
      this.pending.delete(msg.id)
      this.busy.delete(w)
      if (job) msg.ok ? job.resolve(msg.bytes) : job.reject(new TransformError(msg.message, msg.code, true))
      this.release(w)
    }
    w.onerror = (e) => {
      const id = this.busy.get(w)
      this.busy.delete(w)
      const job = id === undefined ? undefined : this.pending.get(id)
      if (id !== undefined) this.pending.delete(id)
      job?.reject(new TransformError(String(e.message ?? e), null))
      this.all = this.all.filter((x) => x !== w)
      this.idle = this.idle.filter((x) => x !== w)
      w.terminate()
      this.pump()
    }
    this.all.push(w)
    return w
  }

  /**
   * Start the Workers now and warm the AVIF encoder in each (its first encode takes over a second). Done at the first
   * transform, not at start-up: the Workers and a warmed encoder hold ~20 MB each for good, and warming one peaks at
   * over 100 MB, which an instance that never transforms an image (or not yet) should not pay.
   */
  warm() {
    this.warmed = true
    while (this.all.length < this.size) {
      const w = this.spawn()
      w.postMessage({ warm: true })
      this.idle.push(w)
    }
  }

  run(req: TransformRequest): Promise<Uint8Array> {
    if (this.closed) return Promise.reject(new TransformError('shutting down', null))
    return new Promise((resolve, reject) => {
      this.queue.push({ req, resolve, reject })
      this.pump()
      // The first transform takes a Worker at once (it starts its encoder on demand); the others start warming now.
      if (!this.warmed) this.warm()
    })
  }

  private release(w: Worker) {
    if (this.closed) return
    this.idle.push(w)
    this.pump()
  }

  private pump() {
    while (this.queue.length) {
      let w = this.idle.pop()
      if (!w && this.all.length < this.size) w = this.spawn()
      if (!w) return
      const job = this.queue.shift()!
      const id = ++this.seq
      this.pending.set(id, job)
      this.busy.set(w, id)
      const src = job.req.source
      w.postMessage({ id, req: job.req }, [src.buffer as ArrayBuffer])
    }
  }

  close() {
    this.closed = true
    for (const w of this.all) w.terminate()
    for (const job of this.pending.values()) job.reject(new TransformError('shutting down', null))
    for (const job of this.queue) job.reject(new TransformError('shutting down', null))
    this.all = []
    this.idle = []
    this.pending.clear()
    this.queue = []
  }
}

/** Least-recently-used disk cache of variants: an in-memory index (name → size, in use order) rebuilt at start. */
class DiskCache {
  private entries = new Map<string, number>()
  private bytes = 0

  constructor(
    readonly dir: string,
    private budget: number,
  ) {
    mkdirSync(dir, { recursive: true })
    const files = readdirSync(dir)
      .filter((f) => !f.startsWith('.'))
      .map((f) => {
        const st = statSync(join(dir, f))
        return { f, size: st.size, at: st.atimeMs }
      })
      .sort((a, b) => a.at - b.at)
    for (const { f, size } of files) {
      this.entries.set(f, size)
      this.bytes += size
    }
  }

  get usedBytes() {
    return this.bytes
  }

  has(name: string): boolean {
    const size = this.entries.get(name)
    if (size === undefined) return false
    this.entries.delete(name) // move to the most recently used end
    this.entries.set(name, size)
    return true
  }

  path(name: string) {
    return join(this.dir, name)
  }

  async put(name: string, bytes: Uint8Array) {
    const tmp = join(this.dir, `.${name}.${crypto.randomUUID()}`)
    await writeFile(tmp, bytes)
    await rename(tmp, this.path(name)) // readers never see half a file
    const old = this.entries.get(name)
    if (old !== undefined) this.bytes -= old
    this.entries.delete(name)
    this.entries.set(name, bytes.length)
    this.bytes += bytes.length
    await this.evict()
  }

  private async evict() {
    for (const [name, size] of this.entries) {
      // The newest entry stays even when it alone is over the budget: the request that made it is about to read it.
      if (this.bytes <= this.budget || this.entries.size === 1) break
      this.entries.delete(name)
      this.bytes -= size
      await unlink(this.path(name)).catch(() => {})
    }
  }

  /** Forget one entry whose file is gone (removed by another process sharing the folder). */
  forget(name: string) {
    const size = this.entries.get(name)
    if (size === undefined) return
    this.entries.delete(name)
    this.bytes -= size
  }

  /** Drop every variant of one asset (its files start with `<uuid>.`). */
  async dropPrefix(prefix: string) {
    for (const [name, size] of [...this.entries]) {
      if (!name.startsWith(prefix)) continue
      this.entries.delete(name)
      this.bytes -= size
      await rm(this.path(name), { force: true })
    }
  }
}

/**
 * Variants kept where every instance finds them (the S3 store: `<prefix>variants/<uuid>/<transform>.<format>`): an
 * image is transformed once for the fleet, each instance keeping its local disk cache in front.
 */
export interface SharedVariants {
  get(name: string): Promise<Uint8Array | null>
  put(name: string, bytes: Uint8Array): Promise<void>
}

export class ImageService {
  readonly cache: DiskCache
  private pool: WorkerPool
  private inflight = new Map<string, Promise<void>>()
  /**
   * Assets whose transform was refused (a file the decoder cannot or may not decode), by uuid: asked again for any
   * variant within REFUSED_TTL_MS, they answer the same refusal at once instead of taking a Worker again.
   */
  private refused = new Map<string, { error: TransformError; until: number }>()
  private clock: Kernel['clock']
  /** Transforms actually run (tests check single-flight with it). */
  transformsRun = 0
  private ephemeral: boolean
  private nice: number

  constructor(
    kernel: Kernel,
    private shared: SharedVariants | null = null,
  ) {
    // In-memory databases (tests) get a throw-away cache folder of their own.
    this.clock = kernel.clock
    this.ephemeral = kernel.config.memoryDb
    const dir = this.ephemeral ? join(tmpdir(), `content-service-images-${kernel.instanceId}`) : join(kernel.config.dataDir, 'cache', 'images')
    this.cache = new DiskCache(dir, kernel.config.imageCacheBytes)
    this.nice = kernel.config.imageNice
    this.pool = new WorkerPool(kernel.config.imageConcurrency, this.nice)
  }

  warm() {
    this.pool.warm()
  }

  /**
   * The cached file of a variant, transforming it first when it is not cached; concurrent calls for one variant
   * share one transform. `load` fetches the request (original bytes) only when a transform must run.
   */
  async variant(name: string, load: () => Promise<TransformRequest>): Promise<string> {
    if (this.cache.has(name)) return this.cache.path(name)
    const asset = name.slice(0, name.indexOf('.'))
    const refused = this.refused.get(asset)
    if (refused && refused.until > this.clock.ms()) throw refused.error
    let p = this.inflight.get(name)
    if (!p) {
      p = (async () => {
        // Made by another instance already: fetched, not transformed.
        const made = this.shared ? await this.shared.get(name) : null
        if (made) {
          await this.cache.put(name, made)
          return
        }
        const req = await load()
        this.transformsRun++
        lowerPoolThreads(this.nice)
        const bytes = await this.pool.run(req).catch((err) => {
          if (err instanceof TransformError && err.refused) {
            if (this.refused.size >= MAX_REFUSED) this.refused.clear()
            this.refused.set(asset, { error: err, until: this.clock.ms() + REFUSED_TTL_MS })
          }
          throw err
        })
        lowerPoolThreads(this.nice)
        await this.cache.put(name, bytes)
        if (this.shared) await this.shared.put(name, bytes)
      })().finally(() => this.inflight.delete(name))
      this.inflight.set(name, p)
    }
    await p
    return this.cache.path(name)
  }

  /** The cached file of `name` vanished from disk: the next request transforms it again. */
  forget(name: string) {
    this.cache.forget(name)
  }

  dropAsset(uuid: string) {
    this.refused.delete(uuid)
    return this.cache.dropPrefix(`${uuid}.`)
  }

  async close() {
    this.pool.close()
    if (this.ephemeral) await rm(this.cache.dir, { recursive: true, force: true })
  }
}
