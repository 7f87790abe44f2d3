import { Elysia, t } from 'elysia'
import { notFound } from '../../kernel/errors'
import { publicOrigin } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import type { RequestInfo } from '../../kernel/request-front'
import { Data, ErrorBody, SpaceParams, SpaceSlug } from '../../kernel/schemas'
import { findLiveSpace } from '../spaces/service'
import { StripeKeysBody, StripeSettingsModel, WebhookReceived } from './model'
import { deleteStripeKeys, receiveStripeEvent, setStripeKeys, stripeSettings } from './service'

const NoContent = t.Void({ description: 'No content' })

/** A Space's own Stripe keys (admin only: they take the shop's money). */
export function paymentRoutes(kernel: Kernel, guards: Guards) {
  return new Elysia({ prefix: '/spaces/:space/payments/stripe', tags: ['Payments'] })
    .use(guards)
    .get('', async ({ access, request }) => ({ data: await stripeSettings(kernel, access, publicOrigin(kernel.config, request.url)) }), {
      params: SpaceParams,
      spaceRole: 'admin',
      response: Data(StripeSettingsModel),
      detail: { summary: 'The Space’s Stripe set-up (keys masked)', description: '`source`: whose keys take payments — the Space’s own, the instance’s (STRIPE_SECRET_KEY) or none (orders wait for manual payment).' },
    })
    .put('', async ({ access, body, request }) => ({ data: await setStripeKeys(kernel, access, body, publicOrigin(kernel.config, request.url)) }), {
      params: SpaceParams,
      body: StripeKeysBody,
      spaceRole: 'admin',
      response: Data(StripeSettingsModel),
      detail: {
        summary: 'Set the Space’s own Stripe keys',
        description:
          'Stored encrypted (AES-256-GCM under SERVICE_SECRET_KEY) and never shown again: answers show them masked. Register `webhook_url` in Stripe (event `checkout.session.completed`) and send its signing secret as `webhook_secret`. The Space’s keys take precedence over the instance’s.',
      },
    })
    .delete(
      '',
      async ({ access, set }) => {
        await deleteStripeKeys(kernel, access)
        set.status = 204
      },
      {
        params: SpaceParams,
        spaceRole: 'admin',
        response: { 204: NoContent },
        detail: { summary: 'Remove the Space’s own Stripe keys', description: 'Payments fall back to the instance’s keys, or to manual payment.' },
      },
    )
}

const WEBHOOK_DESCRIPTION =
  'Anonymous: the `Stripe-Signature` header authenticates (`t=<unix seconds>,v1=<hex>`, HMAC-SHA256 with the endpoint’s signing secret over `"<t>.<raw body>"`; any of several `v1` values may match; 300 s tolerance). A bad or missing signature → 400 `invalid_signature`, an old timestamp → 400 `stale_signature`; nothing changes. `checkout.session.completed` (payment_status paid) marks the order (`client_reference_id`) paid; `customer.subscription.*` moves the Tenant’s plan (billing) on the instance’s receiver only: a Space’s own receiver takes shop payments only and answers subscription events `ignored: true`. Each event id is applied once (a repeat answers `duplicate: true`); other event types answer 200 `ignored: true`.'

/** The signed Stripe receivers: the instance's endpoint and one per Space with its own keys. */
export function paymentWebhookRoutes(kernel: Kernel, guards: Guards, requestInfo: (request: Request) => RequestInfo) {
  const rawOf = (request: Request) => requestInfo(request).rawBody ?? new Uint8Array(0)
  return new Elysia({ prefix: '/payments/stripe/webhook', tags: ['Payments'] })
    .use(guards)
    .post(
      '',
      ({ body, request }) => receiveStripeEvent(kernel, { account: 'instance' }, rawOf(request), body, request.headers.get('stripe-signature')),
      {
        body: t.Unknown({ description: 'A Stripe event object (JSON), verified byte for byte' }),
        response: { 200: WebhookReceived, 400: ErrorBody, 404: ErrorBody },
        detail: { summary: 'Stripe webhook receiver (instance keys: STRIPE_WEBHOOK_SECRET)', description: WEBHOOK_DESCRIPTION },
      },
    )
    .post(
      '/:space',
      async ({ params, body, request }) => {
        const space = await findLiveSpace(kernel, params.space)
        if (!space) throw notFound('Space')
        return receiveStripeEvent(kernel, { account: 'space', spaceId: space.id }, rawOf(request), body, request.headers.get('stripe-signature'))
      },
      {
        params: t.Object({ space: SpaceSlug }),
        body: t.Unknown({ description: 'A Stripe event object (JSON), verified byte for byte' }),
        response: { 200: WebhookReceived, 400: ErrorBody, 404: ErrorBody },
        detail: { summary: 'Stripe webhook receiver of a Space with its own keys', description: WEBHOOK_DESCRIPTION },
      },
    )
}
