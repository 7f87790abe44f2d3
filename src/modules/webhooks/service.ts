import { and, desc, eq } from 'drizzle-orm'
import { webhookAttempts, webhookDeliveries, webhookSubscriptions } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { randomSecret } from '../../kernel/crypto'
import { notFound } from '../../kernel/errors'
import type { Kernel } from '../../kernel/kernel'
import { checkReceiverUrl } from '../../kernel/outbound'
import { createDeliveries, DELIVERY_QUEUE, SECRET_CONTEXT } from './delivery'
import type { DeliveryAttemptView, QueuedDeliveryView, WebhookView } from './model'

type SubscriptionRow = typeof webhookSubscriptions.$inferSelect

function view(row: SubscriptionRow): WebhookView {
  return {
    id: row.id,
    label: row.label,
    url: row.url,
    events: row.events,
    active: row.active,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

function parseId(raw: string): number | null {
  return /^[1-9][0-9]{0,9}$/.test(raw) && Number(raw) <= 2_147_483_647 ? Number(raw) : null
}

async function requireSubscription(kernel: Kernel, access: SpaceAccess, rawId: string): Promise<SubscriptionRow> {
  const id = parseId(rawId)
  if (id === null) throw notFound('Webhook')
  const [row] = await kernel.db.db
    .select()
    .from(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.id, id), eq(webhookSubscriptions.spaceId, access.space.id)))
    .limit(1)
  if (!row) throw notFound('Webhook')
  return row
}

const newSecret = () => randomSecret('whsec_')

export async function createWebhook(
  kernel: Kernel,
  access: SpaceAccess,
  input: { label: string; url: string; events: string[]; active?: boolean },
): Promise<WebhookView & { secret: string }> {
  const url = await checkReceiverUrl(input.url, { allowPrivate: kernel.config.outboundAllowPrivate })
  const secret = newSecret()
  const now = kernel.clock.now()
  const [row] = await kernel.db.db
    .insert(webhookSubscriptions)
    .values({
      spaceId: access.space.id,
      label: input.label,
      url,
      events: [...new Set(input.events)],
      active: input.active ?? true,
      secretSealed: kernel.secrets.seal(secret, SECRET_CONTEXT),
      createdAt: now,
      updatedAt: now,
    })
    .returning()
  return { ...view(row), secret }
}

export async function listWebhooks(kernel: Kernel, access: SpaceAccess): Promise<WebhookView[]> {
  const rows = await kernel.db.db
    .select()
    .from(webhookSubscriptions)
    .where(eq(webhookSubscriptions.spaceId, access.space.id))
    .orderBy(desc(webhookSubscriptions.createdAt), desc(webhookSubscriptions.id))
  return rows.map(view)
}

export async function getWebhook(kernel: Kernel, access: SpaceAccess, id: string): Promise<WebhookView> {
  return view(await requireSubscription(kernel, access, id))
}

export async function updateWebhook(
  kernel: Kernel,
  access: SpaceAccess,
  id: string,
  input: { label?: string; url?: string; events?: string[]; active?: boolean },
): Promise<WebhookView> {
  const current = await requireSubscription(kernel, access, id)
  const patch: Partial<typeof webhookSubscriptions.$inferInsert> = { updatedAt: kernel.clock.now() }
  if (input.label !== undefined) patch.label = input.label
  if (input.url !== undefined) patch.url = await checkReceiverUrl(input.url, { allowPrivate: kernel.config.outboundAllowPrivate })
  if (input.events !== undefined) patch.events = [...new Set(input.events)]
  if (input.active !== undefined) patch.active = input.active
  const [row] = await kernel.db.db
    .update(webhookSubscriptions)
    .set(patch)
    .where(eq(webhookSubscriptions.id, current.id))
    .returning()
  if (!row) throw notFound('Webhook')
  return view(row)
}

/** Removes the subscription with its delivery log; its pending deliveries are cancelled. */
export async function deleteWebhook(kernel: Kernel, access: SpaceAccess, id: string): Promise<void> {
  const current = await requireSubscription(kernel, access, id)
  await kernel.db.db.transaction(async (tx) => {
    const pending = await tx
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.subscriptionId, current.id), eq(webhookDeliveries.status, 'pending')))
    await kernel.jobs.cancel(
      tx,
      DELIVERY_QUEUE,
      pending.map((p) => p.id),
    )
    await tx.delete(webhookSubscriptions).where(eq(webhookSubscriptions.id, current.id))
  })
}

/** A new signing secret, shown this once; deliveries from now on are signed with it. */
export async function rotateWebhookSecret(kernel: Kernel, access: SpaceAccess, id: string): Promise<WebhookView & { secret: string }> {
  const current = await requireSubscription(kernel, access, id)
  const secret = newSecret()
  const [row] = await kernel.db.db
    .update(webhookSubscriptions)
    .set({ secretSealed: kernel.secrets.seal(secret, SECRET_CONTEXT), updatedAt: kernel.clock.now() })
    .where(eq(webhookSubscriptions.id, current.id))
    .returning()
  return { ...view(row), secret }
}

export async function listDeliveries(kernel: Kernel, access: SpaceAccess, id: string, limit = 50): Promise<DeliveryAttemptView[]> {
  const sub = await requireSubscription(kernel, access, id)
  const rows = await kernel.db.db
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
export async function redeliver(kernel: Kernel, access: SpaceAccess, id: string, deliveryId: string): Promise<QueuedDeliveryView> {
  const sub = await requireSubscription(kernel, access, id)
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(deliveryId)) throw notFound('Delivery')
  const [original] = await kernel.db.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, deliveryId.toLowerCase()), eq(webhookDeliveries.subscriptionId, sub.id)))
    .limit(1)
  if (!original) throw notFound('Delivery')
  const [newId] = await kernel.db.db.transaction((tx) =>
    createDeliveries(kernel, tx, [
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
export async function pingWebhook(kernel: Kernel, access: SpaceAccess, id: string): Promise<QueuedDeliveryView> {
  const sub = await requireSubscription(kernel, access, id)
  const [newId] = await kernel.db.db.transaction((tx) =>
    createDeliveries(kernel, tx, [
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
