import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import { type Database, type Db, describeDatabaseUrl } from './db'
import type { Logger } from './logger'

/**
 * Read replicas (DATABASE_REPLICA_URLS): the one place that decides where a public read goes. Modules never name a
 * replica: a read that may be served by one asks `kernel.replicas.read(spaceId, (db) => ...)` and runs its query on
 * the handle it is given — a replica's, or the primary's. Only the public reads that miss the caches do (Story and
 * list loads, public Space loads, search index loads); writes, the management API, jobs and limits use `kernel.db`.
 *
 * A replica serves a read of a Space only when all of these hold, else the read goes to the primary:
 * - it answered its last poll (every POLL_MS: `pg_last_wal_replay_lsn()`) and no query on it failed since;
 * - its lag is at most REPLICA_MAX_LAG_MS. The lag is measured in time against the primary: every poll also reads the
 *   primary's `pg_current_wal_lsn()` and remembers when each position was first seen; a replica that has replayed up
 *   to L shows the primary as it was when the first position past L was seen, so its lag is the time since then (0
 *   when it has replayed everything seen). Precision: one poll interval. An idle primary does not make it grow.
 * - it has replayed past that Space's last change: every committed event of a Space (from this instance, or another
 *   one through LISTEN/NOTIFY — the event bus delivers both only after the commit) pins the Space to the primary
 *   until this process has read the primary's WAL position (one query for the changes of a moment, after the commit,
 *   so the position is at or past the commit) and a replica has replayed up to it. A read right after a publish
 *   therefore sees the publish, wherever it was made.
 * A read that fails on a replica is run again on the primary (the request does not fail) and the replica is out until
 * its next successful poll.
 */

/** How often the replicas' replay positions (and the primary's WAL position) are read. */
export const POLL_MS = 250
/** A poll not answered within this long marks the replica down. */
const POLL_TIMEOUT_MS = 2_000
/** A position no replica reaches: a Space whose change's position is not known yet. */
const PENDING = 1n << 64n

export type ReplicaState = 'up' | 'lagging' | 'down'
export type FallbackReason = 'down' | 'lagging' | 'space_changed' | 'error'

export interface ReplicaStatus {
  /** `host:port/database` (never credentials). */
  name: string
  state: ReplicaState
  /** Milliseconds behind the primary (see above); null until the first poll answered. */
  lagMs: number | null
  /** The replayed WAL position (`X/Y`), null when unknown. */
  replayLsn: string | null
}

interface Replica {
  name: string
  sql: postgres.Sql
  db: Db
  state: ReplicaState
  replay: bigint | null
  lagMs: number | null
  /** The last failure, for the log (logged once per outage). */
  error: string | null
}

