import { and, eq, getTableName, gte, inArray, lte, type SQL, sql } from 'drizzle-orm'
import { open } from 'node:fs/promises'
import { assetChunks, assets } from './tables'
import type { S3Config } from '../../config'
import type { DbOrTx, Tx } from '../../kernel/db'
import { type Emit, transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'

/**
 * Where asset bytes live: one interface, two stores.
 *
 * - `postgres` (the default): 1 MiB `bytea` rows in `asset_chunks`, written in the upload's own transaction, so the
 *   bytes and the row commit or roll back together. The one-process user runs exactly this.
 * - `s3`: one object `<S3_PREFIX>assets/<uuid>` in an S3-compatible bucket through `Bun.S3Client`, streamed from the
 *   upload's temporary file (multipart past 8 MiB, at most two parts in memory). The object is written before the
 *   row's transaction; a transaction that rolls back deletes it, and `assets.sweep_objects` deletes any object that
 *   no committed row names (a process that died in between). Deleting an asset enqueues `assets.delete_object` in the
 *   deleting transaction: the object goes once the row is gone for good, retried until the store answers.
 *
 * `assets.store` says which store holds each asset, so both can hold assets at once (ASSET_STORE only chooses where
 * new uploads go) and `content-service assets migrate` moves them one by one.
 */

export type StoreKind = 'postgres' | 's3'
export const CHUNK_BYTES = 1024 * 1024
export const CHUNK_ROWS = {
  table: getTableName(assetChunks),
  columns: [assetChunks.assetId.name, assetChunks.idx.name, assetChunks.data.name],
  maxBytes: CHUNK_BYTES,
} as const

/** What a store needs to know of an asset. */
export interface BlobRef {
  id: number
  uuid: string
  size: number
  store: StoreKind
}

/** Multipart part size: S3 wants at least 5 MiB for every part but the last. */
const PART_BYTES = 8 * 1024 * 1024
const READ_BYTES = 1024 * 1024
/** Objects younger than this are never swept: an upload may be between its object and its commit. */
export const SWEEP_MIN_AGE_MS = 3600_000

declare module '../../kernel/jobs' {
  interface JobMap {
    'assets.delete_object': { key: string }
    'assets.sweep_objects': Record<string, never>
  }
}

export class AssetStoreError extends Error {}

/** The bucket: keys, streamed writes and reads, presigned URLs. Never logs or shows its keys. */
export class S3Blobs {
  readonly client: Bun.S3Client
  readonly prefix: string

  constructor(readonly config: S3Config) {
    this.prefix = config.prefix
    this.client = new Bun.S3Client({
      bucket: config.bucket,
      region: config.region,
      accessKeyId: config.accessKeyId,
      secretAccessKey: config.secretAccessKey,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    })
  }

  /** The original of an asset. */
  key(uuid: string) {
    return `${this.prefix}assets/${uuid.toLowerCase()}`
  }

  /** An image variant, shared by every instance: `<prefix>variants/<uuid>/<transform>.<format>`. */
  variantKey(uuid: string, name: string) {
    return `${this.prefix}variants/${uuid.toLowerCase()}/${name}`
  }

  /** The uuid of an original's key, or null for any other key. */
  uuidOf(key: string): string | null {
    const m = /^assets\/([0-9a-f-]{36})$/.exec(key.slice(this.prefix.length))
    return key.startsWith(this.prefix) && m ? m[1]! : null
  }

  /** Writes a file's first `size` bytes, read 1 MiB at a time: one PUT up to 8 MiB, multipart beyond. */
  async putFile(key: string, path: string, size: number, type: string): Promise<void> {
    if (size <= PART_BYTES) {
      // Small enough for one request: the file is read by Bun as it sends.
      await this.client.write(key, size === 0 ? new Uint8Array(0) : Bun.file(path).slice(0, size), { type })
      return
    }
    const fh = await open(path, 'r')
    try {
      const buf = new Uint8Array(READ_BYTES)
      await this.putChunks(key, type, async function* () {
        for (let at = 0; at < size; ) {
          const want = Math.min(READ_BYTES, size - at)
          const { bytesRead } = await fh.read(buf, 0, want, at)
          if (bytesRead !== want) throw new Error('file shorter than its size')
          at += bytesRead
          yield buf.subarray(0, bytesRead)
        }
      })
    } finally {
      await fh.close()
    }
  }

  /**
   * Writes an object from pieces as they come (multipart, `PART_BYTES` parts, two in flight): memory holds the
   * writer's queue, not the object. Each piece is copied by the writer, so the caller may reuse its buffer.
   */
  async putChunks(key: string, type: string, pieces: () => AsyncIterable<Uint8Array>): Promise<void> {
    const writer = this.client.file(key).writer({ type, partSize: PART_BYTES, queueSize: 2, retry: 3 })
    try {
      let unflushed = 0
      for await (const piece of pieces()) {
        const pending = writer.write(piece)
        if (typeof pending !== 'number') await pending
        // write() buffers without pushing back: waiting for the part to be sent every PART_BYTES keeps memory flat
        // (a 100 MiB file: +20–31 MiB RSS at peak, against +95–160 MiB unflushed). The callers' 1 MiB pieces make
        // every part but the last exactly PART_BYTES, as S3 wants (≥ 5 MiB).
        unflushed += piece.length
        if (unflushed >= PART_BYTES) {
          unflushed = 0
          await writer.flush()
        }
      }
    } catch (err) {
      // Ends the upload, then deletes whatever it left: ending a writer with an error may still complete the object
      // with the parts sent so far, and a partial object must never sit under an asset's key.
      await Promise.resolve(writer.end(err as Error)).catch(() => {})
      await this.delete(key).catch(() => {})
      throw err
    }
    await writer.end()
  }

  /** Bytes `from`…`to` (inclusive), streamed from the store. */
  stream(key: string, from: number, to: number, size: number): ReadableStream<Uint8Array> {
    const file = this.client.file(key)
    if (from === 0 && to === size - 1) return file.stream()
    // Never more than the range, whatever the server sends: some S3-compatible servers answer `bytes=0-0` with the
    // whole object (s3rver reads an end of 0 as none), and the response's Content-Length promises the range.
    let left = to - from + 1
    return file
      .slice(from, to + 1)
      .stream()
      .pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(piece, controller) {
            if (left <= 0) return
            const out = piece.length > left ? piece.subarray(0, left) : piece
            left -= out.length
            controller.enqueue(out)
            if (left <= 0) controller.terminate()
          },
        }),
      )
  }

  async bytes(key: string): Promise<Uint8Array> {
    return this.client.file(key).bytes()
  }

  async delete(key: string): Promise<void> {
    await this.client.delete(key)
  }

  async exists(key: string): Promise<boolean> {
    return this.client.exists(key)
  }

  /** A short-lived GET URL answering with the stored type and this disposition. */
  presign(key: string, expiresIn: number, type: string, disposition: string): string {
    return this.client.presign(key, { expiresIn, method: 'GET', type, contentDisposition: disposition })
  }

  /** Every object under `<prefix><under>`, page by page. */
  async *list(under: string): AsyncIterable<{ key: string; lastModified: Date | null }> {
    let continuationToken: string | undefined
    for (;;) {
      const page = await this.client.list({ prefix: `${this.prefix}${under}`, maxKeys: 1000, ...(continuationToken ? { continuationToken } : {}) })
      for (const o of page.contents ?? []) yield { key: o.key, lastModified: o.lastModified ? new Date(o.lastModified) : null }
      if (!page.isTruncated || !page.nextContinuationToken) return
      continuationToken = page.nextContinuationToken
    }
  }
}

