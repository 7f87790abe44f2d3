// Events, the editor's side: create, list, read, replace and delete events; list, cancel and export their
// registrations. The rest lives beside it, named for what it does, and is re-exported here so callers import the
// service from one place: views.ts (rows as the API shows them), registration.ts (registering, cancelling, the
// waitlist), mails.ts (the registration mail and its links).
import { stringify } from 'csv-stringify/sync'
import { and, asc, count, desc, eq, gt, gte, lt, sql, type SQL } from 'drizzle-orm'
import { calendarEvents as events, eventRegistrations } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { safeCell } from '../../kernel/csv'
import { notFound, uniqueAs, validationFailed } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { canonicalLocale } from '../../kernel/locale'
import { localeSettings } from '../spaces/locales'
import { type EventInput, EventErrors, type EventView, type LocationView, type RegistrationStatus } from './model'
import { cancelRegistration, promoteWaitlisted } from './registration'
import { eventIcs } from './ics'
import { compileFields, isTimeZone, parseInstant } from './schema'
import { eventRef, eventView, registrationView } from './views'

export { icsUrl, pick, type SpaceRefLite, whenText } from './mails'
export {
  cancelRegistration,
  type NewRegistration,
  registerGroupInTx,
  registerInTx,
  registrationOpenAt,
  type RegistrationJob,
  type RegistrationOutcome,
  type RegistrationResult,
} from './registration'
export { type EventRow, eventRef, eventView, type RegistrationRow, registrationRef, registrationView } from './views'

// The outer column named with its table: a bare `${events.id}` renders as "id", which inside the subquery is the
// registration's own id (the count was always 0).
const waitlistedCount = sql<number>`(select count(*) from event_registrations r where r.event_id = "calendar_events"."id" and r.status = 'waitlisted')::int`

function httpUrl(raw: string): string | null {
  try {
    const u = new URL(raw.trim())
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null
  } catch {
    return null
  }
}

/** Every rule beyond the body schema; 422 with all problems at once. */
async function checkEvent(kernel: Kernel, spaceId: number, input: EventInput) {
  const errors: Record<string, string[]> = {}
  const add = (k: string, m: string) => (errors[k] ??= []).push(m)
  const { codes } = await localeSettings(kernel.db.db, spaceId)
  const localeMap = (key: string, map: Record<string, string> | undefined) => {
    const out: Record<string, string> = {}
    for (const [code, text] of Object.entries(map ?? {})) {
      const c = canonicalLocale(code)
      if (!c || !codes.includes(c)) add(`${key}/${code}`, `is not a locale of the Space (${codes.join(', ')})`)
      else if (text.trim()) out[c] = text.trim()
    }
    return out
  }
  const title = localeMap('title', input.title)
  if (!Object.keys(title).length && !errors.title) add('title', 'needs a non-empty text in at least one locale')
  const description = localeMap('description', input.description)
  const startsAt = parseInstant(input.starts_at)
  if (!startsAt) add('starts_at', 'must be an ISO 8601 instant with Z or an offset')
  const endsAt = parseInstant(input.ends_at)
  if (!endsAt) add('ends_at', 'must be an ISO 8601 instant with Z or an offset')
  if (startsAt && endsAt && endsAt <= startsAt) add('ends_at', 'must be after starts_at')
  if (!isTimeZone(input.timezone)) add('timezone', 'must be an IANA time zone name, e.g. Europe/Berlin')
  let closesAt: Date | null = null
  if (input.registration_closes_at) {
    closesAt = parseInstant(input.registration_closes_at)
    if (!closesAt) add('registration_closes_at', 'must be an ISO 8601 instant with Z or an offset, or null')
  }
  const location: LocationView = { name: input.location.name.trim(), address: input.location.address?.trim() || null, url: null }
  if (!location.name) add('location/name', 'must not be blank')
  if (input.location.url) {
    location.url = httpUrl(input.location.url)
    if (!location.url) add('location/url', 'must be an http(s) URL')
  }
  const fields = input.fields ?? null
  if (fields) {
    if (fields.type !== 'object') add('fields', 'must be a JSON Schema with type: object')
    else {
      try {
        compileFields(structuredClone(fields))
      } catch (err) {
        add('fields', `is not a valid JSON Schema: ${String((err as Error).message).slice(0, 300)}`)
      }
    }
  }
  if (Object.keys(errors).length) throw validationFailed(errors)
  return {
    slug: input.slug,
    title,
    description,
    startsAt: startsAt!,
    endsAt: endsAt!,
    timezone: input.timezone,
    location,
    capacity: input.capacity ?? null,
    waitlist: input.waitlist ?? false,
    registrationOpen: input.registration_open ?? true,
    registrationClosesAt: closesAt,
    published: input.published ?? false,
    fields,
  }
}

