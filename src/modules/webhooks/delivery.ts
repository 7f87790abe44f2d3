import { and, eq, inArray, sql } from 'drizzle-orm'
import { webhookAttempts, webhookDeliveries, webhookSubscriptions } from './tables'
import { type DbOrTx, rowsOf, type Tx } from '../../kernel/db'
import type { DomainEvent, EventCatalog } from '../../kernel/events'
import { type JobContext, type JobQueue, LeaseLostError } from '../../kernel/jobs'
import type { Kernel } from '../../kernel/kernel'
import { RETRY_DELAYS_MS, type SignedPostResult, signedPost } from '../../kernel/signed-post'
import { spaceSlugById } from '../spaces/service'
import './jobs'

/** The job queue of webhook deliveries; one job per delivery, retried by the queue. */
export const DELIVERY_QUEUE = 'webhooks.deliver' as const

/** Additional data binding a sealed webhook secret to its purpose. */
export const SECRET_CONTEXT = 'webhook-secret'

export type DeliveryKind = 'event' | 'ping' | 'redelivery'

export interface NewDelivery {
  subscriptionId: number
  spaceId: number
  kind: DeliveryKind
  event: string
  eventId: number | null
  /** The body without `event` and `delivered_at` (added at each attempt). */
  payload: Record<string, unknown>
  redeliveryOf?: string | null
}

/** `ping` is the webhooks module's own event (no module emits it): its row of docs/webhooks.md's event table. */
export const PING_EVENT_DOC = { description: '`POST …/ping`', body: '`webhook: {id, label, events}`' }

function pick(source: unknown, fields: readonly string[]): Record<string, unknown> {
  const from = (source && typeof source === 'object' ? source : {}) as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const f of fields) out[f] = from[f] ?? null
  return out
}

/**
 * The exact JSON sent: `{event, delivered_at, space: {slug, ...}, ...}`, keys in the documented order (jsonb storage
 * does not keep key order, so the body is shaped again here).
 */
export function deliveryBody(catalog: EventCatalog, event: string, deliveredAt: Date, slug: string, payload: Record<string, unknown>): string {
  const shaped =
    event === 'ping' ? { webhook: pick(payload.webhook, ['id', 'label', 'events']) } : (catalog.webhookBody(event, payload) ?? payload)
  const { space, ...rest } = shaped as Record<string, unknown>
  const spaceObj = space && typeof space === 'object' ? (space as Record<string, unknown>) : {}
  return JSON.stringify({ event, delivered_at: deliveredAt.toISOString(), space: { ...spaceObj, slug }, ...rest })
}

/**
 * Writes deliveries, the first (pending) attempt of each and their jobs, in the caller's transaction: they exist
 * only if it commits. Returns the delivery ids in input order.
 */
export async function createDeliveries(kernel: Kernel, tx: DbOrTx, list: NewDelivery[]): Promise<string[]> {
  if (!list.length) return []
  const now = kernel.clock.now().toISOString()
  const rows = list.map((d) => ({
    id: crypto.randomUUID(),
    subscription_id: d.subscriptionId,
    space_id: d.spaceId,
    kind: d.kind,
    event: d.event,
    event_id: d.eventId,
    payload: d.payload,
    redelivery_of: d.redeliveryOf ?? null,
  }))
  // Deliveries and their first, pending log rows in one statement; the rows travel as one JSON parameter.
  await tx.execute(sql`
    with d as (
      insert into webhook_deliveries (id, subscription_id, space_id, kind, event, event_id, payload, status, redelivery_of, created_at)
      select r.id, r.subscription_id, r.space_id, r.kind, r.event, r.event_id, r.payload, 'pending', r.redelivery_of, ${now}::timestamptz
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        as r(id uuid, subscription_id int, space_id int, kind text, event text, event_id bigint, payload jsonb, redelivery_of uuid)
      returning id, subscription_id
    )
    insert into webhook_attempts (delivery_id, subscription_id, retry, outcome, next_attempt_at, logged_at)
    select d.id, d.subscription_id, 0, 'pending', ${now}::timestamptz, ${now}::timestamptz from d`)
  await kernel.jobs.enqueueMany(
    tx,
    rows.map((d) => ({ queue: DELIVERY_QUEUE, payload: { deliveryId: d.id }, dedupeKey: d.id })),
  )
  return rows.map((d) => d.id)
}

