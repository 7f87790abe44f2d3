import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { Int, NullableTimestamp, oneOf, pageQuery, SpaceSlug, Timestamp, Uuid } from '../../kernel/schemas'

export const EVENT_SLUG_PATTERN = '^[a-z0-9][a-z0-9-]{0,99}$'
export const REGISTRATION_STATUSES = ['confirmed', 'waitlisted', 'cancelled'] as const
export type RegistrationStatus = (typeof REGISTRATION_STATUSES)[number]

export const EventErrors = {
  slugTaken: defineError('slug_taken', 409, 'Another event of the Space has this slug.'),
  eventFull: defineError('event_full', 409, 'The event has no spots left (and no waitlist).'),
  alreadyRegistered: defineError('already_registered', 409, 'This e-mail address is already registered (or waitlisted) for the event.'),
  registrationClosed: defineError(
    'registration_closed',
    422,
    'Registration is closed: switched off, past registration_closes_at, or the event has started.',
  ),
}

const LocaleMap = (what: string, max: number) =>
  t.Record(t.String({ maxLength: 35 }), t.String({ maxLength: max }), {
    maxProperties: 200,
    description: `${what}: locale code (a locale of the Space) → text, at most ${max.toLocaleString('en-US')} characters`,
  })

export const Location = t.Object({
  name: t.String({ minLength: 1, maxLength: 300, error: 'must be 1 to 300 characters' }),
  address: t.Optional(t.Union([t.String({ maxLength: 1000 }), t.Null()])),
  url: t.Optional(t.Union([t.String({ maxLength: 2000 }), t.Null()], { description: 'http(s) URL' })),
})
export type LocationView = { name: string; address: string | null; url: string | null }

export const EventBody = t.Object({
  slug: t.String({ pattern: EVENT_SLUG_PATTERN, error: 'must match ^[a-z0-9][a-z0-9-]{0,99}$' }),
  title: LocaleMap('Title (at least one)', 300),
  description: t.Optional(LocaleMap('Description', 20_000)),
  starts_at: t.String({ maxLength: 64, description: 'ISO 8601 instant with an offset or Z, e.g. 2026-06-01T18:00:00+02:00' }),
  ends_at: t.String({ maxLength: 64, description: 'ISO 8601 instant, after starts_at' }),
  timezone: t.String({ maxLength: 64, description: 'IANA time zone name (e.g. Europe/Berlin): how the times are shown and what the ICS file names' }),
  location: Location,
  capacity: t.Optional(t.Union([Int({ minimum: 1, maximum: 1_000_000, error: 'must be an integer from 1 to 1,000,000 or null' }), t.Null()], { description: 'null (default): unlimited' })),
  waitlist: t.Optional(t.Boolean({ description: 'Default false. true: a full event takes registrations as `waitlisted`; a cancellation promotes the first in line' })),
  registration_open: t.Optional(t.Boolean({ description: 'Default true' })),
  registration_closes_at: t.Optional(t.Union([t.String({ maxLength: 64 }), t.Null()], { description: 'ISO 8601 instant; registration also closes when the event starts' })),
  published: t.Optional(t.Boolean({ description: 'Default false: only published events are public' })),
  fields: t.Optional(
    t.Union([t.Record(t.String(), t.Unknown()), t.Null()], {
      description: 'JSON Schema (draft 2020-12, `type: object`) for the extra registration `fields`; validated with Ajv',
    }),
  ),
  // Read-only fields a client may send back from a GET: ignored.
  id: t.Optional(t.String({ maxLength: 64, description: 'Read-only; ignored' })),
  sequence: t.Optional(t.Unknown({ description: 'Read-only; ignored' })),
  confirmed_count: t.Optional(t.Unknown({ description: 'Read-only; ignored' })),
  waitlisted_count: t.Optional(t.Unknown({ description: 'Read-only; ignored' })),
  created_at: t.Optional(t.Unknown({ description: 'Read-only; ignored' })),
  updated_at: t.Optional(t.Unknown({ description: 'Read-only; ignored' })),
})
export type EventInput = typeof EventBody.static

export const EventModel = t.Object({
  id: t.String({ description: 'uuid' }),
  slug: t.String(),
  title: t.Record(t.String(), t.String()),
  description: t.Record(t.String(), t.String()),
  starts_at: Timestamp,
  ends_at: Timestamp,
  timezone: t.String(),
  location: t.Object({ name: t.String(), address: t.Union([t.String(), t.Null()]), url: t.Union([t.String(), t.Null()]) }),
  capacity: t.Union([Int(), t.Null()]),
  waitlist: t.Boolean(),
  registration_open: t.Boolean({ description: 'The switch as set (the public answer says whether registration is open now)' }),
  registration_closes_at: NullableTimestamp,
  published: t.Boolean(),
  fields: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
  confirmed_count: Int(),
  waitlisted_count: Int(),
  sequence: Int({ description: 'ICS SEQUENCE: bumped on every change' }),
  created_at: Timestamp,
  updated_at: Timestamp,
})
export type EventView = typeof EventModel.static

