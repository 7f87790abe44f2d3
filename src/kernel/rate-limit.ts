import { sql } from 'drizzle-orm'
import type { Clock } from './clock'
import type { Database } from './db'
import { isDatabaseUnavailable } from './errors'

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

  private sweep(now: number) {
    this.lastSweep = now
    for (const byClient of this.counters.values()) for (const [k, v] of byClient) if (v.resetAt <= now) byClient.delete(k)
  }
}

/**
 * Fixed-window counters in Postgres, shared by every instance: one atomic upsert per hit. Keys hold client IPs, so
 * with a `keyHash` key (every instance derives the same one from SERVICE_SECRET_KEY) they are stored as keyed
 * SHA-256 digests: no client address is ever written to the database.
 */
export class PostgresRateLimitStore implements RateLimitStore {
  private lastSweep = 0
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

  /** Whether check() answers synchronously (the in-memory store). */
  get synchronous(): boolean {
    return this.store instanceof MemoryRateLimitStore
  }

  /**
   * Counts one request of `ip` against the rule for method+path; null when the route is not limited. Synchronous
   * with a synchronous store (memory), a Promise with the Postgres store.
   */
  check(method: string, pathname: string, ip: string, now?: number): RateLimitDecision | null | Promise<RateLimitDecision | null> {
    const rule = this.table.match(method, pathname)
    if (!rule) return null
    return this.hit(rule, ip, now)
  }

  /** Counts one request against a rule the caller already resolved (at `now`, epoch ms; default: the clock's now). */
  hit(rule: CompiledRule, ip: string, now = this.clock.ms()): RateLimitDecision | Promise<RateLimitDecision> {
    const store = this.store
    if (store instanceof MemoryRateLimitStore) return decide(rule, store.counter(rule.id, ip, rule.windowMs, now), now)
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