/** The stores of a kernel, made once from its config. */
export interface Stores {
  /** Where new uploads go (ASSET_STORE). */
  write: StoreKind
  /** The bucket, when S3_BUCKET is set. */
  s3: S3Blobs | null
}

const byKernel = new WeakMap<Kernel, Stores>()

export function stores(kernel: Kernel): Stores {
  let s = byKernel.get(kernel)
  if (!s) {
    s = { write: kernel.config.assetStore, s3: kernel.config.s3 ? new S3Blobs(kernel.config.s3) : null }
    byKernel.set(kernel, s)
  }
  return s
}

/** The bucket, or a clear error when an asset lives there but S3_* is not set on this instance. */
export function bucket(kernel: Kernel): S3Blobs {
  const s3 = stores(kernel).s3
  if (!s3) throw new AssetStoreError('an asset is kept in the S3 store but S3_BUCKET is not set on this instance (docs/operations.md)')
  return s3
}

/**
 * With ASSET_STORE=s3, image variants in the bucket under `<prefix>variants/<uuid>/<transform>.<format>` (the cache
 * name `<uuid>.<transform>.<format>`), shared by every instance. A store that fails is logged and the variant made or
 * kept locally: a transform never fails for it.
 */
export function sharedVariants(kernel: Kernel) {
  const { write, s3 } = stores(kernel)
  if (write !== 's3' || !s3) return null
  const keyOf = (name: string) => {
    const dot = name.indexOf('.')
    return s3.variantKey(name.slice(0, dot), name.slice(dot + 1))
  }
  return {
    async get(name: string): Promise<Uint8Array | null> {
      try {
        return await s3.client.file(keyOf(name)).bytes()
      } catch (err) {
        if ((err as { code?: string }).code !== 'NoSuchKey') kernel.logger.warn('shared image variant could not be read', { variant: name, error: String(err) })
        return null
      }
    },
    async put(name: string, bytes: Uint8Array): Promise<void> {
      await s3.client.write(keyOf(name), bytes).catch((err) => kernel.logger.warn('shared image variant could not be stored', { variant: name, error: String(err) }))
    },
  }
}

