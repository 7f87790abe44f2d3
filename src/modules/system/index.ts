import { defineModule } from '../../kernel/module'
import { scriptRoutes, versionRoutes } from './routes'

/** Discovery (spec 9): GET /version and the embed scripts. The OpenAPI description is the runtime's (src/openapi.ts). */
export const systemModule = defineModule({
  name: 'system',
  // Public, but outside /cdn: the version endpoint is never rate limited (spec 9).
  publicRoutes: ({ kernel }) => versionRoutes(kernel),
  publicCors: { paths: ['/embed', '/service-admin.js', '/v1/version', '/version'] },
  root: () => scriptRoutes(),
})
