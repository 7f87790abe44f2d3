import { existsSync, fsyncSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import { type ByteaRows, type ByteaTarget, pgliteByteaRows, postgresByteaRows } from './bytea-rows'
import { acquireDataDirLock, type DataDirLock, prepareDataDir, StartupError, tightenModes } from './data-dir'
import { pgliteAssetPaths, pgliteTemplate } from './pglite-assets'

export type Db = PgDatabase<PgQueryResultHKT>
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
  /** PGlite: the whole data folder as an uncompressed tarball, the `template` of further databases (tests). */
  dumpTemplate?(): Promise<Blob>
  /**
   * Embedded database on disk only: runs `fn` (which copies the data folder) after a CHECKPOINT, while no statement
   * and no transaction runs — PGlite writes straight to its files, so they then hold one consistent state (kernel/backup.ts).
   */
  whileQuiescent?<T>(fn: (dataDir: string) => Promise<T>): Promise<T>
  /**
   * Postgres: proves that a NOTIFY sent through the pool reaches the LISTEN connection (within `timeoutMs`). It does
   * not through a pooler in transaction mode, and then every instance would miss the others' changes without a word:
   * servers refuse to start instead (kernel/kernel.ts `checkEventDelivery`).
   */
  probeNotify?(timeoutMs: number): Promise<boolean>
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
  /** PGlite: Postgres' shared_buffers in MB (PGLITE_SHARED_BUFFERS_MB; default 32). Resident from the start. */
  sharedBuffersMb?: number
  /** PGlite on disk: flush every commit to the disk (default true; PGLITE_FSYNC=off turns it off). */
  fsync?: boolean
  /** Postgres: seconds to wait for a connection to be ready (DATABASE_CONNECT_TIMEOUT; default 10). */
  connectTimeoutSeconds?: number
  /** Postgres: a direct session connection for LISTEN (DATABASE_LISTEN_URL), when databaseUrl goes through a pooler. */
  listenUrl?: string | null
  /** Postgres: a pooler in transaction mode sits behind databaseUrl (DATABASE_POOLER): no prepared statements. */
  pooler?: 'none' | 'transaction'
  /** Postgres: the most connections the pool opens (DATABASE_POOL_MAX; default 10); LISTEN takes one more. */
  poolMax?: number
  /** Start-up progress for the operator (first start of the embedded database). */
  onProgress?: (msg: string, fields?: Record<string, unknown>) => void
  /** What the operator should know but that does not stop the start (the data folder lock is not enforced). */
  onWarning?: (msg: string, fields?: Record<string, unknown>) => void
  /**
   * PGlite: a new database (an empty folder, or memory) starts as a copy of this dumped data folder instead of running
   * initdb (the test helper's migrated template). Without it, the executable's embedded initdb output is used when
   * there is one (`pgliteTemplate`), else initdb runs.
   */
  template?: Blob
}

let pgliteWasm: Promise<WebAssembly.Module> | null = null
let initdbWasm: Promise<WebAssembly.Module> | null = null

/**
 * PGlite's compiled WebAssembly, once per process (tests open many databases). The initdb module is compiled only
 * when initdb will run: a database that exists, or one made from a template, never needs it.
 */
async function pgliteAssets(needInitdb: boolean): Promise<{ pgliteWasmModule: WebAssembly.Module; initdbWasmModule?: WebAssembly.Module; fsBundle: Blob }> {
  pgliteWasm ??= Bun.file(pgliteAssetPaths.pgliteWasm).arrayBuffer().then((b) => WebAssembly.compile(b))
  if (needInitdb) initdbWasm ??= Bun.file(pgliteAssetPaths.initdbWasm).arrayBuffer().then((b) => WebAssembly.compile(b))
  const [pgliteWasmModule, initdbWasmModule] = await Promise.all([pgliteWasm, needInitdb ? initdbWasm : undefined])
  return { pgliteWasmModule, ...(initdbWasmModule ? { initdbWasmModule } : {}), fsBundle: Bun.file(pgliteAssetPaths.pgliteData) }
}

