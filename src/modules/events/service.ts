import { stringify } from 'csv-stringify/sync'
import { and, asc, count, eq, gt, inArray, sql, type SQL } from 'drizzle-orm'
import { calendarEvents as events, eventRegistrations, eventRegistrationTokens } from '../../../db/schema'
import type { SpaceAccess } from '../../kernel/auth'
import { newCapabilityToken } from '../../kernel/crypto'
import { safeCell } from '../../kernel/csv'
import { rowsOf, type Tx } from '../../kernel/db'
import { notFound, uniqueAs, validationFailed } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { canonicalLocale } from '../../kernel/locale'
import { MAIL_QUEUE, type MailMessage } from '../../kernel/mail'
import { localeSettings } from '../spaces/locales'
import type { EventRef, RegistrationRef } from './events'
import { type EventInput, EventErrors, type EventView, type LocationView, type RegistrationStatus, type RegistrationView } from './model'
import { compileFields, isTimeZone, parseInstant } from './schema'

export type EventRow = typeof events.$inferSelect
export type RegistrationRow = typeof eventRegistrations.$inferSelect

const waitlistedCount = sql<number>`(select count(*) from event_registrations r where r.event_id = ${events.id} and r.status = 'waitlisted')::int`

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
const alreadyRegistered: (err: unknown) => never = uniqueAs('event_registrations_live_email_key', () => EventErrors.alreadyRegistered())

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

