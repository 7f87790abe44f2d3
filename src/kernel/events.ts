import { events } from '../../db/schema'
import type { Deps } from '../deps'
import type { Tx } from './db'

/** Every event name of spec section 6. */
export const EVENT_TYPES = [
  'story.published',
  'story.unpublished',
  'story.deleted',
  'space.created',
  'space.archived',
  'version.created',
  'asset.uploaded',
  'datasource.synced',
] as const
export type EventType = (typeof EVENT_TYPES)[number]

export interface NewEvent {
  type: EventType
  spaceId: number | null
  payload: Record<string, unknown>
}

export interface DomainEvent extends NewEvent {
  id: number
  createdAt: Date
}

export type EventHandler = (event: DomainEvent) => void | Promise<void>

/** In-process subscribers; they run after the transaction that wrote the event has committed (action hooks). */
export class EventBus {
  private handlers = new Map<string, Set<EventHandler>>()
  private pending = new Set<Promise<unknown>>()

  constructor(private onHandlerError: (err: unknown, event: DomainEvent) => void) {}

  subscribe(type: EventType | '*', handler: EventHandler): () => void {
    let set = this.handlers.get(type)
    if (!set) this.handlers.set(type, (set = new Set()))
    set.add(handler)
    return () => set.delete(handler)
  }

  publish(list: DomainEvent[]) {
    for (const event of list) {
      const targets = [...(this.handlers.get(event.type) ?? []), ...(this.handlers.get('*') ?? [])]
      for (const h of targets) {
        const p = Promise.resolve()
          .then(() => h(event))
          .catch((err) => this.onHandlerError(err, event))
          .finally(() => this.pending.delete(p))
        this.pending.add(p)
      }
    }
  }

  /** Resolves when every handler started so far has finished (shutdown and tests). */
  async idle() {
    while (this.pending.size) await Promise.allSettled([...this.pending])
  }
}

export type Emit = (event: NewEvent) => void

/**
 * Runs `fn` in one transaction. Events passed to `emit` are written to the outbox inside that transaction and
 * handed to the bus only after it commits: a crash never loses one, a rollback never sends one.
 */
export async function transact<T>(deps: Pick<Deps, 'db' | 'bus' | 'clock'>, fn: (tx: Tx, emit: Emit) => Promise<T>): Promise<T> {
  const collected: NewEvent[] = []
  let written: DomainEvent[] = []
  const result = await deps.db.db.transaction(async (tx) => {
    const value = await fn(tx, (e) => collected.push(e))
    if (collected.length) {
      const now = deps.clock.now()
      const rows = await tx
        .insert(events)
        .values(collected.map((e) => ({ type: e.type, spaceId: e.spaceId, payload: e.payload, createdAt: now })))
        .returning({ id: events.id, createdAt: events.createdAt })
      written = collected.map((e, i) => ({ ...e, id: rows[i].id, createdAt: rows[i].createdAt }))
    }
    return value
  })
  if (written.length) deps.bus.publish(written)
  return result
}
