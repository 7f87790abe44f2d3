import { sql } from 'drizzle-orm'
import type { Clock } from './clock'
import type { Database } from './db'

/**
 * Every stated limit of the spec (sections 4.1, 4.2, 4.7, 4.8 and 8), one row each, keyed by client IP.
 * `path` uses `:param` for one segment and a trailing `*` for the rest. Rows are matched in order, first wins, so a
 * specific row must stand above a general one. Later features add their rows here.
 * Not limited on purpose: GET /version (spec 9: "no rate limit").
 */
export interface RateLimitRule {
  id: string
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  limit: number
  windowSeconds: number
}

const MIN = 60
const HOUR = 3600

export const RATE_LIMITS: RateLimitRule[] = [
  // 4.1 Auth
  { id: 'auth.login', method: 'POST', path: '/v1/auth/login', limit: 10, windowSeconds: HOUR },
  { id: 'auth.register', method: 'POST', path: '/v1/auth/register', limit: 5, windowSeconds: HOUR },
  { id: 'auth.logout', method: 'POST', path: '/v1/auth/logout', limit: 60, windowSeconds: MIN },
  { id: 'auth.me', method: 'GET', path: '/v1/auth/me', limit: 60, windowSeconds: MIN },
  // 4.7 onboarding, invitations, GraphQL
  { id: 'onboard', method: 'POST', path: '/v1/onboard', limit: 5, windowSeconds: HOUR },
  { id: 'pitch.test-account', method: 'POST', path: '/v1/pitch/:slug/test-account', limit: 10, windowSeconds: HOUR },
  { id: 'invite.preview', method: 'GET', path: '/v1/invite/:token', limit: 30, windowSeconds: MIN },
  { id: 'invite.accept', method: 'POST', path: '/v1/invite/:token/accept', limit: 30, windowSeconds: MIN },
  { id: 'invite.decline', method: 'POST', path: '/v1/invite/:token/decline', limit: 30, windowSeconds: MIN },
  { id: 'graphql', method: 'POST', path: '/v1/graphql', limit: 600, windowSeconds: MIN },
  { id: 'graphql.schema', method: 'GET', path: '/v1/graphql/schema.gql', limit: 600, windowSeconds: MIN },
  // 4.8 Spaces
  { id: 'spaces.create', method: 'POST', path: '/v1/spaces', limit: 60, windowSeconds: MIN },
  { id: 'spaces.list', method: 'GET', path: '/v1/spaces', limit: 60, windowSeconds: MIN },
  // 4.11 Webhooks: not stated by the spec; bounds the outbound requests one caller can trigger on demand.
  { id: 'webhooks.ping', method: 'POST', path: '/v1/spaces/:space/webhooks/:id/ping', limit: 60, windowSeconds: MIN },
  { id: 'webhooks.redeliver', method: 'POST', path: '/v1/spaces/:space/webhooks/:id/deliveries/:delivery/redeliver', limit: 60, windowSeconds: MIN },
  // 4.2 Public read surface: per-endpoint values, then the 600/min default for the rest of /cdn
  { id: 'cdn.beacon', method: 'POST', path: '/v1/cdn/:space/_beacon', limit: 600, windowSeconds: MIN },
  { id: 'cdn.og', method: 'GET', path: '/v1/cdn/:space/stories/:uuid/og.svg', limit: 300, windowSeconds: MIN },
  { id: 'cdn.stories', method: 'GET', path: '/v1/cdn/:space/stories/*', limit: 600, windowSeconds: MIN },
  // Spec 4.2/8 state 60/min (route listing) and 600/min/IP (search description) for search. 600: search-as-you-type
  // sends a request per pause in typing and visitors share IPs behind NAT; a query costs ~1 ms (docs/search.md).
  { id: 'cdn.search', method: 'GET', path: '/v1/cdn/:space/search', limit: 600, windowSeconds: MIN },
  { id: 'cdn.carts.create', method: 'POST', path: '/v1/cdn/:space/carts', limit: 120, windowSeconds: MIN },
  { id: 'cdn.carts.show', method: 'GET', path: '/v1/cdn/:space/carts/:uuid', limit: 300, windowSeconds: MIN },
  { id: 'cdn.carts.checkout', method: 'POST', path: '/v1/cdn/:space/carts/:uuid/checkout', limit: 30, windowSeconds: MIN },
  { id: 'cdn.carts.add-item', method: 'POST', path: '/v1/cdn/:space/carts/:uuid/items', limit: 120, windowSeconds: MIN },
  { id: 'cdn.carts.remove-item', method: 'DELETE', path: '/v1/cdn/:space/carts/:uuid/items/:item', limit: 120, windowSeconds: MIN },
  { id: 'cdn.events.ics', method: 'GET', path: '/v1/cdn/:space/events/:slug/ics/:token', limit: 60, windowSeconds: MIN },
  { id: 'cdn.events.register', method: 'POST', path: '/v1/cdn/:space/events/:slug/register', limit: 20, windowSeconds: MIN },
  { id: 'cdn.forms.submit', method: 'POST', path: '/v1/cdn/:space/forms/:slug', limit: 20, windowSeconds: MIN },
  { id: 'cdn.subscribe', method: 'POST', path: '/v1/cdn/:space/subscribe', limit: 20, windowSeconds: MIN },
  { id: 'cdn.subscribe.confirm', method: 'GET', path: '/v1/cdn/:space/subscribe/confirm/:token', limit: 60, windowSeconds: MIN },
  { id: 'cdn.unsubscribe', method: 'GET', path: '/v1/cdn/:space/unsubscribe/:token', limit: 60, windowSeconds: MIN },
  { id: 'cdn.default.get', method: 'GET', path: '/v1/cdn/*', limit: 600, windowSeconds: MIN },
  { id: 'cdn.default.post', method: 'POST', path: '/v1/cdn/*', limit: 600, windowSeconds: MIN },
]