const slugTaken = uniqueAs('calendar_events_space_slug_key', () => EventErrors.slugTaken())

export async function createEvent(kernel: Kernel, access: SpaceAccess, input: EventInput): Promise<EventView> {
  const values = await checkEvent(kernel, access.space.id, input)
  const now = kernel.clock.now()
  const row = await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .insert(events)
      .values({ ...values, uuid: crypto.randomUUID(), spaceId: access.space.id, createdAt: now, updatedAt: now })
      .returning()
    emit({ type: 'event.created', spaceId: access.space.id, payload: { calendar_event: eventRef(row) } })
    return row
  }).catch(slugTaken)
  return eventView(row, 0)
}

export async function listEvents(kernel: Kernel, access: SpaceAccess, q: { page?: number; per_page?: number; when?: 'upcoming' | 'past' }) {
  const page = pageOf(q.page, q.per_page)
  const now = kernel.clock.now()
  const where = and(
    eq(events.spaceId, access.space.id),
    q.when === 'upcoming' ? gte(events.endsAt, now) : q.when === 'past' ? lt(events.endsAt, now) : undefined,
  )
  const [rows, [{ total }]] = await Promise.all([
    kernel.db.db
      .select({ row: events, waitlisted: waitlistedCount })
      .from(events)
      .where(where)
      .orderBy(...(q.when === 'past' ? [desc(events.startsAt), desc(events.id)] : [asc(events.startsAt), asc(events.id)]))
      .limit(page.perPage)
      .offset(page.offset),
    kernel.db.db.select({ total: count() }).from(events).where(where),
  ])
  return { data: rows.map((r) => eventView(r.row, r.waitlisted)), meta: { total: Number(total), page: page.page, per_page: page.perPage } }
}

async function requireEvent(kernel: Kernel, access: SpaceAccess, id: string) {
  const [r] = await kernel.db.db
    .select({ row: events, waitlisted: waitlistedCount })
    .from(events)
    .where(and(eq(events.uuid, id.toLowerCase()), eq(events.spaceId, access.space.id)))
    .limit(1)
  if (!r) throw notFound('Event')
  return r
}

/** The event's calendar file for the editor (in the Space's default language first), whether published or not. */
export async function eventIcsAsEditor(kernel: Kernel, access: SpaceAccess, id: string, base: string): Promise<{ slug: string; ics: string }> {
  const { row } = await requireEvent(kernel, access, id)
  return { slug: row.slug, ics: eventIcs(row, access.space.slug, [access.space.defaultLang], base, 'confirmed') }
}

export async function getEvent(kernel: Kernel, access: SpaceAccess, id: string): Promise<EventView> {
  const r = await requireEvent(kernel, access, id)
  return eventView(r.row, r.waitlisted)
}

/** Replaces the event (PUT); SEQUENCE goes up. More capacity promotes waitlisted registrations (mails sent). */
export async function updateEvent(kernel: Kernel, access: SpaceAccess, id: string, input: EventInput): Promise<EventView> {
  const current = await requireEvent(kernel, access, id)
  const values = await checkEvent(kernel, access.space.id, input)
  const row = await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .update(events)
      .set({ ...values, sequence: sql`${events.sequence} + 1`, updatedAt: kernel.clock.now() })
      .where(eq(events.id, current.row.id))
      .returning()
    emit({ type: 'event.updated', spaceId: access.space.id, payload: { calendar_event: eventRef(row) } })
    await promoteWaitlisted(kernel, tx, emit, row, access.space)
    return row
  }).catch(slugTaken)
  return getEvent(kernel, access, row.uuid)
}

