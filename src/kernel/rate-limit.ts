import { sql } from 'drizzle-orm'
import type { Clock } from './clock'
import type { Database } from './db'
import { isDatabaseUnavailable } from './errors'
import { isIPv4 } from './http'

/**
 * A per-IP limit on one route. `path` uses `:param` for one segment and a trailing `*` for the rest. Each module
 * declares the rows of its own routes (mirroring the spec's stated values, sections 4.1, 4.2, 4.7, 4.8 and 8); the
 * kernel adds the public surface's default. Rows are matched in order, first wins: module rows in module-list order,
 * then the kernel's defaults, so a module's specific row always stands above a general one.
 * Not limited on purpose: GET /version (spec 9: "no rate limit").
 */
export interface RateLimitRule {
  id: string
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  limit: number
  windowSeconds: number
}

export const MIN = 60
export const HOUR = 3600

/** Spec 8: "Public read surface: 600/min/IP by default"; per-endpoint values come from the modules. */
export const KERNEL_RATE_LIMITS: RateLimitRule[] = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).map((method) => ({
  id: `cdn.default.${method.toLowerCase()}`,
  method,
  path: '/v1/cdn/*',
  limit: 600,
  windowSeconds: MIN,
}))

export interface CompiledRule extends RateLimitRule {
  regex: RegExp
  windowMs: number
  /** `RateLimit-Policy` value, e.g. `600;w=60`. */
  policy: string
  /** `RateLimit-Limit` value (the limit as text, built once). */
  limitText: string
}

/**
 * One regex matching any of `paths` (rate-limit row syntax: `:param` for one segment, a trailing `*` for the rest),
 * with or without a trailing slash. Also what a module's `privatePaths` compile to.
 */
