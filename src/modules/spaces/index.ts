import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { spaceEvents } from './events'
import { spaceGraphql } from './graphql'
import { SpaceErrors } from './model'
import { PublicSpaces } from './public'
import { spaceRoutes } from './routes'
import { revokeTokensOfMemberIn } from './service'

/**
 * Spaces, their members' roles, Space-scoped tokens and locales. Its state is the public surface's cache of live
 * Spaces (`publicSpaces`), which every public route resolves `{space}` through (the guards' `publicSpace` macro, fed
 * by `publicSpaceResolver`; the Story read's pipeline holds it directly).
 */
export const spacesModule = defineModule({
  name: 'spaces',
  setup: (kernel) => ({ publicSpaces: new PublicSpaces(kernel) }),
  routes: ({ kernel, guards }) => spaceRoutes(kernel, guards),
  graphql: (builder, self) => spaceGraphql(builder, self),
  errors: Object.values(SpaceErrors),
  events: spaceEvents,
  caches: (self) => [self.publicSpaces.cache],
  // A Space token lives no longer than its creator's access: it is revoked in the transaction that ends (or lowers)
  // the creator's membership, whoever emits the event (docs/members.md).
  inTx: {
    'member.removed': async (tx, e, emit, _self, kernel) => {
      if (e.spaceId !== null) await revokeTokensOfMemberIn(kernel, tx, emit, e.spaceId, e.payload.member.user_id, null)
    },
    'member.role_changed': async (tx, e, emit, _self, kernel) => {
      if (e.spaceId !== null) await revokeTokensOfMemberIn(kernel, tx, emit, e.spaceId, e.payload.member.user_id, e.payload.member.role)
    },
  },
  // The `publicSpace` macro of every module's anonymous routes resolves `{space}` through this cache.
  publicSpaceResolver: (self) => self.publicSpaces,
  rateLimits: [
    // 4.8
    { id: 'spaces.create', method: 'POST', path: '/v1/spaces', limit: 60, windowSeconds: MIN },
    { id: 'spaces.list', method: 'GET', path: '/v1/spaces', limit: 60, windowSeconds: MIN },
  ],
})
