import { and, asc, count, eq, gte, lt, sql, type SQL } from 'drizzle-orm'
import { calendarEvents as events, eventRegistrations, eventRegistrationTokens } from './tables'
import { sha256Hex } from '../../kernel/crypto'
import { normalizeEmail } from '../../kernel/email'
import { KernelErrors, notFound, validationFailed } from '../../kernel/errors'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { ListSeek } from '../../kernel/list-seek'
import { canonicalLocale, localeChain, spaceLocaleChain } from '../../kernel/locale'
import type { PublicSpace } from '../../kernel/public-space'
import { eventIcs } from './ics'
import { EventErrors, type LocationView, type PublicEventView } from './model'
import { fieldErrors, type FieldValidators, parseDateOrInstant } from './schema'
import { cancelRegistration, type EventRow, pick, registrationOpenAt } from './service'
import type { RegistrationWriter } from './writer'
import type { PublishedEventCache } from './cache'

/** The locale chain of a public request: `?lang` (422 when not a tag), else the best Accept-Language match. */
export function chainOf(space: PublicSpace, lang: string | undefined | null, acceptLanguage: string | null): string[] {
  return spaceLocaleChain(space, lang, acceptLanguage)
}

export function publicEventView(row: EventRow, chain: string[], now: number): PublicEventView {
  const title = pick(row.title as Record<string, string>, chain)
  const lang = title.lang ?? chain[0]
  const descriptions = row.description as Record<string, string>
  const description = descriptions[lang] ?? pick(descriptions, chain).text
  return {
    slug: row.slug,
    lang,
    title: title.text ?? row.slug,
    description: description ?? null,
    starts_at: row.startsAt.toISOString(),
    ends_at: row.endsAt.toISOString(),
    timezone: row.timezone,
    location: row.location as LocationView,
    capacity: row.capacity,
    spots_left: row.capacity === null ? null : Math.max(0, row.capacity - row.confirmedCount),
    waitlist: row.waitlist,
    registration_open: registrationOpenAt(row, now),
    registration_closes_at: row.registrationClosesAt?.toISOString() ?? null,
    fields: (row.fields as Record<string, unknown> | null) ?? null,
  }
}

export interface PublicListInput {
  from?: string
  to?: string
  page?: number
  per_page?: number
}

/** Totals and page boundaries (starts_at ISO, id) of the public event list, per Space; any event change of the Space drops them. */
export function eventListSeek(kernel: Kernel): ListSeek<[string, number]> {
  const bySpace = (e: { spaceId: number | null }) => e.spaceId
  return new ListSeek<[string, number]>(kernel, 'events.list-seek', { 'event.created': bySpace, 'event.updated': bySpace, 'event.deleted': bySpace })
}

/**
 * Published events of a Space ending at or after `from` (default now) and starting before `to`, soonest first. A page
 * whose previous page was served before reads by keyset (`(starts_at, id) >` its last row) and the total comes from
 * memory (ListSeek) while the matching set is the same: until a change of the Space, and — as `from` moves with the
 * clock — until the first matching event ends (the count query reads that time too). Else OFFSET and `count(*)`.
 */
export async function publicEvents(kernel: Kernel, seek: ListSeek<[string, number]>, space: PublicSpace, q: PublicListInput, chain: string[]) {
  const errors: Record<string, string[]> = {}
  const from = q.from === undefined ? kernel.clock.now() : parseDateOrInstant(q.from)
  if (!from) errors.from = ['must be a date (YYYY-MM-DD) or an ISO 8601 instant']
  const to = q.to === undefined ? null : parseDateOrInstant(q.to)
  if (q.to !== undefined && !to) errors.to = ['must be a date (YYYY-MM-DD) or an ISO 8601 instant']
  if (Object.keys(errors).length) throw validationFailed(errors)
  const page = pageOf(q.page, q.per_page, { perPage: 20, max: 100 })
  const parts: SQL[] = [eq(events.spaceId, space.id), eq(events.published, true), gte(events.endsAt, from!)]
  if (to) parts.push(lt(events.startsAt, to))
  const where = and(...parts)
  const list = `${q.from === undefined ? 'now' : from!.toISOString()}\u0000${to?.toISOString() ?? ''}`
  const at = from!.getTime()
  const known = seek.lookup(space.id, list, page.perPage, page.page, at)
  const rowsQuery =
    known.after !== undefined
      ? kernel.db.db
          .select()
          .from(events)
          .where(and(where, sql`(${events.startsAt}, ${events.id}) > (${known.after[0]}::timestamptz, ${known.after[1]})`))
          .orderBy(asc(events.startsAt), asc(events.id))
          .limit(page.perPage)
      : kernel.db.db.select().from(events).where(where).orderBy(asc(events.startsAt), asc(events.id)).limit(page.perPage).offset(page.offset)
  const counted =
    known.total !== undefined
      ? { total: known.total, window: known.window! }
      : kernel.db.db
          .select({ total: count(), firstEnd: sql<string | Date | null>`min(${events.endsAt})` })
          .from(events)
          .where(where)
          .then(([r]) => ({
            total: Number(r?.total ?? 0),
            // The set stays the same while `from` has not passed the first end among it.
            window: { from: at, to: r?.firstEnd ? new Date(r.firstEnd).getTime() : Number.POSITIVE_INFINITY },
          }))
  const [rows, { total, window }] = await Promise.all([rowsQuery, counted])
  const last = rows.length === page.perPage ? rows[rows.length - 1]! : undefined
  seek.remember(space.id, list, page.perPage, page.page, known.epoch, total, window, last && [last.startsAt.toISOString(), last.id])
  const now = kernel.clock.ms()
  return { data: rows.map((r) => publicEventView(r, chain, now)), meta: { total, page: page.page, per_page: page.perPage } }
}