/**
 * The outbox consumer: every committed event becomes one delivery per active subscription of its Space that lists
 * it, inside the relay transaction that marks the event handled.
 */
export async function fanOutEvents(kernel: Kernel, tx: Tx, events: DomainEvent[]): Promise<void> {
  const spaceIds = [...new Set(events.map((e) => e.spaceId).filter((id): id is number => id !== null))]
  if (!spaceIds.length) return
  const subs = await tx
    .select({ id: webhookSubscriptions.id, spaceId: webhookSubscriptions.spaceId, events: webhookSubscriptions.events })
    .from(webhookSubscriptions)
    .where(and(inArray(webhookSubscriptions.spaceId, spaceIds), eq(webhookSubscriptions.active, true)))
  if (!subs.length) return
  const list: NewDelivery[] = []
  for (const e of events) {
    // Internal events (and events no module declares any more) have no webhook body: never delivered.
    const body = kernel.events.webhookBody(e.type, e.payload)
    if (!body) continue
    for (const s of subs) {
      if (s.spaceId !== e.spaceId || !s.events.includes(e.type)) continue
      list.push({
        subscriptionId: s.id,
        spaceId: s.spaceId,
        kind: 'event',
        event: e.type,
        eventId: e.id,
        payload: body,
      })
    }
  }
  await createDeliveries(kernel, tx, list)
}

type AttemptResult = SignedPostResult

interface DeliveryRow {
  delivery: typeof webhookDeliveries.$inferSelect
  /** The delivery's pending attempt, the log row this attempt fills in. */
  attemptId: number | null
  url: string
  active: boolean
  secretSealed: string
}

interface AttemptRecord {
  ctx: JobContext<{ deliveryId: string }>
  delivery: DeliveryRow['delivery']
  attemptId: number | null
  startedAt: Date
  result: AttemptResult
  /** delivered, failed for good, or retry at `nextAt`. */
  final: 'delivered' | 'failed' | 'retry'
  nextAt: Date | null
}

/**
 * Calls made while a batch is running wait and then go together as the next batch: one query for many deliveries
 * under load, no added wait when idle. `run` answers per item, an Error for an item that failed on its own.
 */
function batcher<I, O>(run: (items: I[]) => Promise<(O | Error)[]>): (item: I) => Promise<O> {
  let queue: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = []
  let running = false
  const flush = async () => {
    running = true
    while (queue.length) {
      const batch = queue
      queue = []
      try {
        const out = await run(batch.map((b) => b.item))
        batch.forEach((b, i) => (out[i] instanceof Error ? b.reject(out[i]) : b.resolve(out[i] as O)))
      } catch (err) {
        for (const b of batch) b.reject(err)
      }
    }
    running = false
  }
  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject })
      // setImmediate, not a microtask: the embedded database answers without yielding to I/O, so a microtask would
      // start a batch before the other finished requests had been read from their sockets.
      if (!running && queue.length === 1) setImmediate(() => void (running ? undefined : flush()))
    })
}

