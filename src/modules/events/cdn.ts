import { Elysia } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { bodyAnswer, cacheControls, jsonAnswer } from '../../kernel/public-answer'
import { CancelAnswer, HoneypotAnswer, IcsParams, PublicDetailQuery, PublicEventModel, PublicEventParams, PublicEventList, PublicListQuery, RegisterAccepted, RegisterBody, TokenParams } from './model'
import { cancelByToken, cancelLinkState, chainOf, icsForToken, publicEvents, publicEventView, publishedEvent, register } from './public'
import type { FieldValidators } from './schema'
import type { RegistrationWriter } from './writer'
import type { PublishedEventCache } from './cache'
import type { ListSeek } from '../../kernel/list-seek'
import { AppError, notFound } from '../../kernel/errors'
import { LINK_PAGE_RESPONSE, LINK_POST_BODY, linkPageResponse, postedFromPage } from '../../kernel/link-page'
import { Data, honeypotFirst, SpaceParams } from '../../kernel/schemas'


const CACHING =
  'Strong `ETag` (If-None-Match → 304), `Cache-Control: public, max-age=CDN_MAX_AGE, stale-while-revalidate=CDN_STALE_WHILE_REVALIDATE`, `Vary: Accept-Language`. Texts through the locale chain: `?lang` (BCP-47; the tag, its explicit fallback, its language, the Space default), else the best Accept-Language match; `lang` in each item names the locale used.'

/** Whether the client asked for HTML first of all (a browser navigating): it gets error pages instead of JSON. */
const wantsHtml = (request: Request) => /^\s*text\/html\b/i.test(request.headers.get('accept') ?? '')

/** An unknown cancel token: 404, as a page for a browser and in the error shape for everyone else. */
function deadCancelLink(request: Request): Response {
  if (!wantsHtml(request)) throw notFound('Registration')
  return linkPageResponse({ status: 404, title: 'This link does not work', paragraphs: ['This cancel link is not known. Ask the organiser to cancel your registration.'] })
}

