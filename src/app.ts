import type { Server } from 'bun'
import { type AnyElysia, Elysia } from 'elysia'
import { createHttpFront } from './http-front'
import type { ModuleFastRoute } from './kernel/fast-path'
import { guardPlugin } from './kernel/guards'
import type { Kernel } from './kernel/kernel'
import type { Module, RouteContext, RouteSummary } from './kernel/module'
import { RouteBodyTypes } from './kernel/request-body'
import { kernelPlugin, type PeerSource, RequestFront } from './kernel/request-front'
import { MODULES } from './modules'
import { openapiRoutes } from './openapi'
import { wireModules } from './wiring'

/**
 * The running service around one kernel: every module of the list set up, wired to the event bus, the job queue,
 * the rate limiter, the read pipeline (src/wiring.ts) and mounted into one Elysia app behind the request front, which
 * the HTTP front (src/http-front.ts: limits, fast path, metrics) hands what it does not answer itself.
 */
export interface Runtime {
  kernel: Kernel
  modules: readonly Module[]
  /** The Elysia app (absent in a worker-only runtime). */
  app: AnyElysia
  /** The server's request handler: the fast path for cached public reads, then Elysia. */
  fetch(request: Request, server?: PeerSource | null): Response | Promise<Response>
  /** The same, always a Promise (tests and in-process callers; they count as loopback). */
  handle(request: Request): Promise<Response>
  /** The state a module's `setup` returned. */
  state<S extends object>(module: Module<S>): S
  /** Starts what only a serving process needs (index builds); `content-service worker` does not call it. */
  start(): Promise<void>
  /** Listens on a port with production settings (no development error pages). */
  listen(opts: ListenOptions): Server<undefined>
  /** Shutdown has begun: every module ends its long-lived responses (event streams), so the server can drain. */
  drain(): Promise<void>
  /** Closes the modules (in reverse order), then the kernel. */
  close(): Promise<void>
}

export interface ListenOptions {
  port: number
  hostname: string
  /**
   * The largest request body, by its Content-Length, the server takes (the largest any route takes): above it the
   * front answers 413 in the shared error shape before any route runs. Bodies without a length are cut by the route
   * that reads them, at that route's own limit. Bun's own cap is lifted: it would answer a bare 413 first.
   */
  maxRequestBodySize: number
  /** Seconds a connection may stay idle (keep-alive, or a request that stopped sending) before it is closed. */
  idleTimeout: number
  /** Share the port with other processes (SO_REUSEPORT; REUSE_PORT). Default false: a second bind fails. */
  reusePort?: boolean
}

export interface RuntimeOptions {
  modules?: readonly Module[]
}

export { rateLimitRules } from './wiring'

/**
 * Request bodies are strict by default: every object in a body schema that does not say otherwise rejects properties
 * it does not define (422 naming them). A module opts out per object with `additionalProperties: true` (or a schema).
 * Validators compile on first use, so setting the flag here, after every route is mounted, takes effect.
 */
function strictBodies(app: AnyElysia) {
  const seen = new Set<object>()
  const visit = (schema: unknown) => {
    if (!schema || typeof schema !== 'object' || seen.has(schema)) return
    seen.add(schema)
    const s = schema as Record<string, unknown>
    if (s.type === 'object' && s.properties && s.additionalProperties === undefined) s.additionalProperties = false
    for (const v of Object.values(s)) if (v && typeof v === 'object') visit(v)
  }
  for (const r of app.routes as { hooks?: { body?: unknown } }[]) visit(r.hooks?.body)
}

/** The mounted routes with the guard each declared (see RouteContext.routeTable). */
function summariseRoutes(app: AnyElysia): RouteSummary[] {
  const out: RouteSummary[] = []
  for (const r of app.routes as { method: string; path: string; hooks?: { detail?: Record<string, unknown> } }[]) {
    const detail = r.hooks?.detail ?? {}
    out.push({
      method: r.method,
      path: r.path.replace(/:([A-Za-z_]\w*)/g, '{$1}').replace(/\/$/, '') || '/',
      summary: typeof detail.summary === 'string' ? detail.summary : '',
      minRole: (detail['x-min-role'] as RouteSummary['minRole']) ?? null,
    })
  }
  return out
}

