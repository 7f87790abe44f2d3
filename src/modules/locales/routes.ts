import { Elysia } from 'elysia'
import type { Deps } from '../../deps'
import type { Guards } from '../../kernel/plugin'
import { SpaceParams } from '../spaces/model'
import { CreateLocaleBody, LocaleParams } from './model'
import { addLocale, listLocales, removeLocale } from './service'

export function localeRoutes(deps: Deps, guards: Guards) {
  return new Elysia({ prefix: '/spaces/:space/locales', tags: ['Locales'] })
    .use(guards)
    .get('/', async ({ access }) => ({ data: await listLocales(deps, access) }), { params: SpaceParams, spaceRole: 'viewer' })
    .post(
      '/',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await addLocale(deps, access, body) }
      },
      { params: SpaceParams, body: CreateLocaleBody, spaceRole: 'admin', detail: { summary: 'Add a locale, optionally with an explicit fallback' } },
    )
    .delete(
      '/:code',
      async ({ access, params, set }) => {
        await removeLocale(deps, access, params.code)
        set.status = 204
      },
      { params: LocaleParams, spaceRole: 'admin' },
    )
}
