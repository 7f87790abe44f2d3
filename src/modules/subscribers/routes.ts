import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/plugin'
import { Data, Paged, SpaceParams } from '../../kernel/schemas'
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
  deleteSubscriber,
  getNewsletterSettings,
  getSubscriber,
  listSubscribers,
  newsletterRedirect,
  requestSubscription,
  subscribersCsv,
  unsubscribe,
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

/** Public subscribe, confirm and unsubscribe (spec 4.2). */
export function subscriberCdnRoutes(kernel: Kernel, guards: Guards) {
  /** JSON, or 303 to the Space's newsletter_redirect_url when set. */
  const answer = async (spaceId: number, status: string) => {
    const redirect = await newsletterRedirect(kernel, spaceId)
    if (redirect) {
      const to = new URL(redirect)
      to.searchParams.set('status', status)
      return new Response(null, { status: 303, headers: { Location: to.href, ...NO_STORE } })
    }
    return new Response(JSON.stringify({ data: { ok: true, status } }), {
      headers: { 'Content-Type': 'application/json; charset=utf-8', ...NO_STORE },
    })
  }
  return new Elysia({ prefix: '/cdn/:space', tags: ['Public newsletter'] })
    .use(guards)
    .post(
      '/subscribe',
      async ({ space, origin, body, set }) => {
        set.status = 202
        set.headers['cache-control'] = 'no-store'
        if (body._hp) return { data: { ok: true } }
        await requestSubscription(kernel, space, body, { base: origin, source: 'subscribe' })
        return { data: { ok: true } }
      },
      {
        publicSpace: { headers: NO_STORE },
        params: SpaceParams,
        body: SubscribeBody,
        response: { 202: AcceptedModel },
        detail: {
          summary: 'Subscribe to the newsletter (double opt-in)',
          description:
            'Always 202 `{data: {ok: true}}` for a well-formed address, whether it is new, pending or already confirmed (the answer never tells). A new, pending or unsubscribed address gets a confirmation mail with `{PUBLIC_URL}/v1/cdn/{space}/subscribe/confirm/{token}` (single use, 7 days) and an unsubscribe link. `_hp` is a honeypot: non-empty → 202, nothing stored or sent. A malformed e-mail: 422. 20/min/IP.',
        },
      },
    )
    .get('/subscribe/confirm/:token', async ({ space, params }) => answer(space.id, await confirmSubscription(kernel, space.id, params.token)), {
      publicSpace: { headers: NO_STORE },
      params: TokenParams,
      detail: {
        summary: 'Confirm a subscription (link from the confirmation mail)',
        description: 'The token works once, for 7 days; afterwards 404. JSON `{data: {ok, status: "confirmed"}}`, or 303 to the Space’s newsletter_redirect_url when set.',
        responses: {
          200: { description: 'Confirmed', content: { 'application/json': { schema: PublicStatusModel } } },
          303: { description: 'Redirect to newsletter_redirect_url?status=confirmed' },
        },
      },
    })
    .get('/unsubscribe/:token', async ({ space, params }) => answer(space.id, await unsubscribe(kernel, space.id, params.token)), {
      publicSpace: { headers: NO_STORE },
      params: TokenParams,
      detail: {
        summary: 'Unsubscribe (link in every newsletter mail)',
        description: 'Idempotent: the link keeps answering `unsubscribed`. JSON `{data: {ok, status: "unsubscribed"}}`, or 303 to the Space’s newsletter_redirect_url when set.',
        responses: {
          200: { description: 'Unsubscribed', content: { 'application/json': { schema: PublicStatusModel } } },
          303: { description: 'Redirect to newsletter_redirect_url?status=unsubscribed' },
        },
      },
    })
}
