import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { RouteSummary } from '../../kernel/module'
import type { Guards } from '../../kernel/plugin'
import { Data, DataList, SpaceParams } from '../../kernel/schemas'
import { MemberModel, MemberParams, MembersPage, MembersQuery, RoleModel, UpdateMemberBody, WhoamiModel } from './model'
import { changeMemberRole, describeRoles, listMembers, removeMember, whoami } from './service'

/** Members of a Space and their roles (§4.8 "Roles"), and `GET /whoami` (§4.8 "Whoami"). */
export function memberRoutes(kernel: Kernel, guards: Guards, routeTable: () => readonly RouteSummary[]) {
  return new Elysia({ tags: ['Members and roles'] })
    .use(guards)
    .get('/spaces/:space/members', ({ access, query }) => listMembers(kernel, access, query), {
      params: SpaceParams,
      query: MembersQuery,
      spaceRole: 'viewer',
      response: MembersPage,
      detail: { summary: 'The members of the Space with their roles, oldest first (per_page default 50, max 100)' },
    })
    .patch(
      '/spaces/:space/members/:userId',
      async ({ access, params, body }) => ({ data: await changeMemberRole(kernel, access, params.userId, body.role) }),
      {
        params: MemberParams,
        body: UpdateMemberBody,
        spaceRole: 'admin',
        response: Data(MemberModel),
        detail: { summary: "Change a member's role; the last admin cannot be demoted (409 last_admin)" },
      },
    )
    .delete(
      '/spaces/:space/members/:userId',
      async ({ access, params, set }) => {
        await removeMember(kernel, access, params.userId)
        set.status = 204
      },
      {
        params: MemberParams,
        // Any member may leave (`me`); removing someone else needs admin, checked by the service.
        spaceRole: 'viewer',
        response: { 204: t.Void() },
        detail: { summary: 'Remove a member (admin), or leave the Space yourself with `me`; the last admin cannot go (409 last_admin)' },
      },
    )
    .get('/spaces/:space/roles', () => ({ data: describeRoles(routeTable()) }), {
      params: SpaceParams,
      spaceRole: 'viewer',
      response: DataList(RoleModel),
      detail: { summary: 'The three roles and the operations each adds, read from the route guards themselves' },
    })
    .get('/whoami', async ({ principal }) => ({ data: await whoami(kernel, principal) }), {
      authenticated: true,
      response: Data(WhoamiModel),
      detail: { summary: 'The caller in one call: user, Tenant, token, and the Spaces it can open with its role in each' },
    })
}
