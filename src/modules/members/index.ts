import { MailErrors } from '../../kernel/mail'
import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { authModule } from '../auth'
import { hasLiveInvitation } from './invitations'
import { memberEvents } from './events'
import { InvitationErrors, MemberErrors } from './model'
import { memberRoutes } from './routes'
import type { MembersState } from './state'

/**
 * The people of a Space: members and their roles, invitations, the roles table, and `whoami`. Access is read from `memberships`
 * by the one Space guard on every request, so a change takes effect on every instance at commit.
 */
export const membersModule = defineModule({
  name: 'members',
  setup: (kernel, use) => {
    // An invited address may sign up even when REGISTRATION refuses walk-ins.
    use(authModule).signUpAllowances.push((email, tx) => hasLiveInvitation(kernel, tx, email))
    const state: MembersState = { planOf: null }
    return state
  },
  routes: ({ kernel, guards, routeTable, self }) => memberRoutes(kernel, guards, routeTable, self),
  errors: [...Object.values(MemberErrors), ...Object.values(InvitationErrors), MailErrors.linksUnavailable],
  events: memberEvents,
  // The invitation token is in these paths: the request log writes the route pattern and no client address.
  privatePaths: ['/v1/invite/:token', '/v1/invite/:token/accept', '/v1/invite/:token/decline'],
  rateLimits: [
    { id: 'members.whoami', method: 'GET', path: '/v1/whoami', limit: 120, windowSeconds: MIN },
    // §4.7: the invitation link's three routes, 30 per minute per IP each.
    { id: 'members.invite.preview', method: 'GET', path: '/v1/invite/:token', limit: 30, windowSeconds: MIN },
    { id: 'members.invite.accept', method: 'POST', path: '/v1/invite/:token/accept', limit: 30, windowSeconds: MIN },
    { id: 'members.invite.decline', method: 'POST', path: '/v1/invite/:token/decline', limit: 30, windowSeconds: MIN },
    // Not stated by the spec: each invitation sends a mail, so an admin (or a stolen token) cannot spray them.
    { id: 'members.invite.create', method: 'POST', path: '/v1/spaces/:space/invitations', limit: 30, windowSeconds: MIN },
    { id: 'members.invite.resend', method: 'POST', path: '/v1/spaces/:space/invitations/:id/resend', limit: 30, windowSeconds: MIN },
  ],
})
