import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { previewCdnRoutes, previewRoutes } from './routes'
import { snapshotOf, verifyPreviewToken } from './service'

/**
 * Preview tokens (docs/in-page-editing.md): an editor mints a one-hour, read-only token of a Space for the site
 * preview; draft reads accept it through the kernel's `requireDraftReader` (this module provides the verifier), and
 * `/service-admin.js` checks it at `GET /cdn/{space}/preview` before it shows Edit buttons and drafts.
 */
export const previewModule = defineModule({
  name: 'preview',
  routes: ({ kernel, guards }) => previewRoutes(kernel, guards),
  publicRoutes: ({ kernel, guards }) => previewCdnRoutes(kernel, guards),
  previewTokens: (_self, kernel) => ({
    verify: (token) => verifyPreviewToken(kernel, token),
    snapshot: (grant, storyUuid, lang) => snapshotOf(kernel, grant, storyUuid, lang),
  }),
  rateLimits: [
    { id: 'preview.mint', method: 'POST', path: '/v1/spaces/:space/preview-tokens', limit: 30, windowSeconds: MIN },
    { id: 'preview.snapshot', method: 'PUT', path: '/v1/spaces/:space/preview-tokens/:token/draft', limit: 240, windowSeconds: MIN },
    { id: 'cdn.preview', method: 'GET', path: '/v1/cdn/:space/preview', limit: 120, windowSeconds: MIN },
  ],
})