export async function publishedEvent(kernel: Kernel, spaceId: number, slug: string): Promise<EventRow | null> {
  const [row] = await kernel.db.db
    .select()
    .from(events)
    .where(and(eq(events.spaceId, spaceId), eq(events.slug, slug), eq(events.published, true)))
    .limit(1)
  return row ?? null
}

export interface RegisterInput {
  name: string
  email: string
  fields?: Record<string, unknown>
  lang?: string
  _hp?: string
}

const MAX_FIELDS_BYTES = 16_384

/**
 * The public registration: honeypot → the published event (404) → name, e-mail and extra fields (422, all at once)
 * → open now (422 registration_closed) → the registering transaction (writer.ts: group commit, service.registerInTx).
 */
export async function register(
  kernel: Kernel,
  deps: { validators: FieldValidators; writer: RegistrationWriter; published: PublishedEventCache },
  space: PublicSpace,
  slug: string,
  body: RegisterInput,
  req: { base: string; lang: string | undefined; acceptLanguage: string | null },
): Promise<{ honeypot: true } | { honeypot: false; id: string; status: string; ics_url: string }> {
  if (body._hp) return { honeypot: true }
  const event = await deps.published.get(space.id, slug)
  if (!event) throw notFound('Event')
  const errors: Record<string, string[]> = {}
  const name = body.name.trim()
  if (!name) errors.name = ['must not be blank']
  const email = normalizeEmail(body.email)
  if (!email) errors.email = ['must be an e-mail address']
  let fields: Record<string, unknown> = {}
  if (event.fields) {
    fields = body.fields ?? {}
    if (JSON.stringify(fields).length > MAX_FIELDS_BYTES) errors.fields = [`must be at most ${MAX_FIELDS_BYTES.toLocaleString('en-US')} characters as JSON`]
    else {
      const validate = deps.validators.get(`${event.id}:${event.sequence}`, structuredClone(event.fields as Record<string, unknown>))
      if (!validate(fields)) Object.assign(errors, fieldErrors(validate.errors))
    }
  }
  let lang: string | null = null
  if (body.lang !== undefined) {
    lang = canonicalLocale(body.lang)
    if (!lang) errors.lang = ['must be a BCP-47 language tag']
  }
  if (Object.keys(errors).length) throw KernelErrors.validationFailed('The registration is not valid.', errors)
  if (!registrationOpenAt(event, kernel.clock.ms())) throw EventErrors.registrationClosed()
  lang ??= chainOf(space, req.lang, req.acceptLanguage)[0] ?? space.defaultLang
  const out = await deps.writer.write({ space, event, input: { name: name.slice(0, 200), email: email!, fields, lang }, base: req.base })
  return { honeypot: false, ...out }
}

async function registrationByToken(kernel: Kernel, space: PublicSpace, slug: string, token: string, kind: 'ics' | 'cancel') {
  const [r] = await kernel.db.db
    .select({ registration: eventRegistrations, event: events })
    .from(eventRegistrationTokens)
    .innerJoin(eventRegistrations, eq(eventRegistrations.id, eventRegistrationTokens.registrationId))
    .innerJoin(events, eq(events.id, eventRegistrations.eventId))
    .where(and(eq(eventRegistrationTokens.tokenHash, sha256Hex(token)), eq(eventRegistrationTokens.kind, kind), eq(events.spaceId, space.id), eq(events.slug, slug)))
    .limit(1)
  return r ?? null
}

/** The cancel link: idempotent; unknown token → 404. */
export async function cancelByToken(kernel: Kernel, space: PublicSpace, slug: string, token: string) {
  const r = await registrationByToken(kernel, space, slug, token, 'cancel')
  if (!r) throw notFound('Registration')
  await cancelRegistration(kernel, r.registration.id, 'attendee', space)
}

/** What the cancel link's page shows (read only): the event's title and the registration's status; null: unknown token. */
export async function cancelLinkState(kernel: Kernel, space: PublicSpace, slug: string, token: string) {
  const r = await registrationByToken(kernel, space, slug, token, 'cancel')
  if (!r) return null
  const title = pick(r.event.title as Record<string, string>, [r.registration.lang ?? '', space.defaultLang].filter(Boolean)).text ?? r.event.slug
  return { title, cancelled: r.registration.status === 'cancelled' }
}

/** The registration's calendar file; unknown token → 404. */
export async function icsForToken(kernel: Kernel, space: PublicSpace, slug: string, token: string, base: string): Promise<string> {
  const r = await registrationByToken(kernel, space, slug, token, 'ics')
  if (!r) throw notFound('Calendar file')
  return eventIcs(r.event, space.slug, localeChain(space, r.registration.lang), base, r.registration.status)
}