/** The public event routes (issue 30; spec 4.2 limits): anonymous, rate limited per IP. */
export function eventCdnRoutes(kernel: Kernel, guards: Guards, deps: { validators: FieldValidators; writer: RegistrationWriter; published: PublishedEventCache; listSeek: ListSeek<[string, number]> }) {
  const cacheControl = cacheControls(kernel.config).public
  return new Elysia({ prefix: '/cdn/:space/events', tags: ['Public events'] })
    .use(guards)
    .get(
      '',
      async ({ space, query, request }) => {
        const chain = chainOf(space, query.lang, request.headers.get('accept-language'))
        const list = await publicEvents(kernel, deps.listSeek, space, query, chain)
        return jsonAnswer(request, list, { cacheControl, vary: 'Accept-Language' })
      },
      {
        publicSpace: true,
        params: SpaceParams,
        query: PublicListQuery,
        response: { 200: PublicEventList },
        detail: {
          summary: 'Published events, upcoming by default',
          description: `Events ending at or after \`from\` (default: now) and starting before \`to\`, soonest first; \`per_page\` 1–100 (default 20). \`spots_left\` is null when unlimited; \`registration_open\` says whether a registration is taken now (switch, closing time, start). ${CACHING}`,
          responses: { 304: { description: 'Not modified (If-None-Match matched the ETag)' } },
        },
      },
    )
    .get(
      '/:slug',
      async ({ space, params, query, request }) => {
        const chain = chainOf(space, query.lang, request.headers.get('accept-language'))
        const row = await publishedEvent(kernel, space.id, params.slug)
        if (!row) throw notFound('Event')
        return jsonAnswer(request, { data: publicEventView(row, chain, kernel.clock.ms()) }, { cacheControl, vary: 'Accept-Language' })
      },
      {
        publicSpace: { notFound: 'Event' },
        params: PublicEventParams,
        query: PublicDetailQuery,
        response: { 200: Data(PublicEventModel) },
        detail: {
          summary: 'One published event',
          description: `\`spots_left\` (null when unlimited) and \`registration_open\` as they are now. ${CACHING}`,
          responses: { 304: { description: 'Not modified (If-None-Match matched the ETag)' } },
        },
      },
    )
    .post(
      '/:slug/register',
      async ({ space, origin, params, query, body, request, set }) => {
        set.headers['cache-control'] = 'no-store'
        const out = await register(kernel, deps, space, params.slug, body, {
          base: origin,
          lang: query.lang,
          acceptLanguage: request.headers.get('accept-language'),
        })
        if (out.honeypot) {
          set.status = 200
          return { ok: true }
        }
        set.status = 201
        return { data: { registration: { id: out.id, status: out.status }, ics_url: out.ics_url } }
      },
      {
        // The honeypot before anything else (spec 4.6): before the body's validation, the Space and the event.
        transform: honeypotFirst(200, { ok: true }),
        publicSpace: { notFound: 'Event' },
        params: PublicEventParams,
        query: PublicDetailQuery,
        body: RegisterBody,
        response: { 200: HoneypotAnswer, 201: RegisterAccepted },
        detail: {
          summary: 'Register for a published event',
          description:
            '20/min/IP. `_hp` non-empty: 200 `{ok: true}`, nothing stored — checked first, before the body is validated and the event looked up. `name` 1–200 characters, `email` an address (stored lower case), `fields` validated with the event’s `fields` schema (422 `validation_failed`, keyed `fields/<key>`; left out when the event has no schema). Closed (switched off, past `registration_closes_at`, or the event has started) → 422 `registration_closed`. The address already registered or waitlisted → 409 `already_registered`. No spot left → 409 `event_full`, or with `waitlist` 201 with status `waitlisted`. Capacity is taken in the registering transaction (one conditional update of the event row): parallel registrations never overbook. A mail with the calendar link and a cancel link follows (durable job). `ics_url` is a capability URL.',
        },
      },
    )
    .get(
      '/:slug/cancel/:token',
      async ({ space, params, request }) => {
        const state = await cancelLinkState(kernel, space, params.slug, params.token)
        if (!state) return deadCancelLink(request)
        if (state.cancelled) return linkPageResponse({ title: 'Registration cancelled', paragraphs: [`Your registration for ${state.title} is cancelled.`] })
        return linkPageResponse({
          title: 'Cancel your registration',
          paragraphs: [`Press the button to cancel your registration for ${state.title}. Your spot goes to the next person in line.`],
          button: 'Cancel my registration',
        })
      },
      {
        publicSpace: { notFound: 'Registration', headers: { 'cache-control': 'no-store' } },
        params: TokenParams,
        detail: {
          summary: 'The page of a cancel link (changes nothing)',
          description:
            'The cancel link of the registration mail. It cancels nothing by itself (mail scanners fetch links): it answers a small page (HTML, no script) whose button POSTs to the same address; a cancelled registration gets a page saying so. Unknown token: 404 (a page when the client asks for `text/html` first, else the error body). 60/min/IP.',
          responses: { 200: LINK_PAGE_RESPONSE },
        },
      },
    )
    .post(
      '/:slug/cancel/:token',
      async ({ space, params, request, set }) => {
        set.headers['cache-control'] = 'no-store'
        const fromPage = await postedFromPage(request)
        try {
          await cancelByToken(kernel, space, params.slug, params.token)
        } catch (err) {
          if (fromPage && err instanceof AppError && err.status === 404) return deadCancelLink(request)
          throw err
        }
        if (fromPage) return linkPageResponse({ title: 'Registration cancelled', paragraphs: ['Your registration is cancelled.'] })
        return { data: { ok: true, status: 'cancelled' } }
      },
      {
        publicSpace: { notFound: 'Registration' },
        params: TokenParams,
        detail: {
          summary: 'Cancel a registration with the token of its mail',
          description:
            'What the cancel page’s button sends; the organiser’s own page may call it too (any body or none). Idempotent. Unknown token → 404. A confirmed spot goes to the first in line of the waitlist, who gets a mail. Sent by the page’s form (`via=page`): the answer is a page instead of JSON. 20/min/IP.',
          requestBody: LINK_POST_BODY,
          responses: {
            200: { description: 'Cancelled', content: { 'application/json': { schema: CancelAnswer }, 'text/html': { schema: { type: 'string' } } } },
          },
        },
      },
    )
    .get(
      '/:slug/ics/:icsToken',
      async ({ space, origin, params, request }) => {
        const token = params.icsToken.endsWith('.ics') ? params.icsToken.slice(0, -4) : params.icsToken
        const ics = await icsForToken(kernel, space, params.slug, token, origin)
        return bodyAnswer(request, ics, {
          cacheControl: 'private, no-cache',
          contentType: 'text/calendar; charset=utf-8',
          headers: { 'Content-Disposition': `inline; filename="${params.slug}.ics"` },
        })
      },
      {
        publicSpace: { notFound: 'Calendar file' },
        params: IcsParams,
        detail: {
          summary: 'The calendar file (ICS) of a registration',
          description:
            '60/min/IP. RFC 5545: one VEVENT with a stable UID (per event), DTSTART/DTEND in the event’s TZID with its VTIMEZONE, SUMMARY and DESCRIPTION in the registration’s language, LOCATION, URL (the public event), SEQUENCE (bumped on each change of the event) and STATUS (CONFIRMED; TENTATIVE when waitlisted; CANCELLED). The token may end in `.ics`. Unknown token → 404. `ETag` (If-None-Match → 304), `Cache-Control: private, no-cache`.',
          responses: {
            200: { description: 'The calendar file', content: { 'text/calendar': { schema: { type: 'string' } } } },
            304: { description: 'Not modified' },
          },
        },
      },
    )
}