export async function openDatabase(opts: DbOptions): Promise<Database> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts.connectTimeoutSeconds ?? 10, opts.listenUrl ?? null, opts.pooler ?? 'none', opts.poolMax ?? 10)
  return openPglite(opts.memory ? null : opts.dataDir, opts)
}

/**
 * PGlite's Emscripten file system (NODEFS) has no fsync: Postgres' fsync() calls return without reaching the disk,
 * and its fdatasync is a no-op. With `fsync` on, Postgres runs without `-F`, syncs its WAL with fsync(), and each of
 * those calls is handed to the real file descriptor here.
 */
function enableRealFsync(client: PGlite): void {
  const nodefs = (client as unknown as { Module?: { NODEFS?: { stream_ops?: Record<string, unknown> } } }).Module?.NODEFS
  if (!nodefs?.stream_ops) throw new Error('PGlite no longer exposes NODEFS: cannot turn fsync on')
  nodefs.stream_ops.fsync = (stream: { nfd?: number }) => {
    if (typeof stream.nfd === 'number') fsyncSync(stream.nfd)
    return 0
  }
}

async function openPglite(dataDir: string | null, opts: DbOptions): Promise<Database> {
  let lock: DataDirLock | null = null
  if (dataDir) {
    prepareDataDir(dataDir)
    lock = acquireDataDirLock(dataDir)
    // A backup's copy left by a process that died mid-backup (BACKUP_STAGING in backup.ts): this process owns the
    // folder now, and no backup of it runs yet.
    rmSync(join(dataDir, 'backup-staging'), { recursive: true, force: true })
    if (!lock.enforced) {
      opts.onWarning?.('flock(2) is not available on this platform: nothing stops a second process from opening this data folder', {
        data_dir: resolve(dataDir),
      })
    }
  }
  const fsync = dataDir !== null && opts.fsync !== false
  let client: PGlite
  try {
    const firstStart = dataDir !== null && !existsSync(join(dataDir, 'PG_VERSION'))
    if (firstStart) {
      opts.onProgress?.(`creating the embedded database in ${dataDir} — first start only`, { data_dir: resolve(dataDir) })
    }
    // A new database starts from a copy of an initialised data folder when there is one: initdb in WebAssembly takes
    // seconds and grows the process to about 1 GB it never gives back; the copy takes a fraction of that (measured in
    // docs/performance.md).
    const template = firstStart || dataDir === null ? (opts.template ?? pgliteTemplate()) : undefined
    client = await PGlite.create({
      dataDir: dataDir ?? undefined,
      ...(template ? { loadDataDir: template } : {}),
      // A new 16 MB WAL segment is otherwise filled with zeros first, 16 MB written at once on the event loop: a
      // 50–90 ms stall every 16 MB of WAL, and most of the short-lived memory a 100 MB upload left behind (measured).
      // The zeros only reserve disk space ahead; the WAL itself is fsynced at commit (below).
      startParams: [
        ...PGlite.defaultStartParams.filter((p) => !(fsync && p === '-F')),
        '-c',
        'wal_init_zero=off',
        // Postgres' default 128 MB of shared buffers are resident from the start (about 125 MB of the process's memory,
        // measured); 32 MB hold a small site's working set, and the OS page cache sits behind them.
        '-c',
        `shared_buffers=${opts.sharedBuffersMb ?? 32}MB`,
        ...(fsync ? ['-c', 'wal_sync_method=fsync'] : []),
      ],
      // initdb runs for a new database without a template only (PGlite runs it when the folder holds no PG_VERSION).
      ...(await pgliteAssets((firstStart || dataDir === null) && !template)),
    })
    if (fsync) enableRealFsync(client)
    if (firstStart) tightenModes(dataDir)
  } catch (err) {
    lock?.release()
    if (err instanceof StartupError || !dataDir) throw err
    throw new StartupError(
      `the embedded database in ${resolve(dataDir)} (DATA_DIR) could not be opened (${err instanceof Error ? err.message : String(err)}). ` +
        'Check that the folder holds a content-service database (or is empty), that the disk is not full, and that ' +
        'the user the service runs as owns every file in it.',
      1,
    )
  }
  const dateParsers = answerDatesAsText(client)
  const db = drizzlePglite({ client: drizzleClient(client) }) as unknown as Db
  return {
    db,
    driver: 'pglite',
    async query<T>(text: string, params: unknown[] = []) {
      const res = await client.query<T>(text, params, { parsers: dateParsers })
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
    dumpTemplate: () => client.dumpDataDir('none'),
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
      try {
        if (!client.closed) await client.close()
      } finally {
        lock?.release()
      }
    },
  }
}

