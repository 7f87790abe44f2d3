import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { CallLog } from './caller'
import type { Guards } from '../../kernel/guards'
import { Data, DataList, SpaceParams } from '../../kernel/schemas'
import { PluginCallModel, PluginLogQuery, PluginModel, PluginParams, PluginWithSecretModel, pluginBodies } from './model'
import { createPlugin, deletePlugin, getPlugin, listPlugins, pluginLog, rotatePluginSecret, updatePlugin } from './service'

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
      detail: { summary: 'List plugins in the order they run (never with secrets)' },
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
        detail: { summary: 'Add a plugin called before the changes its hooks name; the response shows the signing secret this once' },
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
      detail: { summary: 'Change a plugin; `active: true` switches a deactivated plugin on again' },
    })
    .delete(
      '/:id',
      async ({ access, params, set }) => {
        await deletePlugin(kernel, access, params.id)
        set.status = 204
      },
      { params: PluginParams, spaceRole: 'admin', response: { 204: t.Void() }, detail: { summary: 'Remove a plugin and its call log' } },
    )
    .post('/:id/rotate-secret', async ({ access, params }) => ({ data: await rotatePluginSecret(kernel, access, params.id) }), {
      params: PluginParams,
      spaceRole: 'admin',
      response: Data(PluginWithSecretModel),
      detail: { summary: 'Replace the signing secret (the next call is signed with it); the new one is shown this once' },
    })
    .get('/:id/log', async ({ access, params, query }) => (await log.settled(), { data: await pluginLog(kernel, access, params.id, query) }), {
      params: PluginParams,
      query: PluginLogQuery,
      spaceRole: 'admin',
      response: DataList(PluginCallModel),
      detail: { summary: 'Call log, newest first (kept 14 days; limit default 50, at most 200; filter by outcome)' },
    })
}
