import { and, desc, eq } from 'drizzle-orm'
import { webhookAttempts, webhookDeliveries, webhookSubscriptions } from '../../../db/schema'
import type { Deps } from '../../deps'
import type { SpaceAccess } from '../../kernel/auth'
import { randomSecret } from '../../kernel/crypto'
import { notFound, validationFailed } from '../../kernel/errors'
import type { EventType } from '../../kernel/events'
import { OutboundError, parseOutboundUrl, resolveTarget } from '../../kernel/outbound'
import { createDeliveries, DELIVERY_QUEUE, SECRET_CONTEXT } from './delivery'

export interface WebhookView {
  id: number
  label: string
  url: string
  events: EventType[]
  active: boolean
  created_at: string
  updated_at: string
}

export interface DeliveryAttemptView {
  /** The log entry (one attempt, made or scheduled). */
  id: number
  /** X-Service-Delivery: the same for every attempt of one delivery. */
  delivery_id: string
  event: string
  /** When the attempt was made; for a pending attempt, when it was scheduled. */
  timestamp: string
  response_status: number | null
  /** The first 4 KB of the receiver's response body. */
  response_body: string | null
  latency_ms: number | null
  /** 0 for the first attempt, 1 to 5 for the retries. */
  retry_count: number
  outcome: 'pending' | 'delivered' | 'failed'
  /** Only while pending: when the attempt will be made. */
  next_attempt_at: string | null
  /** Why the attempt failed (status, timeout, refused address ...). */
  error: string | null
  /** The state of the whole delivery: pending until delivered or given up. */
  delivery_status: 'pending' | 'delivered' | 'failed'
  /** Set on a manual redelivery: the delivery it repeats. */
  redelivery_of: string | null
}

export interface QueuedDeliveryView {
  delivery_id: string
  event: string
  outcome: 'pending'
  redelivery_of: string | null
}

type SubscriptionRow = typeof webhookSubscriptions.$inferSelect

function view(row: SubscriptionRow): WebhookView {
  return {
    id: row.id,
    label: row.label,
    url: row.url,
    events: row.events as EventType[],
    active: row.active,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** Checks a receiver URL: http(s), resolving only to addresses the outbound policy allows (422 otherwise). */
async function checkUrl(deps: Deps, raw: string): Promise<string> {
  try {
    const url = parseOutboundUrl(raw.trim())
    await resolveTarget(url, { allowPrivate: deps.config.outboundAllowPrivate }, AbortSignal.timeout(5_000))
    return raw.trim()
  } catch (err) {
    if (err instanceof OutboundError) throw validationFailed({ url: [err.message] })
    throw err
  }
}

function parseId(raw: string): number | null {
  return /^[1-9][0-9]{0,9}$/.test(raw) && Number(raw) <= 2_147_483_647 ? Number(raw) : null
}

async function requireSubscription(deps: Deps, access: SpaceAccess, rawId: string): Promise<SubscriptionRow> {
  const id = parseId(rawId)
  if (id === null) throw notFound('Webhook')
  const [row] = await deps.db.db
    .select()
    .from(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.id, id), eq(webhookSubscriptions.spaceId, access.space.id)))
    .limit(1)
  if (!row) throw notFound('Webhook')
  return row
}

const newSecret = () => randomSecret('whsec_')

export async function createWebhook(
  deps: Deps,
  access: SpaceAccess,
  input: { label: string; url: string; events: EventType[]; active?: boolean },
): Promise<WebhookView & { secret: string }> {
  const url = await checkUrl(deps, input.url)
  const secret = newSecret()
  const now = deps.clock.now()
  const [row] = await deps.db.db
    .insert(webhookSubscriptions)
    .values({
      spaceId: access.space.id,
      label: input.label,
      url,
      events: [...new Set(input.events)],
      active: input.active ?? true,
      secretSealed: deps.secrets.seal(secret, SECRET_CONTEXT),
      createdAt: now,
      updatedAt: now,
    })
    .returning()
  return { ...view(row), secret }
}

export async function listWebhooks(deps: Deps, access: SpaceAccess): Promise<WebhookView[]> {
  const rows = await deps.db.db
    .select()
    .from(webhookSubscriptions)
    .where(eq(webhookSubscriptions.spaceId, access.space.id))
    .orderBy(desc(webhookSubscriptions.createdAt), desc(webhookSubscriptions.id))
  return rows.map(view)
}

export async function getWebhook(deps: Deps, access: SpaceAccess, id: string): Promise<WebhookView> {
  return view(await requireSubscription(deps, access, id))
}

