import { defineModule } from '../../kernel/module'
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
  // The app's files are read and compressed on the first request for them (the executable's embedded files; run from
  // source, the app is built then): an instance that serves only the public API never holds them, and doing it at
  // start-up took the executable ~80 MB above its resting RSS just after ready. The first visitor waits for it once
  // (brotli and gzip of ~700 KB of JavaScript, file by file: a few hundred milliseconds).
})
