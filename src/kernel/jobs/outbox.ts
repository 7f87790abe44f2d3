import { sql } from 'drizzle-orm'
import type { Clock } from '../clock'
import type { Database } from '../db'
import type { DomainEvent, EventType } from '../events'
import type { Logger } from '../logger'
import { iso, query } from './sql'
import { OUTBOX_CHANNEL, type OutboxHandler } from './types'

/**
 * The outbox relay: committed events (the `events` table, written by `transact` in the changing transaction) handed
 * to the durable consumers (`onOutbox`: webhooks) in batches, each batch in the one transaction that marks its
 * events handled. Woken at commit on this instance, by NOTIFY from instances that run no workers, and by polling.
 */
export interface OutboxRelayDeps {
  db: Database
  clock: Clock
  logger: Logger
  isStarted(): boolean
  track(p: Promise<unknown>): void
}

export class OutboxRelay {
  private outboxHandlers: { name: string; handler: OutboxHandler }[] = []
  private relaying: Promise<void> | null = null
  private relayAgain = false
  private notifyTimer: ReturnType<typeof setTimeout> | null = null

  constructor(private deps: OutboxRelayDeps) {}

  /** Registers a consumer of committed events; all consumers run in the one transaction that marks events handled. */
  onOutbox(name: string, handler: OutboxHandler): void {
    this.outboxHandlers.push({ name, handler })
  }

  /**
   * Called for every event the bus publishes after commit: wakes the relay here, or — when this process runs no
   * workers — tells the instances that do (they also find it by polling).
   */
  outboxWritten(): void {
    if (this.deps.isStarted()) {
      this.kickRelay()
      return
    }
    if (this.deps.db.driver !== 'postgres' || this.notifyTimer) return
    // Coalesce a burst of events into one NOTIFY.
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = null
      this.deps.track(this.deps.db.notify(OUTBOX_CHANNEL, '').catch((err) => this.deps.logger.warn('outbox notify failed', { error: String(err) })))
    }, 0)
  }

  kickRelay() {
    if (this.relaying) {
      this.relayAgain = true
      return
    }
    this.relaying = (async () => {
      try {
        do {
          this.relayAgain = false
          await this.relayUntilEmpty()
        } while (this.relayAgain && this.deps.isStarted())
      } catch (err) {
        this.deps.logger.error('outbox relay failed', { error: String(err) })
      } finally {
        this.relaying = null
      }
    })()
    this.deps.track(this.relaying)
  }

  async relayUntilEmpty(): Promise<number> {
    let total = 0
    for (;;) {
      const n = await this.relayBatch(200)
      total += n
      if (n < 200) return total
    }
  }

  /**
   * Claims up to `limit` unhandled events, hands them to every outbox consumer and marks them handled — all in one
   * transaction, so a crash leaves them unhandled (and relayed again) and a consumer's failure keeps them too.
   */
  async relayBatch(limit = 200): Promise<number> {
    return this.deps.db.db.transaction(async (tx) => {
      const rows = await query<{ id: number | string; type: string; space_id: number | null; payload: unknown; created_at: Date | string }>(
        tx,
        sql`select id, type, space_id, payload, created_at from events where handled_at is null
            order by id limit ${limit} for update skip locked`,
      )
      if (!rows.length) return 0
      const list: DomainEvent[] = rows.map((r) => ({
        id: Number(r.id),
        type: r.type as EventType,
        spaceId: r.space_id === null ? null : Number(r.space_id),
        // Stored by transact() from a typed event: read back as the JSON it was.
        payload: (r.payload ?? {}) as never,
        createdAt: new Date(r.created_at),
      }))
      for (const h of this.outboxHandlers) await h.handler(tx, list)
      const ids = `{${list.map((e) => e.id).join(',')}}`
      await query(tx, sql`update events set handled_at = ${iso(this.deps.clock.now())}::timestamptz where id = any(${ids}::bigint[])`)
      return list.length
    })
  }

  /** Drops a NOTIFY not sent yet (the queue is stopping). */
  stop(): void {
    if (this.notifyTimer) clearTimeout(this.notifyTimer)
    this.notifyTimer = null
  }
}
