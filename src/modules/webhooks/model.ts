import { t } from 'elysia'
import { EVENT_TYPES } from '../../kernel/events'

const eventList = EVENT_TYPES.join(', ')

const Event = t.UnionEnum([...EVENT_TYPES], { error: `must be one of: ${eventList}` })
const Label = t.String({ minLength: 1, maxLength: 200, error: 'is required (1 to 200 characters)' })
const Url = t.String({ minLength: 1, maxLength: 2048, error: 'must be an http or https URL (at most 2048 characters)' })
const Events = t.Array(Event, {
  minItems: 1,
  maxItems: 32,
  error: `must be a non-empty list of event names from: ${eventList}`,
})

export const CreateWebhookBody = t.Object({
  label: Label,
  url: Url,
  events: Events,
  active: t.Optional(t.Boolean({ error: 'must be true or false' })),
})

export const UpdateWebhookBody = t.Object({
  label: t.Optional(Label),
  url: t.Optional(Url),
  events: t.Optional(Events),
  active: t.Optional(t.Boolean({ error: 'must be true or false' })),
})

export const WebhookParams = t.Object({ space: t.String({ maxLength: 64 }), id: t.String({ maxLength: 32 }) })

export const DeliveryParams = t.Object({
  space: t.String({ maxLength: 64 }),
  id: t.String({ maxLength: 32 }),
  deliveryId: t.String({ maxLength: 64 }),
})

export const DeliveriesQuery = t.Object({
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 200, multipleOf: 1, error: 'must be an integer from 1 to 200' })),
})