export function createRuntime(kernel: Kernel, opts: RuntimeOptions = {}): Runtime {
  const modules = opts.modules ?? MODULES
  const { use, stateOf, spaceOwner, connected } = wireModules(kernel, modules)

  // HTTP: the kernel plugin, each module's routes, the OpenAPI description.
  const front = new RequestFront(
    kernel,
    modules.flatMap((m) => m.privatePaths ?? []),
    modules.flatMap((m) => (m.publicCors ? [m.publicCors] : [])),
  )
  // The public side's Space lookup, from the module that owns Spaces: the guards' `publicSpace` macro asks it.
  const publicSpaces = spaceOwner ? spaceOwner.publicSpaceResolver!(stateOf(spaceOwner)) : null
  const guards = guardPlugin(kernel, publicSpaces)
  const contextOf = <S extends object>(m: Module<S>): RouteContext<S> => ({
    kernel,
    self: stateOf(m) as S,
    guards,
    use,
    requestInfo: (request) => front.info.get(request) ?? front.begin(request, null),
    routeTable: () => (routeTable ??= summariseRoutes(app)),
  })
  let routeTable: RouteSummary[] | undefined
  // normalize: false — never strip unknown properties or coerce a body into shape: reject it (422) instead.
  // standardHostname: false — Elysia otherwise looks for the path's '/' from the URL's 12th character on, which
  // skips the path of a short Host (`http://web/v1/version` routes as `/version`: 404). Our server speaks plain
  // HTTP (TLS ends at the proxy), so the URL starts `http://` and the path's '/' comes after character 7.
  // docs/upstream/elysia-short-host.md has the upstream report.
  const bodyTypes = new RouteBodyTypes()
  const app = new Elysia({ name: 'content-service', normalize: false, handler: { standardHostname: false } }).use(
    kernelPlugin(kernel, front, bodyTypes),
  )
  for (const m of modules) if (m.root) app.use(m.root(contextOf(m)))
  const v1 = new Elysia({ prefix: '/v1' })
  // Which module serves each route ("METHOD /path"): the OpenAPI description lists that module's error codes on it.
  const owners = new Map<string, Module>()
  for (const m of modules) {
    const before = v1.routes.length
    if (m.routes) v1.use(m.routes(contextOf(m)))
    if (m.publicRoutes) v1.use(m.publicRoutes(contextOf(m)))
    for (const r of v1.routes.slice(before)) owners.set(`${r.method} ${r.path}`, m)
  }
  app.use(v1)
  app.use(openapiRoutes(() => app, kernel, modules, owners))
  strictBodies(app)
  bodyTypes.learn(app.routes)
  const fastRoutes: ModuleFastRoute[] = []
  for (const m of modules) for (const r of m.fast?.(contextOf(m)) ?? []) fastRoutes.push({ ...r, module: m.name })

  const elysiaFetch = app.fetch as (request: Request) => Response | Promise<Response>
  const { fetch, setBodyLimit, pacer } = createHttpFront(kernel, front, fastRoutes, elysiaFetch)

  let started: Promise<void> | null = null
  let closing: Promise<void> | null = null
  return {
    kernel,
    modules,
    app,
    fetch,
    handle: async (request) => fetch(request, null),
    state: <S extends object>(m: Module<S>) => use(m),
    start() {
      started ??= (async () => {
        await connected
        await kernel.replicas.start()
        for (const m of modules) await m.start?.(stateOf(m), kernel)
      })()
      return started
    },
    listen(o) {
      setBodyLimit(o.maxRequestBodySize)
      const server = Bun.serve({
        port: o.port,
        hostname: o.hostname,
        // Bun would answer a Content-Length over its cap with a bare 413 (no body, no request id, no CORS) before
        // `fetch` runs: its cap is lifted and `bodyTooLarge` above answers instead. Bun discards a body nobody reads.
        maxRequestBodySize: Number.MAX_SAFE_INTEGER,
        idleTimeout: o.idleTimeout,
        reusePort: o.reusePort ?? false,
        // Never Bun's development error page (working directory, source lines): errors are the kernel's 500 body.
        development: false,
        fetch: (request, srv) => fetch(request, srv),
        error(err) {
          kernel.logger.error('uncaught error in the server', { error: String(err) })
          return new Response(JSON.stringify({ error: 'internal_error', message: 'Something went wrong on our side.' }), {
            status: 500,
            headers: { 'Content-Type': 'application/json; charset=utf-8' },
          })
        },
      })
      pacer.start()
      // Elysia hands `server` to hooks (the peer address) from here.
      ;(app as unknown as { server: unknown }).server = server
      return server as Server<undefined>
    },
    async drain() {
      for (const m of modules) await m.drain?.(stateOf(m), kernel)
    },
    close() {
      closing ??= (async () => {
        pacer.stop()
        await started?.catch(() => {})
        for (const m of [...modules].reverse()) await m.close?.(stateOf(m), kernel)
        await kernel.close()
      })()
      return closing
    },
  }
}