/** Per process: loads deliveries and records attempts in batches, and caches Space slugs (they never change). */
export function deliveryPipeline(kernel: Kernel) {

  const load = batcher<string, DeliveryRow | null>(async (ids) => {
    const rows = await kernel.db.db
      .select({
        delivery: webhookDeliveries,
        attemptId: webhookAttempts.id,
        url: webhookSubscriptions.url,
        active: webhookSubscriptions.active,
        secretSealed: webhookSubscriptions.secretSealed,
      })
      .from(webhookDeliveries)
      .innerJoin(webhookSubscriptions, eq(webhookSubscriptions.id, webhookDeliveries.subscriptionId))
      .leftJoin(webhookAttempts, and(eq(webhookAttempts.deliveryId, webhookDeliveries.id), eq(webhookAttempts.outcome, 'pending')))
      .where(inArray(webhookDeliveries.id, [...new Set(ids)]))
    const byId = new Map(rows.map((r) => [r.delivery.id, r]))
    return ids.map((id) => byId.get(id) ?? null)
  })

  // One transaction per batch: the attempts' log rows, the deliveries' states and the jobs' states together.
  const record = batcher<AttemptRecord, true>(async (items) => {
    return kernel.db.db.transaction(async (tx) => {
      // Every statement below is keyed by primary key. The embedded database never analyzes its tables (it has no
      // autovacuum), and from stale estimates the planner would rather scan a whole table than probe an index.
      await tx.execute(sql`select set_config('enable_seqscan', 'off', true)`)
      const lost = new Set(
        await kernel.jobs.settleMany(
          tx,
          items.map((i) => ({
            ctx: i.ctx,
            result:
              i.final === 'delivered'
                ? { status: 'done' as const }
                : i.final === 'retry'
                  ? { status: 'retry' as const, error: errorOf(i.result), runAt: i.nextAt! }
                  : { status: 'failed' as const, error: errorOf(i.result) },
          })),
        ),
      )
      const ok = items.filter((i) => !lost.has(i.ctx))
      const missing = ok.filter((i) => i.attemptId === null)
      if (missing.length) {
        // A delivery without a pending log row (it cannot happen through the API): give it one to fill in.
        const rows = await tx
          .insert(webhookAttempts)
          .values(
            missing.map((i) => ({
              deliveryId: i.delivery.id,
              subscriptionId: i.delivery.subscriptionId,
              retry: i.ctx.job.attempt - 1,
              outcome: 'pending' as const,
              loggedAt: i.startedAt,
            })),
          )
          .returning({ id: webhookAttempts.id })
        missing.forEach((i, n) => (i.attemptId = rows[n].id))
      }
      if (ok.length) {
        const attempts = sql.join(
          ok.map(
            (i) => sql`(${i.attemptId}::bigint, ${i.ctx.job.attempt - 1}::int, ${i.final === 'delivered' ? 'delivered' : 'failed'}::text,
                        ${i.startedAt.toISOString()}::timestamptz, ${i.result.status}::int, ${i.result.body}::text,
                        ${i.result.latencyMs}::int, ${i.result.outcome === 'delivered' ? null : i.result.error}::text)`,
          ),
          sql`, `,
        )
        await tx.execute(sql`
          update webhook_attempts as a set retry = v.retry, outcome = v.outcome, next_attempt_at = null,
            attempted_at = v.attempted_at, response_status = v.status, response_body = v.body, latency_ms = v.latency,
            error = v.error, logged_at = v.attempted_at
          from (values ${attempts}) as v(id, retry, outcome, attempted_at, status, body, latency, error)
          where a.id = v.id`)
        const retries = ok.filter((i) => i.final === 'retry')
        if (retries.length) {
          const now = kernel.clock.now()
          await tx.insert(webhookAttempts).values(
            retries.map((i) => ({
              deliveryId: i.delivery.id,
              subscriptionId: i.delivery.subscriptionId,
              retry: i.ctx.job.attempt,
              outcome: 'pending' as const,
              nextAttemptAt: i.nextAt,
              loggedAt: now,
            })),
          )
        }
        const finals = ok.filter((i) => i.final !== 'retry')
        if (finals.length) {
          const now = kernel.clock.now().toISOString()
          const states = sql.join(
            finals.map((i) => sql`(${i.delivery.id}::uuid, ${i.final}::text)`),
            sql`, `,
          )
          await tx.execute(sql`
            update webhook_deliveries as d set status = v.status, finished_at = ${now}::timestamptz
            from (values ${states}) as v(id, status) where d.id = v.id`)
        }
      }
      return items.map((i) => (lost.has(i.ctx) ? new LeaseLostError(`delivery ${i.delivery.id}: lease lost`) : (true as const)))
    })
  })

  const slugs = new Map<number, Promise<string>>()
  function spaceSlug(spaceId: number): Promise<string> {
    let slug = slugs.get(spaceId)
    if (!slug) {
      slug = spaceSlugById(kernel, spaceId).then((s) => {
        if (!s) slugs.delete(spaceId)
        return s ?? ''
      })
      slugs.set(spaceId, slug)
    }
    return slug
  }

  return { load, record, spaceSlug }
}

