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
/** NOTIFY payloads stop at 8000 bytes; above this the message carries id ranges only and receivers read the rows. */
const MAX_INLINE_NOTIFY = 7800
/** How long committed events wait to share one NOTIFY with those of other transactions committing right after. */
export const NOTIFY_COALESCE_MS = 5
/** How often a connected bus reads the outbox past its position, for events whose NOTIFY never came. */
export const EVENTS_CATCH_UP_MS = 5_000
/** Outbox rows read per catch-up statement. */
const CATCH_UP_BATCH = 500

interface WireEvent {
  id: number
  /** The writing transaction's id (xid8 as text). */
  x: string
  t: string
  s: number | null
  p: unknown
  c: string
}
/** Inline events, or id ranges `[from, to]` (inclusive, every id in them written by the sender) to read. */
type Wire = { i: string; e: WireEvent[] } | { i: string; r: [number, number][] }

/** A committed event with the id of the transaction that wrote it. */
export type WrittenEvent = DomainEvent & { tx: string }

/** A point in the outbox's `(tx, id)` order. */
interface Position {
  tx: bigint
  id: number
}
const after = (tx: bigint, id: number, p: Position) => tx > p.tx || (tx === p.tx && id > p.id)

/**
 * The event bus of one process. Handlers run after the transaction that wrote the event has committed — on this
 * instance right at commit (synchronously, so caches are correct before the response leaves), and on every other
 * instance when the NOTIFY arrives that the committing instance sends after commit: the events of all transactions
 * committed within NOTIFY_COALESCE_MS share one NOTIFY per channel (inline when they fit in a payload, else as id
 * ranges the receivers read). A lost NOTIFY (the sender died between commit and send, or the send failed) costs
 * latency, never an event: each connected bus also reads the outbox past its position every EVENTS_CATCH_UP_MS, in
 * `(tx, id)` order and only up to the oldest transaction still running, so no commit can land behind what it has
 * read; an event delivered both ways is handed to the handlers once. Durable once-per-event work (webhooks, mail)
 * does not belong here: it reads the outbox through the job queue.
 */
export class EventBus {
  private handlers = new Map<string, Set<EventHandler<any>>>()
  private txHandlers = new Map<string, TxHandler<any>[]>()
  private pending = new Set<Promise<unknown>>()
  private unlisten: (() => Promise<void>) | null = null
  private listening: Promise<void> | null = null
  private resyncHandlers = new Set<() => void>()
  /** Committed here, waiting for the coalesced NOTIFY. */
  private outgoing: WrittenEvent[] = []
  private outgoingDb: Database | null = null
  private notifyTimer: ReturnType<typeof setTimeout> | null = null
  private sending: Promise<void> | null = null
  /** NOTIFYs sent (or attempted) by this bus (tests read it). */
  notifiesSent = 0
  // ---- catch-up (set once connected) ----
  private position: Position | null = null
  /** Ids past `position` already handed to the handlers (committed here, or received by NOTIFY). */
  private delivered = new Set<number>()
  private catchUpTimer: ReturnType<typeof setInterval> | null = null
  private catchingUp: Promise<number> | null = null
  private database: Database | null = null

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

  /**
   * Called right after the transaction that wrote `written` committed: queues them for the next coalesced NOTIFY
   * (one per NOTIFY_COALESCE_MS, however many transactions committed in it).
   */
  announce(database: Database, written: WrittenEvent[]) {
    if (!written.length) return
    if (this.position) for (const e of written) this.delivered.add(e.id)
    this.outgoingDb = database
    for (const e of written) this.outgoing.push(e)
    this.notifyTimer ??= setTimeout(() => {
      this.notifyTimer = null
      this.track(this.flushNotify())
    }, NOTIFY_COALESCE_MS)
  }

  /** Sends what is queued now (shutdown and tests); one flush at a time, later events wait for the next. */
  async flushNotify(): Promise<void> {
    if (this.notifyTimer) {
      clearTimeout(this.notifyTimer)
      this.notifyTimer = null
    }
    while (this.sending) await this.sending
    if (!this.outgoing.length || !this.outgoingDb) return
    const list = this.outgoing
    const database = this.outgoingDb
    this.outgoing = []
    this.sending = (async () => {
      for (const payload of this.wire(list)) {
        this.notifiesSent++
        // Lost, it costs the others latency only: their catch-up reads these events from the outbox.
        await database.notify(EVENTS_CHANNEL, payload).catch(() => {})
      }
    })().finally(() => {
      this.sending = null
    })
    await this.sending
  }

  /** The NOTIFY payloads for `list`: one inline message if it fits, else id ranges split to fit. */
  private wire(list: WrittenEvent[]): string[] {
    const inline = JSON.stringify({
      i: this.instanceId,
      e: list.map((e) => ({ id: e.id, x: e.tx, t: e.type, s: e.spaceId, p: e.payload, c: e.createdAt.toISOString() })),
    } satisfies Wire)
    if (inline.length <= MAX_INLINE_NOTIFY) return [inline]
    const ids = list.map((e) => e.id).sort((a, b) => a - b)
    const ranges: [number, number][] = []
    for (const id of ids) {
      const last = ranges.at(-1)
      if (last && id === last[1] + 1) last[1] = id
      else if (!last || id !== last[1]) ranges.push([id, id])
    }
    const out: string[] = []
    // ~30 bytes per range: 200 ranges stay far below the payload limit.
    for (let i = 0; i < ranges.length; i += 200) out.push(JSON.stringify({ i: this.instanceId, r: ranges.slice(i, i + 200) } satisfies Wire))
    return out
  }

