import { stringify } from 'csv-stringify/sync'
import { and, asc, count, desc, eq, gt, ilike, isNull, or, type SQL, sql } from 'drizzle-orm'
import { newsletterSettings, subscribers, subscriberTokens } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { newCapabilityToken, sha256Hex } from '../../kernel/crypto'
import { safeCell } from '../../kernel/csv'
import type { DbOrTx } from '../../kernel/db'
import { normalizeEmail } from '../../kernel/email'
import { notFound, validationFailed } from '../../kernel/errors'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { canonicalLocale } from '../../kernel/locale'
import { MailErrors, type MailMessage, ONE_CLICK_UNSUBSCRIBE } from '../../kernel/mail'
import type { SubscriberStatus, SubscriberView } from './model'

type SubscriberRow = typeof subscribers.$inferSelect

/** Confirmation links work this long (and once). */
export const CONFIRM_TTL_MS = 7 * 86_400_000
/** A pending address gets another confirmation mail only after this. */
export const RESEND_AFTER_MS = 10 * 60_000

export function view(row: SubscriberRow): SubscriberView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    lang: row.lang,
    status: row.status,
    source: row.source,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    confirmed_at: row.confirmedAt?.toISOString() ?? null,
    unsubscribed_at: row.unsubscribedAt?.toISOString() ?? null,
  }
}

export interface PublicSpaceRef {
  id: number
  slug: string
  name: string
}

/** Issues an unsubscribe token for one mail to `subscriberId` and answers its link. */
export async function unsubscribeLink(kernel: Kernel, tx: DbOrTx, space: PublicSpaceRef, subscriberId: number, base: string): Promise<string> {
  const u = newCapabilityToken()
  await tx.insert(subscriberTokens).values({ tokenHash: u.hash, subscriberId, kind: 'unsubscribe', createdAt: kernel.clock.now() })
  return `${base}/v1/cdn/${space.slug}/unsubscribe/${u.token}`
}

/**
 * The double opt-in request (public subscribe, and `lead` forms): a new or pending address gets (again) a
 * confirmation mail; a confirmed one is left alone; an unsubscribed one becomes pending and gets a confirmation.
 * The caller's answer never tells which (no enumeration). The mail is queued in the same transaction. Its links are
 * built from PUBLIC_URL (`kernel.mail.linkBase()`); without it nothing is stored and the request is refused with
 * 403 `mail_links_unavailable`, the same answer for every address.
 */