export type DeliveryPipeline = ReturnType<typeof deliveryPipeline>

/** Sends one attempt of one delivery and records it with the job's new state (in a batch transaction). */
export async function deliverAttempt(kernel: Kernel, pipeline: DeliveryPipeline, ctx: JobContext<{ deliveryId: string }>) {
  const row = await pipeline.load(ctx.job.payload.deliveryId)
  // Deleted with its subscription, or already settled: nothing to send.
  if (!row || row.delivery.status !== 'pending') return
  const d = row.delivery
  const startedAt = kernel.clock.now()

  let result: AttemptResult
  if (d.kind === 'event' && !row.active) {
    result = { outcome: 'failed', status: null, body: null, latencyMs: null, error: 'the subscription is inactive' }
  } else {
    let secret: string | null = null
    try {
      secret = kernel.secrets.open(row.secretSealed, SECRET_CONTEXT)
    } catch {
      kernel.logger.error('webhook secret cannot be opened', { subscription: d.subscriptionId })
    }
    if (secret === null) {
      result = {
        outcome: 'failed',
        status: null,
        body: null,
        latencyMs: null,
        error: 'the signing secret cannot be decrypted (was SERVICE_SECRET_KEY changed?); rotate the secret',
      }
    } else {
      try {
        const body = deliveryBody(kernel.events, d.event, startedAt, await pipeline.spaceSlug(d.spaceId), d.payload as Record<string, unknown>)
        result = await signedPost(kernel, { url: row.url, body, secret, at: startedAt, event: d.event, deliveryId: d.id })
      } catch (err) {
        // Our own failure, not the receiver's: log it and let the retry schedule try again.
        kernel.logger.error('webhook attempt failed internally', { delivery: d.id, error: String(err) })
        result = { outcome: 'retry', status: null, body: null, latencyMs: null, error: 'internal error while sending' }
      }
    }
  }
  const nextAt = result.outcome === 'retry' ? ctx.nextRetryAt() : null
  const final = result.outcome === 'retry' && !nextAt ? 'failed' : result.outcome
  await pipeline.record({ ctx, delivery: d, attemptId: row.attemptId, startedAt, result, final, nextAt })
}

function errorOf(r: AttemptResult): string {
  return r.outcome === 'delivered' ? '' : r.error
}

/** Finished deliveries (and their log) are kept this long. */
export const DELIVERY_RETENTION_DAYS = 30

/** Deletes finished deliveries older than the retention, a thousand at a time (the embedded database has one connection). */
async function pruneDeliveries(kernel: Kernel, olderThanDays: number): Promise<number> {
  const cutoff = new Date(kernel.clock.ms() - olderThanDays * 86_400_000).toISOString()
  let total = 0
  for (;;) {
    const rows = rowsOf(
      await kernel.db.db.execute(sql`
        delete from webhook_deliveries where id in (
          select id from webhook_deliveries where finished_at < ${cutoff}::timestamptz limit 1000)
        returning id`),
    )
    total += rows.length
    if (rows.length < 1000) return total
  }
}


/** Registers the delivery queue, the log pruning schedule and the outbox consumer (the module's `jobs`). */
export function registerWebhookJobs(jobs: JobQueue, kernel: Kernel): void {
  jobs.define('webhooks.prune', {
    handler: async ({ job }) => {
      const n = await pruneDeliveries(kernel, job.payload.olderThanDays)
      if (n) kernel.logger.info('pruned webhook deliveries', { deliveries: n })
    },
  })
  jobs.schedule({ name: 'webhooks.prune', cron: '41 3 * * *', queue: 'webhooks.prune', payload: { olderThanDays: DELIVERY_RETENTION_DAYS } })
  const pipeline = deliveryPipeline(kernel)
  jobs.define(DELIVERY_QUEUE, {
    concurrency: kernel.config.webhookConcurrency,
    retryDelaysMs: RETRY_DELAYS_MS,
    handler: (ctx) => deliverAttempt(kernel, pipeline, ctx),
  })
  jobs.onOutbox('webhooks', (tx, events) => fanOutEvents(kernel, tx, events))
}