// ---- The Postgres store ----

/**
 * The `data` column as the driver reads it fastest. PGlite passes bytea through its text form (hex, parsed in
 * JavaScript byte by byte: ~0.3 s per MiB here); base64 through encode() is ~8× faster. postgres.js parses hex
 * natively.
 */
function chunkData(kernel: Kernel): SQL<Uint8Array | string> {
  return kernel.db.driver === 'pglite' ? sql<string>`encode(${assetChunks.data}, 'base64')` : sql<Uint8Array>`${assetChunks.data}`
}
const bytesOf = (v: Uint8Array | string): Uint8Array => (typeof v === 'string' ? Buffer.from(v, 'base64') : v)

/**
 * Writes `size` bytes as 1 MiB rows inside `tx`; `read(buf, at, want)` fills `buf` with the bytes at offset `at`
 * (exactly `want` of them) straight into the buffer the rows are sent from.
 */
export async function writeChunks(
  kernel: Kernel,
  tx: Tx,
  assetId: number,
  size: number,
  read: (buf: Uint8Array, at: number, want: number) => Promise<void>,
): Promise<void> {
  await kernel.db.byteaRows(tx, CHUNK_ROWS, async (rows) => {
    for (let idx = 0, at = 0; at < size; idx++, at += CHUNK_BYTES) {
      const want = Math.min(CHUNK_BYTES, size - at)
      await read(rows.bytes, at, want)
      await rows.append(assetId, idx, want)
    }
  })
}

/** Writes a file's bytes as chunk rows inside `tx` (the Postgres store's upload). */
export async function writeFileChunks(kernel: Kernel, tx: Tx, assetId: number, path: string, size: number): Promise<void> {
  const fh = await open(path, 'r')
  try {
    await writeChunks(kernel, tx, assetId, size, async (buf, at, want) => {
      const { bytesRead } = await fh.read(buf, 0, want, at)
      if (bytesRead !== want) throw new Error('upload file shorter than its size')
    })
  } finally {
    await fh.close()
  }
}

/**
 * Bytes `from`..`to` of a Postgres-stored asset, chunk row by chunk row, as a direct stream (Bun): the next row is
 * read only once the socket has taken the previous one (`await controller.write`), so a slow reader holds about one
 * 1 MiB row of memory, not the whole asset.
 */
export function streamBytes(kernel: Kernel, assetId: number, from: number, to: number): ReadableStream<Uint8Array> {
  const first = Math.floor(from / CHUNK_BYTES)
  const last = Math.floor(to / CHUNK_BYTES)
  return new ReadableStream<Uint8Array>({
    type: 'direct',
    async pull(controller: ReadableStreamDirectController) {
      for (let idx = first; idx <= last; idx++) {
        const [row] = await kernel.db.db
          .select({ data: chunkData(kernel) })
          .from(assetChunks)
          .where(and(eq(assetChunks.assetId, assetId), eq(assetChunks.idx, idx)))
        if (!row) return controller.close(new Error('asset chunk missing'))
        const data = bytesOf(row.data)
        const base = idx * CHUNK_BYTES
        const start = Math.max(0, from - base)
        const end = Math.min(data.length, to - base + 1)
        await controller.write(data.subarray(start, end))
      }
      controller.close()
    },
  } as unknown as UnderlyingDefaultSource<Uint8Array>)
}

