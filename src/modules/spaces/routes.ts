import { publicOrigin } from '../../kernel/http'
import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { Data, DataList, SpaceParams } from '../../kernel/schemas'
import { addLocale, listLocales, removeLocale, updateLocale } from './locales'
import {
  CreateLocaleBody,
  CreateSpaceBody,
  CreateTokenBody,
  LocaleModel,
  LocaleParams,
  SpaceModel,
  SpaceTokenCreatedModel,
  SpaceTokenModel,
  TokenParams,
  UpdateLocaleBody,
  UpdateSpaceBody,
} from './model'
import {
  archiveSpace,
  createSpace,
  createSpaceToken,
  getSpace,
  listSpaces,
  listSpaceTokens,
  revokeSpaceToken,
  updateSpace,
} from './service'

const NoContent = t.Void({ description: 'No content' })

/** Spaces, their Space-scoped tokens and their locales (management API). */
export function spaceRoutes(kernel: Kernel, guards: Guards) {
  return new Elysia({ prefix: '/spaces', tags: ['Spaces'] })
    .use(guards)
    .post(
      '/',
      async ({ principal, body, set }) => {
        set.status = 201
        return { data: await createSpace(kernel, principal, body) }
      },
      {
        userToken: true,
        body: CreateSpaceBody,
        response: { 201: Data(SpaceModel) },
        detail: { summary: 'Create a Space; the creator becomes admin', description: 'Emits space.created. User tokens only.' },
      },
    )
    .get('/', async ({ principal }) => ({ data: await listSpaces(kernel, principal) }), {
      userToken: true,
      response: DataList(SpaceModel),
      detail: { summary: "Every Space of the caller's Tenant the caller is a member of, with the caller's role" },
    })
    .get('/:space', async ({ access }) => ({ data: await getSpace(kernel, access) }), {
      params: SpaceParams,
      spaceRole: 'viewer',
      response: Data(SpaceModel),
      detail: { summary: 'A Space with its locales and the caller’s role' },
    })
    .patch('/:space', async ({ access, body, request }) => ({ data: await updateSpace(kernel, access, body, new URL(publicOrigin(kernel.config, request.url)).origin) }), {
      params: SpaceParams,
      body: UpdateSpaceBody,
      spaceRole: 'admin',
      response: Data(SpaceModel),
      detail: { summary: 'Rename a Space, change its default locale (one of its locales) or set its preview URL' },
    })
    .post('/:space/archive', async ({ access }) => ({ data: await archiveSpace(kernel, access) }), {
      params: SpaceParams,
      spaceRole: 'admin',
      response: Data(SpaceModel),
      detail: { summary: 'Archive a Space: its public surface answers 404 from then on (emits space.archived once)' },
    })
    .post(
      '/:space/tokens',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await createSpaceToken(kernel, access, body) }
      },
      {
        params: SpaceParams,
        body: CreateTokenBody,
        spaceRole: 'admin',
        response: { 201: Data(SpaceTokenCreatedModel) },
        detail: {
          summary: 'Issue a Space-scoped token (the secret is shown once)',
          description:
            'Optional `expires_at` (a date-time in the future): the token answers 401 from then on; without it the token works until revoked. A token is also revoked when its creator leaves or is removed from the Space, and when its creator is demoted below its role (docs/members.md).',
        },
      },
    )
    .get('/:space/tokens', async ({ access }) => ({ data: await listSpaceTokens(kernel, access) }), {
      params: SpaceParams,
      spaceRole: 'admin',
      response: DataList(SpaceTokenModel),
      detail: {
        summary: 'The Space-scoped tokens not revoked (never their secrets), newest first',
        description: '`expires_at`: when it stops working (null: until revoked; an expired token stays listed). `last_used_at`: when it last authenticated a request, to the minute (null: never).',
      },
    })
    .delete(
      '/:space/tokens/:id',
      async ({ access, params, set }) => {
        await revokeSpaceToken(kernel, access, params.id)
        set.status = 204
      },
      { params: TokenParams, spaceRole: 'admin', response: { 204: NoContent }, detail: { summary: 'Revoke a Space-scoped token at once' } },
    )
    .get('/:space/locales', async ({ access }) => ({ data: await listLocales(kernel, access) }), {
      params: SpaceParams,
      spaceRole: 'viewer',
      response: DataList(LocaleModel),
      detail: { summary: 'The locales of a Space in display order, with their fallbacks' },
    })
    .post(
      '/:space/locales',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await addLocale(kernel, access, body) }
      },
      {
        params: SpaceParams,
        body: CreateLocaleBody,
        spaceRole: 'admin',
        response: { 201: Data(LocaleModel) },
        detail: { summary: 'Add a locale, optionally with an explicit fallback' },
      },
    )
    .patch('/:space/locales/:code', async ({ access, params, body }) => ({ data: await updateLocale(kernel, access, params.code, body) }), {
      params: LocaleParams,
      body: UpdateLocaleBody,
      spaceRole: 'admin',
      response: Data(LocaleModel),
      detail: {
        summary: "Change a locale's fallback or move it in the display order",
        description:
          '`fallback`: another locale of the Space (no cycles), or null to remove it. `position`: the 0-based place to move the locale to; the other locales keep their order and every position is renumbered 0…n-1. Emits space.locales_changed when something changed. 404 for a locale the Space does not have; 422 names the field.',
      },
    })
    .delete(
      '/:space/locales/:code',
      async ({ access, params, set }) => {
        await removeLocale(kernel, access, params.code)
        set.status = 204
      },
      {
        params: LocaleParams,
        spaceRole: 'admin',
        response: { 204: NoContent },
        detail: { summary: 'Remove a locale (not the default); its content is kept but no longer served' },
      },
    )
}