export async function listEvents(kernel: Kernel, access: SpaceAccess, q: { page?: number; per_page?: number }) {
  const page = pageOf(q.page, q.per_page)
  const where = eq(events.spaceId, access.space.id)
  const [rows, [{ total }]] = await Promise.all([
    kernel.db.db
      .select({ row: events, waitlisted: waitlistedCount })
      .from(events)
      .where(where)
      .orderBy(asc(events.startsAt), asc(events.id))
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

// ---- shared by the public side ----

export interface SpaceRefLite {
  id: number
  slug: string
  name: string
}

/** The first text of `map` along `chain`, else the map's first text. */
export function pick(map: Record<string, string>, chain: string[]): { lang: string | null; text: string | null } {
  for (const c of chain) if (map[c] !== undefined) return { lang: c, text: map[c] }
  const first = Object.keys(map)[0]
  return first === undefined ? { lang: null, text: null } : { lang: first, text: map[first] }
}

/** New ics and cancel tokens of a registration (SHA-256 stored); the clear values go into one mail. */
async function issueTokens(kernel: Kernel, tx: Tx, registrationId: number) {
  const ics = newCapabilityToken()
  const cancel = newCapabilityToken()
  const now = kernel.clock.now()
  await tx.insert(eventRegistrationTokens).values([
    { tokenHash: ics.hash, registrationId, kind: 'ics', createdAt: now },
    { tokenHash: cancel.hash, registrationId, kind: 'cancel', createdAt: now },
  ])
  return { ics: ics.token, cancel: cancel.token }
}

export const icsUrl = (base: string, space: SpaceRefLite, event: EventRow, token: string) =>
  `${base}/v1/cdn/${space.slug}/events/${event.slug}/ics/${token}`
const cancelUrl = (base: string, space: SpaceRefLite, event: EventRow, token: string) =>
  `${base}/v1/cdn/${space.slug}/events/${event.slug}/cancel/${token}`

/**
 * The links of a registration mail, built from PUBLIC_URL (`kernel.mail.linkBase()`), never from the request's
 * Host; without PUBLIC_URL null: the mail goes without links (the registration's answer carried its calendar link).
 */
function mailLinks(kernel: Kernel, space: SpaceRefLite, event: EventRow, tokens: { ics: string; cancel: string }): MailLinks | null {
  const base = kernel.mail.linkBase()
  return base ? { ics: icsUrl(base, space, event, tokens.ics), cancel: cancelUrl(base, space, event, tokens.cancel) } : null
}

interface MailLinks {
  ics: string
  cancel: string
}

/** whenText's answers by language, time zone, start and end: building an Intl.DateTimeFormat is costly (profiled). */
const whenTexts = new Map<string, string>()

/** "Monday, 1 June 2026, 18:00 – 20:00 (Europe/Berlin)" in the registration's language. */
export function whenText(event: EventRow, lang: string | null): string {
  const key = `${lang ?? ''}|${event.timezone}|${event.startsAt.getTime()}|${event.endsAt.getTime()}`
  let text = whenTexts.get(key)
  if (text === undefined) {
    if (whenTexts.size >= 1000) whenTexts.clear()
    whenTexts.set(key, (text = formatWhen(event, lang)))
  }
  return text
}

function formatWhen(event: EventRow, lang: string | null): string {
  let fmt: Intl.DateTimeFormat
  try {
    fmt = new Intl.DateTimeFormat(lang ?? 'en', { dateStyle: 'full', timeStyle: 'short', timeZone: event.timezone })
  } catch {
    fmt = new Intl.DateTimeFormat('en', { dateStyle: 'full', timeStyle: 'short', timeZone: event.timezone })
  }
  return `${fmt.formatRange(event.startsAt, event.endsAt)} (${event.timezone})`
}

function registrationMail(
  kind: 'confirmed' | 'waitlisted' | 'promoted',
  event: EventRow,
  space: SpaceRefLite,
  reg: RegistrationRow,
  links: MailLinks | null,
  when = whenText(event, reg.lang),
): MailMessage {
  const chain = reg.lang ? [reg.lang] : []
  const title = pick(event.title as Record<string, string>, chain).text ?? event.slug
  const loc = event.location as LocationView
  const subject =
    kind === 'waitlisted' ? `You are on the waitlist: ${title}` : kind === 'promoted' ? `A spot opened up, you are in: ${title}` : `You are registered: ${title}`
  const lead =
    kind === 'waitlisted'
      ? `the event is full, so you are on the waitlist for ${title}. If a spot opens up, you move up and we write to you.`
      : kind === 'promoted'
        ? `a spot opened up: your registration for ${title} is now confirmed.`
        : `your registration for ${title} is confirmed.`
  return {
    to: reg.email,
    subject,
    text: [
      `Hello ${reg.name},`,
      '',
      lead,
      '',
      `When: ${when}`,
      `Where: ${[loc.name, loc.address].filter(Boolean).join(', ')}${loc.url ? ` (${loc.url})` : ''}`,
      '',
      ...(links
        ? [`Add it to your calendar: ${links.ics}`, `To cancel your registration, open this link and press the button on its page: ${links.cancel}`]
        : [`To cancel your registration, write to ${space.name}.`]),
      '',
      `— ${space.name}`,
    ].join('\n'),
  }
}

/**
 * Promotes waitlisted registrations, first in line first, while spots are free: the same conditional update as a
 * registration takes the spot. Each promoted person gets a mail with fresh links.
 */
async function promoteWaitlisted(kernel: Kernel, tx: Tx, emit: Emit, event: EventRow, space: SpaceRefLite) {
  if (!event.waitlist) return
  for (;;) {
    const [next] = await tx
      .select()
      .from(eventRegistrations)
      .where(and(eq(eventRegistrations.eventId, event.id), eq(eventRegistrations.status, 'waitlisted')))
      .orderBy(asc(eventRegistrations.id))
      .limit(1)
      .for('update')
    if (!next) return
    if (!(await takeSpot(tx, event.id))) return
    const [row] = await tx
      .update(eventRegistrations)
      .set({ status: 'confirmed', promotedAt: kernel.clock.now() })
      .where(eq(eventRegistrations.id, next.id))
      .returning()
    const links = await issueTokens(kernel, tx, row.id)
    await kernel.mail.enqueue(registrationMail('promoted', event, space, row, mailLinks(kernel, space, event, links)), tx)
    emit({ type: 'event.registered', spaceId: space.id, payload: { calendar_event: eventRef(event), registration: registrationRef(row), promoted: true } })
  }
}

/**
 * Takes one confirmed spot: a conditional update of the event row. On Postgres it takes the row's lock, so parallel
 * registrations for one event queue on it and each sees the count the previous one committed (READ COMMITTED
 * re-checks the condition on the updated row); on PGlite transactions run one at a time anyway.
 */
async function takeSpot(tx: Tx, eventId: number): Promise<boolean> {
  const taken = await tx
    .update(events)
    .set({ confirmedCount: sql`${events.confirmedCount} + 1` })
    .where(and(eq(events.id, eventId), sql`(${events.capacity} is null or ${events.confirmedCount} < ${events.capacity})`))
    .returning({ id: events.id })
  return taken.length === 1
}

/** Whether a registration would be taken at `now` (switch, closing time, start); fullness is separate. */
export function registrationOpenAt(event: EventRow, now: number): boolean {
  if (!event.registrationOpen) return false
  if (event.registrationClosesAt && now >= event.registrationClosesAt.getTime()) return false
  return now < event.startsAt.getTime()
}

export interface NewRegistration {
  name: string
  email: string
  fields: Record<string, unknown>
  lang: string | null
}

/**
 * One registration, inside the caller's transaction (the registration writer's batch, one savepoint per registration):
 * a live registration of the address → 409 already_registered; a spot taken by the conditional update → confirmed;
 * none left → waitlisted (waitlist on) or 409 event_full. Tokens, the mail job and the event are written in the same
 * transaction.
 */
export async function registerInTx(kernel: Kernel, tx: Tx, emit: Emit, space: SpaceRefLite, event: EventRow, input: NewRegistration, base: string) {
  try {
    const [dup] = await tx
      .select({ id: eventRegistrations.id })
      .from(eventRegistrations)
      .where(and(eq(eventRegistrations.eventId, event.id), eq(eventRegistrations.email, input.email), sql`${eventRegistrations.status} <> 'cancelled'`))
      .limit(1)
    if (dup) throw EventErrors.alreadyRegistered()
    let status: 'confirmed' | 'waitlisted' = 'confirmed'
    if (!(await takeSpot(tx, event.id))) {
      if (!event.waitlist) throw EventErrors.eventFull()
      status = 'waitlisted'
    }
    const [row] = await tx
      .insert(eventRegistrations)
      .values({
        uuid: crypto.randomUUID(),
        eventId: event.id,
        spaceId: space.id,
        name: input.name,
        email: input.email,
        fields: input.fields,
        lang: input.lang,
        status,
        createdAt: kernel.clock.now(),
      })
      .returning()
    const links = await issueTokens(kernel, tx, row.id)
    // The answer goes to the registrant, on the origin they called; the mail's links come from PUBLIC_URL only.
    const ics = icsUrl(base, space, event, links.ics)
    await kernel.mail.enqueue(registrationMail(status, event, space, row, mailLinks(kernel, space, event, links)), tx)
    emit({ type: 'event.registered', spaceId: space.id, payload: { calendar_event: eventRef(event), registration: registrationRef(row), promoted: false } })
    return { id: row.uuid, status, ics_url: ics }
  } catch (err) {
    alreadyRegistered(err)
  }
}

/**
 * Cancels a registration (idempotent: an already cancelled one is answered as it is). A confirmed spot is given
 * back and goes to the first in line.
 */
export async function cancelRegistration(kernel: Kernel, registrationId: number, by: 'attendee' | 'editor', space: SpaceRefLite) {
  return transact(kernel, async (tx, emit) => {
    const [current] = await tx.select().from(eventRegistrations).where(eq(eventRegistrations.id, registrationId)).limit(1).for('update')
    if (!current) throw notFound('Registration')
    if (current.status === 'cancelled') return current
    const [row] = await tx
      .update(eventRegistrations)
      .set({ status: 'cancelled', cancelledAt: kernel.clock.now() })
      .where(eq(eventRegistrations.id, current.id))
      .returning()
    let [event] = await tx.select().from(events).where(eq(events.id, current.eventId)).limit(1)
    if (current.status === 'confirmed') {
      ;[event] = await tx
        .update(events)
        .set({ confirmedCount: sql`greatest(${events.confirmedCount} - 1, 0)` })
        .where(eq(events.id, current.eventId))
        .returning()
    }
    emit({ type: 'event.registration_cancelled', spaceId: space.id, payload: { calendar_event: eventRef(event), registration: registrationRef(row), by } })
    if (current.status === 'confirmed') await promoteWaitlisted(kernel, tx, emit, event, space)
    return row
  })
}

export interface RegistrationJob {
  space: SpaceRefLite
  event: EventRow
  input: NewRegistration
  /** The origin the registrant called: the base of the answer's `ics_url` (never of the mail's links). */
  base: string
}

export type RegistrationResult = { id: string; status: 'confirmed' | 'waitlisted'; ics_url: string }
export type RegistrationOutcome = { ok: true; value: RegistrationResult } | { ok: false; error: unknown }

/**
 * The registrations of one batch for one event, in arrival order, with a handful of statements whatever their
 * number: one look-up of live registrations of their addresses (→ already_registered, also for an address twice in
 * the batch), one conditional update taking up to that many spots under the event row's lock (→ the first ones
 * confirmed; the rest waitlisted, or event_full), one insert of the registrations, one of their tokens, one of the
 * mail jobs. The same rules as `registerInTx`, which the writer falls back to (one savepoint each) if this fails as a
 * whole (e.g. an address registered at the same moment through another instance).
 */
export async function registerGroupInTx(kernel: Kernel, tx: Tx, emit: Emit, jobs: RegistrationJob[]): Promise<RegistrationOutcome[]> {
  const event = jobs[0].event
  const out: RegistrationOutcome[] = new Array(jobs.length)
  const emails = [...new Set(jobs.map((j) => j.input.email))]
  const live = await tx
    .select({ email: eventRegistrations.email })
    .from(eventRegistrations)
    .where(and(eq(eventRegistrations.eventId, event.id), inArray(eventRegistrations.email, emails), sql`${eventRegistrations.status} <> 'cancelled'`))
  const seen = new Set(live.map((r) => r.email))
  const todo: number[] = []
  jobs.forEach((j, i) => {
    if (seen.has(j.input.email)) out[i] = { ok: false, error: EventErrors.alreadyRegistered() }
    else {
      seen.add(j.input.email)
      todo.push(i)
    }
  })
  if (!todo.length) return out
  const [spots] = rowsOf<{ granted: number | string }>(
    await tx.execute(sql`
      with cur as (select id, confirmed_count, capacity from calendar_events where id = ${event.id} for update)
      update calendar_events e
         set confirmed_count = case when cur.capacity is null then cur.confirmed_count + ${todo.length}::int
                                    else greatest(cur.confirmed_count, least(cur.capacity, cur.confirmed_count + ${todo.length}::int)) end
        from cur
       where e.id = cur.id
   returning e.confirmed_count - cur.confirmed_count as granted`),
  )
  const granted = Number(spots?.granted ?? 0)
  const now = kernel.clock.now()
  const rows: (typeof eventRegistrations.$inferInsert & { i: number })[] = []
  todo.forEach((i, k) => {
    const status = k < granted ? 'confirmed' : event.waitlist ? 'waitlisted' : null
    if (!status) {
      out[i] = { ok: false, error: EventErrors.eventFull() }
      return
    }
    const { input, space } = jobs[i]
    rows.push({ i, uuid: crypto.randomUUID(), eventId: event.id, spaceId: space.id, name: input.name, email: input.email, fields: input.fields, lang: input.lang, status, createdAt: now })
  })
  if (!rows.length) return out
  const inserted = await tx
    .insert(eventRegistrations)
    .values(rows.map(({ i: _i, ...r }) => r))
    .returning()
  const byUuid = new Map(inserted.map((r) => [r.uuid, r]))
  const tokens: (typeof eventRegistrationTokens.$inferInsert)[] = []
  const mails: { queue: typeof MAIL_QUEUE; payload: { message: MailMessage } }[] = []
  const whens = new Map<string | null, string>()
  for (const r of rows) {
    const row = byUuid.get(r.uuid)!
    const { space, base } = jobs[r.i]
    const ics = newCapabilityToken()
    const cancel = newCapabilityToken()
    tokens.push({ tokenHash: ics.hash, registrationId: row.id, kind: 'ics', createdAt: now }, { tokenHash: cancel.hash, registrationId: row.id, kind: 'cancel', createdAt: now })
    const icsLink = icsUrl(base, space, event, ics.token)
    let when = whens.get(row.lang)
    if (when === undefined) whens.set(row.lang, (when = whenText(event, row.lang)))
    const status = row.status as 'confirmed' | 'waitlisted'
    const message = registrationMail(status, event, space, row, mailLinks(kernel, space, event, { ics: ics.token, cancel: cancel.token }), when)
    mails.push({ queue: MAIL_QUEUE, payload: { message } })
    emit({ type: 'event.registered', spaceId: space.id, payload: { calendar_event: eventRef(event), registration: registrationRef(row), promoted: false } })
    out[r.i] = { ok: true, value: { id: row.uuid, status, ics_url: icsLink } }
  }
  await tx.insert(eventRegistrationTokens).values(tokens)
  await kernel.jobs.enqueueMany(tx, mails)
  return out
}