/** The chunk rows of a Postgres-stored asset in order, eight per query (the migration's reader). */
export async function* chunkPieces(kernel: Kernel, assetId: number, size: number, db: DbOrTx = kernel.db.db): AsyncIterable<Uint8Array> {
  for (let idx = 0, at = 0; at < size; ) {
    const rows = await db
      .select({ idx: assetChunks.idx, data: chunkData(kernel) })
      .from(assetChunks)
      .where(and(eq(assetChunks.assetId, assetId), gte(assetChunks.idx, idx), lte(assetChunks.idx, idx + 7)))
      .orderBy(assetChunks.idx)
    if (!rows.length) throw new Error('asset chunk missing')
    for (const r of rows) {
      if (r.idx !== idx) throw new Error('asset chunk missing')
      const data = bytesOf(r.data)
      yield data
      at += data.length
      idx++
    }
  }
}

// ---- Both stores ----

/**
 * Stores a new asset's bytes (the file at `path`, `size` bytes) in the store ASSET_STORE names, with the row that
 * `insert` writes (its `store` column set to the store passed in) in one transaction:
 * - Postgres: the chunk rows are written in that transaction after the row, so both commit or neither does.
 * - S3: the object first (streamed from the file, no transaction held open meanwhile), then the transaction; one that
 *   does not commit deletes the object again, and the sweeper deletes it should this process die in between.
 */
export async function storeNewAsset<R extends { id: number }>(
  kernel: Kernel,
  blob: { uuid: string; path: string; size: number; type: string },
  insert: (tx: Tx, emit: Emit, store: StoreKind) => Promise<R>,
): Promise<R> {
  const { write, s3 } = stores(kernel)
  if (write === 'postgres') {
    return transact(kernel, async (tx, emit) => {
      const row = await insert(tx, emit, 'postgres')
      await writeFileChunks(kernel, tx, row.id, blob.path, blob.size)
      return row
    })
  }
  const key = s3!.key(blob.uuid)
  await s3!.putFile(key, blob.path, blob.size, blob.type)
  try {
    return await transact(kernel, (tx, emit) => insert(tx, emit, 's3'))
  } catch (err) {
    await s3!.delete(key).catch((e) =>
      kernel.logger.warn('the object of a rolled-back upload could not be deleted (the sweeper will)', { asset: blob.uuid, error: String(e) }),
    )
    throw err
  }
}

/** Bytes `from`…`to` (inclusive) of an asset, from wherever it lives. */
export function streamAsset(kernel: Kernel, asset: BlobRef, from: number, to: number): ReadableStream<Uint8Array> {
  if (asset.store === 's3') return bucket(kernel).stream(bucket(kernel).key(asset.uuid), from, to, asset.size)
  return streamBytes(kernel, asset.id, from, to)
}

/** Every byte of an asset in memory (the transform input: images are at most 100 MB and 50 megapixels). */
export async function readAllBytes(kernel: Kernel, asset: BlobRef): Promise<Uint8Array> {
  if (asset.store === 's3') {
    const s3 = bucket(kernel)
    const bytes = await s3.bytes(s3.key(asset.uuid))
    if (bytes.length !== asset.size) throw new AssetStoreError('the stored object does not have the asset\'s size')
    return bytes
  }
  const out = new Uint8Array(asset.size)
  let at = 0
  for await (const piece of chunkPieces(kernel, asset.id, asset.size)) {
    out.set(piece, at)
    at += piece.length
  }
  return out
}

/** Enqueues, inside `tx`, the durable deletion of an asset's object and/or its shared variants (default: both). */
export async function enqueueObjectDelete(
  kernel: Kernel,
  tx: DbOrTx,
  uuid: string,
  opts: { original?: boolean; variants?: boolean } = {},
): Promise<void> {
  const s3 = bucket(kernel)
  const keys = [...(opts.original === false ? [] : [s3.key(uuid)]), ...(opts.variants === false ? [] : [s3.variantKey(uuid, '')])]
  if (!keys.length) return
  await kernel.jobs.enqueueMany(
    tx,
    keys.map((key) => ({ queue: 'assets.delete_object' as const, payload: { key }, dedupeKey: key })),
  )
}

