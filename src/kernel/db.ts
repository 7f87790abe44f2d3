import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import * as schema from '../../db/schema'
import { type ByteaRows, type ByteaTarget, pgliteByteaRows, postgresByteaRows } from './bytea-rows'
import { pgliteAssetPaths } from './pglite-assets'

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>
/** A transaction handle: the same query API as Db. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]
export type DbOrTx = Db | Tx

export interface Database {
  db: Db
  driver: 'pglite' | 'postgres'
  /** Raw SQL for the few places the query builder cannot express (locks, NOTIFY, upserts with CASE). */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>
  /**
   * LISTEN on `channel`. `onReconnect` runs when the listening connection was lost and is back (postgres driver):
   * notifications sent meanwhile are gone, so caches fed by them must resynchronise.
   */
  listen(channel: string, handler: (payload: string) => void, onReconnect?: () => void): Promise<() => Promise<void>>
  notify(channel: string, payload: string): Promise<void>
  /** Appends (integer, integer, bytea) rows inside `tx` in binary, from one reused buffer (asset chunks). */
  byteaRows(tx: Tx, target: ByteaTarget, fill: (rows: ByteaRows) => Promise<void>): Promise<void>
  /**
   * Embedded database on disk only: runs `fn` (which copies the data folder) after a CHECKPOINT, while no statement
   * and no transaction runs — PGlite writes straight to its files, so they then hold one consistent state (kernel/backup.ts).
   */
  whileQuiescent?<T>(fn: (dataDir: string) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** The rows of `db.execute()`: postgres-js returns an array of rows, PGlite an object with `rows`. */
export function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[]
}

export interface DbOptions {
  databaseUrl: string | null
  dataDir: string
  memory?: boolean
}

let cachedAssets: Promise<{ pgliteWasmModule: WebAssembly.Module; initdbWasmModule: WebAssembly.Module; fsBundle: Blob }> | null =
  null

function pgliteAssets() {
  cachedAssets ??= (async () => {
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([
      WebAssembly.compile(await Bun.file(pgliteAssetPaths.pgliteWasm).arrayBuffer()),
      WebAssembly.compile(await Bun.file(pgliteAssetPaths.initdbWasm).arrayBuffer()),
    ])
    return { pgliteWasmModule, initdbWasmModule, fsBundle: Bun.file(pgliteAssetPaths.pgliteData) }
  })()
  return cachedAssets
}

export async function openDatabase(opts: DbOptions): Promise<Database> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl)
  return openPglite(opts.memory ? null : opts.dataDir)
}

async function openPglite(dataDir: string | null): Promise<Database> {
  if (dataDir) mkdirSync(dataDir, { recursive: true })
  const client = await PGlite.create({
    dataDir: dataDir ?? undefined,
    // A new 16 MB WAL segment is otherwise filled with zeros first, 16 MB written at once on the event loop: a
    // 50–90 ms stall every 16 MB of WAL, and most of the short-lived memory a 100 MB upload left behind (measured).
    // The zeros only reserve disk space ahead, which matters little next to PGlite's own fsync=off.
    startParams: [...PGlite.defaultStartParams, '-c', 'wal_init_zero=off'],
    ...(await pgliteAssets()),
  })
  const db = drizzlePglite(client, { schema }) as unknown as Db
  return {
    db,
    driver: 'pglite',
    async query<T>(text: string, params: unknown[] = []) {
      const res = await client.query<T>(text, params)
      return res.rows
    },
    async listen(channel, handler) {
      const unsub = await client.listen(channel, handler)
      return unsub
    },
    async notify(channel, payload) {
      await client.query('select pg_notify($1, $2)', [channel, payload])
    },
    byteaRows: (tx, target, fill) => pgliteByteaRows(client, tx, target, fill),
    ...(dataDir
      ? {
          async whileQuiescent<T>(fn: (dir: string) => Promise<T>): Promise<T> {
            // The checkpoint writes the shared buffers out, so a restore replays little WAL. Then PGlite's transaction
            // lock (every query, exec and transaction holds it) and its statement lock (listen, dumps): nothing runs
            // until the copy is done; a transaction's statements never straddle it.
            await client.exec('checkpoint')
            return client._runExclusiveTransaction(() => client._runExclusiveQuery(() => fn(dataDir)))
          },
        }
      : {}),
    async close() {
      if (!client.closed) await client.close()
    },
  }
}

async function openPostgres(url: string): Promise<Database> {
  const client = postgres(url, { max: 10, onnotice: () => {}, idle_timeout: 30 })
  const db = drizzlePostgres(client, { schema }) as unknown as Db
  // Fail at start-up, with the driver's message, rather than on the first request.
  await client`select 1`
  return {
    db,
    driver: 'postgres',
    async query<T>(text: string, params: unknown[] = []) {
      return (await client.unsafe(text, params as never[])) as unknown as T[]
    },
    async listen(channel, handler, onReconnect) {
      let connects = 0
      const sub = await client.listen(
        channel,
        (p) => handler(p),
        () => {
          if (connects++ > 0) onReconnect?.()
        },
      )
      return () => sub.unlisten()
    },
    async notify(channel, payload) {
      await client.notify(channel, payload)
    },
    byteaRows: postgresByteaRows,
    async close() {
      await client.end({ timeout: 5 })
    },
  }
}
