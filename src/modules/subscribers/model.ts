import { t } from 'elysia'
import { Int, IntId, NullableTimestamp, oneOf, pageQuery, SpaceSlug, Timestamp } from '../../kernel/schemas'

export const SUBSCRIBER_STATUSES = ['pending', 'confirmed', 'unsubscribed'] as const
export type SubscriberStatus = (typeof SUBSCRIBER_STATUSES)[number]

const Name = t.String({ maxLength: 200, error: 'must be at most 200 characters' })
const Lang = t.String({ maxLength: 35, error: 'must be a locale code' })

export const SubscribeBody = t.Object({
  email: t.String({ maxLength: 1000, description: 'The address to confirm (a malformed one: 422)' }),
  name: t.Optional(t.String({ maxLength: 1000 })),
  lang: t.Optional(t.String({ maxLength: 1000 })),
  _hp: t.Optional(t.String({ maxLength: 10_000, description: 'Honeypot: must stay empty' })),
})

export const TokenParams = t.Object({ space: SpaceSlug, token: t.String({ pattern: '^[A-Za-z0-9_-]{43}$', error: 'not a token' }) })
export const SubscriberParams = t.Object({ space: SpaceSlug, id: IntId })

export const SubscriberModel = t.Object({
  id: Int(),
  email: t.String(),
  name: t.Union([t.String(), t.Null()]),
  lang: t.Union([t.String(), t.Null()]),
  status: t.String({ description: 'pending (waiting for confirmation), confirmed, unsubscribed' }),
  source: t.String({ description: 'subscribe (the public form), form (a lead form), admin' }),
  created_at: Timestamp,
  updated_at: Timestamp,
  confirmed_at: NullableTimestamp,
  unsubscribed_at: NullableTimestamp,
})
export type SubscriberView = typeof SubscriberModel.static

export const SubscriberListQuery = t.Composite([
  pageQuery(100, 25),
  t.Object({
    status: t.Optional(oneOf(SUBSCRIBER_STATUSES, { error: 'must be pending, confirmed or unsubscribed' })),
    q: t.Optional(t.String({ maxLength: 200, description: 'Part of the e-mail address or name (case-insensitive)' })),
  }),
])

export const UpdateSubscriberBody = t.Object({
  name: t.Optional(t.Union([Name, t.Null()])),
  lang: t.Optional(t.Union([Lang, t.Null()])),
  status: t.Optional(
    t.Literal('unsubscribed', {
      error: 'can only be set to unsubscribed (confirmation needs the subscriber’s own click)',
      description: 'Only `unsubscribed`: confirming someone takes their own click on the mailed link',
    }),
  ),
})

export const PublicStatusModel = t.Object({ data: t.Object({ ok: t.Boolean(), status: t.String() }) })
export const AcceptedModel = t.Object({ data: t.Object({ ok: t.Boolean() }) })

export const NewsletterSettingsModel = t.Object({
  newsletter_redirect_url: t.Union([t.String(), t.Null()], {
    description: 'Where confirm and unsubscribe links answer 303 (with `?status=confirmed|unsubscribed`); null: they answer JSON',
  }),
})
export const NewsletterSettingsBody = t.Object({
  newsletter_redirect_url: t.Union([t.String({ maxLength: 2000, format: 'uri' }), t.Null()], { error: 'must be an http(s) URL or null' }),
})
