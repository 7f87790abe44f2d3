import type { Admission, Role } from './auth'
import type { AnyElysia } from 'elysia'
import type { ScopedCache } from './cache'
import type { ScopedMemo } from './memo'
import type { ErrorDef } from './errors'
import type { FilterCall, FilterDeclarations, FilterMap, FilterName, FilterResult } from './filters'
import type { GraphQLBuilder } from './graphql'
import type { Delivery, DomainEvent, Emit, EventDeclarations, EventType, NewEvent } from './events'
import type { Tx } from './db'
import type { JobQueue } from './jobs'
import type { Kernel } from './kernel'
import type { Guards } from './guards'
import type { PublicCors, RequestInfo } from './request-front'
import type { PreviewTokenVerifier } from './preview'
import type { PublicSpaceResolver } from './public-space'
import type { Registry } from 'prom-client'
import type { RateLimitRule } from './rate-limit'
import type { ReadStep } from './read'

/**
 * The module contract. A feature is one folder under src/modules/<feature>/ exporting one `defineModule({...})`
 * value, plus one line in src/modules/index.ts. The runtime (src/app.ts) iterates that list for everything: state,
 * routes, OpenAPI, events, webhooks, jobs, read steps and rate limits. See docs/architecture.md.
 */

/** The state of an earlier module in the list (its `setup` result): how a module reaches another's services. */
export type Use = <S extends object>(module: Module<S>) => S

/** What a module's route builders get. */
export interface RouteContext<S> {
  kernel: Kernel
  self: S
  /**
   * The guard macros: `authenticated`, `userToken`, `spaceRole: 'viewer' | 'editor' | 'admin'`, `spaceUser: <role>`;
   * for anonymous routes `publicSpace: true | {notFound, headers}`, which resolves `{space, origin}` (the live Space
   * of `:space`, else 404; the public base URL) through the `publicSpaceResolver` of the module owning Spaces.
   */
  guards: Guards
  use: Use
  /** What the kernel knows of a request: client IP (after trusted proxies), request id, timing. */
  requestInfo(request: Request): RequestInfo
  /**
   * Every mounted route with the guard it declared (`minRole` for `spaceRole` routes), read from the app itself once
   * it is built: call it in a handler, not while building routes. The roles table (`GET /spaces/{space}/roles`) is
   * made from it, so what is documented is what the guards enforce.
   */
  routeTable(): readonly RouteSummary[]
}

export interface RouteSummary {
  method: string
  /** The full path with OpenAPI-style parameters, e.g. `/v1/spaces/{space}/members`. */
  path: string
  summary: string
  /** The least role a `spaceRole` route needs; null for routes without the Space guard. */
  minRole: Role | null
}

/** A handler for the public read fast path: synchronous when it can answer from memory. */
export interface FastRoute {
  /** The route pattern, for the request log (e.g. `/v1/cdn/:space/stories/*`). */
  route: string
  /** The method it takes (default GET); only requests of that method are offered to `matches`. */
  method?: 'GET' | 'POST'
  /**
   * The route counts requests against its own limiter (default false: the runtime counts them with the kernel's, and
   * offers the route only with the in-memory store). A self-limited route is offered whatever the store, answers even
   * rate-limited requests itself (the beacon: always 204), and its request log line carries no client address.
   */
  selfLimited?: boolean
  /**
   * The route answers every request of its method itself, whatever the length of its URL or body: the runtime offers
   * it the request before its own 414 (URL over MAX_URL_BYTES) and 413 (Content-Length over the server's body limit).
   * Such a route reads the body bounded, or not at all. (The beacon: always 204, spec 4.3.) Default false.
   */
  anyInput?: boolean
  /** Cheap test on the path (no allocation): does this route take the request? */
  matches(pathname: string): boolean
  /**
   * The answer, or undefined to let the regular (Elysia) route answer — on a cache miss, a query string, etc. The
   * runtime has counted the request against its rate limit already (unless `selfLimited`); the response must carry
   * the headers `info.addHeaders` sets.
   */
  answer(request: Request, info: FastRequest): Response | Promise<Response | undefined> | undefined
}

