import { t } from 'elysia'
import { Timestamp } from '../../kernel/schemas'

/** How long a preview token lives: one hour from minting (docs/in-page-editing.md). */
export const PREVIEW_TOKEN_TTL_MS = 60 * 60 * 1000

export const MintPreviewBody = t.Object({
  path: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 1024,
      pattern: '^/',
      error: "must be a path starting with '/' (at most 1,024 characters)",
      description: "The Story's full path (`/blog/hello`): `url` is the Space's preview URL with it appended",
    }),
  ),
})

export const PreviewTokenModel = t.Object({
  token: t.String({ description: 'The bearer token (`p_<id>.<secret>`): shown this once, stored only as a hash' }),
  expires_at: Timestamp,
  space: t.String(),
  url: t.Union([t.String(), t.Null()], {
    description:
      "The page to open: the Space's preview URL (+ `path`) with `#service-preview=<token>&space=<space>`; null when the Space has no preview URL",
  }),
})
export type PreviewTokenView = typeof PreviewTokenModel.static

export const PreviewSessionModel = t.Object({
  space: t.String(),
  expires_at: Timestamp,
  admin_url: t.String({ description: "The admin app's page of this Space: a Story opens at `{admin_url}/stories/{uuid}`" }),
})
export type PreviewSessionView = typeof PreviewSessionModel.static
