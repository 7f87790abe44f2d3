// A registration's mail: its calendar and cancel links (capability tokens, PUBLIC_URL) and its text in the
// registrant's language. service.ts re-exports the public names.
import { eventRegistrationTokens } from './tables'
import { newCapabilityToken } from '../../kernel/crypto'
import type { Tx } from '../../kernel/db'
import type { Kernel } from '../../kernel/kernel'
import type { MailMessage } from '../../kernel/mail'
import type { LocationView } from './model'
import type { EventRow, RegistrationRow } from './views'

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
export async function issueTokens(kernel: Kernel, tx: Tx, registrationId: number) {
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
export const cancelUrl = (base: string, space: SpaceRefLite, event: EventRow, token: string) =>
  `${base}/v1/cdn/${space.slug}/events/${event.slug}/cancel/${token}`

/**
 * The links of a registration mail, built from PUBLIC_URL (`kernel.mail.linkBase()`), never from the request's
 * Host; without PUBLIC_URL null: the mail goes without links (the registration's answer carried its calendar link).
 */
export function mailLinks(kernel: Kernel, space: SpaceRefLite, event: EventRow, tokens: { ics: string; cancel: string }): MailLinks | null {
  const base = kernel.mail.linkBase()
  return base ? { ics: icsUrl(base, space, event, tokens.ics), cancel: cancelUrl(base, space, event, tokens.cancel) } : null
}

export interface MailLinks {
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

export function registrationMail(
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
