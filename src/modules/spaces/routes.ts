import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import type { Guards } from '../../kernel/plugin'
import { CreateSpaceBody, CreateTokenBody, SpaceParams, UpdateSpaceBody } from './model'
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

export function spaceRoutes(deps: Deps, guards: Guards) {
  return new Elysia({ prefix: '/spaces', tags: ['Spaces'] })
    .use(guards)
    .post(
      '/',
      async ({ principal, body, set }) => {
        set.status = 201
        return { data: await createSpace(deps, principal as never, body) }
      },
      { userToken: true, body: CreateSpaceBody, detail: { summary: 'Create a Space; the creator becomes admin' } },
    )
    .get('/', async ({ principal }) => ({ data: await listSpaces(deps, principal as never) }), {
      userToken: true,
      detail: { summary: "Every Space of the caller's Tenant with the caller's role" },
    })
    .get('/:space', async ({ access }) => ({ data: await getSpace(deps, access) }), {
      params: SpaceParams,
      spaceRole: 'viewer',
    })
    .patch('/:space', async ({ access, body }) => ({ data: await updateSpace(deps, access, body) }), {
      params: SpaceParams,
      body: UpdateSpaceBody,
      spaceRole: 'admin',
    })
    .post('/:space/archive', async ({ access }) => ({ data: await archiveSpace(deps, access) }), {
      params: SpaceParams,
      spaceRole: 'admin',
    })
    .post(
      '/:space/tokens',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await createSpaceToken(deps, access, body) }
      },
      { params: SpaceParams, body: CreateTokenBody, spaceRole: 'admin', detail: { summary: 'Issue a Space-scoped token (shown once)' } },
    )
    .get('/:space/tokens', async ({ access }) => ({ data: await listSpaceTokens(deps, access) }), {
      params: SpaceParams,
      spaceRole: 'admin',
    })
    .delete(
      '/:space/tokens/:id',
      async ({ access, params, set }) => {
        await revokeSpaceToken(deps, access, params.id)
        set.status = 204
      },
      { params: t.Object({ space: t.String(), id: t.String() }), spaceRole: 'admin' },
    )
}