/**
 * The types drizzle asks PGlite to answer as text (its PglitePreparedQuery passes identity `parsers` for them with
 * every query): timestamps, intervals, dates, numeric[] and their arrays. Drizzle maps them itself.
 */
const DRIZZLE_TEXT_TYPES = [1114, 1184, 1186, 1082, 1231, 1115, 1185, 1187, 1182]

/**
 * PGlite merges per-query `parsers` into its table of about 320 type parsers with an object spread on every result
 * (`{...this.parsers, ...options.parsers}`): measured at about half the JS time of a small query under load. So the
 * client answers drizzle's text types as text by default, and drizzle's per-query parsers are dropped (drizzleClient);
 * the raw `query()` keeps PGlite's own parsing of those types (Dates) by passing them back — what it answered before.
 * Returns PGlite's original parsers of those types.
 */
function answerDatesAsText(client: PGlite): Record<number, (v: string, typeId?: number) => unknown> {
  const table = (client as unknown as { parsers: Record<number, (v: string, typeId?: number) => unknown> }).parsers
  const original: Record<number, (v: string, typeId?: number) => unknown> = {}
  for (const oid of DRIZZLE_TEXT_TYPES) {
    if (table[oid]) original[oid] = table[oid]
    table[oid] = (v: string) => v
  }
  return original
}

type QueryOptions = { rowMode?: 'array' | 'object'; parsers?: Record<number, unknown> } | undefined

/** Drizzle's per-query options without its parsers when they only name the text types (answerDatesAsText). */
function withoutTextParsers(opts: QueryOptions): QueryOptions {
  if (!opts?.parsers) return opts
  for (const k of Object.keys(opts.parsers)) if (!DRIZZLE_TEXT_TYPES.includes(Number(k))) return opts
  return opts.rowMode ? { rowMode: opts.rowMode } : undefined
}

/** The PGlite client as drizzle sees it: the same, with drizzle's per-query parsers dropped (in transactions too). */
function drizzleClient(client: PGlite): PGlite {
  type Q = (text: string, params?: unknown[], opts?: QueryOptions) => Promise<unknown>
  const wrapQuery = (q: Q): Q => (text, params, opts) => q(text, params, withoutTextParsers(opts))
  return new Proxy(client, {
    get(target, prop) {
      if (prop === 'query') return wrapQuery(target.query.bind(target) as Q)
      if (prop === 'transaction') {
        return (fn: (tx: Record<string, unknown>) => Promise<unknown>) =>
          target.transaction((tx) => fn(Object.assign(Object.create(tx), { query: wrapQuery(tx.query.bind(tx) as Q) })))
      }
      const v = Reflect.get(target, prop, target)
      return typeof v === 'function' ? v.bind(target) : v
    },
  })
}

/** Where DATABASE_URL points, without the password: `host:port/database as user`. */
export function describeDatabaseUrl(url: string): { host: string; port: string; database: string; user: string } {
  try {
    const u = new URL(url)
    return {
      host: decodeURIComponent(u.hostname) || 'localhost',
      port: u.port || '5432',
      database: decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username) || 'postgres',
      user: decodeURIComponent(u.username) || 'postgres',
    }
  } catch {
    return { host: '?', port: '?', database: '?', user: '?' }
  }
}

