import type { Kernel } from './kernel/kernel'
import type { Module, Use } from './kernel/module'
import { KERNEL_RATE_LIMITS, type RateLimitRule } from './kernel/rate-limit'
import { MODULES } from './modules'
import { OPENAPI_RATE_LIMITS } from './openapi'

/** The service's rate-limit table: each module's rows in list order, then the OpenAPI routes', then the kernel's defaults. */
export function rateLimitRules(modules: readonly Module[] = MODULES): RateLimitRule[] {
  return [...modules.flatMap((m) => m.rateLimits ?? []), ...OPENAPI_RATE_LIMITS, ...KERNEL_RATE_LIMITS]
}

/**
 * The modules wired into one kernel, in list order: their declarations (events, filter hooks, rate limits), their
 * state (`setup`, which may `use` the modules above), and what each hands the kernel — caches and event handlers on
 * the bus, `inTx` hooks, filter handlers, job queues, read steps, GraphQL fields, readiness, admission, metrics, the
 * preview-token verifier — then the bus connected to the other instances. No HTTP here (src/app.ts mounts routes,
 * src/http-front.ts answers requests).
 */
export interface WiredModules {
  /** The state a module's `setup` returned; throws for a module not set up (yet). */
  use: Use
  stateOf(m: Module): object
  /** The one module providing `publicSpaceResolver`, if any. */
  spaceOwner: Module | undefined
  /** Resolves once the event bus listens to the other instances. */
  connected: Promise<void>
}

export function wireModules(kernel: Kernel, modules: readonly Module[]): WiredModules {
  const names = new Set<string>()
  for (const m of modules) {
    if (names.has(m.name)) throw new Error(`module "${m.name}" is listed twice`)
    names.add(m.name)
  }

  // Declarations first: events and rate limits are known before any module runs.
  const resolvers = modules.filter((m) => m.publicSpaceResolver)
  if (resolvers.length > 1) throw new Error(`modules ${resolvers.map((m) => `"${m.name}"`).join(', ')} all provide publicSpaceResolver: only one may`)
  const spaceOwner: Module | undefined = resolvers[0]
  for (const m of modules) if (m.events) kernel.events.declare(m.name, m.events)
  for (const m of modules) if (m.filterHooks) kernel.filters.declare(m.name, m.filterHooks)
  kernel.rateLimiter.table.add(rateLimitRules(modules))

  // State, in list order: a module may use the ones above it.
  const states = new Map<Module, object>()
  const use: Use = <S extends object>(m: Module<S>): S => {
    const s = states.get(m)
    if (!s) throw new Error(`module "${m.name}" is used before it is set up (list it above its users in src/modules/index.ts)`)
    return s as S
  }
  for (const m of modules) states.set(m, m.setup?.(kernel, use) ?? {})
  const stateOf = (m: Module) => states.get(m)!

  // Reactions, filter hooks, jobs, read steps and GraphQL fields.
  const caches: { name: string; stats: { bytes: number; entries: number; maxBytes: number; evictions: number } }[] = []
  for (const m of modules) {
    const self = stateOf(m)
    for (const cache of m.caches?.(self) ?? []) {
      for (const [type, what] of Object.entries(cache.invalidateOn)) {
        if (what) kernel.bus.subscribe(type as never, (e) => cache.invalidateFor((what as (e: unknown) => never)(e)))
      }
      kernel.bus.onResync(() => cache.clear())
    }
    for (const memo of m.memos?.(self) ?? []) {
      kernel.bus.subscribe('*', (e) => memo.onEvent(e))
      kernel.bus.onResync(() => memo.clear())
    }
    for (const [type, handler] of Object.entries(m.on ?? {})) {
      if (handler) kernel.bus.subscribe(type as never, (e, d) => (handler as (...a: unknown[]) => unknown)(e, self, kernel, d) as void)
    }
    if (m.onResync) kernel.bus.onResync(() => m.onResync!(self, kernel))
    for (const [type, handler] of Object.entries(m.inTx ?? {})) {
      if (handler) kernel.bus.inTx(type as never, (tx, e, emit) => (handler as (...a: unknown[]) => unknown)(tx, e, emit, self, kernel) as void)
    }
    for (const [hook, handler] of Object.entries(m.filters ?? {})) {
      if (!handler) continue
      const h = (typeof handler === 'function' ? { run: handler } : handler) as {
        wants?: (...a: unknown[]) => boolean
        run: (...a: unknown[]) => unknown
      }
      kernel.filters.add(m.name, hook, {
        wants: h.wants ? (call) => h.wants!(call, self, kernel) : undefined,
        run: (payload, call) => h.run(payload, call, self, kernel),
      })
    }
    m.jobs?.(kernel.jobs, self, kernel)
    if (m.readSteps) kernel.readSteps.push(...m.readSteps(self, kernel))
    if (m.graphql) kernel.graphql.push({ module: m.name, contribute: (builder) => m.graphql!(builder, self, kernel) })
    if (m.ready) kernel.readiness.push({ module: m.name, check: () => m.ready!(self, kernel) })
    if (m.admit) kernel.admissions.push({ module: m.name, admit: (request) => m.admit!(self, kernel, request) })
    if (m.metrics && kernel.metrics) m.metrics(kernel.metrics.registry, self, kernel)
    if (kernel.metrics) for (const c of [...(m.caches?.(self) ?? []), ...(m.memos?.(self) ?? [])]) caches.push(c)
  }
  if (kernel.metrics) kernel.metrics.caches(caches)
  // Preview tokens (kernel/preview.ts): draft reads verify them through the module that mints them.
  const verifiers = modules.filter((m) => m.previewTokens)
  if (verifiers.length > 1) throw new Error(`modules ${verifiers.map((m) => `"${m.name}"`).join(', ')} all provide previewTokens: only one may`)
  kernel.previewTokens = verifiers[0] ? verifiers[0].previewTokens!(stateOf(verifiers[0]), kernel) : null
  const connected = kernel.bus.connect(kernel.db, kernel.logger)
  return { use, stateOf, spaceOwner, connected }
}
