import { ICalCalendar, ICalEventStatus } from 'ical-generator'
import { tzlib_get_ical_block } from 'timezones-ical-library'
import { pick } from './mails'
import type { LocationView } from './model'
import type { EventRow } from './views'

interface ZonedDateTime {
  readonly timeZoneId: string
}
interface TemporalNs {
  Instant: { fromEpochMilliseconds(ms: number): { toZonedDateTimeISO(tz: string): ZonedDateTime } }
}
// Bun ships Temporal; ical-generator writes a ZonedDateTime as local time with its TZID (a native Date would be
// written with its UTC fields under the TZID, i.e. shifted).
const Temporal = (globalThis as unknown as { Temporal: TemporalNs }).Temporal

export interface IcsInput {
  uid: string
  sequence: number
  stamp: Date
  start: Date
  end: Date
  timezone: string
  summary: string
  description: string | null
  location: string | null
  url: string
  status: 'confirmed' | 'waitlisted' | 'cancelled'
}

/**
 * One VEVENT (RFC 5545) through ical-generator: DTSTART/DTEND in the event's TZID with its VTIMEZONE (from
 * timezones-ical-library, the IANA database as iCalendar rules), a stable UID per event, SEQUENCE from the event.
 * A waitlisted registration reads TENTATIVE, a cancelled one CANCELLED.
 */
export function icsFile(e: IcsInput): string {
  const cal = new ICalCalendar({ prodId: { company: 'Content Service', product: 'Events', language: 'EN' } })
  cal.timezone({ name: null, generator: (tz) => String((tzlib_get_ical_block(tz) as string[])[0]) })
  const zoned = (d: Date) => Temporal.Instant.fromEpochMilliseconds(d.getTime()).toZonedDateTimeISO(e.timezone)
  cal.createEvent({
    id: e.uid,
    sequence: e.sequence,
    stamp: e.stamp,
    start: zoned(e.start) as never,
    end: zoned(e.end) as never,
    timezone: e.timezone,
    summary: e.summary,
    description: e.description ?? undefined,
    location: e.location ?? undefined,
    url: e.url,
    status: e.status === 'cancelled' ? ICalEventStatus.CANCELLED : e.status === 'waitlisted' ? ICalEventStatus.TENTATIVE : ICalEventStatus.CONFIRMED,
  })
  return cal.toString()
}

/** An event as one VEVENT in the first language of `chain` that has a title; `status` as the registration's. */
export function eventIcs(event: EventRow, spaceSlug: string, chain: string[], base: string, status: 'confirmed' | 'waitlisted' | 'cancelled'): string {
  const title = pick(event.title as Record<string, string>, chain)
  const descriptions = event.description as Record<string, string>
  const loc = event.location as LocationView
  const host = new URL(base).hostname || 'content-service'
  return icsFile({
    uid: `${event.uuid}@${host}`,
    sequence: event.sequence,
    stamp: event.updatedAt,
    start: event.startsAt,
    end: event.endsAt,
    timezone: event.timezone,
    summary: title.text ?? event.slug,
    description: (title.lang && descriptions[title.lang]) || pick(descriptions, chain).text,
    location: [loc.name, loc.address].filter(Boolean).join(', ') || null,
    url: `${base}/v1/cdn/${spaceSlug}/events/${event.slug}`,
    status,
  })
}
