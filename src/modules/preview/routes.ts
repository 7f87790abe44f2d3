import { Elysia } from 'elysia'
import { notFound, unauthorized } from '../../kernel/errors'
import { publicOrigin } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { previewBearer } from '../../kernel/preview'
import { Data, ErrorBody, SpaceParams } from '../../kernel/schemas'
import { MintPreviewBody, PreviewSessionModel, PreviewTokenModel, SnapshotBody, SnapshotModel, SnapshotParams } from './model'
import { mintPreviewToken, putSnapshot, verifyPreviewToken } from './service'

/** POST /spaces/{space}/preview-tokens (editor+): a one-hour, read-only preview token of the Space. */
export function previewRoutes(kernel: Kernel, guards: Guards) {
  return new Elysia({ prefix: '/spaces/:space/preview-tokens', tags: ['Preview'] }).use(guards).post(
    '',
    async ({ access, body, set }) => {
      set.status = 201
      set.headers['cache-control'] = 'no-store'
      return { data: await mintPreviewToken(kernel, access, body ?? {}) }
    },
    {
      params: SpaceParams,
      body: MintPreviewBody,
      spaceRole: 'editor',
      response: { 201: Data(PreviewTokenModel) },
      detail: {
        summary: 'Mint a preview token: read-only drafts of this Space for one hour (the site preview and its bridge)',
        description:
          'The token reads drafts (`GET /cdn/{space}/stories/{path}?version=draft`) and answers `GET /cdn/{space}/preview`; every other route answers it 401, and other Spaces 404. Shown once, stored hashed. See docs/in-page-editing.md.',
      },
    },
  ).put(
    '/:token/draft',
    async ({ access, body, params, set }) => {
      set.headers['cache-control'] = 'no-store'
      return { data: await putSnapshot(kernel, access, params.token, body) }
    },
    {
      params: SnapshotParams,
      body: SnapshotBody,
      spaceRole: 'editor',
      response: { 200: Data(SnapshotModel), 404: ErrorBody, 409: ErrorBody, 413: ErrorBody, 422: ErrorBody },
      detail: {
        summary: "Store the editor's unsaved content of a Story against a preview token (the visual editor's draft snapshot)",
        description:
          "Until the token expires, a draft read with that token (`GET /cdn/{space}/stories/{path}?version=draft`) answers this content (and name) for this Story and locale in place of the saved draft. Never a version, never published, invisible to every other reader. Only the user who minted the token (or a token acting for them) may write it: another Space's token, an expired or unknown one answers 404. At most 512 KB of content (413) and 20 Stories and locales per token (409). See docs/in-page-editing.md.",
      },
    },
  )
}

/** GET /cdn/{space}/preview: the bridge's check of its preview token. */
export function previewCdnRoutes(kernel: Kernel, guards: Guards) {
  return new Elysia({ prefix: '/cdn/:space', tags: ['Preview'] }).use(guards).get(
    '/preview',
    async ({ space, request, set }) => {
      set.headers['cache-control'] = 'private, no-store'
      const token = previewBearer(request.headers.get('authorization'))
      const grant = token === null ? null : await verifyPreviewToken(kernel, token)
      if (!grant) throw unauthorized('A valid preview token is required: open the preview from the editor.')
      if (grant.spaceId !== space.id) throw notFound('Space')
      return {
        data: {
          space: space.slug,
          expires_at: grant.expiresAt.toISOString(),
          admin_url: `${publicOrigin(kernel.config, request.url)}/admin/spaces/${encodeURIComponent(space.slug)}`,
        },
      }
    },
    {
      params: SpaceParams,
      publicSpace: true,
      response: { 200: Data(PreviewSessionModel), 401: ErrorBody },
      detail: {
        summary: 'Check a preview token (Authorization: Bearer p_…): its Space, expiry and the admin app’s URL',
        security: [{ preview: [] }],
        description: 'What `/service-admin.js` asks before it shows anything: 401 for a missing, invalid or expired preview token, 404 for a token of another Space.',
      },
    },
  )
}
