import type { Principal, SpaceAccess } from './auth'

/**
 * Filter hooks: a change offered to the modules' handlers BEFORE the owning module opens its transaction, so a
 * handler may refuse it (throw an AppError: a veto) or amend it (return a replacement payload) while no database
 * transaction is held across its work (plugins call HTTP endpoints here). Names and payloads are typed by declaration
 * merging, next to the module that owns the hook (like EventMap and JobMap):
 *
 *   declare module '../../kernel/filters' {
 *     interface FilterMap { 'story.before_save': StoryBeforeSave }
 *   }
 *
 * The owning module declares the hook (`filterHooks`: description, whether it can be amended, the routes it runs
 * on) and calls `kernel.filters.run(name, payload, actor)` before its transaction; other modules contribute handlers
 * through their `filters` slot. The kernel names no module: it runs the handlers in module-list order.
 *
 * The three hook kinds side by side: `filters` before the change (may veto or amend; no transaction open), `inTx`
 * inside the emitting transaction (may veto; must not do network I/O), `on` after commit (reactions only).
 *
 * Payloads are JSON values (they travel to plugins as JSON): plain values only, no Dates, no database ids.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by modules through declaration merging
export interface FilterMap {}
export type FilterName = keyof FilterMap & string

/** Who makes the change a hook is offered, and in which Space. */
export interface FilterActor {
  space: { id: number; slug: string }
  /** A person (user token), a Space token, or an anonymous visitor (public routes: form submits). */
  kind: 'user' | 'token' | 'public'
  userId: number | null
  tokenId: string | null
}

/** The actor of a management request (the Space guard's `access`). */
export function actorOf(access: SpaceAccess): FilterActor {
  const p: Principal = access.principal
  const space = { id: access.space.id, slug: access.space.slug }
  return p.kind === 'user'
    ? { space, kind: 'user', userId: p.userId, tokenId: p.tokenId }
    : { space, kind: 'token', userId: null, tokenId: p.tokenId }
}

/** The actor of an anonymous request naming a Space (no address, no identity). */
export function publicActor(space: { id: number; slug: string }): FilterActor {
  return { space: { id: space.id, slug: space.slug }, kind: 'public', userId: null, tokenId: null }
}

/** What the owning module says about one of its hooks (the plugins catalog and the OpenAPI description read it). */
export interface FilterDeclaration {
  description: string
  /** A handler may return a replacement payload, which the owning module validates again. Otherwise returns are ignored. */
  amend: boolean
  /** The operations the hook runs on, `METHOD /v1/path` with OpenAPI-style parameters (`{space}`). */
  routes: string[]
}
export type FilterDeclarations = { [K in FilterName]?: FilterDeclaration }

/** One call of a hook, as a handler sees it. */
export interface FilterCall<K extends FilterName = FilterName> {
  hook: K
  actor: FilterActor
}

/** A handler's answer: nothing (allow), a replacement payload (amend; amendable hooks only). Throwing vetoes. */
export type FilterResult<K extends FilterName> = FilterMap[K] | undefined | void

interface Registered {
  module: string
  /** Cheap, synchronous: does this handler act on this call at all? (Plugins: a cached per-Space lookup.) */
  wants(call: FilterCall): boolean
  run(payload: unknown, call: FilterCall): unknown
}

/** The hooks the modules declare and the handlers they contribute (kernel.filters), filled by createRuntime. */
export class FilterHooks {
  private decls = new Map<string, { module: string; decl: FilterDeclaration }>()
  private handlers: Registered[] = []

  declare(module: string, declarations: FilterDeclarations) {
    for (const [name, decl] of Object.entries(declarations) as [string, FilterDeclaration | undefined][]) {
      if (!decl) continue
      const known = this.decls.get(name)
      if (known && known.module !== module) throw new Error(`filter hook "${name}" is declared by ${known.module} and ${module}`)
      this.decls.set(name, { module, decl })
    }
  }

  /** A handler for one hook (`hook`) or for every hook (`'*'`), in module-list order. */
  add(module: string, hook: string, handler: { wants?(call: FilterCall): boolean; run(payload: unknown, call: FilterCall): unknown }) {
    if (hook !== '*' && !this.decls.has(hook)) throw new Error(`module ${module} handles the filter hook "${hook}", which no module declares`)
    this.handlers.push({
      module,
      wants: hook === '*' ? (c) => handler.wants?.(c) ?? true : (c) => c.hook === hook && (handler.wants?.(c) ?? true),
      run: (p, c) => handler.run(p, c),
    })
  }

  /** Every declared hook, in declaration order. */
  names(): string[] {
    return [...this.decls.keys()]
  }

  declaration(name: string): (FilterDeclaration & { module: string }) | undefined {
    const d = this.decls.get(name)
    return d ? { ...d.decl, module: d.module } : undefined
  }

  /**
   * Does any handler act on this call? Owning modules whose payload costs a query to build (the Story before a
   * publish) ask first, so a Space without plugins pays nothing.
   */
  active<K extends FilterName>(hook: K, actor: FilterActor): boolean {
    if (this.handlers.length === 0) return false
    const call: FilterCall = { hook, actor }
    for (const h of this.handlers) if (h.wants(call)) return true
    return false
  }

  /**
   * Offers the payload to every handler that wants the call, in module-list order, each seeing the previous one's
   * amendment. Returns the payload to go on with: the same object when nobody amended it, else the replacement —
   * which came from outside and must be validated again by the caller. A veto is thrown (the handler's AppError).
   * Call it before opening the transaction.
   */
  async run<K extends FilterName>(hook: K, payload: FilterMap[K], actor: FilterActor): Promise<FilterMap[K]> {
    if (this.handlers.length === 0) return payload
    const decl = this.decls.get(hook)
    if (!decl) throw new Error(`filter hook "${hook}" is not declared`)
    const call: FilterCall = { hook, actor }
    let current: unknown = payload
    for (const h of this.handlers) {
      if (!h.wants(call)) continue
      const replacement = await h.run(current, call)
      if (replacement !== undefined && decl.decl.amend) current = replacement
    }
    return current as FilterMap[K]
  }
}
