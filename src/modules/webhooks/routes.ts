import { Elysia } from 'elysia'
import type { Deps } from '../../deps'
import type { Guards } from '../../kernel/plugin'
import { SpaceParams } from '../spaces/model'
import { CreateWebhookBody, DeliveriesQuery, DeliveryParams, UpdateWebhookBody, WebhookParams } from './model'
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listDeliveries,
  listWebhooks,
  pingWebhook,
  redeliver,
  rotateWebhookSecret,
  updateWebhook,
} from './service'

/** Spec 4.11: outbound webhook subscriptions of a Space and their delivery log (admin role). */
export function webhookRoutes(deps: Deps, guards: Guards) {
  return new Elysia({ prefix: '/spaces/:space/webhooks', tags: ['Webhooks'] })
    .use(guards)
    .get('/', async ({ access }) => ({ data: await listWebhooks(deps, access) }), {
      params: SpaceParams,
      spaceRole: 'admin',
      detail: { summary: 'List webhook subscriptions (never with secrets)' },
    })
    .post(
      '/',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await createWebhook(deps, access, body) }
      },
      {
        params: SpaceParams,
        body: CreateWebhookBody,
        spaceRole: 'admin',
        detail: { summary: 'Subscribe a URL to events; the response shows the signing secret this once' },
      },
    )
    .get('/:id', async ({ access, params }) => ({ data: await getWebhook(deps, access, params.id) }), {
      params: WebhookParams,
      spaceRole: 'admin',
    })
    .patch('/:id', async ({ access, params, body }) => ({ data: await updateWebhook(deps, access, params.id, body) }), {
      params: WebhookParams,
      body: UpdateWebhookBody,
      spaceRole: 'admin',
    })
    .delete(
      '/:id',
      async ({ access, params, set }) => {
        await deleteWebhook(deps, access, params.id)
        set.status = 204
      },
      { params: WebhookParams, spaceRole: 'admin', detail: { summary: 'Remove; pending deliveries are cancelled' } },
    )
    .post('/:id/rotate-secret', async ({ access, params }) => ({ data: await rotateWebhookSecret(deps, access, params.id) }), {
      params: WebhookParams,
      spaceRole: 'admin',
      detail: { summary: 'Replace the signing secret; the new one is shown this once' },
    })
    .get(
      '/:id/deliveries',
      async ({ access, params, query }) => ({ data: await listDeliveries(deps, access, params.id, query.limit ?? 50) }),
      {
        params: WebhookParams,
        query: DeliveriesQuery,
        spaceRole: 'admin',
        detail: { summary: 'Delivery log, one entry per attempt, newest first (limit default 50, at most 200)' },
      },
    )
    .post(
      '/:id/deliveries/:deliveryId/redeliver',
      async ({ access, params, set }) => {
        set.status = 202
        return { data: await redeliver(deps, access, params.id, params.deliveryId) }
      },
      { params: DeliveryParams, spaceRole: 'admin', detail: { summary: 'Send a delivery again (as a new delivery)' } },
    )
    .post(
      '/:id/ping',
      async ({ access, params, set }) => {
        set.status = 202
        return { data: await pingWebhook(deps, access, params.id) }
      },
      { params: WebhookParams, spaceRole: 'admin', detail: { summary: 'Send a test event (ping)' } },
    )
}
