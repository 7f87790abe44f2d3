import { and, asc, count, eq, gt, ne, sql } from 'drizzle-orm'
import { assetChunks, assets } from './tables'
import type { Kernel } from '../../kernel/kernel'
import { bucket, chunkPieces, enqueueObjectDelete, type StoreKind, writeChunks } from './store'

/**
 * `content-service assets migrate --to s3|postgres`: moves every asset not in the target store, one at a time, each
 * committed on its own. The copy is checked against the asset's SHA-256 before the row changes store; the row
 * changes in one transaction with the old copy's removal (chunk rows deleted; an object's deletion enqueued as a
 * durable job). A run stopped anywhere (killed, a network error) leaves every asset readable where its row says, and
 * the next run continues with what is left. Public reads go on throughout: a row names one complete copy at any time.
 */

export interface MigrateProgress {
  done: number
  total: number
  bytes: number
  totalBytes: number
}

export interface MigrateOptions {
  to: StoreKind
  /** Progress lines (default: none). */
  print?: (line: string) => void
  /** Stops the run between two pieces of a copy (tests use it to stop in the middle of an asset). */
  signal?: AbortSignal
  /** Called after every piece copied (tests). */
  onPiece?: (p: MigrateProgress) => void
}

export class MigrateError extends Error {}

const fmt = (n: number) => (n >= 1024 * 1024 * 1024 ? `${(n / 1024 ** 3).toFixed(2)} GiB` : `${(n / 1024 ** 2).toFixed(1)} MiB`)

export async function migrateAssets(kernel: Kernel, opts: MigrateOptions): Promise<MigrateProgress> {
  const to = opts.to
  const s3 = bucket(kernel) // both directions need the bucket
  const print = opts.print ?? (() => {})
  const [totals] = await kernel.db.db
    .select({ n: count(), bytes: sql<string>`coalesce(sum(${assets.size}), 0)` })
    .from(assets)
    .where(ne(assets.store, to))
  const p: MigrateProgress = { done: 0, total: Number(totals?.n ?? 0), bytes: 0, totalBytes: Number(totals?.bytes ?? 0) }
  print(`assets migrate --to ${to}: ${p.total} asset(s), ${fmt(p.totalBytes)} to move`)
  let lastShown = 0
  const show = (force = false) => {
    const now = performance.now()
    if (!force && now - lastShown < 1000) return
    lastShown = now
    const pct = p.totalBytes ? Math.floor((p.bytes / p.totalBytes) * 100) : 100
    print(`  ${p.done}/${p.total} assets, ${fmt(p.bytes)} of ${fmt(p.totalBytes)} (${pct}%)`)
  }
  const check = () => {
    if (opts.signal?.aborted) throw new MigrateError('stopped: run the command again to continue')
  }
  let after = 0
  for (;;) {
    const batch = await kernel.db.db
      .select({ id: assets.id, uuid: assets.uuid, size: assets.size, sha256: assets.sha256, contentType: assets.contentType, store: assets.store })
      .from(assets)
      .where(and(ne(assets.store, to), gt(assets.id, after)))
      .orderBy(asc(assets.id))
      .limit(100)
    if (!batch.length) break
    for (const a of batch) {
      after = a.id
      check()
      const base = p.bytes
      const hasher = new Bun.CryptoHasher('sha256')
      let copied = 0
      const counted = (piece: Uint8Array) => {
        check()
        hasher.update(piece)
        copied += piece.length
        p.bytes = base + copied
        opts.onPiece?.(p)
        show()
      }
      const verify = () => {
        const digest = hasher.digest('hex')
        if (copied !== a.size || digest !== a.sha256) {
          throw new MigrateError(`asset ${a.uuid}: the copy has ${copied} bytes and SHA-256 ${digest.slice(0, 12)}…, the row says ${a.size} and ${a.sha256.slice(0, 12)}…`)
        }
      }
      const key = s3.key(a.uuid)
      let moved = true
      try {
        if (to === 's3') {
          await s3.putChunks(key, a.contentType, async function* () {
            for await (const piece of chunkPieces(kernel, a.id, a.size)) {
              counted(piece)
              yield piece
            }
            verify()
          })
          moved = await kernel.db.db.transaction(async (tx) => {
            const [row] = await tx.update(assets).set({ store: 's3' }).where(and(eq(assets.id, a.id), eq(assets.store, 'postgres'))).returning({ id: assets.id })
            if (row) await tx.delete(assetChunks).where(eq(assetChunks.assetId, a.id))
            return !!row
          })
          // Deleted (or moved by another run) meanwhile: the copy is nobody's.
          if (!moved) await s3.delete(key).catch(() => {})
        } else {
          const reader = s3.client.file(key).stream().getReader()
          let held: Uint8Array | null = null
          try {
            moved = await kernel.db.db.transaction(async (tx) => {
              const [row] = await tx.select({ id: assets.id }).from(assets).where(and(eq(assets.id, a.id), eq(assets.store, 's3'))).for('update')
              if (!row) return false
              await tx.delete(assetChunks).where(eq(assetChunks.assetId, a.id))
              await writeChunks(kernel, tx, a.id, a.size, async (buf, _at, want) => {
                for (let filled = 0; filled < want; ) {
                  if (!held || !held.length) {
                    const { done, value } = await reader.read()
                    if (done) throw new MigrateError(`asset ${a.uuid}: the object is shorter than the asset's ${a.size} bytes`)
                    held = value
                  }
                  const take = Math.min(want - filled, held.length)
                  buf.set(held.subarray(0, take), filled)
                  held = held.subarray(take)
                  filled += take
                }
                counted(buf.subarray(0, want))
              })
              if ((held && held.length) || !(await reader.read()).done) throw new MigrateError(`asset ${a.uuid}: the object is longer than the asset`)
              verify()
              await tx.update(assets).set({ store: 'postgres' }).where(eq(assets.id, a.id))
              // The object goes once this commits, through the durable delete job.
              await enqueueObjectDelete(kernel, tx, a.uuid, { variants: false })
              return true
            })
          } finally {
            await reader.cancel().catch(() => {})
          }
        }
      } catch (err) {
        // Deleted meanwhile (its chunk rows or object went with it): nothing to move, and no copy may stay behind.
        const [still] = await kernel.db.db.select({ id: assets.id }).from(assets).where(eq(assets.id, a.id))
        if (still || opts.signal?.aborted) throw err
        if (to === 's3') await s3.delete(key).catch(() => {})
        moved = false
      }
      if (!moved) {
        p.total--
        p.totalBytes -= a.size
        p.bytes = base
        continue
      }
      p.done++
      p.bytes = base + a.size
      show()
    }
  }
  show(true)
  print(`assets migrate --to ${to}: done, ${p.done} asset(s) moved`)
  return p
}