  /** Starts receiving other instances' events (idempotent). */
  connect(database: Database, logger: { error(msg: string, f?: Record<string, unknown>): void }): Promise<void> {
    this.listening ??= database
      .listen(
        EVENTS_CHANNEL,
        (payload) => void this.receive(database, payload).catch((err) => logger.error('event bus: a notification was lost', { error: String(err) })),
        () => this.resync(),
      )
      .then(async (u) => {
        this.unlisten = u
        // Everything from the oldest running transaction on may not have reached this bus: read from there.
        // Through the driver, not drizzle's session: the bus's own reads stay out of the app's query accounting.
        const [row] = await database.query<{ xmin: string }>('select pg_snapshot_xmin(pg_current_snapshot())::text as xmin')
        this.position = { tx: BigInt(row.xmin), id: 0 }
        this.database = database
        this.catchUpTimer = setInterval(() => {
          void this.catchUp().catch((err) => logger.error('event bus: reading the outbox failed', { error: String(err) }))
        }, EVENTS_CATCH_UP_MS)
        this.catchUpTimer.unref?.()
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
    let list: WrittenEvent[]
    if ('e' in msg && Array.isArray(msg.e)) {
      list = msg.e.map((w) => ({ id: w.id, tx: typeof w.x === 'string' && /^\d{1,20}$/.test(w.x) ? w.x : '', type: w.t as EventType, spaceId: w.s, payload: w.p as never, createdAt: new Date(w.c) }))
    } else if ('r' in msg && Array.isArray(msg.r)) {
      const ranges = msg.r.filter((r) => Array.isArray(r) && Number.isSafeInteger(r[0]) && Number.isSafeInteger(r[1])).slice(0, 1000)
      if (!ranges.length) return
      const where = ranges.map(([a, b]) => `id between ${Number(a)} and ${Number(b)}`).join(' or ')
      list = (await database.query<OutboxRow>(`select id, tx::text as tx, type, space_id, payload, created_at from events where ${where} order by id`)).map(fromRow)
    } else return
    this.deliver(list)
  }

  /** Hands remote events to the handlers, each once: skips those the catch-up (or an earlier NOTIFY) delivered. */
  private deliver(list: WrittenEvent[]) {
    const fresh = list.filter((e) => {
      if (!this.position) return true
      if (this.delivered.has(e.id)) return false
      // At or behind the position: the catch-up read it already (a NOTIFY slower than the catch-up).
      if (e.tx && !after(BigInt(e.tx), e.id, this.position)) return false
      this.delivered.add(e.id)
      return true
    })
    if (fresh.length) this.publish(fresh, { origin: 'remote' })
  }

  /**
   * Reads the outbox past this bus's position, up to the oldest transaction still running, and hands the events no
   * NOTIFY brought to the handlers. Runs every EVENTS_CATCH_UP_MS once connected; returns how many it delivered.
   */
  catchUp(): Promise<number> {
    this.catchingUp ??= (async () => {
      let n = 0
      try {
        const database = this.database
        if (!database) return 0
        for (;;) {
          const p = this.position!
          const rows = await database.query<OutboxRow>(
            `select id, tx::text as tx, type, space_id, payload, created_at from events
              where tx >= $1::xid8 and tx < pg_snapshot_xmin(pg_current_snapshot()) and (tx, id) > ($1::xid8, $2::bigint)
              order by tx, id limit ${CATCH_UP_BATCH}`,
            [p.tx.toString(), p.id],
          )
          const missed: WrittenEvent[] = []
          for (const r of rows) {
            const e = fromRow(r)
            if (!this.delivered.delete(e.id)) missed.push(e)
            this.position = { tx: BigInt(e.tx), id: e.id }
          }
          if (missed.length) {
            n += missed.length
            this.publish(missed, { origin: 'remote' })
          }
          if (rows.length < CATCH_UP_BATCH) return n
        }
      } finally {
        this.catchingUp = null
      }
    })()
    return this.catchingUp
  }

  async close() {
    await this.listening
    if (this.catchUpTimer) clearInterval(this.catchUpTimer)
    this.catchUpTimer = null
    await this.catchingUp?.catch(() => {})
    await this.flushNotify()
    if (this.unlisten) await this.unlisten().catch(() => {})
    this.unlisten = null
    await this.idle()
  }
}

export type Emit = <K extends EventType>(event: NewEvent<K>) => void

/**
 * Runs `fn` in one transaction. Events passed to `emit` go through the in-transaction handlers and are written to the
 * outbox inside that transaction; right after it commits they reach this process's bus and are queued for the
 * coalesced NOTIFY to the other instances: a crash never loses one (the others' catch-up reads the outbox), a
 * rollback never sends one.
 */
export async function transact<T>(
  kernel: { db: Database; bus: EventBus; clock: { now(): Date } },
  fn: (tx: Tx, emit: Emit) => Promise<T>,
): Promise<T> {
  let written: WrittenEvent[] = []
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
        .returning({ id: events.id, createdAt: events.createdAt, tx: events.tx })
      written = collected.map((e, i) => ({ ...e, id: rows[i].id, createdAt: rows[i].createdAt, tx: String(rows[i].tx) }))
    }
    return value
  })
  if (written.length) {
    kernel.bus.publish(written)
    kernel.bus.announce(kernel.db, written)
  }
  return result
}

interface OutboxRow {
  id: number | string
  tx: string | null
  type: string
  space_id: number | string | null
  payload: unknown
  created_at: Date | string
}

function fromRow(r: OutboxRow): WrittenEvent {
  return {
    id: Number(r.id),
    tx: r.tx === null ? '' : String(r.tx),
    type: r.type as EventType,
    spaceId: r.space_id === null ? null : Number(r.space_id),
    // Stored by transact() from a typed event: read back as the JSON it was.
    payload: (r.payload ?? {}) as never,
    createdAt: new Date(r.created_at),
  }
}