/**
 * The queues of the S3 store: `assets.delete_object` deletes an object (or, for a key ending in `/`, every object
 * under it) unless a committed row names it again; `assets.sweep_objects` (hourly) deletes originals older than an
 * hour that no row in the S3 store names: uploads whose process died between the object and the commit.
 */
export function registerStoreJobs(kernel: Kernel) {
  const jobs = kernel.jobs
  jobs.define('assets.delete_object', {
    retryDelaysMs: [10_000, 60_000, 300_000, 1_800_000, 3_600_000, 6 * 3_600_000],
    handler: async ({ job }) => {
      const s3 = stores(kernel).s3
      if (!s3) throw new AssetStoreError('S3_BUCKET is not set on this instance: the object cannot be deleted here')
      const key = job.payload.key
      if (key.endsWith('/')) {
        for await (const o of s3.list(key.slice(s3.prefix.length))) await s3.delete(o.key)
        return
      }
      const uuid = s3.uuidOf(key)
      if (uuid && (await inS3(kernel, [uuid])).size) return // the asset is (again) in the bucket: keep it
      await s3.delete(key)
    },
  })
  jobs.define('assets.sweep_objects', {
    handler: async () => {
      const s3 = stores(kernel).s3
      if (!s3) return
      await sweepObjects(kernel, s3)
    },
  })
  if (kernel.config.s3) jobs.schedule({ name: 'assets.sweep_objects', cron: '41 * * * *', queue: 'assets.sweep_objects', payload: {} })
}

/** The uuids among `uuids` whose rows say the S3 store. */
async function inS3(kernel: Kernel, uuids: string[]): Promise<Set<string>> {
  if (!uuids.length) return new Set()
  const rows = await kernel.db.db
    .select({ uuid: assets.uuid })
    .from(assets)
    .where(and(inArray(assets.uuid, uuids), eq(assets.store, 's3')))
  return new Set(rows.map((r) => r.uuid.toLowerCase()))
}

/**
 * Deletes originals older than SWEEP_MIN_AGE_MS that no S3-stored row names, and shared variants of assets that no
 * longer exist. Returns how many objects went.
 */
export async function sweepObjects(kernel: Kernel, s3: S3Blobs): Promise<number> {
  const cutoff = kernel.clock.ms() - SWEEP_MIN_AGE_MS
  let removed = 0
  let batch: { key: string; uuid: string }[] = []
  const flush = async () => {
    const kept = await inS3(kernel, batch.map((b) => b.uuid))
    for (const b of batch) {
      if (kept.has(b.uuid)) continue
      await s3.delete(b.key)
      removed++
    }
    batch = []
  }
  for await (const o of s3.list('assets/')) {
    const uuid = s3.uuidOf(o.key)
    if (!uuid || (o.lastModified && o.lastModified.getTime() > cutoff)) continue
    batch.push({ key: o.key, uuid })
    if (batch.length >= 500) await flush()
  }
  if (batch.length) await flush()
  // Shared variants of assets that no longer exist in any store (a deleted Space's, or left by a failed delete).
  let variants: { key: string; uuid: string }[] = []
  const flushVariants = async () => {
    const uuids = [...new Set(variants.map((v) => v.uuid))]
    const rows = await kernel.db.db.select({ uuid: assets.uuid }).from(assets).where(inArray(assets.uuid, uuids))
    const live = new Set(rows.map((r) => r.uuid.toLowerCase()))
    for (const v of variants) {
      if (live.has(v.uuid)) continue
      await s3.delete(v.key)
      removed++
    }
    variants = []
  }
  for await (const o of s3.list('variants/')) {
    const m = /^variants\/([0-9a-f-]{36})\//.exec(o.key.slice(s3.prefix.length))
    if (!m || (o.lastModified && o.lastModified.getTime() > cutoff)) continue
    variants.push({ key: o.key, uuid: m[1]! })
    if (variants.length >= 500) await flushVariants()
  }
  if (variants.length) await flushVariants()
  if (removed) kernel.logger.info('orphaned asset objects deleted', { count: removed })
  return removed
}