export interface CompiledRule extends RateLimitRule {
  regex: RegExp
}

function compile(rule: RateLimitRule): CompiledRule {
  const pattern = rule.path
    .split('/')
    .map((seg) => (seg === '*' ? '.+' : seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
  return { ...rule, regex: new RegExp(`^${pattern}/?$`) }
}

export class RateLimitTable {
  private byMethod = new Map<string, CompiledRule[]>()
  constructor(rules: RateLimitRule[]) {
    for (const r of rules.map(compile)) {
      const list = this.byMethod.get(r.method) ?? []
      list.push(r)
      this.byMethod.set(r.method, list)
    }
  }
  match(method: string, pathname: string): CompiledRule | undefined {
    const list = this.byMethod.get(method)
    if (!list) return undefined
    for (const r of list) if (r.regex.test(pathname)) return r
    return undefined
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
  private counters = new Map<string, Hit>()
  private lastSweep = 0

  hit(key: string, windowMs: number, now: number): Hit {
    if (now - this.lastSweep > 60_000) this.sweep(now)
    let c = this.counters.get(key)
    if (!c || c.resetAt <= now) {
      c = { count: 0, resetAt: now + windowMs }
      this.counters.set(key, c)
    }
    c.count++
    return { ...c }
  }

  private sweep(now: number) {
    this.lastSweep = now
    for (const [k, v] of this.counters) if (v.resetAt <= now) this.counters.delete(k)
  }
}

/** Fixed-window counters in Postgres, shared by every instance: one atomic upsert per hit. */
export class PostgresRateLimitStore implements RateLimitStore {
  private lastSweep = 0
  constructor(private database: Database) {}

  async hit(key: string, windowMs: number, now: number): Promise<Hit> {
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

export interface RateLimitDecision {
  allowed: boolean
  headers: Record<string, string>
}

export class RateLimiter {
  constructor(
    readonly table: RateLimitTable,
    private store: RateLimitStore,
    private clock: Clock,
  ) {}

  /**
   * Counts one request of `ip` against the rule for method+path; null when the route is not limited. Synchronous
   * with a synchronous store (memory), a Promise with the Postgres store.
   */
  check(method: string, pathname: string, ip: string): RateLimitDecision | null | Promise<RateLimitDecision | null> {
    const rule = this.table.match(method, pathname)
    if (!rule) return null
    const now = this.clock.now().getTime()
    const hit = this.store.hit(`${rule.id}|${ip}`, rule.windowSeconds * 1000, now)
    return hit instanceof Promise ? hit.then((h) => decide(rule, h, now)) : decide(rule, hit, now)
  }
}

function decide(rule: CompiledRule, { count, resetAt }: Hit, now: number): RateLimitDecision {
  const resetIn = Math.max(0, Math.ceil((resetAt - now) / 1000))
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(rule.limit),
    'RateLimit-Remaining': String(Math.max(0, rule.limit - count)),
    'RateLimit-Reset': String(resetIn),
    'RateLimit-Policy': `${rule.limit};w=${rule.windowSeconds}`,
  }
  if (count > rule.limit) {
    headers['Retry-After'] = String(Math.max(1, resetIn))
    return { allowed: false, headers }
  }
  return { allowed: true, headers }
}
