import { Elysia, t } from 'elysia'
import { AppError, notFound } from '../../kernel/errors'
import type { Kernel } from '../../kernel/kernel'
import { LINK_PAGE_RESPONSE, LINK_POST_BODY, linkPageResponse, postedFromPage } from '../../kernel/link-page'
import type { Guards } from '../../kernel/guards'
import type { PublicSpace } from '../../kernel/public-space'
import { Data, honeypotFirst, Paged, SpaceParams } from '../../kernel/schemas'
import {
  AcceptedModel,
  NewsletterSettingsBody,
  NewsletterSettingsModel,
  PublicStatusModel,
  SubscribeBody,
  SubscriberListQuery,
  SubscriberModel,
  SubscriberParams,
  TokenParams,
  UpdateSubscriberBody,
} from './model'
import {
  confirmSubscription,
  confirmTokenLive,
  deleteSubscriber,
  getNewsletterSettings,
  getSubscriber,
  listSubscribers,
  newsletterRedirect,
  requestSubscription,
  subscribersCsv,
  unsubscribe,
  unsubscribeTokenStatus,
  updateNewsletterSettings,
  updateSubscriber,
} from './service'

const NoContent = t.Void({ description: 'No content' })
const NO_STORE = { 'cache-control': 'no-store' }

/** Management of a Space's newsletter subscribers (spec 4.2 records): personal data, so reads and writes need admin. */
export function subscriberRoutes(kernel: Kernel, guards: Guards) {
  return new Elysia({ prefix: '/spaces/:space', tags: ['Subscribers'] })
    .use(guards)
    .get('/subscribers', ({ access, query }) => listSubscribers(kernel, access, query), {
      params: SpaceParams,
      query: SubscriberListQuery,
      spaceRole: 'admin',
      response: Paged(SubscriberModel),
      detail: {
        summary: 'List subscribers, newest first',
        description: '`status` filters (pending, confirmed, unsubscribed); `q` matches part of the e-mail address or name. `per_page` 1–100, default 25.',
      },
    })
    .get(
      '/subscribers.csv',
      ({ access, query }) =>
        new Response(subscribersCsv(kernel, access, query), {
          headers: { 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': 'attachment; filename="subscribers.csv"', ...NO_STORE },
        }),
      {
        params: SpaceParams,
        query: t.Object({ status: SubscriberListQuery.properties.status, q: SubscriberListQuery.properties.q }),
        spaceRole: 'admin',
        detail: {
          summary: 'Export subscribers as CSV (streamed)',
          description:
            'UTF-8 with a BOM, RFC 4180 quoting, CRLF. Columns: email, name, lang, status, source, created_at, confirmed_at, unsubscribed_at. Cells beginning with = + - @, tab or CR get a leading apostrophe (spreadsheet formula injection). Same `status`/`q` filters as the listing.',
          responses: { 200: { description: 'CSV', content: { 'text/csv': { schema: { type: 'string' } } } } },
        },
      },
    )
    .get('/subscribers/:id', async ({ access, params }) => ({ data: await getSubscriber(kernel, access, params.id) }), {
      params: SubscriberParams,
      spaceRole: 'admin',
      response: Data(SubscriberModel),
      detail: { summary: 'One subscriber' },
    })
    .patch('/subscribers/:id', async ({ access, params, body }) => ({ data: await updateSubscriber(kernel, access, params.id, body) }), {
      params: SubscriberParams,
      body: UpdateSubscriberBody,
      spaceRole: 'admin',
      response: Data(SubscriberModel),
      detail: {
        summary: 'Change name or lang, or unsubscribe',
        description: '`status` accepts only `unsubscribed`: a subscriber is confirmed by their own click on the mailed link (double opt-in), never by an admin.',
      },
    })
    .delete(
      '/subscribers/:id',
      async ({ access, params, set }) => {
        await deleteSubscriber(kernel, access, params.id)
        set.status = 204
      },
      { params: SubscriberParams, spaceRole: 'admin', response: { 204: NoContent }, detail: { summary: 'Erase a subscriber and their tokens for good' } },
    )
    .get('/newsletter', async ({ access }) => ({ data: await getNewsletterSettings(kernel, access) }), {
      params: SpaceParams,
      spaceRole: 'viewer',
      response: Data(NewsletterSettingsModel),
      detail: { summary: 'Newsletter settings of the Space (newsletter_redirect_url)' },
    })
    .put('/newsletter', async ({ access, body }) => ({ data: await updateNewsletterSettings(kernel, access, body) }), {
      params: SpaceParams,
      body: NewsletterSettingsBody,
      spaceRole: 'admin',
      response: Data(NewsletterSettingsModel),
      detail: {
        summary: 'Set where confirm and unsubscribe links redirect',
        description: 'With a `newsletter_redirect_url`, the public confirm and unsubscribe links answer 303 to it with `?status=confirmed` or `?status=unsubscribed`; null: they answer JSON.',
      },
    })
}

/** Whether the client asked for HTML first of all (a browser navigating): it gets error pages instead of JSON. */
const wantsHtml = (request: Request) => /^\s*text\/html\b/i.test(request.headers.get('accept') ?? '')

/**
 * Public subscribe, confirm and unsubscribe (spec 4.2). The mailed links' GET answers a page whose button POSTs to
 * the same address (kernel/link-page.ts): a mail scanner fetching the link confirms or unsubscribes no one.
 */
export function subscriberCdnRoutes(kernel: Kernel, guards: Guards) {
  const NO_STORE_JSON = { 'Content-Type': 'application/json; charset=utf-8', ...NO_STORE }
  const json = (status: string) => new Response(JSON.stringify({ data: { ok: true, status } }), { headers: NO_STORE_JSON })
  /** An unknown, used or expired token: 404, as a page for a browser and in the error shape for everyone else. */
  const deadLink = (request: Request, what: 'confirm' | 'unsubscribe', space: PublicSpace) => {
    if (!wantsHtml(request)) throw notFound('Token')
    return linkPageResponse({
      status: 404,
      title: 'This link does not work',
      paragraphs:
        what === 'confirm'
          ? [`This confirmation link for the newsletter of ${space.name} was used already or has expired (a link works once, for 7 days).`, 'To subscribe, sign up again.']
          : [`This unsubscribe link for the newsletter of ${space.name} is not known.`],
    })
  }
  /** The POST's answer: from the link page, 303 to newsletter_redirect_url or a page; else JSON. */
  const done = async (request: Request, fromPage: boolean, space: PublicSpace, status: 'confirmed' | 'unsubscribed') => {
    if (!fromPage) return json(status)
    const redirect = await newsletterRedirect(kernel, space.id)
    if (redirect) {
      const to = new URL(redirect)
      to.searchParams.set('status', status)
      return new Response(null, { status: 303, headers: { Location: to.href, ...NO_STORE } })
    }
    return linkPageResponse(
      status === 'confirmed'
        ? { title: 'Subscription confirmed', paragraphs: [`You will receive the newsletter of ${space.name}. Every mail has a link to unsubscribe.`] }
        : { title: 'You are unsubscribed', paragraphs: [`You will receive no more newsletters of ${space.name}.`] },
    )
  }
  const redirectTargets = async (spaceId: number) => {
    const redirect = await newsletterRedirect(kernel, spaceId)
    return redirect ? [redirect] : []
  }
  return new Elysia({ prefix: '/cdn/:space', tags: ['Public newsletter'] })
    .use(guards)
    .post(
      '/subscribe',
      async ({ space, body, set }) => {
        set.status = 202
        set.headers['cache-control'] = 'no-store'
        if (body._hp) return { data: { ok: true } }
        await requestSubscription(kernel, space, body, { source: 'subscribe' })
        return { data: { ok: true } }
      },
      {
        // The honeypot before anything else (spec 4.6): before the body's validation and the Space.
        transform: honeypotFirst(202, { data: { ok: true } }),
        publicSpace: { headers: NO_STORE },
        params: SpaceParams,
        body: SubscribeBody,
        response: { 202: AcceptedModel },
        detail: {
          summary: 'Subscribe to the newsletter (double opt-in)',
          description:
            'Always 202 `{data: {ok: true}}` for a well-formed address, whether it is new, pending or already confirmed (the answer never tells). A new, pending or unsubscribed address gets a confirmation mail with `{PUBLIC_URL}/v1/cdn/{space}/subscribe/confirm/{token}` (single use, 7 days) and an unsubscribe link (also in `List-Unsubscribe`, with RFC 8058 `List-Unsubscribe-Post`). The links are built from PUBLIC_URL only, never from the request’s Host: without PUBLIC_URL every well-formed request answers 403 `mail_links_unavailable` and nothing is stored. `_hp` is a honeypot: non-empty → 202, nothing stored or sent — checked first, before the body is validated and the Space looked up. A malformed e-mail: 422. 20/min/IP.',
        },
      },
    )
    .get(
      '/subscribe/confirm/:token',
      async ({ space, params, request }) => {
        if (!(await confirmTokenLive(kernel, space.id, params.token))) return deadLink(request, 'confirm', space)
        return linkPageResponse({
          title: 'Confirm your subscription',
          paragraphs: [`Press the button to receive the newsletter of ${space.name} at the address this link was mailed to.`],
          button: 'Confirm my subscription',
          formTargets: await redirectTargets(space.id),
        })
      },
      {
        publicSpace: { headers: NO_STORE },
        params: TokenParams,
        detail: {
          summary: 'The page of a confirmation link (changes nothing)',
          description:
            'The link of the confirmation mail. It confirms nothing by itself (mail scanners fetch links): it answers a small page (HTML, no script) whose button POSTs to the same address. An unknown, used or expired token: 404 (a page when the client asks for `text/html` first, else the error body). 60/min/IP.',
          responses: { 200: LINK_PAGE_RESPONSE },
        },
      },
    )
    .post(
      '/subscribe/confirm/:token',
      async ({ space, params, request }) => {
        const fromPage = await postedFromPage(request)
        try {
          await confirmSubscription(kernel, space.id, params.token)
        } catch (err) {
          if (fromPage && err instanceof AppError && err.status === 404) return deadLink(request, 'confirm', space)
          throw err
        }
        return done(request, fromPage, space, 'confirmed')
      },
      {
        publicSpace: { headers: NO_STORE },
        params: TokenParams,
        detail: {
          summary: 'Confirm a subscription',
          description:
            'What the confirmation page’s button sends; sites with their own page may call it too. The token works once, for 7 days; afterwards 404. JSON `{data: {ok, status: "confirmed"}}`; sent by the page’s form (`via=page`): 303 to the Space’s newsletter_redirect_url with `?status=confirmed` when set, else a page. Any body or none. 60/min/IP.',
          requestBody: LINK_POST_BODY,
          responses: {
            200: { description: 'Confirmed', content: { 'application/json': { schema: PublicStatusModel }, 'text/html': { schema: { type: 'string' } } } },
            303: { description: 'From the page’s form: redirect to newsletter_redirect_url?status=confirmed' },
          },
        },
      },
    )
    .get(
      '/unsubscribe/:token',
      async ({ space, params, request }) => {
        const status = await unsubscribeTokenStatus(kernel, space.id, params.token)
        if (status === null) return deadLink(request, 'unsubscribe', space)
        if (status === 'unsubscribed') {
          return linkPageResponse({ title: 'You are unsubscribed', paragraphs: [`This address receives no newsletters of ${space.name}.`] })
        }
        return linkPageResponse({
          title: 'Unsubscribe',
          paragraphs: [`Press the button to receive no more newsletters of ${space.name} at the address this link was mailed to.`],
          button: 'Unsubscribe',
          formTargets: await redirectTargets(space.id),
        })
      },
      {
        publicSpace: { headers: NO_STORE },
        params: TokenParams,
        detail: {
          summary: 'The page of an unsubscribe link (changes nothing)',
          description:
            'The link in every newsletter mail. It unsubscribes no one by itself (mail scanners fetch links): it answers a small page (HTML, no script) whose button POSTs to the same address; an address already unsubscribed gets a page saying so. An unknown token: 404 (a page when the client asks for `text/html` first, else the error body). 60/min/IP.',
          responses: { 200: LINK_PAGE_RESPONSE },
        },
      },
    )
    .post(
      '/unsubscribe/:token',
      async ({ space, params, request }) => {
        const fromPage = await postedFromPage(request)
        try {
          await unsubscribe(kernel, space.id, params.token)
        } catch (err) {
          if (fromPage && err instanceof AppError && err.status === 404) return deadLink(request, 'unsubscribe', space)
          throw err
        }
        return done(request, fromPage, space, 'unsubscribed')
      },
      {
        publicSpace: { headers: NO_STORE },
        params: TokenParams,
        detail: {
          summary: 'Unsubscribe (the page’s button, and RFC 8058 one-click)',
          description:
            'Idempotent: the token keeps answering `unsubscribed`; an unknown one: 404. Mails carry `List-Unsubscribe-Post: List-Unsubscribe=One-Click`, so mail clients may POST here directly (body `List-Unsubscribe=One-Click`, form-encoded or multipart): JSON `{data: {ok, status: "unsubscribed"}}`, never a redirect. Sent by the unsubscribe page’s form (`via=page`): 303 to the Space’s newsletter_redirect_url with `?status=unsubscribed` when set, else a page. 60/min/IP.',
          requestBody: LINK_POST_BODY,
          responses: {
            200: { description: 'Unsubscribed', content: { 'application/json': { schema: PublicStatusModel }, 'text/html': { schema: { type: 'string' } } } },
            303: { description: 'From the page’s form: redirect to newsletter_redirect_url?status=unsubscribed' },
          },
        },
      },
    )
}