export async function updateWebhook(
  deps: Deps,
  access: SpaceAccess,
  id: string,
  input: { label?: string; url?: string; events?: EventType[]; active?: boolean },
): Promise<WebhookView> {
  const current = await requireSubscription(deps, access, id)
  const patch: Partial<typeof webhookSubscriptions.$inferInsert> = { updatedAt: deps.clock.now() }
  if (input.label !== undefined) patch.label = input.label
  if (input.url !== undefined) patch.url = await checkUrl(deps, input.url)
  if (input.events !== undefined) patch.events = [...new Set(input.events)]
  if (input.active !== undefined) patch.active = input.active
  const [row] = await deps.db.db
    .update(webhookSubscriptions)
    .set(patch)
    .where(eq(webhookSubscriptions.id, current.id))
    .returning()
  if (!row) throw notFound('Webhook')
  return view(row)
}

/** Removes the subscription with its delivery log; its pending deliveries are cancelled. */
export async function deleteWebhook(deps: Deps, access: SpaceAccess, id: string): Promise<void> {
  const current = await requireSubscription(deps, access, id)
  await deps.db.db.transaction(async (tx) => {
    const pending = await tx
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.subscriptionId, current.id), eq(webhookDeliveries.status, 'pending')))
    await deps.jobs.cancel(
      tx,
      DELIVERY_QUEUE,
      pending.map((p) => p.id),
    )
    await tx.delete(webhookSubscriptions).where(eq(webhookSubscriptions.id, current.id))
  })
}

/** A new signing secret, shown this once; deliveries from now on are signed with it. */
export async function rotateWebhookSecret(deps: Deps, access: SpaceAccess, id: string): Promise<WebhookView & { secret: string }> {
  const current = await requireSubscription(deps, access, id)
  const secret = newSecret()
  const [row] = await deps.db.db
    .update(webhookSubscriptions)
    .set({ secretSealed: deps.secrets.seal(secret, SECRET_CONTEXT), updatedAt: deps.clock.now() })
    .where(eq(webhookSubscriptions.id, current.id))
    .returning()
  return { ...view(row), secret }
}

export async function listDeliveries(deps: Deps, access: SpaceAccess, id: string, limit = 50): Promise<DeliveryAttemptView[]> {
  const sub = await requireSubscription(deps, access, id)
  const rows = await deps.db.db
    .select({ attempt: webhookAttempts, delivery: webhookDeliveries })
    .from(webhookAttempts)
    .innerJoin(webhookDeliveries, eq(webhookDeliveries.id, webhookAttempts.deliveryId))
    .where(eq(webhookAttempts.subscriptionId, sub.id))
    .orderBy(desc(webhookAttempts.loggedAt), desc(webhookAttempts.id))
    .limit(Math.min(Math.max(1, limit), 200))
  return rows.map(({ attempt: a, delivery: d }) => ({
    id: a.id,
    delivery_id: d.id,
    event: d.event,
    timestamp: (a.attemptedAt ?? a.loggedAt).toISOString(),
    response_status: a.responseStatus,
    response_body: a.responseBody,
    latency_ms: a.latencyMs,
    retry_count: a.retry,
    outcome: a.outcome,
    next_attempt_at: a.outcome === 'pending' ? (a.nextAttemptAt?.toISOString() ?? null) : null,
    error: a.error,
    delivery_status: d.status,
    redelivery_of: d.redeliveryOf,
  }))
}

/** Sends a past delivery again, as a new delivery (new X-Service-Delivery id, fresh retries) of the same event. */
export async function redeliver(deps: Deps, access: SpaceAccess, id: string, deliveryId: string): Promise<QueuedDeliveryView> {
  const sub = await requireSubscription(deps, access, id)
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(deliveryId)) throw notFound('Delivery')
  const [original] = await deps.db.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, deliveryId.toLowerCase()), eq(webhookDeliveries.subscriptionId, sub.id)))
    .limit(1)
  if (!original) throw notFound('Delivery')
  const [newId] = await deps.db.db.transaction((tx) =>
    createDeliveries(deps, tx, [
      {
        subscriptionId: sub.id,
        spaceId: sub.spaceId,
        kind: 'redelivery',
        event: original.event,
        eventId: original.eventId,
        payload: original.payload as Record<string, unknown>,
        redeliveryOf: original.id,
      },
    ]),
  )
  return { delivery_id: newId, event: original.event, outcome: 'pending', redelivery_of: original.id }
}

/** Queues a `ping` delivery, which shows whether the receiver is reachable and verifies signatures. */
export async function pingWebhook(deps: Deps, access: SpaceAccess, id: string): Promise<QueuedDeliveryView> {
  const sub = await requireSubscription(deps, access, id)
  const [newId] = await deps.db.db.transaction((tx) =>
    createDeliveries(deps, tx, [
      {
        subscriptionId: sub.id,
        spaceId: sub.spaceId,
        kind: 'ping',
        event: 'ping',
        eventId: null,
        payload: { webhook: { id: sub.id, label: sub.label, events: sub.events } },
      },
    ]),
  )
  return { delivery_id: newId, event: 'ping', outcome: 'pending', redelivery_of: null }
}
