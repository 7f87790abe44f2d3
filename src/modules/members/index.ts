import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { memberEvents } from './events'
import { MemberErrors } from './model'
import { memberRoutes } from './routes'

/**
 * The people of a Space: members and their roles, the roles table, and `whoami`. Access is read from `memberships`
 * by the one Space guard on every request, so a change takes effect on every instance at commit.
 */
export const membersModule = defineModule({
  name: 'members',
  routes: ({ kernel, guards, routeTable }) => memberRoutes(kernel, guards, routeTable),
  errors: Object.values(MemberErrors),
  events: memberEvents,
  rateLimits: [{ id: 'members.whoami', method: 'GET', path: '/v1/whoami', limit: 120, windowSeconds: MIN }],
})