/** The driver's error turned into what the operator should check; never the URL's password. */
export function databaseConnectError(url: string, err: unknown, timeoutSeconds: number, setting = 'DATABASE_URL'): StartupError {
  const { host, port, database, user } = describeDatabaseUrl(url)
  const e = err as { code?: string; message?: string }
  const where = `Postgres at ${host}:${port} (${setting})`
  const reason = (e.message ?? String(err)).replaceAll(url, `<${setting}>`)
  let hint: string
  switch (e.code) {
    case 'ECONNREFUSED':
      hint = `nothing accepts connections on ${host}:${port}. Check that Postgres runs and listens there (listen_addresses, port) and that ${setting} names the right host and port.`
      break
    case 'CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      hint = `no answer within ${timeoutSeconds} s (DATABASE_CONNECT_TIMEOUT). Check the host and port in ${setting}, that Postgres runs, and that no firewall drops the connection.`
      break
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      hint = `the host name ${host} does not resolve. Check the host in ${setting} and this machine's DNS.`
      break
    case '28P01':
    case '28000':
      hint = `the login of user "${user}" was refused. Check the user and password in ${setting} and pg_hba.conf.`
      break
    case '3D000':
      hint = `the database "${database}" does not exist. Create it (createdb ${database}) or fix the database name in ${setting}.`
      break
    default:
      hint = `Check that Postgres runs, and the host, port, user, password and database name in ${setting}.`
  }
  return new StartupError(`cannot connect to ${where}: ${reason} — ${hint}`, 1)
}

/**
 * The pause before a connection of the pool tries again after failing, in seconds. The driver's own grows with every
 * failure of the pool (3^n / 100 s, up to 20 s): after an outage of a few seconds with requests arriving, the first
 * request once Postgres is back waited that long. Here: 50 ms doubling, at most 0.5 s (with jitter), so service
 * resumes within half a second of Postgres answering, at the cost of at most two connection attempts per second per
 * pooled connection while it is down.
 */
function reconnectDelaySeconds(retries: number): number {
  return Math.min(0.05 * 2 ** Math.min(retries, 10), 0.5) * (0.5 + Math.random() / 2)
}

async function openPostgres(url: string, connectTimeoutSeconds: number, listenUrl: string | null, pooler: 'none' | 'transaction', poolMax: number): Promise<Database> {
  // A pooler in transaction mode hands each transaction to any server connection: a named prepared statement made on
  // one is unknown on the next, so none are made.
  const client = postgres(url, { max: poolMax, onnotice: () => {}, idle_timeout: 30, connect_timeout: connectTimeoutSeconds, prepare: pooler === 'none', backoff: reconnectDelaySeconds })
  // LISTEN needs a session of its own that stays on one server connection: DATABASE_LISTEN_URL when set.
  const listener = listenUrl ? postgres(listenUrl, { max: 1, onnotice: () => {}, connect_timeout: connectTimeoutSeconds, backoff: reconnectDelaySeconds }) : client
  const db = drizzlePostgres(client) as unknown as Db
  const endAll = () => Promise.all([client.end({ timeout: 0 }).catch(() => {}), listener === client ? null : listener.end({ timeout: 0 }).catch(() => {})])
  // Fail at start-up, with what to check, rather than on the first request (or never: a silent hang).
  try {
    await client`select 1`
  } catch (err) {
    await endAll()
    throw databaseConnectError(url, err, connectTimeoutSeconds)
  }
  if (listener !== client) {
    try {
      await listener`select 1`
    } catch (err) {
      await endAll()
      throw databaseConnectError(listenUrl!, err, connectTimeoutSeconds, 'DATABASE_LISTEN_URL')
    }
  }
  return {
    db,
    driver: 'postgres',
    async query<T>(text: string, params: unknown[] = []) {
      return (await client.unsafe(text, params as never[])) as unknown as T[]
    },
    async listen(channel, handler, onReconnect) {
      let connects = 0
      const sub = await listener.listen(
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
    async probeNotify(timeoutMs) {
      const channel = 'content_service_probe'
      const nonce = crypto.randomUUID()
      const { promise, resolve } = Promise.withResolvers<boolean>()
      const sub = await listener.listen(channel, (p) => p === nonce && resolve(true))
      const timer = setTimeout(() => resolve(false), timeoutMs)
      try {
        // Sent in a transaction of the pool, as the event bus sends its notifications.
        await client.begin((sql) => sql`select pg_notify(${channel}, ${nonce})`)
        return await promise
      } finally {
        clearTimeout(timer)
        await sub.unlisten().catch(() => {})
      }
    },
    async close() {
      await Promise.all([client.end({ timeout: 5 }), listener === client ? null : listener.end({ timeout: 5 })])
    },
  }
}
