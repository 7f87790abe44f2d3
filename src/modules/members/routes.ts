import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { RouteSummary } from '../../kernel/module'
import type { Guards } from '../../kernel/guards'
import { Data, DataList, SpaceParams } from '../../kernel/schemas'
import {
  AcceptedModel,
  CreateInvitationBody,
  InvitationModel,
  InvitationParams,
  InvitationPreviewModel,
  InviteTokenParams,
  MemberModel,
  MemberParams,
  MembersPage,
  MembersQuery,
  RoleModel,
  UpdateMemberBody,
  WhoamiModel,
} from './model'
import {
  acceptInvitation,
  createInvitation,
  declineInvitation,
  listInvitations,
  previewInvitation,
  resendInvitation,
  revokeInvitation,
} from './invitations'
import type { MembersState } from './state'
import { changeMemberRole, describeRoles, listMembers, removeMember, whoami } from './service'

/**
 * Members of a Space and their roles (§4.8 "Roles"), invitations (§4.8 "Invitations", §4.7 `/invite/{token}`) and
 * `GET /whoami` (§4.8 "Whoami").
 */
export function memberRoutes(kernel: Kernel, guards: Guards, routeTable: () => readonly RouteSummary[], self: MembersState) {
  return new Elysia({ tags: ['Members and roles'] })
    .use(guards)
    .get('/spaces/:space/members', ({ access, query }) => listMembers(kernel, access, query), {
      params: SpaceParams,
      query: MembersQuery,
      spaceRole: 'admin',
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
    .get('/whoami', async ({ principal }) => ({ data: await whoami(kernel, principal, self.planOf) }), {
      authenticated: true,
      response: Data(WhoamiModel),
      detail: { summary: 'The caller in one call: user, Tenant, token, and the Spaces it can open with its role in each' },
    })
    .post(
      '/spaces/:space/invitations',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await createInvitation(kernel, access, body) }
      },
      {
        params: SpaceParams,
        body: CreateInvitationBody,
        spaceRole: 'admin',
        response: { 201: Data(InvitationModel) },
        detail: {
          summary: 'Invite an e-mail address to the Space with a role; the link is mailed (valid 7 days, once)',
          description:
            'The mailed link is `{PUBLIC_URL}/invite/{token}`, built from PUBLIC_URL only (never the request’s Host): without PUBLIC_URL 403 `mail_links_unavailable` and nothing is stored.',
        },
      },
    )
    .get('/spaces/:space/invitations', async ({ access }) => ({ data: await listInvitations(kernel, access) }), {
      params: SpaceParams,
      spaceRole: 'admin',
      response: DataList(InvitationModel),
      detail: { summary: 'The pending invitations of the Space, oldest first' },
    })
    .delete(
      '/spaces/:space/invitations/:id',
      async ({ access, params, set }) => {
        await revokeInvitation(kernel, access, params.id)
        set.status = 204
      },
      {
        params: InvitationParams,
        spaceRole: 'admin',
        response: { 204: t.Void() },
        detail: { summary: 'Revoke a pending invitation; its link answers 404 from then on' },
      },
    )
    .post(
      '/spaces/:space/invitations/:id/resend',
      async ({ access, params }) => ({
        data: await resendInvitation(kernel, access, params.id),
      }),
      {
        params: InvitationParams,
        spaceRole: 'admin',
        response: Data(InvitationModel),
        detail: {
          summary: 'Mail a pending invitation again with a fresh link and a fresh 7 days; the old link stops working',
          description: 'Without PUBLIC_URL 403 `mail_links_unavailable` and the invitation is left as it was.',
        },
      },
    )
    .get('/invite/:token', async ({ params }) => ({ data: await previewInvitation(kernel, params.token) }), {
      params: InviteTokenParams,
      response: Data(InvitationPreviewModel),
      detail: { summary: 'Preview an invitation (anonymous): Space, role, inviter, masked address; unknown, used or expired: 404' },
    })
    .post('/invite/:token/accept', async ({ principal, params }) => ({ data: await acceptInvitation(kernel, principal, params.token) }), {
      params: InviteTokenParams,
      userToken: true,
      response: Data(AcceptedModel),
      detail: { summary: "Accept an invitation as the signed-in user (its e-mail must be the invited one: else 403 email_mismatch)" },
    })
    .post(
      '/invite/:token/decline',
      async ({ params, set }) => {
        await declineInvitation(kernel, params.token)
        set.status = 204
      },
      {
        params: InviteTokenParams,
        response: { 204: t.Void() },
        detail: { summary: 'Decline an invitation (anonymous: the link is the capability); the link is spent' },
      },
    )
}
