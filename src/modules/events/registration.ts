// Registrations and spots: registering (one, or a writer's batch), cancelling, and promoting the waitlist, each inside
// a transaction that also writes the tokens, the mail jobs and the events. service.ts re-exports the public names.
import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import { calendarEvents as events, eventRegistrations, eventRegistrationTokens } from './tables'
import { newCapabilityToken } from '../../kernel/crypto'
import { rowsOf, type Tx } from '../../kernel/db'
import { notFound, uniqueAs } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import { MAIL_QUEUE, type MailMessage } from '../../kernel/mail'
import { icsUrl, issueTokens, mailLinks, registrationMail, type SpaceRefLite, whenText } from './mails'
import { EventErrors } from './model'
import { type EventRow, eventRef, registrationRef } from './views'

const alreadyRegistered: (err: unknown) => never = uniqueAs('event_registrations_live_email_key', () => EventErrors.alreadyRegistered())

/**
 * Promotes waitlisted registrations, first in line first, while spots are free: the same conditional update as a
 * registration takes the spot. Each promoted person gets a mail with fresh links.
 */
export async function promoteWaitlisted(kernel: Kernel, tx: Tx, emit: Emit, event: EventRow, space: SpaceRefLite) {
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