/** What the runtime knows of a request before any route runs. */
export interface FastRequest {
  pathname: string
  requestId: string
  clientIp: string
  viaTrustedProxy: boolean
  /** The kernel clock at the request's start (epoch ms). */
  now: number
  /**
   * Sets the headers every answer carries on a response's own headers: request id, CORS, RateLimit-* when sent.
   * (A method rather than a list: the fast path then allocates no header pairs per request.)
   */
  addHeaders(target: Headers): void
}

export interface ModuleDefinition<S extends object> {
  /** Unique, lower-case: the OpenAPI tag prefix and the name in logs. */
  name: string
  /**
   * Builds the module's own state: caches, indexes, registries, and the services other modules may call. Runs once
   * per process, in list order; `use` returns the state of a module listed earlier.
   */
  setup?(kernel: Kernel, use: Use): S
  /** Background work only a serving process needs (index builds, warm-ups); not run by `content-service worker`. */
  start?(self: S, kernel: Kernel): void | Promise<void>
  /**
   * Shutdown has begun and the server accepts no new connections: end the responses that would otherwise never
   * finish (event streams), so in-flight requests can drain. Called before `close`, while the database is still open.
   */
  drain?(self: S, kernel: Kernel): void | Promise<void>
  /** Releases the state (timers, listeners); called in reverse list order at shutdown. */
  close?(self: S, kernel: Kernel): void | Promise<void>
  /** Management routes, mounted under /v1 (bearer-authenticated through the guard macros). */
  routes?(ctx: RouteContext<S>): AnyElysia
  /**
   * Anonymous (public) routes, mounted under /v1: the public read surface under /cdn/{space} and the other anonymous
   * routes (GraphQL, health, version). A route that names a Space in its path declares `publicSpace` (the macro in
   * `ctx.guards`) to get the live Space, or 404 in the shared shape.
   */
  publicRoutes?(ctx: RouteContext<S>): AnyElysia
  /**
   * The module's part of the public surface's CORS: anonymous paths outside /v1/cdn/ (prefixes, e.g. /v1/graphql,
   * the embed scripts) that answer any origin like public content, and the headers browsers may send and read (e.g.
   * X-Service-Segment). The kernel names none of them.
   */
  publicCors?: PublicCors
  /**
   * The public side's Space lookup, provided by the one module that owns Spaces (spaces: its cache of live Spaces by
   * slug). The runtime hands it to the guards' `publicSpace` macro, so anonymous routes of every module resolve
   * `{space}` the same way without the kernel importing that module. At most one module provides it.
   */
  publicSpaceResolver?(self: S): PublicSpaceResolver
  /**
   * The verifier of preview tokens (kernel/preview.ts), provided by the one module that mints them (preview). The
   * runtime sets it as `kernel.previewTokens`; draft reads of any module accept a preview token through
   * `requireDraftReader`, so no reader imports that module. At most one module provides it.
   */
  previewTokens?(self: S, kernel: Kernel): PreviewTokenVerifier
  /** Routes at the host root, outside /v1 (embed scripts, the OpenAPI aliases). */
  root?(ctx: RouteContext<S>): AnyElysia
  /**
   * Routes of the fast path (kernel/fast-path.ts), offered a request before Elysia: GETs that can answer from memory,
   * and self-limited POSTs (the beacon).
   */
  fast?(ctx: RouteContext<S>): FastRoute[]
  /** The machine codes this module's routes may answer, beyond the kernel's. */
  errors?: ErrorDef[]
  /**
   * Codes this module's hooks (`admit`, `inTx`) may answer on other modules' routes — billing's 402 `plan_limit` on
   * the creates it counts: the OpenAPI description lists each on every operation `on` accepts.
   */
  errorsOn?: { error: ErrorDef; on(route: { method: string; path: string; bearer: boolean }): boolean }[]
  /**
   * Runs on every request a guard lets in (authenticated, Space checked), before the body is validated: count it,
   * or refuse it by throwing an AppError. Answer from memory when it can: it runs on every management request.
   */
  admit?(self: S, kernel: Kernel, request: Admission): void | Promise<void>
  /** The module's events: descriptions, and for public ones the webhook body. */
  events?: EventDeclarations
  /** Reactions to committed events, run on every instance (this one at commit, others through NOTIFY). */
  on?: { [K in EventType]?: (event: DomainEvent<K>, self: S, kernel: Kernel, delivery: Delivery) => void | Promise<void> }
  /** Called when events may have been missed (the LISTEN connection came back): drop whatever they keep fresh. */
  onResync?(self: S, kernel: Kernel): void
  /**
   * The module's caches (kernel/cache.ts): the runtime subscribes each one to the events its `invalidateOn` names (on
   * every instance, before the module's own `on` handlers) and clears it on resync.
   */
  caches?(self: S): readonly ScopedCache<any, any>[]
  /**
   * The module's memos (kernel/memo.ts: answers it computed from its caches, e.g. whole public reads): the runtime drops
   * a memo's entries of the Space of every committed event (all of them for an event of no Space) and clears it on
   * resync. Their bytes and evictions are on /metrics beside the caches'.
   */
  memos?(self: S): readonly ScopedMemo<any>[]
  /**
   * The filter hooks this module calls (`kernel.filters.run(name, payload, actor)` before it opens its transaction):
   * description, whether a handler may amend the payload, the routes it runs on. Payload types: FilterMap
   * (kernel/filters.ts), by declaration merging next to the module.
   */
  filterHooks?: FilterDeclarations
  /**
   * Handlers of other modules' filter hooks (`'*'`: every declared hook), run in module-list order before the change,
   * with no transaction open: return nothing (allow), a replacement payload (amend, on amendable hooks; the owning
   * module validates it again) or throw an AppError (veto). `wants` (synchronous, from memory) says whether the
   * handler acts on a call at all, so a Space it has nothing for costs nothing.
   */
  filters?: { [K in FilterName]?: FilterHandler<S, K> } & { '*'?: FilterHandler<S, FilterName> }
  /** Codes this module's filter handlers answer: the OpenAPI description lists them on every route of the hooks it handles. */
  filterErrors?: ErrorDef[]
  /** Filter hooks inside the emitting transaction; throwing vetoes the change. */
  inTx?: { [K in EventType]?: (tx: Tx, event: NewEvent<K>, emit: Emit, self: S, kernel: Kernel) => void | Promise<void> }
  /** Queues, cron schedules and outbox consumers (durable, once-per-event work such as webhooks and mail). */
  jobs?(jobs: JobQueue, self: S, kernel: Kernel): void
  /** Steps of the public Story read (kernel/read.ts). */
  readSteps?(self: S, kernel: Kernel): ReadStep[]
  /**
   * Fields of the read-only GraphQL schema (kernel/graphql.ts): `builder.queryField(...)` and the types they need,
   * resolved through this module's own services.
   */
  graphql?(builder: GraphQLBuilder, self: S, kernel: Kernel): void
  /** Per-IP limits of this module's routes (full paths, starting with /v1). */
  rateLimits?: RateLimitRule[]
  /**
   * Routes whose callers were promised that their address is not kept (form submits, subscribe, confirm,
   * unsubscribe, registration): full paths from /v1 in rate-limit row syntax, any method. Their request log lines
   * never carry the client address as seen: its daily-salted hash, or `-` with LOG_CLIENT_IP=off.
   */
  privatePaths?: string[]
  /**
   * Is this module ready to serve (indexes built, caches warm)? Null when ready, else the reason, shown by
   * `GET /v1/health/ready` (503). Called on every readiness probe: answer from memory, cheaply.
   */
  ready?(self: S, kernel: Kernel): string | null
  /**
   * Registers the module's Prometheus metrics (prom-client collectors, usually gauges whose `collect` reads the
   * module's state at scrape time). Called only when metrics are on (kernel/metrics.ts).
   */
  metrics?(registry: Registry, self: S, kernel: Kernel): void
}

/** A module's handler of a filter hook (see `filters`). */
export type FilterHandler<S, K extends FilterName> =
  | ((payload: FilterMap[K], call: FilterCall<K>, self: S, kernel: Kernel) => FilterResult<K> | Promise<FilterResult<K>>)
  | {
      wants?(call: FilterCall<K>, self: S, kernel: Kernel): boolean
      run(payload: FilterMap[K], call: FilterCall<K>, self: S, kernel: Kernel): FilterResult<K> | Promise<FilterResult<K>>
    }

/** A module value. `S` is the type of its state; `Module` alone erases it for the list. */
export interface Module<S extends object = any> extends ModuleDefinition<S> {
  readonly __state?: S
}

export function defineModule<S extends object = Record<string, never>>(definition: ModuleDefinition<S>): Module<S> {
  return definition as Module<S>
}
