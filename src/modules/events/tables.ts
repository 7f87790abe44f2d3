import { sql } from 'drizzle-orm'
import { boolean, index, integer, jsonb, pgTable, serial, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { spaces } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * An event of a Space (issue 30): title and description are locale maps, times are instants (UTC) shown in the
 * event's IANA `timezone`. `confirmed_count` is the number of confirmed registrations, kept in the row so capacity is
 * checked by one conditional update (a row lock) in the registering transaction. `sequence` is the ICS SEQUENCE,
 * bumped on every change of the event.
 */
export const calendarEvents = pgTable(
  'calendar_events',
  {
    id: serial('id').primaryKey(),
    uuid: uuid('uuid').notNull(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    title: jsonb('title').notNull(),
    description: jsonb('description').notNull(),
    startsAt: ts('starts_at').notNull(),
    endsAt: ts('ends_at').notNull(),
    timezone: text('timezone').notNull(),
    location: jsonb('location').notNull(),
    capacity: integer('capacity'),
    waitlist: boolean('waitlist').notNull().default(false),
    registrationOpen: boolean('registration_open').notNull(),
    registrationClosesAt: ts('registration_closes_at'),
    published: boolean('published').notNull(),
    fields: jsonb('fields'),
    confirmedCount: integer('confirmed_count').notNull().default(0),
    sequence: integer('sequence').notNull().default(0),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('calendar_events_uuid_key').on(t.uuid),
    uniqueIndex('calendar_events_space_slug_key').on(t.spaceId, t.slug),
    index('calendar_events_space_starts_idx').on(t.spaceId, t.startsAt),
  ],
)

/**
 * A registration: confirmed, waitlisted (in line by id) or cancelled. One live (not cancelled) registration per
 * event and e-mail address.
 */
export const eventRegistrations = pgTable(
  'event_registrations',
  {
    id: serial('id').primaryKey(),
    uuid: uuid('uuid').notNull(),
    eventId: integer('event_id')
      .notNull()
      .references(() => calendarEvents.id, { onDelete: 'cascade' }),
    spaceId: integer('space_id').notNull(),
    name: text('name').notNull(),
    email: text('email').notNull(),
    fields: jsonb('fields').notNull(),
    lang: text('lang'),
    status: text('status', { enum: ['confirmed', 'waitlisted', 'cancelled'] }).notNull(),
    createdAt: ts('created_at').notNull(),
    promotedAt: ts('promoted_at'),
    cancelledAt: ts('cancelled_at'),
  },
  (t) => [
    uniqueIndex('event_registrations_uuid_key').on(t.uuid),
    uniqueIndex('event_registrations_live_email_key').on(t.eventId, t.email).where(sql`status <> 'cancelled'`),
    index('event_registrations_event_idx').on(t.eventId, t.id),
  ],
)

/**
 * Capability tokens of a registration, SHA-256 only: `ics` (the calendar file) and `cancel` (the cancel link). Each
 * mail carries new ones; earlier ones keep working.
 */
export const eventRegistrationTokens = pgTable(
  'event_registration_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    registrationId: integer('registration_id')
      .notNull()
      .references(() => eventRegistrations.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['ics', 'cancel'] }).notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('event_registration_tokens_registration_idx').on(t.registrationId)],
)
