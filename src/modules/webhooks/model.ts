import { t } from 'elysia'
import type { EventCatalog } from '../../kernel/events'
import { Timestamp, Int, IntId, intString, NullableTimestamp, oneOf, SpaceSlug } from '../../kernel/schemas'

const Label = t.String({ minLength: 1, maxLength: 200, error: 'is required (1 to 200 characters)' })
const Url = t.String({ minLength: 1, maxLength: 2048, error: 'must be an http or https URL (at most 2048 characters)' })

/** Bodies that name events: built from the catalog of public events the modules declare. */
export function webhookBodies(catalog: EventCatalog) {
  const names = catalog.publicTypes()
  const list = names.join(', ')
  const Event = oneOf(names as [string, ...string[]], { error: `must be one of: ${list}` })
  const Events = t.Array(Event, { minItems: 1, maxItems: 32, error: `must be a non-empty list of event names from: ${list}` })
  return {
    CreateWebhookBody: t.Object({
      label: Label,
      url: Url,
      events: Events,
      active: t.Optional(t.Boolean({ error: 'must be true or false' })),
    }),
    UpdateWebhookBody: t.Object({
      label: t.Optional(Label),
      url: t.Optional(Url),
      events: t.Optional(Events),
      active: t.Optional(t.Boolean({ error: 'must be true or false' })),
    }),
  }
}

export const WebhookParams = t.Object({ space: SpaceSlug, id: IntId })
export const DeliveryParams = t.Object({ space: SpaceSlug, id: IntId, deliveryId: t.String({ maxLength: 64 }) })

export const DeliveriesQuery = t.Object({
  limit: t.Optional(intString(1, 200, { description: 'Entries, 1 to 200 (default 50)' })),
})

export const WebhookModel = t.Object({
  id: Int(),
  label: t.String(),
  url: t.String(),
  events: t.Array(t.String()),
  active: t.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
})
export type WebhookView = typeof WebhookModel.static

export const WebhookWithSecretModel = t.Composite([
  WebhookModel,
  t.Object({ secret: t.String({ description: 'The HMAC signing secret: shown this once (create and rotate-secret)' }) }),
])

export const DeliveryAttemptModel = t.Object({
  id: Int({ description: 'The log entry (one attempt, made or scheduled)' }),
  delivery_id: t.String({ description: 'X-Service-Delivery: the same for every attempt of one delivery' }),
  event: t.String(),
  timestamp: Timestamp,
  response_status: t.Union([Int(), t.Null()]),
  response_body: t.Union([t.String(), t.Null()], { description: "The first 4 KB of the receiver's response body" }),
  latency_ms: t.Union([Int(), t.Null()]),
  retry_count: Int({ description: '0 for the first attempt, 1 to 5 for the retries' }),
  outcome: oneOf(['pending', 'delivered', 'failed']),
  next_attempt_at: NullableTimestamp,
  error: t.Union([t.String(), t.Null()]),
  delivery_status: oneOf(['pending', 'delivered', 'failed']),
  redelivery_of: t.Union([t.String(), t.Null()]),
})
export type DeliveryAttemptView = typeof DeliveryAttemptModel.static

export const QueuedDeliveryModel = t.Object({
  delivery_id: t.String(),
  event: t.String(),
  outcome: t.Literal('pending'),
  redelivery_of: t.Union([t.String(), t.Null()]),
})
export type QueuedDeliveryView = typeof QueuedDeliveryModel.static