export async function deleteEvent(kernel: Kernel, access: SpaceAccess, id: string): Promise<void> {
  const current = await requireEvent(kernel, access, id)
  await transact(kernel, async (tx, emit) => {
    await tx.delete(events).where(eq(events.id, current.row.id))
    emit({ type: 'event.deleted', spaceId: access.space.id, payload: { calendar_event: eventRef(current.row) } })
  })
}

// ---- registrations ----

export async function listRegistrations(
  kernel: Kernel,
  access: SpaceAccess,
  id: string,
  q: { page?: number; per_page?: number; status?: RegistrationStatus },
) {
  const { row: event } = await requireEvent(kernel, access, id)
  const page = pageOf(q.page, q.per_page)
  const parts: SQL[] = [eq(eventRegistrations.eventId, event.id)]
  if (q.status) parts.push(eq(eventRegistrations.status, q.status))
  const where = and(...parts)
  const [rows, [{ total }]] = await Promise.all([
    kernel.db.db.select().from(eventRegistrations).where(where).orderBy(asc(eventRegistrations.id)).limit(page.perPage).offset(page.offset),
    kernel.db.db.select({ total: count() }).from(eventRegistrations).where(where),
  ])
  return { data: rows.map(registrationView), meta: { total: Number(total), page: page.page, per_page: page.perPage } }
}

/** An editor cancels a registration (idempotent); a confirmed spot goes to the first in line. */
export async function cancelRegistrationAsEditor(kernel: Kernel, access: SpaceAccess, id: string, registrationId: string) {
  const { row: event } = await requireEvent(kernel, access, id)
  const [reg] = await kernel.db.db
    .select({ id: eventRegistrations.id })
    .from(eventRegistrations)
    .where(and(eq(eventRegistrations.uuid, registrationId.toLowerCase()), eq(eventRegistrations.eventId, event.id)))
    .limit(1)
  if (!reg) throw notFound('Registration')
  const row = await cancelRegistration(kernel, reg.id, 'editor', { id: access.space.id, slug: access.space.slug, name: access.space.name })
  return registrationView(row)
}

export const CSV_BATCH = 1000

const cellOf = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v))

/**
 * The registrations export, streamed in batches of 1000 read by id: id, status, name, email, lang, registered_at,
 * promoted_at, cancelled_at, then one column per property of the event's `fields` schema. UTF-8 with BOM, RFC 4180
 * (csv-stringify), CRLF; text cells beginning with = + - @, tab or CR get a leading apostrophe.
 */
export async function registrationsCsv(kernel: Kernel, access: SpaceAccess, id: string): Promise<{ slug: string; stream: ReadableStream<Uint8Array> }> {
  const { row: event } = await requireEvent(kernel, access, id)
  const schema = event.fields as { properties?: Record<string, unknown> } | null
  const keys = schema?.properties && typeof schema.properties === 'object' ? Object.keys(schema.properties) : []
  const enc = new TextEncoder()
  const opts = { record_delimiter: 'windows' as const }
  let lastId = 0
  let started = false
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true
        const header = ['id', 'status', 'name', 'email', 'lang', 'registered_at', 'promoted_at', 'cancelled_at', ...keys.map((k) => safeCell(k))]
        controller.enqueue(enc.encode(`\uFEFF${stringify([header], opts)}`))
        return
      }
      const rows = await kernel.db.db
        .select()
        .from(eventRegistrations)
        .where(and(eq(eventRegistrations.eventId, event.id), gt(eventRegistrations.id, lastId)))
        .orderBy(asc(eventRegistrations.id))
        .limit(CSV_BATCH)
      if (!rows.length) return controller.close()
      lastId = rows[rows.length - 1].id
      const records = rows.map((r) => {
        const f = r.fields as Record<string, unknown>
        return [
          r.uuid,
          r.status,
          safeCell(r.name),
          safeCell(r.email),
          r.lang ?? '',
          r.createdAt.toISOString(),
          r.promotedAt?.toISOString() ?? '',
          r.cancelledAt?.toISOString() ?? '',
          ...keys.map((k) => safeCell(cellOf(f[k]))),
        ]
      })
      controller.enqueue(enc.encode(stringify(records, opts)))
    },
  })
  return { slug: event.slug, stream }
}