export async function requestSubscription(
  kernel: Kernel,
  space: PublicSpaceRef,
  input: { email: string; name?: string | null; lang?: string | null },
  opts: { source: 'subscribe' | 'form' },
): Promise<void> {
  const email = normalizeEmail(input.email)
  if (!email) throw validationFailed({ email: ['must be an e-mail address'] })
  const base = kernel.mail.linkBase()
  if (!base) throw MailErrors.linksUnavailable('Newsletter sign-up mails a confirmation link, and this service has no PUBLIC_URL to build it from. Its operator sets PUBLIC_URL.')
  const name = input.name?.trim().slice(0, 200) || null
  const lang = input.lang ? canonicalLocale(input.lang.trim()) : null
  const now = kernel.clock.now()
  await kernel.db.db.transaction(async (tx) => {
    const [row] = await tx
      .insert(subscribers)
      .values({ spaceId: space.id, email, name, lang, status: 'pending', source: opts.source, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({
        target: [subscribers.spaceId, subscribers.email],
        set: {
          // Keep what we knew when the new request leaves it out; re-open an unsubscribed address as pending.
          name: sql`coalesce(excluded.name, ${subscribers.name})`,
          lang: sql`coalesce(excluded.lang, ${subscribers.lang})`,
          status: sql`case when ${subscribers.status} = 'confirmed' then 'confirmed' else 'pending' end`,
          updatedAt: now,
        },
      })
      .returning()
    if (row.status === 'confirmed') return
    // At most one confirmation mail per address per 10 minutes: the public route must not become a way to flood
    // someone's inbox (the earlier link still works).
    const [recent] = await tx
      .select({ id: subscriberTokens.id })
      .from(subscriberTokens)
      .where(
        and(
          eq(subscriberTokens.subscriberId, row.id),
          eq(subscriberTokens.kind, 'confirm'),
          gt(subscriberTokens.createdAt, new Date(now.getTime() - RESEND_AFTER_MS)),
        ),
      )
      .limit(1)
    if (recent) return
    const c = newCapabilityToken()
    await tx.insert(subscriberTokens).values({
      tokenHash: c.hash,
      subscriberId: row.id,
      kind: 'confirm',
      expiresAt: new Date(now.getTime() + CONFIRM_TTL_MS),
      createdAt: now,
    })
    const confirmUrl = `${base}/v1/cdn/${space.slug}/subscribe/confirm/${c.token}`
    const unsubscribeUrl = await unsubscribeLink(kernel, tx, space, row.id, base)
    await kernel.mail.enqueue(confirmationMail(space, email, row.name, confirmUrl, unsubscribeUrl), tx)
  })
}

function confirmationMail(space: PublicSpaceRef, to: string, name: string | null, confirmUrl: string, unsubscribeUrl: string): MailMessage {
  return {
    to,
    subject: `Please confirm your subscription to ${space.name}`,
    text: [
      `Hello${name ? ` ${name}` : ''},`,
      '',
      `someone (hopefully you) asked to receive the newsletter of ${space.name} at this address.`,
      'To confirm, open this link and press the button on its page (it works once, for 7 days):',
      '',
      confirmUrl,
      '',
      'If this was not you, ignore this mail: nothing will be sent without your confirmation.',
      `Unsubscribe at any time: ${unsubscribeUrl}`,
    ].join('\n'),
    // RFC 8058: mail clients may offer one-click unsubscription, a POST to the same URL.
    headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>`, ...ONE_CLICK_UNSUBSCRIBE },
  }
}

/** Whether a confirmation token would confirm now (unused, unexpired, of this Space): read only, for its page. */
export async function confirmTokenLive(kernel: Kernel, spaceId: number, token: string): Promise<boolean> {
  const [row] = await kernel.db.db
    .select({ id: subscriberTokens.id })
    .from(subscriberTokens)
    .innerJoin(subscribers, eq(subscribers.id, subscriberTokens.subscriberId))
    .where(
      and(
        eq(subscriberTokens.tokenHash, sha256Hex(token)),
        eq(subscriberTokens.kind, 'confirm'),
        isNull(subscriberTokens.usedAt),
        gt(subscriberTokens.expiresAt, kernel.clock.now()),
        eq(subscribers.spaceId, spaceId),
      ),
    )
    .limit(1)
  return row !== undefined
}

/** The subscription an unsubscribe token names (read only, for its page): its status, or null for an unknown token. */
export async function unsubscribeTokenStatus(kernel: Kernel, spaceId: number, token: string): Promise<SubscriberStatus | null> {
  const [row] = await kernel.db.db
    .select({ status: subscribers.status })
    .from(subscriberTokens)
    .innerJoin(subscribers, eq(subscribers.id, subscriberTokens.subscriberId))
    .where(and(eq(subscriberTokens.tokenHash, sha256Hex(token)), eq(subscriberTokens.kind, 'unsubscribe'), eq(subscribers.spaceId, spaceId)))
    .limit(1)
  return row?.status ?? null
}

/** Confirms the subscriber of a confirmation token (single use, 7 days); 404 otherwise. */
export async function confirmSubscription(kernel: Kernel, spaceId: number, token: string): Promise<'confirmed'> {
  const now = kernel.clock.now()
  const ok = await kernel.db.db.transaction(async (tx) => {
    const used = await tx
      .update(subscriberTokens)
      .set({ usedAt: now })
      .where(
        and(
          eq(subscriberTokens.tokenHash, sha256Hex(token)),
          eq(subscriberTokens.kind, 'confirm'),
          isNull(subscriberTokens.usedAt),
          gt(subscriberTokens.expiresAt, now),
          sql`${subscriberTokens.subscriberId} in (select id from subscribers where space_id = ${spaceId})`,
        ),
      )
      .returning({ subscriberId: subscriberTokens.subscriberId })
    if (!used.length) return false
    await tx
      .update(subscribers)
      .set({ status: 'confirmed', confirmedAt: now, unsubscribedAt: null, updatedAt: now })
      .where(eq(subscribers.id, used[0].subscriberId))
    return true
  })
  if (!ok) throw notFound('Token')
  return 'confirmed'
}

/** Unsubscribes the subscriber of an unsubscribe token (idempotent, no expiry); 404 for an unknown token. */
export async function unsubscribe(kernel: Kernel, spaceId: number, token: string): Promise<'unsubscribed'> {
  const now = kernel.clock.now()
  const ok = await kernel.db.db.transaction(async (tx) => {
    const [t] = await tx
      .select({ subscriberId: subscriberTokens.subscriberId })
      .from(subscriberTokens)
      .innerJoin(subscribers, eq(subscribers.id, subscriberTokens.subscriberId))
      .where(and(eq(subscriberTokens.tokenHash, sha256Hex(token)), eq(subscriberTokens.kind, 'unsubscribe'), eq(subscribers.spaceId, spaceId)))
      .limit(1)
    if (!t) return false
    await markUnsubscribed(tx, t.subscriberId, now)
    return true
  })
  if (!ok) throw notFound('Token')
  return 'unsubscribed'
}

async function markUnsubscribed(tx: DbOrTx, subscriberId: number, now: Date) {
  await tx
    .update(subscribers)
    .set({ status: 'unsubscribed', unsubscribedAt: sql`coalesce(${subscribers.unsubscribedAt}, ${now.toISOString()}::timestamptz)`, updatedAt: now })
    .where(and(eq(subscribers.id, subscriberId), sql`${subscribers.status} <> 'unsubscribed'`))
  // Open confirmation links die with the subscription: a later one needs a new request.
  await tx
    .update(subscriberTokens)
    .set({ usedAt: now })
    .where(and(eq(subscriberTokens.subscriberId, subscriberId), eq(subscriberTokens.kind, 'confirm'), isNull(subscriberTokens.usedAt)))
}

// ---- newsletter settings ----

export async function newsletterRedirect(kernel: Kernel, spaceId: number): Promise<string | null> {
  const [row] = await kernel.db.db.select().from(newsletterSettings).where(eq(newsletterSettings.spaceId, spaceId)).limit(1)
  return row?.redirectUrl ?? null
}

export async function getNewsletterSettings(kernel: Kernel, access: SpaceAccess) {
  return { newsletter_redirect_url: await newsletterRedirect(kernel, access.space.id) }
}

export async function updateNewsletterSettings(kernel: Kernel, access: SpaceAccess, input: { newsletter_redirect_url: string | null }) {
  let url = input.newsletter_redirect_url
  if (url !== null) {
    let parsed: URL | null = null
    try {
      parsed = new URL(url)
    } catch {}
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw validationFailed({ newsletter_redirect_url: ['must be an http(s) URL or null'] })
    }
    url = parsed.href
  }
  const now = kernel.clock.now()
  await kernel.db.db
    .insert(newsletterSettings)
    .values({ spaceId: access.space.id, redirectUrl: url, updatedAt: now })
    .onConflictDoUpdate({ target: newsletterSettings.spaceId, set: { redirectUrl: url, updatedAt: now } })
  return { newsletter_redirect_url: url }
}

// ---- management ----

function filters(access: SpaceAccess, q: { status?: SubscriberStatus; q?: string }): SQL {
  const parts: SQL[] = [eq(subscribers.spaceId, access.space.id)]
  if (q.status) parts.push(eq(subscribers.status, q.status))
  if (q.q?.trim()) {
    const like = `%${q.q.trim().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    parts.push(or(ilike(subscribers.email, like), ilike(subscribers.name, like))!)
  }
  return and(...parts)!
}

export async function listSubscribers(
  kernel: Kernel,
  access: SpaceAccess,
  q: { status?: SubscriberStatus; q?: string; page?: number; per_page?: number },
) {
  const page = pageOf(q.page, q.per_page)
  const where = filters(access, q)
  const [rows, [{ total }]] = await Promise.all([
    kernel.db.db.select().from(subscribers).where(where).orderBy(desc(subscribers.id)).limit(page.perPage).offset(page.offset),
    kernel.db.db.select({ total: count() }).from(subscribers).where(where),
  ])
  return { data: rows.map(view), meta: { total: Number(total), page: page.page, per_page: page.perPage } }
}

async function requireSubscriber(kernel: Kernel, access: SpaceAccess, id: number): Promise<SubscriberRow> {
  const [row] = await kernel.db.db
    .select()
    .from(subscribers)
    .where(and(eq(subscribers.id, id), eq(subscribers.spaceId, access.space.id)))
    .limit(1)
  if (!row) throw notFound('Subscriber')
  return row
}

export async function getSubscriber(kernel: Kernel, access: SpaceAccess, id: number) {
  return view(await requireSubscriber(kernel, access, id))
}

export async function updateSubscriber(
  kernel: Kernel,
  access: SpaceAccess,
  id: number,
  input: { name?: string | null; lang?: string | null; status?: 'unsubscribed' },
) {
  const row = await requireSubscriber(kernel, access, id)
  const now = kernel.clock.now()
  const patch: Partial<typeof subscribers.$inferInsert> = { updatedAt: now }
  if (input.name !== undefined) patch.name = input.name?.trim() || null
  if (input.lang !== undefined) {
    if (input.lang === null) patch.lang = null
    else {
      const c = canonicalLocale(input.lang)
      if (!c) throw validationFailed({ lang: ['must be a BCP-47 locale code'] })
      patch.lang = c
    }
  }
  return kernel.db.db.transaction(async (tx) => {
    await tx.update(subscribers).set(patch).where(eq(subscribers.id, row.id))
    if (input.status === 'unsubscribed') await markUnsubscribed(tx, row.id, now)
    const [fresh] = await tx.select().from(subscribers).where(eq(subscribers.id, row.id))
    return view(fresh)
  })
}

/** Removes the subscriber and their tokens for good (erasure requests). */
export async function deleteSubscriber(kernel: Kernel, access: SpaceAccess, id: number) {
  const row = await requireSubscriber(kernel, access, id)
  await kernel.db.db.delete(subscribers).where(eq(subscribers.id, row.id))
}

const CSV_COLUMNS = ['email', 'name', 'lang', 'status', 'source', 'created_at', 'confirmed_at', 'unsubscribed_at']

/** The subscribers as CSV (UTF-8 with BOM), read in batches of 1000 by id. */
export function subscribersCsv(kernel: Kernel, access: SpaceAccess, q: { status?: SubscriberStatus; q?: string }): ReadableStream<Uint8Array> {
  const enc = new TextEncoder()
  let lastId = 0
  let started = false
  const where = filters(access, q)
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true
        controller.enqueue(enc.encode(`\uFEFF${stringify([CSV_COLUMNS], { record_delimiter: 'windows' })}`))
        return
      }
      const rows = await kernel.db.db
        .select()
        .from(subscribers)
        .where(and(where, gt(subscribers.id, lastId)))
        .orderBy(asc(subscribers.id))
        .limit(1000)
      if (!rows.length) return controller.close()
      lastId = rows[rows.length - 1].id
      const records = rows.map((r) => {
        const v = view(r)
        return CSV_COLUMNS.map((c) => safeCell(String((v as Record<string, unknown>)[c] ?? '')))
      })
      controller.enqueue(enc.encode(stringify(records, { record_delimiter: 'windows' })))
    },
  })
}
