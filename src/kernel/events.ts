import { inArray, sql } from 'drizzle-orm'
import { events } from './tables'
import type { Database, Tx } from './db'

/**
 * Event names and their payloads. Empty here: each module declares its own events by declaration merging
 * (graphile-worker types its tasks this way), in the module's `events.ts`:
 *
 *   declare module '../../kernel/events' {
 *     interface EventMap { 'story.published': StoryEventPayload }
 *   }
 *
 * Payloads are stored as JSON (the outbox) and travel to other instances as JSON: plain values only, no Dates.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by modules through declaration merging
export interface EventMap {}
export type EventType = keyof EventMap & string

export interface NewEvent<K extends EventType = EventType> {
  type: K
  spaceId: number | null
  payload: EventMap[K]
}

export interface DomainEvent<K extends EventType = EventType> extends NewEvent<K> {
  id: number
  createdAt: Date
}

/** Any committed event, as a union discriminated by `type`. */
export type AnyEvent = { [K in EventType]: DomainEvent<K> }[EventType]

/** Where a committed event came from: this process, or another instance (through Postgres NOTIFY). */
export interface Delivery {
  origin: 'local' | 'remote'
}

export type EventHandler<K extends EventType = EventType> = (event: DomainEvent<K>, delivery: Delivery) => void | Promise<void>
export type AnyEventHandler = (event: AnyEvent, delivery: Delivery) => void | Promise<void>

/** Runs inside the transaction that emits the event, before commit; throwing vetoes (rolls back) the whole change. */
export type TxHandler<K extends EventType = EventType> = (tx: Tx, event: NewEvent<K>, emit: Emit) => void | Promise<void>

/** What a module says about one of its events (the webhook catalog and the OpenAPI description read it). */
export interface EventDeclaration<K extends EventType = EventType> {
  description: string
  /**
   * Public events can be subscribed to by webhooks: this projects the stored payload to what receivers get, besides
   * `event`, `delivered_at` and `space.slug` (internal fields such as database ids never leave the service).
   * Events without it are internal (cache and index upkeep).
   */
  webhook?: (payload: EventMap[K]) => Record<string, unknown>
  /**
   * What `webhook` puts in the body after `event`, `delivered_at` and `space: {slug}`, in Markdown (e.g.
   * "`story: {uuid, slug, …}`"): the event table of docs/webhooks.md is generated from it (`bun run gen:docs`).
   * Every public event has one (test/webhook-docs.test.ts).
   */
  body?: string
}

export type EventDeclarations = { [K in EventType]?: EventDeclaration<K> }

/** Every declared event, filled from the module list at start-up. */
export class EventCatalog {
  private decls = new Map<string, { module: string; decl: EventDeclaration<any> }>()

  declare(module: string, declarations: EventDeclarations) {
    for (const [type, decl] of Object.entries(declarations)) {
      if (!decl) continue
      const known = this.decls.get(type)
      if (known && known.module !== module) throw new Error(`event "${type}" is declared by ${known.module} and ${module}`)
      this.decls.set(type, { module, decl })
    }
  }

  has(type: string): boolean {
    return this.decls.has(type)
  }

  /** Event names a webhook may subscribe to, in declaration order. */
  publicTypes(): string[] {
    return [...this.decls].filter(([, d]) => d.decl.webhook).map(([type]) => type)
  }

  all(): { type: string; module: string; description: string; public: boolean; body?: string }[] {
    return [...this.decls].map(([type, d]) => ({ type, module: d.module, description: d.decl.description, public: !!d.decl.webhook, body: d.decl.body }))
  }

  /** The delivered body of a public event; null for an unknown or internal one. */
  webhookBody(type: string, payload: unknown): Record<string, unknown> | null {
    const d = this.decls.get(type)?.decl
    return d?.webhook ? d.webhook(payload as never) : null
  }
}

/** Postgres channel carrying committed events to the other instances. */
export const EVENTS_CHANNEL = 'cs_events'
/** NOTIFY payloads stop at 8000 bytes; above this the message carries event ids only and receivers read the rows. */
const MAX_INLINE_NOTIFY = 7800

interface WireEvent {
  id: number
  t: string
  s: number | null
  p: unknown
  c: string
}
type Wire = { i: string; e: WireEvent[] } | { i: string; ids: number[] }

/**
 * The event bus of one process. Handlers run after the transaction that wrote the event has committed — on this
 * instance right at commit (synchronously, so caches are correct before the response leaves), and on every other
 * instance when Postgres delivers the NOTIFY sent inside that transaction. Durable once-per-event work (webhooks,
 * mail) does not belong here: it reads the outbox through the job queue.
 */
export class EventBus {
  private handlers = new Map<string, Set<EventHandler<any>>>()
  private txHandlers = new Map<string, TxHandler<any>[]>()
  private pending = new Set<Promise<unknown>>()
  private unlisten: (() => Promise<void>) | null = null
  private listening: Promise<void> | null = null
  private resyncHandlers = new Set<() => void>()

  constructor(
    readonly instanceId: string,
    private onHandlerError: (err: unknown, event: DomainEvent) => void,
  ) {}

  subscribe<K extends EventType>(type: K, handler: EventHandler<K>): () => void
  subscribe(type: '*', handler: AnyEventHandler): () => void
  subscribe(type: string, handler: EventHandler<any>): () => void {
    let set = this.handlers.get(type)
    if (!set) this.handlers.set(type, (set = new Set()))
    set.add(handler)
    return () => set.delete(handler)
  }