export function pathRegex(paths: readonly string[]): RegExp {
  const alternatives = paths.map((path) =>
    path
      .split('/')
      .map((seg) => (seg === '*' ? '.+' : seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/'),
  )
  return new RegExp(`^(?:${alternatives.join('|')})/?$`)
}

/** A rule with its regex and header values built (the table's rows, and rules a module counts against itself). */
export function compileRule(rule: RateLimitRule): CompiledRule {
  return { ...rule, regex: pathRegex([rule.path]), windowMs: rule.windowSeconds * 1000, policy: `${rule.limit};w=${rule.windowSeconds}`, limitText: String(rule.limit) }
}

/** Remembered (method, path) → rule lookups; cleared when full, so hostile random paths cost memory only up to it. */
const MEMO_LIMIT = 20_000

export class RateLimitTable {
  private byMethod = new Map<string, CompiledRule[]>()
  /** Method → path → rule (null: not limited). Per method, so a lookup builds no key string. */
  private memo = new Map<string, Map<string, CompiledRule | null>>()
  private memoSize = 0
  readonly rules: CompiledRule[] = []

  constructor(rules: RateLimitRule[] = []) {
    this.add(rules)
  }

  /** Appends rows (below the ones already there). */
  add(rules: RateLimitRule[]) {
    for (const r of rules.map(compileRule)) {
      if (this.rules.some((x) => x.id === r.id)) throw new Error(`rate-limit row "${r.id}" is declared twice`)
      this.rules.push(r)
      const list = this.byMethod.get(r.method) ?? []
      list.push(r)
      this.byMethod.set(r.method, list)
    }
    this.memo.clear()
    this.memoSize = 0
  }

  match(method: string, pathname: string): CompiledRule | undefined {
    let memo = this.memo.get(method)
    if (memo === undefined) {
      memo = new Map()
      this.memo.set(method, memo)
    }
    const hit = memo.get(pathname)
    if (hit !== undefined) return hit ?? undefined
    let found: CompiledRule | null = null
    const list = this.byMethod.get(method)
    if (list) {
      for (const r of list) {
        if (r.regex.test(pathname)) {
          found = r
          break
        }
      }
    }
    if (this.memoSize >= MEMO_LIMIT) {
      for (const m of this.memo.values()) m.clear()
      this.memoSize = 0
    }
    memo.set(pathname, found)
    this.memoSize++
    return found ?? undefined
  }
}

export interface Hit {
  count: number
  resetAt: number // epoch ms
}

export interface RateLimitStore {
  /** The memory store answers synchronously, so the public read path pays no await for it. */
  hit(key: string, windowMs: number, now: number): Hit | Promise<Hit>
  /**
   * Gives one counted hit back (a request that turned out not to count, e.g. a successful sign-in): the count drops
   * by one, never below zero, and the window keeps its end. A counter whose window has ended is left alone.
   */
  refund(key: string, now: number): void | Promise<void>
  /** Forgets the counter (e.g. an account's failures once its owner proved the mailbox with a reset link). */
  clear(key: string): void | Promise<void>
}

/** Fixed-window counters in this process. */
export class MemoryRateLimitStore implements RateLimitStore {
  /** Rule id → client → counter: a lookup builds no key string; a counter is updated in place. */
  private counters = new Map<string, Map<string, Hit>>()
  private lastSweep = 0

  /** The store interface: one opaque key (the rate limiter itself calls `counter` with the rule and client apart). */
  hit(key: string, windowMs: number, now: number): Hit {
    const c = this.counter('', key, windowMs, now)
    return { count: c.count, resetAt: c.resetAt }
  }

  /**
   * Counts one hit of `client` against rule `ruleId` and returns the live counter (read it at once: the next hit
   * changes it). The rate limiter's synchronous path: no allocation while a window lasts.
   */
  counter(ruleId: string, client: string, windowMs: number, now: number): Hit {
    if (now - this.lastSweep > 60_000) this.sweep(now)
    let byClient = this.counters.get(ruleId)
    if (byClient === undefined) {
      byClient = new Map()
      this.counters.set(ruleId, byClient)
    }
    let c = byClient.get(client)
    if (c === undefined) {
      c = { count: 0, resetAt: now + windowMs }
      byClient.set(client, c)
    } else if (c.resetAt <= now) {
      c.count = 0
      c.resetAt = now + windowMs
    }
    c.count++
    return c
  }

  refund(key: string, now: number): void {
    this.refundCounter('', key, now)
  }

  clear(key: string): void {
    this.clearCounter('', key)
  }

  /** {@link refund} of the counter of `client` under rule `ruleId` (the rate limiter's split keys). */
  refundCounter(ruleId: string, client: string, now: number): void {
    const c = this.counters.get(ruleId)?.get(client)
    if (c !== undefined && c.resetAt > now && c.count > 0) c.count--
  }

  clearCounter(ruleId: string, client: string): void {
    this.counters.get(ruleId)?.delete(client)
  }

  private sweep(now: number) {
    this.lastSweep = now
    for (const byClient of this.counters.values()) for (const [k, v] of byClient) if (v.resetAt <= now) byClient.delete(k)
  }
}

/** Rules with at least this many requests per window are counted in memory and flushed (see `hitBuffered`). */
export const BUFFERED_MIN_LIMIT = 120
/** How often the buffered counts of an instance reach Postgres (at most; only while requests come). */
const FLUSH_INTERVAL_MS = 1000
/** At most this many counters in one flush statement. */
const FLUSH_BATCH = 5000

interface BufferedCounter {
  /** The count Postgres answered at the last flush (every instance's hits, ours included). */
  shared: number
  /** This instance's hits not yet flushed (a refund may make it negative). */
  pending: number
  resetAt: number
  windowMs: number
}

/**
 * Fixed-window counters in Postgres, shared by every instance. Keys hold client IPs, so with a `keyHash` key (every
 * instance derives the same one from SERVICE_SECRET_KEY) they are stored as keyed SHA-256 digests: no client address
 * is ever written to the database.
 *
 * Two ways of counting, by the rule's size:
 * - **Buffered** (rules of BUFFERED_MIN_LIMIT requests a window and more: the public read surface): a hit is counted
 *   in this process and answered at once from the count Postgres last returned plus this instance's hits since; the
 *   hits are flushed at most once a second, all counters in one upsert that returns the fleet's totals. A cached read
 *   thus costs no query and writes nothing; across N instances a limit can be exceeded by what the others counted in
 *   the last second — a few per cent of a limit this size.
 * - **Exact** (smaller rules: sign-in, sign-up mail, management writes): one atomic upsert per hit, as a guess
 *   spread over instances must meet the same count at once.
 */
export class PostgresRateLimitStore implements RateLimitStore {
  private lastSweep = 0
  private buffered = new Map<string, BufferedCounter>()
  private lastFlush = 0
  private flushing: Promise<void> | null = null
  /** Statements the buffered counters sent (flushes), for tests and metrics. */
  flushes = 0
  /**
   * While Postgres cannot be reached, requests are counted here, per process: the limits still hold (per instance),
   * and what needs no database (cached public reads) keeps answering instead of failing with the store.
   */
  private fallback = new MemoryRateLimitStore()
  private lastFallbackWarning = 0
  constructor(
    private database: Database,
    private keyHash: Uint8Array | null = null,
    private onFallback: (error: unknown) => void = () => {},
    /** A flush failed for another reason than an unreachable database (logged by the kernel). */
    private onFlushError: (error: unknown) => void = () => {},
  ) {}

  /** The key as stored: a keyed digest (base64url, 22 characters) when a hash key is set. */
  storedKey(key: string): string {
    if (!this.keyHash) return key
    return new Bun.CryptoHasher('sha256', this.keyHash).update(key).digest('base64url').slice(0, 22)
  }

  async hit(rawKey: string, windowMs: number, now: number): Promise<Hit> {
    try {
      return await this.sharedHit(rawKey, windowMs, now)
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err
      if (now - this.lastFallbackWarning > 30_000) {
        this.lastFallbackWarning = now
        this.onFallback(err)
      }
      return this.fallback.hit(rawKey, windowMs, now)
    }
  }

  /**
   * Counts one hit of a buffered rule in memory and answers synchronously; starts a flush when the last is a second
   * old (not awaited: the request does not wait for it).
   */
  hitBuffered(rawKey: string, windowMs: number, now: number): Hit {
    let c = this.buffered.get(rawKey)
    if (c === undefined || c.resetAt <= now) {
      c = { shared: 0, pending: 0, resetAt: now + windowMs, windowMs }
      this.buffered.set(rawKey, c)
    }
    c.pending++
    if (now - this.lastFlush >= FLUSH_INTERVAL_MS && this.flushing === null) void this.flush(now)
    return { count: c.shared + c.pending, resetAt: c.resetAt }
  }

  /**
   * Sends the buffered hits to Postgres (one upsert per FLUSH_BATCH counters) and learns the fleet's totals. A failure
   * keeps the hits for the next flush: counting goes on in memory meanwhile.
   */
  flush(now: number): Promise<void> {
    if (this.flushing) return this.flushing
    this.lastFlush = now
    const run = async () => {
      const batch: [string, BufferedCounter, number][] = []
      for (const [key, c] of this.buffered) {
        if (c.resetAt <= now) {
          this.buffered.delete(key) // the window is over: its count no longer matters
          continue
        }
        if (c.pending !== 0) batch.push([key, c, c.pending])
      }
      for (let i = 0; i < batch.length; i += FLUSH_BATCH) {
        const part = batch.slice(i, i + FLUSH_BATCH)
        const stored = part.map(([key]) => this.storedKey(key))
        let rows: { key: string; count: number; reset_at: string | Date }[]
        try {
          this.flushes++
          rows = await this.database.query(
            `insert into rate_limit_counters (key, count, reset_at)
             select k, greatest(n, 0), r from jsonb_to_recordset($1::jsonb) as t(k text, n int, r timestamptz)
             on conflict (key) do update set
               count = case when rate_limit_counters.reset_at <= $2 then greatest(excluded.count, 0)
                            else greatest(rate_limit_counters.count + excluded.count, 0) end,
               reset_at = case when rate_limit_counters.reset_at <= $2 then excluded.reset_at else rate_limit_counters.reset_at end
             returning key, count, reset_at`,
            // One JSON parameter (not arrays: both drivers pass text the same way).
            [JSON.stringify(part.map(([, c, n], j) => ({ k: stored[j], n, r: new Date(c.resetAt).toISOString() }))), new Date(now).toISOString()],
          )
        } catch (err) {
          if (!isDatabaseUnavailable(err)) throw err
          return
        }
        const byKey = new Map(rows.map((r) => [r.key, r]))
        part.forEach(([key, c, sent], j) => {
          const row = byKey.get(stored[j])
          if (!row || this.buffered.get(key) !== c) return
          c.pending -= sent
          c.shared = Number(row.count)
          c.resetAt = new Date(row.reset_at).getTime()
        })
      }
      if (now - this.lastSweep > 60_000) {
        this.lastSweep = now
        await this.database.db.execute(sql`delete from rate_limit_counters where reset_at <= ${new Date(now).toISOString()}`)
      }
    }
    this.flushing = run()
      .catch((err) => this.onFlushError(err))
      .finally(() => (this.flushing = null))
    return this.flushing
  }

  async refund(rawKey: string, now: number): Promise<void> {
    const b = this.buffered.get(rawKey)
    if (b !== undefined && b.resetAt > now) {
      if (b.shared + b.pending > 0) b.pending--
      return
    }
    try {
      await this.database.query(`update rate_limit_counters set count = count - 1 where key = $1 and reset_at > $2 and count > 0`, [
        this.storedKey(rawKey),
        new Date(now).toISOString(),
      ])
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err
      this.fallback.refund(rawKey, now)
    }
  }

  async clear(rawKey: string): Promise<void> {
    this.buffered.delete(rawKey)
    try {
      await this.database.query(`delete from rate_limit_counters where key = $1`, [this.storedKey(rawKey)])
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err
      this.fallback.clear(rawKey)
    }
  }

  private async sharedHit(rawKey: string, windowMs: number, now: number): Promise<Hit> {
    const key = this.storedKey(rawKey)
    const nowTs = new Date(now).toISOString()
    const resetTs = new Date(now + windowMs).toISOString()
    const rows = await this.database.query<{ count: number; reset_at: string | Date }>(
      `insert into rate_limit_counters (key, count, reset_at) values ($1, 1, $3)
       on conflict (key) do update set
         count = case when rate_limit_counters.reset_at <= $2 then 1 else rate_limit_counters.count + 1 end,
         reset_at = case when rate_limit_counters.reset_at <= $2 then $3 else rate_limit_counters.reset_at end
       returning count, reset_at`,
      [key, nowTs, resetTs],
    )
    if (now - this.lastSweep > 60_000) {
      this.lastSweep = now
      await this.database.db.execute(sql`delete from rate_limit_counters where reset_at <= ${nowTs}`)
    }
    return { count: Number(rows[0].count), resetAt: new Date(rows[0].reset_at).getTime() }
  }
}

/** The outcome of one counted request. `headers` is built on demand (the hot path writes the four values itself). */
export class RateLimitDecision {
  constructor(
    readonly rule: CompiledRule,
    readonly allowed: boolean,
    readonly remaining: number,
    /** Seconds until the window resets. */
    readonly resetIn: number,
  ) {}

  get headers(): Record<string, string> {
    const h: Record<string, string> = {
      'RateLimit-Limit': this.rule.limitText,
      'RateLimit-Remaining': String(this.remaining),
      'RateLimit-Reset': String(this.resetIn),
      'RateLimit-Policy': this.rule.policy,
    }
    if (!this.allowed) h['Retry-After'] = String(Math.max(1, this.resetIn))
    return h
  }
}

export class RateLimiter {
  constructor(
    readonly table: RateLimitTable,
    private store: RateLimitStore,
    private clock: Clock,
  ) {}

  /** The clock's now (epoch ms). */
  clockMs(): number {
    return this.clock.ms()
  }

  /** Whether check() answers synchronously for every route (the in-memory store). */
  get synchronous(): boolean {
    return this.store instanceof MemoryRateLimitStore
  }

  /** Whether check() answers synchronously for this route (no rule, the memory store, or a buffered rule). */
  synchronousFor(method: string, pathname: string): boolean {
    if (this.store instanceof MemoryRateLimitStore) return true
    const rule = this.table.match(method, pathname)
    return rule === undefined || (this.store instanceof PostgresRateLimitStore && rule.limit >= BUFFERED_MIN_LIMIT)
  }

  /** Sends counts kept in memory to the shared store now (tests; a closing instance). */
  flush(): Promise<void> {
    return this.store instanceof PostgresRateLimitStore ? this.store.flush(this.clock.ms()) : Promise.resolve()
  }

  /**
   * Counts one request of `ip` against the rule for method+path; null when the route is not limited. Synchronous
   * with a synchronous store (memory), a Promise with the Postgres store. IPv6 clients are counted by their /64
   * ({@link rateClientKey}).
   */
  check(method: string, pathname: string, ip: string, now?: number): RateLimitDecision | null | Promise<RateLimitDecision | null> {
    const rule = this.table.match(method, pathname)
    if (!rule) return null
    return this.hit(rule, rateClientKey(ip), now)
  }

  /**
   * Gives back the hit a request of `ip` was counted with (its decision from `check`): for a route whose successful
   * answers must not use up the limit (a sign-in counts only when it fails). Nothing when the route was not limited.
   */
  refundRequest(decision: RateLimitDecision | null | undefined, ip: string, now = this.clock.ms()): void | Promise<void> {
    if (!decision) return
    return this.refund(decision.rule.id, rateClientKey(ip), now)
  }

  /**
   * One hit of `client` on counter `id` with a window of `windowMs` chosen by the caller (not a table row): the raw
   * count, for limits that are not a fixed row, such as {@link Backoff}.
   */
  count(id: string, client: string, windowMs: number, now = this.clock.ms()): Hit | Promise<Hit> {
    const store = this.store
    if (store instanceof MemoryRateLimitStore) {
      const c = store.counter(id, client, windowMs, now)
      return { count: c.count, resetAt: c.resetAt }
    }
    return store.hit(id + '|' + client, windowMs, now)
  }

  /** Gives back one hit of `client` on counter (or rule) `id`. */
  refund(id: string, client: string, now = this.clock.ms()): void | Promise<void> {
    const store = this.store
    if (store instanceof MemoryRateLimitStore) return store.refundCounter(id, client, now)
    return store.refund(id + '|' + client, now)
  }

  /** Forgets the counter of `client` on counter (or rule) `id`. */
  forget(id: string, client: string): void | Promise<void> {
    const store = this.store
    if (store instanceof MemoryRateLimitStore) return store.clearCounter(id, client)
    return store.clear(id + '|' + client)
  }

  /** Counts one request against a rule the caller already resolved (at `now`, epoch ms; default: the clock's now). */
  hit(rule: CompiledRule, ip: string, now = this.clock.ms()): RateLimitDecision | Promise<RateLimitDecision> {
    const store = this.store
    if (store instanceof MemoryRateLimitStore) return decide(rule, store.counter(rule.id, ip, rule.windowMs, now), now)
    if (store instanceof PostgresRateLimitStore && rule.limit >= BUFFERED_MIN_LIMIT) return decide(rule, store.hitBuffered(rule.id + '|' + ip, rule.windowMs, now), now)
    const hit = store.hit(rule.id + '|' + ip, rule.windowMs, now)
    return hit instanceof Promise ? hit.then((h) => decide(rule, h, now)) : decide(rule, hit, now)
  }
}

function decide(rule: CompiledRule, hit: Hit, now: number): RateLimitDecision {
  const count = hit.count
  const resetAt = hit.resetAt
  const resetIn = resetAt > now ? Math.ceil((resetAt - now) / 1000) : 0
  return new RateLimitDecision(rule, count <= rule.limit, count >= rule.limit ? 0 : rule.limit - count, resetIn)
}

const CLIENT_KEY_MEMO_LIMIT = 4096
const clientKeys = new Map<string, string>()

/**
 * The rate-limit key of a client address. IPv4 as is. IPv6 by its /64 (`2001:db8:1:2::/64`): one subscriber line or
 * host usually holds a whole /64 and may pick any address in it, so counting full addresses would give one client
 * 2^64 budgets. An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) counts as its IPv4 address. Anything else (not an
 * address) is used as is.
 */
export function rateClientKey(ip: string): string {
  if (ip.indexOf(':') === -1) return ip
  let key = clientKeys.get(ip)
  if (key === undefined) {
    key = ipv6Prefix64(ip) ?? ip
    if (clientKeys.size >= CLIENT_KEY_MEMO_LIMIT) clientKeys.clear()
    clientKeys.set(ip, key)
  }
  return key
}

/** `2001:db8:1:2::/64` for any address in that /64 (any spelling, zone id dropped); the IPv4 address of a mapped one; null if not IPv6. */
export function ipv6Prefix64(ip: string): string | null {
  let s = ip.toLowerCase()
  const zone = s.indexOf('%')
  if (zone !== -1) s = s.slice(0, zone)
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1)
  if (s.startsWith('::ffff:') && isIPv4(s.slice(7))) return s.slice(7)
  const gap = s.indexOf('::')
  if (gap !== -1 && s.indexOf('::', gap + 1) !== -1) return null
  const part = (x: string) => (x === '' ? [] : x.split(':'))
  const head = gap === -1 ? part(s) : part(s.slice(0, gap))
  const tail = gap === -1 ? [] : part(s.slice(gap + 2))
  // An embedded IPv4 address at the end stands for two groups.
  const width = (groups: string[]) => groups.length + (groups.length > 0 && groups[groups.length - 1].includes('.') ? 1 : 0)
  const missing = 8 - width(head) - width(tail)
  if (gap === -1 ? missing !== 0 : missing < 1) return null
  const groups = [...head, ...new Array<string>(gap === -1 ? 0 : missing).fill('0'), ...tail]
  const prefix: string[] = []
  for (let i = 0; i < 4; i++) {
    const g = groups[i]
    if (!/^[0-9a-f]{1,4}$/.test(g)) return null
    prefix.push(Number.parseInt(g, 16).toString(16))
  }
  return `${prefix.join(':')}::/64`
}

/** How a {@link Backoff} spaces out attempts. */
export interface BackoffPolicy {
  /** Attempts that may fail before any wait (within `forgetSeconds`). */
  free: number
  /** The wait after the first attempt past `free`; it doubles with each further failure. */
  firstWaitSeconds: number
  /** The longest wait between two attempts. */
  maxWaitSeconds: number
  /** Failures are forgotten this long after the first of them (a fixed window). */
  forgetSeconds: number
}

/**
 * A back-off per subject (an account: a hashed e-mail address), whatever address the attempts come from, so a
 * guesser spreading attempts over many IPs meets the same wait as one who does not. Every attempt counts as a failure
 * when it starts (so attempts sent at once are all counted: no burst slips through) and is given back when it
 * succeeds. After `free` failures, one attempt is let through per wait — `firstWaitSeconds`, then twice that, … up to
 * `maxWaitSeconds` — and the others are refused until the wait is over. On the store of the rate limiter: shared by
 * every instance with RATE_LIMIT_STORE=postgres.
 */
export class Backoff {
  constructor(
    readonly id: string,
    readonly policy: BackoffPolicy,
  ) {}

  /**
   * Counts an attempt of `subject`: 0 when it may go ahead, otherwise the seconds to wait (the caller answers 429
   * with that Retry-After; a refused attempt is not counted as a failure).
   */
  async attempt(limiter: RateLimiter, subject: string, now = limiter.clockMs()): Promise<number> {
    const { free, firstWaitSeconds, maxWaitSeconds, forgetSeconds } = this.policy
    const failures = (await limiter.count(`${this.id}.failures`, subject, forgetSeconds * 1000, now)).count
    if (failures <= free) return 0
    const waitMs = Math.min(firstWaitSeconds * 1000 * 2 ** Math.min(failures - free - 1, 30), maxWaitSeconds * 1000)
    // One attempt per wait: the first hit of a fresh window goes ahead, the others wait for its end.
    const slot = await limiter.count(`${this.id}.wait`, subject, waitMs, now)
    if (slot.count === 1) return 0
    await limiter.refund(`${this.id}.failures`, subject, now)
    return Math.max(1, Math.ceil((slot.resetAt - now) / 1000))
  }

  /**
   * The attempt succeeded: it is not a failure, and the next attempt need not wait for the current window (the
   * failures before it still count).
   */
  async succeeded(limiter: RateLimiter, subject: string): Promise<void> {
    await limiter.refund(`${this.id}.failures`, subject)
    await limiter.forget(`${this.id}.wait`, subject)
  }

  /** Forgets every failure of `subject` (its owner proved who they are another way: a reset link). */
  async forgive(limiter: RateLimiter, subject: string): Promise<void> {
    await limiter.forget(`${this.id}.failures`, subject)
    await limiter.forget(`${this.id}.wait`, subject)
  }
}
