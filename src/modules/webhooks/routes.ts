import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { Data, DataList, SpaceParams } from '../../kernel/schemas'
import {
  DeliveriesQuery,
  DeliveryAttemptModel,
  DeliveryParams,
  QueuedDeliveryModel,
  WebhookModel,
  WebhookParams,
  WebhookWithSecretModel,
  webhookBodies,
} from './model'
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
export function webhookRoutes(kernel: Kernel, guards: Guards) {
  const { CreateWebhookBody, UpdateWebhookBody } = webhookBodies(kernel.events)
  return new Elysia({ prefix: '/spaces/:space/webhooks', tags: ['Webhooks'] })
    .use(guards)
    .get('/', async ({ access }) => ({ data: await listWebhooks(kernel, access) }), {
      params: SpaceParams,
      spaceRole: 'admin',
      response: DataList(WebhookModel),
      detail: { summary: 'List webhook subscriptions (never with secrets)' },
    })
    .post(
      '/',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await createWebhook(kernel, access, body) }
      },
      {
        params: SpaceParams,
        body: CreateWebhookBody,
        spaceRole: 'admin',
        response: { 201: Data(WebhookWithSecretModel) },
        detail: { summary: 'Subscribe a URL to events; the response shows the signing secret this once' },
      },
    )
    .get('/:id', async ({ access, params }) => ({ data: await getWebhook(kernel, access, String(params.id)) }), {
      params: WebhookParams,
      spaceRole: 'admin',
      response: Data(WebhookModel),
      detail: { summary: 'One subscription (never its secret)' },
    })
    .patch('/:id', async ({ access, params, body }) => ({ data: await updateWebhook(kernel, access, String(params.id), body) }), {
      params: WebhookParams,
      body: UpdateWebhookBody,
      spaceRole: 'admin',
      response: Data(WebhookModel),
      detail: { summary: 'Change the label, URL, events or active flag' },
    })
    .delete(
      '/:id',
      async ({ access, params, set }) => {
        await deleteWebhook(kernel, access, String(params.id))
        set.status = 204
      },
      { params: WebhookParams, spaceRole: 'admin', response: { 204: t.Void() }, detail: { summary: 'Remove; pending deliveries are cancelled' } },
    )
    .post('/:id/rotate-secret', async ({ access, params }) => ({ data: await rotateWebhookSecret(kernel, access, String(params.id)) }), {
      params: WebhookParams,
      spaceRole: 'admin',
      response: Data(WebhookWithSecretModel),
      detail: { summary: 'Replace the signing secret; the new one is shown this once' },
    })
    .get(
      '/:id/deliveries',
      async ({ access, params, query }) => ({ data: await listDeliveries(kernel, access, String(params.id), query.limit ?? 50) }),
      {
        params: WebhookParams,
        query: DeliveriesQuery,
        spaceRole: 'admin',
        response: DataList(DeliveryAttemptModel),
        detail: { summary: 'Delivery log, one entry per attempt, newest first (limit default 50, at most 200)' },
      },
    )
    .post(
      '/:id/deliveries/:deliveryId/redeliver',
      async ({ access, params, set }) => {
        set.status = 202
        return { data: await redeliver(kernel, access, String(params.id), params.deliveryId) }
      },
      {
        params: DeliveryParams,
        spaceRole: 'admin',
        response: { 202: Data(QueuedDeliveryModel) },
        detail: { summary: 'Send a delivery again (as a new delivery)' },
      },
    )
    .post(
      '/:id/ping',
      async ({ access, params, set }) => {
        set.status = 202
        return { data: await pingWebhook(kernel, access, String(params.id)) }
      },
      { params: WebhookParams, spaceRole: 'admin', response: { 202: Data(QueuedDeliveryModel) }, detail: { summary: 'Send a test event (ping)' } },
    )
}
