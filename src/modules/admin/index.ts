import { defineModule } from '../../kernel/module'
import { adminRoutes } from './routes'

/**
 * The admin web app (admin/): its HTML and hashed files at /admin, embedded in the executable by `bun build --compile`
 * (src/modules/admin/bundle.ts). The app is a client of the public API like any other; this module has no API routes.
 */
export const adminModule = defineModule({
  name: 'admin',
  root: () => adminRoutes(),
})