/** `X/Y` (hex halves) as a number. */
export function parseLsn(text: string): bigint {
  const [hi, lo] = text.split('/')
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`)
}

function formatLsn(n: bigint): string {
  return `${(n >> 32n).toString(16).toUpperCase()}/${(n & 0xffffffffn).toString(16).toUpperCase()}`
}

/** Errors of a statement that would fail on the primary too: the replica stays in. Everything else takes it out. */
function replicaAtFault(err: unknown): boolean {
  // Drizzle wraps the driver's error (DrizzleQueryError) in `cause`.
  const e = err as { code?: unknown; cause?: { code?: unknown } }
  const code = e?.code ?? e?.cause?.code
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true // no SQLSTATE: the connection failed
  // 08 connection, 53 resources, 57 operator intervention (shutdown, cannot connect now), 58 system, XX internal,
  // 40001 a conflict with recovery (the standby cancelled the query).
  return /^(08|53|57|58|XX)/.test(code) || code === '40001'
}

export class ReplicaRouter {
  private readonly replicas: Replica[]
  /** Per Space: the primary's WAL position at (or after) its last change; PENDING until read. */
  private readonly spaceLsn = new Map<number, bigint>()
  /** Spaces changed since the position query in flight was sent: they need the next one. */
  private readonly waiting = new Set<number>()
  /** Events may have been missed (the bus resynced): every Space waits for this position. */
  private floor = 0n
  private floorWaiting = false
  private lsnQuery: Promise<void> | null = null
  /** Positions of the primary and when each was first seen, oldest first (measures the lags). */
  private readonly seen: { lsn: bigint; at: number }[] = []
  private next = 0
  private timer: ReturnType<typeof setInterval> | null = null
  private polling: Promise<void> | null = null
  private closed = false
  /** Reads served, by target ('primary' or a replica's name). */
  readonly reads = new Map<string, number>()
  /** Reads sent to the primary although replicas are configured, by reason. */
  readonly fallbacks = new Map<FallbackReason, number>()

  constructor(
    private readonly primary: Database,
    urls: string[],
    private readonly maxLagMs: number,
    private readonly logger: Logger,
    opts: { poolMax?: number; connectTimeoutSeconds?: number } = {},
  ) {
    this.replicas = urls.map((url) => {
      const { host, port, database } = describeDatabaseUrl(url)
      const sql = postgres(url, {
        max: opts.poolMax ?? 10,
        onnotice: () => {},
        idle_timeout: 30,
        connect_timeout: opts.connectTimeoutSeconds ?? 10,
        // Read-only: a standby refuses writes anyway; this makes it explicit.
        connection: { default_transaction_read_only: true } as never,
        backoff: () => 0.5,
      })
      return { name: `${host}:${port}/${database}`, sql, db: drizzlePostgres(sql) as unknown as Db, state: 'down', replay: null, lagMs: null, error: null }
    })
    this.reads.set('primary', 0)
    for (const r of this.replicas) this.reads.set(r.name, 0)
  }

  /** Whether any replica is configured (else every read is the primary's and nothing is polled). */
  get enabled(): boolean {
    return this.replicas.length > 0
  }

  /** Starts polling (the first poll is awaited: a replica that answers serves from the first request). */
  async start(): Promise<void> {
    if (!this.enabled || this.timer) return
    // Logs each replica's first state (serves reads, lags, or is down and why).
    await this.poll()
    this.timer = setInterval(() => void this.poll(), POLL_MS)
    this.timer.unref?.()
  }

  /**
   * Where a public read may go now: a replica, or null for the primary (counted as a fallback). `need`: the position
   * the replica must have replayed (null: any position, the caller checks the answer).
   */
  private pick(need: bigint | null): Replica | null {
    const floor = need === null ? 0n : need > this.floor ? need : this.floor
    let reason: FallbackReason = 'down'
    const n = this.replicas.length
    for (let i = 0; i < n; i++) {
      const r = this.replicas[(this.next + i) % n]
      if (r.state === 'down' || r.replay === null) continue
      if (r.state === 'lagging') {
        reason = 'lagging'
        continue
      }
      if (r.replay < floor) {
        if (reason !== 'lagging') reason = 'space_changed'
        continue
      }
      this.next = (this.next + i + 1) % n
      return r
    }
    this.fallback(reason)
    return null
  }

  /** The position a replica must have replayed to serve Space `spaceId` (null: past every known change). */
  private needOf(spaceId: number | null): bigint {
    let need = this.floor
    if (spaceId !== null) {
      const v = this.spaceLsn.get(spaceId)
      if (v !== undefined && v > need) need = v
    } else {
      for (const v of this.spaceLsn.values()) if (v > need) need = v
    }
    return need
  }

  private fallback(reason: FallbackReason) {
    this.fallbacks.set(reason, (this.fallbacks.get(reason) ?? 0) + 1)
  }

  private count(target: string) {
    this.reads.set(target, (this.reads.get(target) ?? 0) + 1)
  }

  /**
   * Runs a public read of Space `spaceId` on a replica that may serve it, else on the primary; a read that fails on
   * the replica runs again on the primary.
   */
  async read<T>(spaceId: number, fn: (db: Db) => Promise<T>): Promise<T> {
    if (!this.enabled) return fn(this.primary.db)
    // After the handlers of an event being delivered right now have run (they may start this read before the
    // router's own handler pinned the Space: the bus runs '*' handlers last).
    await null
    return this.run(this.pick(this.needOf(spaceId)), fn, null)
  }

  /**
   * A public read that finds its Space itself (a Space by slug): runs on a replica, then keeps the answer only if that
   * replica had replayed past the found Space's last change (`spaceOf`; for no Space, past every known change), else
   * runs it again on the primary.
   */
  async readFinding<T>(fn: (db: Db) => Promise<T>, spaceOf: (value: T) => number | null): Promise<T> {
    if (!this.enabled) return fn(this.primary.db)
    await null
    return this.run(this.pick(null), fn, spaceOf)
  }

  private async run<T>(replica: Replica | null, fn: (db: Db) => Promise<T>, spaceOf: ((value: T) => number | null) | null): Promise<T> {
    if (replica) {
      // The position the replica had replayed before the query: what it answers is at least that recent.
      const replayed = replica.replay ?? 0n
      let value: T
      try {
        value = await fn(replica.db)
      } catch (err) {
        if (this.closed) throw err
        this.fallback('error')
        if (replicaAtFault(err)) this.markDown(replica, err)
        this.count('primary')
        return fn(this.primary.db)
      }
      if (spaceOf) {
        if (replayed < this.needOf(spaceOf(value))) {
          this.fallback('space_changed')
          this.count('primary')
          return fn(this.primary.db)
        }
      }
      this.count(replica.name)
      return value
    }
    this.count('primary')
    return fn(this.primary.db)
  }

  private markDown(r: Replica, err: unknown) {
    const msg = String((err as Error)?.message ?? err)
    if (r.state !== 'down' || r.error === null) {
      this.logger.warn(`read replica ${r.name} is down: reads go to the primary until it answers again`, { replica: r.name, error: msg })
    }
    r.state = 'down'
    r.error = msg
  }

  // ---- Changes ----

  /** A committed change of Space `spaceId` (an event, local or remote): its reads stay on the primary until replayed. */
  changed(spaceId: number): void {
    if (!this.enabled) return
    this.spaceLsn.set(spaceId, PENDING)
    this.waiting.add(spaceId)
    this.readPositions()
  }

  /** Events may have been missed: every Space waits for the primary's current position. */
  resync(): void {
    if (!this.enabled) return
    this.floor = PENDING
    this.floorWaiting = true
    this.readPositions()
  }

  /** Reads the primary's WAL position for the Spaces changed so far (one query at a time; the rest wait for the next). */
  private readPositions(): void {
    if (this.lsnQuery || this.closed || (!this.waiting.size && !this.floorWaiting)) return
    const batch = [...this.waiting]
    const floor = this.floorWaiting
    this.waiting.clear()
    this.floorWaiting = false
    this.lsnQuery = this.primary
      .query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')
      .then(([row]) => {
        const lsn = parseLsn(row.lsn)
        for (const id of batch) if (!this.waiting.has(id)) this.spaceLsn.set(id, lsn)
        if (floor && !this.floorWaiting) this.floor = lsn
      })
      .catch((err) => {
        // Still pinned to the primary; tried again with the next change or poll.
        for (const id of batch) this.waiting.add(id)
        if (floor) this.floorWaiting = true
        this.logger.warn('read replicas: the primary WAL position could not be read', { error: String((err as Error)?.message ?? err) })
      })
      .finally(() => {
        this.lsnQuery = null
        if (!this.closed && (this.waiting.size || this.floorWaiting)) queueMicrotask(() => this.readPositions())
      })
  }

  // ---- Polling ----

  private poll(): Promise<void> {
    this.polling ??= this.pollOnce().finally(() => {
      this.polling = null
    })
    return this.polling
  }

  private async pollOnce(): Promise<void> {
    if (this.closed) return
    const now = Date.now()
    try {
      const [row] = await this.primary.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')
      const lsn = parseLsn(row.lsn)
      const last = this.seen[this.seen.length - 1]
      if (!last || lsn > last.lsn) this.seen.push({ lsn, at: now })
    } catch {
      // The primary does not answer: the lags keep their last values; its own probes report it.
    }
    await Promise.all(this.replicas.map((r) => this.pollReplica(r, now)))
    this.prune()
    if (this.waiting.size || this.floorWaiting) this.readPositions()
  }

  private async pollReplica(r: Replica, now: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${POLL_TIMEOUT_MS} ms`)), POLL_TIMEOUT_MS)
      })
      const query = r.sql<{ lsn: string | null }[]>`select pg_last_wal_replay_lsn()::text as lsn`
      // When the timeout wins, the query is left running: its failure later (the replica stopping, say) must not
      // surface as an unhandled rejection.
      query.catch(() => {})
      const [row] = await Promise.race([query, timeout])
      if (!row?.lsn) throw new Error('not a standby: pg_last_wal_replay_lsn() is null (the URL must name a hot standby of DATABASE_URL)')
      const replay = parseLsn(row.lsn)
      r.replay = replay
      r.lagMs = this.lagOf(replay, now)
      const state: ReplicaState = r.lagMs > this.maxLagMs ? 'lagging' : 'up'
      if (state !== r.state) {
        const fields = { replica: r.name, lag_ms: r.lagMs, max_lag_ms: this.maxLagMs }
        if (state === 'lagging') this.logger.warn(`read replica ${r.name} lags ${r.lagMs} ms behind the primary: reads go to the primary`, fields)
        else this.logger.info(`read replica ${r.name} serves reads`, fields)
      }
      r.state = state
      r.error = null
    } catch (err) {
      this.markDown(r, err)
    } finally {
      clearTimeout(timer)
    }
  }

  /** How long ago the primary was first seen past `replay` (0 when the replica replayed everything seen). */
  private lagOf(replay: bigint, now: number): number {
    for (const s of this.seen) if (s.lsn > replay) return now - s.at
    return 0
  }

  /** Forgets what every replica has replayed past: positions seen and Spaces' changes. */
  private prune(): void {
    let min: bigint | null = null
    for (const r of this.replicas) if (r.replay !== null && (min === null || r.replay < min)) min = r.replay
    // Bounded (about 40 minutes of polls that each saw a new position): past it the oldest lags are underestimated.
    if (this.seen.length > 10_000) this.seen.splice(0, this.seen.length - 10_000)
    if (min === null) return
    let drop = 0
    while (drop < this.seen.length - 1 && this.seen[drop].lsn <= min) drop++
    if (drop) this.seen.splice(0, drop)
    for (const [id, lsn] of this.spaceLsn) if (lsn <= min) this.spaceLsn.delete(id)
  }

  // ---- Reporting ----

  /** Each replica's state, for /v1/health/ready and /metrics. */
  status(): ReplicaStatus[] {
    return this.replicas.map((r) => ({ name: r.name, state: r.state, lagMs: r.lagMs, replayLsn: r.replay === null ? null : formatLsn(r.replay) }))
  }

  async close(): Promise<void> {
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.polling?.catch(() => {})
    await this.lsnQuery?.catch(() => {})
    await Promise.all(this.replicas.map((r) => r.sql.end({ timeout: 2 }).catch(() => {})))
  }
}
