import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { spaceEvents } from './events'
import { spaceGraphql } from './graphql'
import { SpaceErrors } from './model'
import { PublicSpaces } from './public'
import { spaceRoutes } from './routes'

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
  // The `publicSpace` macro of every module's anonymous routes resolves `{space}` through this cache.
  publicSpaceResolver: (self) => self.publicSpaces,
  rateLimits: [
    // 4.8
    { id: 'spaces.create', method: 'POST', path: '/v1/spaces', limit: 60, windowSeconds: MIN },
    { id: 'spaces.list', method: 'GET', path: '/v1/spaces', limit: 60, windowSeconds: MIN },
  ],
})