  /** A handler that runs inside the emitting transaction (filter hooks: plugins, invariants across modules). */
  inTx<K extends EventType>(type: K, handler: TxHandler<K>): void {
    const list = this.txHandlers.get(type) ?? []
    list.push(handler)
    this.txHandlers.set(type, list)
  }

  /** Called when events may have been missed (the LISTEN connection was re-established): caches drop everything. */
  onResync(handler: () => void): () => void {
    this.resyncHandlers.add(handler)
    return () => this.resyncHandlers.delete(handler)
  }

  /** Events may have been missed (the LISTEN connection came back): runs the resync handlers. */
  resync() {
    for (const h of this.resyncHandlers) h()
  }

  /** Runs the in-transaction handlers of `event` (used by transact). */
  async runInTx(tx: Tx, event: NewEvent, emit: Emit): Promise<void> {
    const list = this.txHandlers.get(event.type)
    if (list) for (const h of list) await h(tx, event as never, emit)
  }

  publish(list: DomainEvent[], delivery: Delivery = { origin: 'local' }) {
    for (const event of list) {
      const targets = [...(this.handlers.get(event.type) ?? []), ...(this.handlers.get('*') ?? [])]
      for (const h of targets) {
        try {
          const r = h(event, delivery)
          if (r instanceof Promise) this.track(r.catch((err) => this.onHandlerError(err, event)))
        } catch (err) {
          this.onHandlerError(err, event)
        }
      }
    }
  }

  private track(p: Promise<unknown>) {
    const t = p.finally(() => this.pending.delete(t))
    this.pending.add(t)
  }

  /** Resolves when every handler started so far has finished (shutdown and tests). */
  async idle() {
    while (this.pending.size) await Promise.allSettled([...this.pending])
  }

  // ---- across instances ----

  /** Queues the NOTIFY for `written` inside `tx`: Postgres delivers it to the other instances only if `tx` commits. */
  async announce(tx: Tx, written: DomainEvent[]) {
    let payload = JSON.stringify({
      i: this.instanceId,
      e: written.map((e) => ({ id: e.id, t: e.type, s: e.spaceId, p: e.payload, c: e.createdAt.toISOString() })),
    } satisfies Wire)
    if (payload.length > MAX_INLINE_NOTIFY) payload = JSON.stringify({ i: this.instanceId, ids: written.map((e) => e.id) } satisfies Wire)
    await tx.execute(sql`select pg_notify(${EVENTS_CHANNEL}, ${payload})`)
  }

  /** Starts receiving other instances' events (idempotent). */
  connect(database: Database, logger: { error(msg: string, f?: Record<string, unknown>): void }): Promise<void> {
    this.listening ??= database
      .listen(
        EVENTS_CHANNEL,
        (payload) => void this.receive(database, payload).catch((err) => logger.error('event bus: a notification was lost', { error: String(err) })),
        () => this.resync(),
      )
      .then((u) => {
        this.unlisten = u
      })
      .catch((err) => logger.error('event bus: LISTEN failed; changes on other instances will not reach this one', { error: String(err) }))
    return this.listening
  }

  private async receive(database: Database, payload: string) {
    let msg: Wire
    try {
      msg = JSON.parse(payload)
    } catch {
      return
    }
    if (!msg || typeof msg !== 'object' || msg.i === this.instanceId) return
    let list: DomainEvent[]
    if ('e' in msg && Array.isArray(msg.e)) {
      list = msg.e.map((w) => ({ id: w.id, type: w.t as EventType, spaceId: w.s, payload: w.p as never, createdAt: new Date(w.c) }))
    } else if ('ids' in msg && Array.isArray(msg.ids)) {
      const rows = await database.db.select().from(events).where(inArray(events.id, msg.ids.map(Number)))
      rows.sort((a, b) => a.id - b.id)
      list = rows.map((r) => ({ id: r.id, type: r.type as EventType, spaceId: r.spaceId, payload: r.payload as never, createdAt: r.createdAt }))
    } else return
    this.publish(list, { origin: 'remote' })
  }

  async close() {
    await this.listening
    if (this.unlisten) await this.unlisten().catch(() => {})
    this.unlisten = null
    await this.idle()
  }
}

export type Emit = <K extends EventType>(event: NewEvent<K>) => void

/**
 * Runs `fn` in one transaction. Events passed to `emit` go through the in-transaction handlers, are written to the
 * outbox and announced to the other instances inside that transaction, and reach this process's bus right after it
 * commits: a crash never loses one, a rollback never sends one.
 */
export async function transact<T>(
  kernel: { db: Database; bus: EventBus; clock: { now(): Date } },
  fn: (tx: Tx, emit: Emit) => Promise<T>,
): Promise<T> {
  let written: DomainEvent[] = []
  const result = await kernel.db.db.transaction(async (tx) => {
    const collected: NewEvent[] = []
    const emit: Emit = (e) => void collected.push(e as NewEvent)
    const value = await fn(tx, emit)
    // In-transaction handlers may emit further events; each event passes through them once.
    for (let i = 0; i < collected.length; i++) await kernel.bus.runInTx(tx, collected[i], emit)
    if (collected.length) {
      const now = kernel.clock.now()
      const rows = await tx
        .insert(events)
        .values(collected.map((e) => ({ type: e.type, spaceId: e.spaceId, payload: e.payload, createdAt: now })))
        .returning({ id: events.id, createdAt: events.createdAt })
      written = collected.map((e, i) => ({ ...e, id: rows[i].id, createdAt: rows[i].createdAt }))
      await kernel.bus.announce(tx, written)
    }
    return value
  })
  if (written.length) kernel.bus.publish(written)
  return result
}
