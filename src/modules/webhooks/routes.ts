import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import { adminUi } from '../../kernel/admin-ui'
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

const WEBHOOK_FIELDS = {
  label: { label: 'webhooks.field.label', help: 'webhooks.field.labelHelp', order: 1 },
  url: { label: 'webhooks.field.url', help: 'webhooks.field.urlHelp', widget: 'url', order: 2 },
  events: { label: 'webhooks.field.events', widget: 'checklist', order: 3 },
  active: { label: 'webhooks.field.active', order: 4 },
} as const

/** Spec 4.11: outbound webhook subscriptions of a Space and their delivery log (admin role). */
export function webhookRoutes(kernel: Kernel, guards: Guards) {
  const { CreateWebhookBody, UpdateWebhookBody } = webhookBodies(kernel.events)
  return new Elysia({ prefix: '/spaces/:space/webhooks', tags: ['Webhooks'] })
    .use(guards)
    .get('/', async ({ access }) => ({ data: await listWebhooks(kernel, access) }), {
      params: SpaceParams,
      spaceRole: 'admin',
      response: DataList(WebhookModel),
      detail: {
        summary: 'List webhook subscriptions (never with secrets)',
        'x-admin': adminUi({
          resource: 'webhooks',
          op: 'list',
          title: 'webhooks.title',
          intro: 'webhooks.intro',
          empty: 'webhooks.empty',
          name: 'label',
          columns: [
            { key: 'label', label: 'webhooks.col.label' },
            { key: 'url', label: 'webhooks.col.url', format: 'code' },
            { key: 'events', label: 'webhooks.col.events', format: 'list' },
            { key: 'active', label: 'webhooks.col.active', format: 'boolean' },
            { key: 'updated_at', label: 'webhooks.col.updated', format: 'datetime' },
          ],
        }),
      },
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
        detail: {
          summary: 'Subscribe a URL to events; the response shows the signing secret this once',
          'x-admin': adminUi({ resource: 'webhooks', op: 'create', label: 'webhooks.create', secret: 'secret', fields: WEBHOOK_FIELDS }),
        },
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
      detail: {
        summary: 'Change the label, URL, events or active flag',
        'x-admin': adminUi(
          { resource: 'webhooks', op: 'update', label: 'webhooks.edit', fields: WEBHOOK_FIELDS },
          { resource: 'webhooks', op: 'toggle', field: 'active', on: 'webhooks.activate', off: 'webhooks.deactivate' },
        ),
      },
    })
    .delete(
      '/:id',
      async ({ access, params, set }) => {
        await deleteWebhook(kernel, access, String(params.id))
        set.status = 204
      },
      { params: WebhookParams, spaceRole: 'admin', response: { 204: t.Void() }, detail: { summary: 'Remove; pending deliveries are cancelled', 'x-admin': adminUi({ resource: 'webhooks', op: 'delete', label: 'webhooks.delete', danger: true, order: 9 }) } },
    )
    .post('/:id/rotate-secret', async ({ access, params }) => ({ data: await rotateWebhookSecret(kernel, access, String(params.id)) }), {
      params: WebhookParams,
      spaceRole: 'admin',
      response: Data(WebhookWithSecretModel),
      detail: {
        summary: 'Replace the signing secret; the new one is shown this once',
        'x-admin': adminUi({ resource: 'webhooks', op: 'action', label: 'webhooks.rotate', secret: 'secret', danger: true, order: 2 }),
      },
    })
    .get(
      '/:id/deliveries',
      async ({ access, params, query }) => ({ data: await listDeliveries(kernel, access, String(params.id), query.limit ?? 50) }),
      {
        params: WebhookParams,
        query: DeliveriesQuery,
        spaceRole: 'admin',
        response: DataList(DeliveryAttemptModel),
        detail: {
          summary: 'Delivery log, one entry per attempt, newest first (limit default 50, at most 200)',
          'x-admin': adminUi({
            resource: 'webhooks',
            op: 'log',
            label: 'webhooks.log',
            empty: 'webhooks.logEmpty',
            columns: [
              { key: 'timestamp', label: 'webhooks.col.time', format: 'datetime' },
              { key: 'event', label: 'webhooks.col.event', format: 'code' },
              { key: 'outcome', label: 'webhooks.col.outcome', format: 'status' },
              { key: 'response_status', label: 'webhooks.col.status', format: 'number' },
              { key: 'retry_count', label: 'webhooks.col.attempt', format: 'number' },
              { key: 'next_attempt_at', label: 'webhooks.col.nextRetry', format: 'datetime' },
              { key: 'response_body', label: 'webhooks.col.response', format: 'excerpt' },
              { key: 'error', label: 'webhooks.col.error', format: 'excerpt' },
            ],
          }),
        },
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
        detail: {
          summary: 'Send a delivery again (as a new delivery)',
          'x-admin': adminUi({ resource: 'webhooks', op: 'log-action', label: 'webhooks.redeliver', params: { deliveryId: 'delivery_id' } }),
        },
      },
    )
    .post(
      '/:id/ping',
      async ({ access, params, set }) => {
        set.status = 202
        return { data: await pingWebhook(kernel, access, String(params.id)) }
      },
      { params: WebhookParams, spaceRole: 'admin', response: { 202: Data(QueuedDeliveryModel) }, detail: { summary: 'Send a test event (ping)', 'x-admin': adminUi({ resource: 'webhooks', op: 'action', label: 'webhooks.ping', order: 1 }) } },
    )
}
