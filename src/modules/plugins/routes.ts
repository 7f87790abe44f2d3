import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { CallLog } from './caller'
import { adminUi } from '../../kernel/admin-ui'
import type { Guards } from '../../kernel/guards'
import { Data, DataList, SpaceParams } from '../../kernel/schemas'
import { PluginCallModel, PluginLogQuery, PluginModel, PluginParams, PluginWithSecretModel, pluginBodies } from './model'
import { createPlugin, deletePlugin, getPlugin, listPlugins, pluginLog, rotatePluginSecret, updatePlugin } from './service'

const PLUGIN_FIELDS = {
  name: { label: 'plugins.field.name', order: 1 },
  url: { label: 'plugins.field.url', help: 'plugins.field.urlHelp', widget: 'url', order: 2 },
  hooks: { label: 'plugins.field.hooks', widget: 'checklist', order: 3 },
  failure_mode: { label: 'plugins.field.failureMode', help: 'plugins.field.failureModeHelp', order: 4 },
  timeout_ms: { label: 'plugins.field.timeout', order: 5 },
  order: { label: 'plugins.field.order', help: 'plugins.field.orderHelp', order: 6 },
  active: { label: 'plugins.field.active', order: 7 },
} as const

/** Spec 4.8 (Plugins): a Space's plugins, their secrets and call log (admin role). */
export function pluginRoutes(kernel: Kernel, guards: Guards, log: CallLog) {
  const { CreatePluginBody, UpdatePluginBody } = pluginBodies(kernel.filters)
  return new Elysia({ prefix: '/spaces/:space/plugins', tags: ['Plugins'] })
    .use(guards)
    // Reads wait for this instance's log writes in flight (CallLog): what a caller just caused shows.
    .get('/', async ({ access }) => (await log.settled(), { data: await listPlugins(kernel, access) }), {
      params: SpaceParams,
      spaceRole: 'admin',
      response: DataList(PluginModel),
      detail: {
        summary: 'List plugins in the order they run (never with secrets)',
        'x-admin': adminUi({
          resource: 'plugins',
          op: 'list',
          title: 'plugins.title',
          intro: 'plugins.intro',
          empty: 'plugins.empty',
          name: 'name',
          columns: [
            { key: 'order', label: 'plugins.col.order', format: 'number' },
            { key: 'name', label: 'plugins.col.name' },
            { key: 'url', label: 'plugins.col.url', format: 'code' },
            { key: 'hooks', label: 'plugins.col.hooks', format: 'list' },
            { key: 'failure_mode', label: 'plugins.col.failureMode', format: 'status' },
            { key: 'active', label: 'plugins.col.active', format: 'boolean' },
            { key: 'deactivated_reason', label: 'plugins.col.deactivatedReason', format: 'excerpt' },
          ],
        }),
      },
    })
    .post(
      '/',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await createPlugin(kernel, access, body) }
      },
      {
        params: SpaceParams,
        body: CreatePluginBody,
        spaceRole: 'admin',
        response: { 201: Data(PluginWithSecretModel) },
        detail: {
          summary: 'Add a plugin called before the changes its hooks name; the response shows the signing secret this once',
          'x-admin': adminUi({ resource: 'plugins', op: 'create', label: 'plugins.create', secret: 'secret', fields: PLUGIN_FIELDS }),
        },
      },
    )
    .get('/:id', async ({ access, params }) => (await log.settled(), { data: await getPlugin(kernel, access, params.id) }), {
      params: PluginParams,
      spaceRole: 'admin',
      response: Data(PluginModel),
      detail: { summary: 'One plugin (never its secret)' },
    })
    .patch('/:id', async ({ access, params, body }) => (await log.settled(), { data: await updatePlugin(kernel, access, params.id, body) }), {
      params: PluginParams,
      body: UpdatePluginBody,
      spaceRole: 'admin',
      response: Data(PluginModel),
      detail: {
        summary: 'Change a plugin; `active: true` switches a deactivated plugin on again',
        'x-admin': adminUi(
          { resource: 'plugins', op: 'update', label: 'plugins.edit', fields: PLUGIN_FIELDS },
          { resource: 'plugins', op: 'toggle', field: 'active', on: 'plugins.activate', off: 'plugins.deactivate' },
          { resource: 'plugins', op: 'reorder', field: 'order' },
        ),
      },
    })
    .delete(
      '/:id',
      async ({ access, params, set }) => {
        await deletePlugin(kernel, access, params.id)
        set.status = 204
      },
      { params: PluginParams, spaceRole: 'admin', response: { 204: t.Void() }, detail: { summary: 'Remove a plugin and its call log', 'x-admin': adminUi({ resource: 'plugins', op: 'delete', label: 'plugins.delete', danger: true, order: 9 }) } },
    )
    .post('/:id/rotate-secret', async ({ access, params }) => ({ data: await rotatePluginSecret(kernel, access, params.id) }), {
      params: PluginParams,
      spaceRole: 'admin',
      response: Data(PluginWithSecretModel),
      detail: {
        summary: 'Replace the signing secret (the next call is signed with it); the new one is shown this once',
        'x-admin': adminUi({ resource: 'plugins', op: 'action', label: 'plugins.rotate', secret: 'secret', danger: true, order: 2 }),
      },
    })
    .get('/:id/log', async ({ access, params, query }) => (await log.settled(), { data: await pluginLog(kernel, access, params.id, query) }), {
      params: PluginParams,
      query: PluginLogQuery,
      spaceRole: 'admin',
      response: DataList(PluginCallModel),
      detail: {
        summary: 'Call log, newest first (kept 14 days; limit default 50, at most 200; filter by outcome)',
        'x-admin': adminUi({
          resource: 'plugins',
          op: 'log',
          label: 'plugins.log',
          empty: 'plugins.logEmpty',
          filters: { outcome: 'plugins.col.outcome' },
          columns: [
            { key: 'time', label: 'plugins.col.time', format: 'datetime' },
            { key: 'hook', label: 'plugins.col.hook', format: 'code' },
            { key: 'outcome', label: 'plugins.col.outcome', format: 'status' },
            { key: 'status', label: 'plugins.col.status', format: 'number' },
            { key: 'latency_ms', label: 'plugins.col.latency', format: 'number' },
            { key: 'message', label: 'plugins.col.message', format: 'excerpt' },
          ],
        }),
      },
    })
}
