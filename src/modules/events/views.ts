// The rows of events and registrations as the API and the event payloads show them. service.ts re-exports them.
import { calendarEvents as events, eventRegistrations } from './tables'
import type { EventRef, RegistrationRef } from './events'
import type { EventView, LocationView, RegistrationView } from './model'

export type EventRow = typeof events.$inferSelect
export type RegistrationRow = typeof eventRegistrations.$inferSelect

export function eventView(row: EventRow, waitlisted: number): EventView {
  return {
    id: row.uuid,
    slug: row.slug,
    title: row.title as Record<string, string>,
    description: row.description as Record<string, string>,
    starts_at: row.startsAt.toISOString(),
    ends_at: row.endsAt.toISOString(),
    timezone: row.timezone,
    location: row.location as LocationView,
    capacity: row.capacity,
    waitlist: row.waitlist,
    registration_open: row.registrationOpen,
    registration_closes_at: row.registrationClosesAt?.toISOString() ?? null,
    published: row.published,
    fields: (row.fields as Record<string, unknown> | null) ?? null,
    confirmed_count: row.confirmedCount,
    waitlisted_count: waitlisted,
    sequence: row.sequence,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

export function eventRef(row: EventRow): EventRef {
  return {
    id: row.uuid,
    slug: row.slug,
    title: row.title as Record<string, string>,
    starts_at: row.startsAt.toISOString(),
    ends_at: row.endsAt.toISOString(),
    timezone: row.timezone,
  }
}

export const registrationRef = (r: RegistrationRow): RegistrationRef => ({ id: r.uuid, name: r.name, email: r.email, status: r.status })

export function registrationView(r: RegistrationRow): RegistrationView {
  return {
    id: r.uuid,
    name: r.name,
    email: r.email,
    fields: r.fields as Record<string, unknown>,
    lang: r.lang,
    status: r.status,
    created_at: r.createdAt.toISOString(),
    promoted_at: r.promotedAt?.toISOString() ?? null,
    cancelled_at: r.cancelledAt?.toISOString() ?? null,
  }
}
