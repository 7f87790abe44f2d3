import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { Int, IntId, oneOf, PageMeta, pageQuery, SpaceSlug, Timestamp } from '../../kernel/schemas'

export const MemberErrors = {
  lastAdmin: defineError('last_admin', 409, 'The last admin of a Space cannot be removed or demoted; make someone else admin first.'),
}

export const RoleName = oneOf(['viewer', 'editor', 'admin'], { error: 'must be viewer, editor or admin' })

export const MembersQuery = pageQuery(100, 50)
export const MemberParams = t.Object({
  space: SpaceSlug,
  userId: t.String({ pattern: '^(me|[1-9][0-9]{0,9})$', description: 'A user id, or `me` for the caller', error: 'must be a user id or me' }),
})
export const UpdateMemberBody = t.Object({ role: RoleName })

export const MemberModel = t.Object({
  user: t.Object({ id: Int(), name: t.String(), email: t.String() }),
  role: RoleName,
  joined_at: Timestamp,
})
export type MemberView = typeof MemberModel.static
export const MembersPage = t.Object({ data: t.Array(MemberModel), meta: PageMeta })

export const RoleModel = t.Object({
  role: RoleName,
  description: t.String(),
  includes: t.Union([RoleName, t.Null()], { description: 'The next lower role, whose every operation this role may also call' }),
  operations: t.Array(
    t.Object({ method: t.String(), path: t.String(), summary: t.String() }),
    { description: 'The Space operations that need exactly this role (read from the route guards themselves)' },
  ),
})
export type RoleView = typeof RoleModel.static

const PlanLimit = t.Union([Int({ minimum: 0 }), t.Null()], { description: 'null: unlimited' })

/** The Tenant's plan as whoami shows it, filled through the `planOf` slot (a billing module sets it). */
export const WhoamiPlanModel = t.Object({
  name: t.String(),
  limits: t.Object({
    spaces: PlanLimit,
    stories_per_space: PlanLimit,
    asset_bytes: PlanLimit,
    members_per_space: PlanLimit,
    requests_per_month: PlanLimit,
  }),
})
export type WhoamiPlanView = typeof WhoamiPlanModel.static

export const WhoamiModel = t.Object({
  user: t.Union([t.Object({ id: Int(), email: t.String(), name: t.String() }), t.Null()], {
    description: 'The signed-in user; null for a Space-scoped token (it acts for its Space, not for a person)',
  }),
  tenant: t.Object({ id: Int(), name: t.String() }),
  token: t.Object({
    type: oneOf(['user', 'space']),
    space: t.Optional(t.String({ description: 'Space-scoped tokens: the Space slug' })),
    role: t.Optional(RoleName),
    expires_at: t.Union([Timestamp, t.Null()]),
  }),
  spaces: t.Array(t.Object({ slug: t.String(), name: t.String(), role: RoleName }), {
    description: 'The Spaces the caller can open, with its role in each (a Space-scoped token: its one Space)',
  }),
  plan: t.Union([WhoamiPlanModel, t.Null()], { description: "The caller's Tenant's plan and its limits (null: no billing module is installed)" }),
})
export type WhoamiView = typeof WhoamiModel.static

// ---- Invitations ----

export const InvitationErrors = {
  alreadyMember: defineError('already_member', 409, 'This address belongs to a member of the Space already.'),
  invitationPending: defineError('invitation_pending', 409, 'This address has a pending invitation to the Space already (resend it instead).'),
  invitationLimit: defineError('invitation_limit', 409, 'The Space has 50 pending invitations; revoke some or wait for answers.'),
  emailMismatch: defineError('email_mismatch', 403, 'The invitation was sent to another e-mail address than the signed-in user has.'),
}

const EMAIL = '^[^\\s@<>()",;:\\\\\\[\\]]{1,64}@[^\\s@<>()",;:\\\\\\[\\]]+\\.[^\\s@<>()",;:\\\\\\[\\]]{2,}$'
export const CreateInvitationBody = t.Object({
  email: t.String({ pattern: EMAIL, maxLength: 254, error: 'must be a valid e-mail address' }),
  role: RoleName,
})
export const InvitationParams = t.Object({ space: SpaceSlug, id: IntId })
export const InviteTokenParams = t.Object({
  token: t.String({ pattern: '^[A-Za-z0-9_-]{43}$', description: 'The token from the invitation link' }),
})

export const InvitationModel = t.Object({
  id: Int(),
  email: t.String(),
  role: RoleName,
  status: oneOf(['pending', 'accepted', 'declined', 'revoked', 'expired']),
  invited_by: t.Union([t.Object({ id: Int(), name: t.String() }), t.Null()]),
  created_at: Timestamp,
  sent_at: Timestamp,
  expires_at: Timestamp,
})
export type InvitationView = typeof InvitationModel.static

export const InvitationPreviewModel = t.Object({
  space: t.Object({ slug: t.String(), name: t.String() }),
  role: RoleName,
  invited_by: t.Object({ name: t.String() }),
  email: t.String({ description: 'The invited address, masked (a•••@example.com)' }),
  expires_at: Timestamp,
  account_exists: t.Boolean({ description: 'Whether an account with that address exists (sign in to accept) or must be registered first' }),
})
export type InvitationPreviewView = typeof InvitationPreviewModel.static

export const AcceptedModel = t.Object({
  space: t.Object({ slug: t.String(), name: t.String() }),
  role: RoleName,
})
