import { defineModule } from '../../kernel/module'
import { adminEmbedded, loadAdminBundle } from './bundle'
import { adminRoutes } from './routes'

/**
 * The admin web app (admin/): its HTML and hashed files at /admin, embedded in the executable by `bun build --compile`
 * (src/modules/admin/bundle.ts). The app is a client of the public API like any other; this module has no API routes.
 */
export const adminModule = defineModule({
  name: 'admin',
  root: ({ kernel }) => adminRoutes(kernel),
  // The invitation link's token is in its path (as for /v1/invite/:token in the members module).
  privatePaths: ['/invite/:token'],
  // The executable reads and compresses its embedded files while it starts, off the event loop, so the first visitor
  // does not wait. Run from source, the app is built on its first request instead (tests never pay for it).
  start: (_self, kernel) => {
    if (adminEmbedded()) void loadAdminBundle().catch((err) => kernel.logger.error('the admin app could not be loaded', { error: String(err) }))
  },
})