export const EventParams = t.Object({ space: SpaceSlug, id: Uuid })
export const RegistrationParams = t.Object({ space: SpaceSlug, id: Uuid, registrationId: Uuid })
export const EventListQuery = t.Composite([
  pageQuery(100, 25),
  t.Object({
    when: t.Optional(
      oneOf(['upcoming', 'past'] as const, {
        error: 'must be upcoming or past',
        description: '`upcoming`: not ended yet (ends_at ≥ now), soonest start first; `past`: ended, latest start first. Left out: all, soonest start first',
      }),
    ),
  }),
])
export const RegistrationListQuery = t.Composite([
  pageQuery(100, 25),
  t.Object({ status: t.Optional(oneOf(REGISTRATION_STATUSES, { error: 'must be confirmed, waitlisted or cancelled' })) }),
])

export const RegistrationModel = t.Object({
  id: t.String({ description: 'uuid' }),
  name: t.String(),
  email: t.String(),
  fields: t.Record(t.String(), t.Unknown()),
  lang: t.Union([t.String(), t.Null()]),
  status: t.String({ description: 'confirmed, waitlisted or cancelled' }),
  created_at: Timestamp,
  promoted_at: NullableTimestamp,
  cancelled_at: NullableTimestamp,
})
export type RegistrationView = typeof RegistrationModel.static

// ---- public ----

export const PublicEventParams = t.Object({ space: SpaceSlug, slug: t.String({ pattern: EVENT_SLUG_PATTERN }) })
export const TokenParams = t.Object({
  space: SpaceSlug,
  slug: t.String({ pattern: EVENT_SLUG_PATTERN }),
  token: t.String({ pattern: '^[A-Za-z0-9_-]{43}$' }),
})
export const IcsParams = t.Object({
  space: SpaceSlug,
  slug: t.String({ pattern: EVENT_SLUG_PATTERN }),
  icsToken: t.String({ pattern: '^[A-Za-z0-9_-]{43}(?:\\.ics)?$' }),
})
export const PublicListQuery = t.Composite([
  pageQuery(100, 20),
  t.Object({
    from: t.Optional(t.String({ maxLength: 64, description: 'ISO 8601 date or instant: events ending at or after it (default: now, i.e. upcoming and running)' })),
    to: t.Optional(t.String({ maxLength: 64, description: 'ISO 8601 date or instant: events starting before it' })),
    lang: t.Optional(t.String({ maxLength: 35, description: 'BCP-47 tag; a fallback chain applies' })),
  }),
])
export const PublicDetailQuery = t.Object({ lang: t.Optional(t.String({ maxLength: 35, description: 'BCP-47 tag; a fallback chain applies' })) })

export const PublicEventModel = t.Object({
  slug: t.String(),
  lang: t.String({ description: 'The locale the title and description were taken from (first of the chain that has a title)' }),
  title: t.String(),
  description: t.Union([t.String(), t.Null()]),
  starts_at: Timestamp,
  ends_at: Timestamp,
  timezone: t.String(),
  location: t.Object({ name: t.String(), address: t.Union([t.String(), t.Null()]), url: t.Union([t.String(), t.Null()]) }),
  capacity: t.Union([Int(), t.Null()]),
  spots_left: t.Union([Int(), t.Null()], { description: 'null when unlimited' }),
  waitlist: t.Boolean(),
  registration_open: t.Boolean({ description: 'Whether a registration would be taken now (switch, closing time, start)' }),
  registration_closes_at: NullableTimestamp,
  fields: t.Union([t.Record(t.String(), t.Unknown()), t.Null()], { description: 'JSON Schema of the extra registration fields' }),
})
export type PublicEventView = typeof PublicEventModel.static

export const PublicEventList = t.Object({ data: t.Array(PublicEventModel), meta: t.Object({ total: Int(), page: Int(), per_page: Int() }) })

export const RegisterBody = t.Object({
  name: t.String({ maxLength: 200, description: '1 to 200 characters after trimming' }),
  email: t.String({ maxLength: 254 }),
  fields: t.Optional(t.Record(t.String(), t.Unknown(), { description: 'Extra values, validated with the event’s `fields` schema' })),
  lang: t.Optional(t.String({ maxLength: 35, description: 'Language of the mails (default: ?lang / Accept-Language / the Space default)' })),
  _hp: t.Optional(t.String({ maxLength: 10_000, description: 'Honeypot: must stay empty' })),
})
export const RegisterAccepted = t.Object({
  data: t.Object({
    registration: t.Object({ id: t.String(), status: t.String({ description: 'confirmed or waitlisted' }) }),
    ics_url: t.String({ description: 'The registration’s calendar file (a capability URL: keep it private)' }),
  }),
})
export const HoneypotAnswer = t.Object({ ok: t.Boolean() })
export const CancelAnswer = t.Object({ data: t.Object({ ok: t.Boolean(), status: t.String({ description: 'cancelled' }) }) })
