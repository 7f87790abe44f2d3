import { t } from 'elysia'
import { SpaceSlug, Timestamp } from '../../kernel/schemas'

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

/** The largest snapshot content, as JSON text: larger answers 413. */
export const MAX_SNAPSHOT_BYTES = 512 * 1024
/** Stories (and locales) one preview token holds snapshots of: one more answers 409. */
export const MAX_SNAPSHOTS_PER_TOKEN = 20
/** Blocks of one snapshot, all levels together, and how deep they nest. */
export const MAX_SNAPSHOT_BLOCKS = 2000
export const MAX_SNAPSHOT_DEPTH = 8

export const SnapshotParams = t.Object({
  space: SpaceSlug,
  token: t.String({ pattern: '^p_[A-Za-z0-9_-]{12}$', error: 'must be the id of a preview token (`p_` and 12 characters)', description: 'The public half of the preview token (`p_…` before the dot)' }),
})

export const SnapshotBody = t.Object({
  story_uuid: t.String({ format: 'uuid', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', error: 'must be a uuid' }),
  lang: t.String({ minLength: 1, maxLength: 35, pattern: '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$', error: 'must be a BCP-47 language tag', description: 'The locale the editor edits' }),
  name: t.Optional(t.String({ minLength: 1, maxLength: 255, description: 'The Story name being edited (the saved one when omitted)' })),
  content: t.Unknown({ description: "The editor's unsaved document: `{type: 'doc', blocks: [...]}`, every block an object with `_uid` and `component` (at most 512 KB as JSON, 2,000 blocks, 8 levels)" }),
})

export const SnapshotModel = t.Object({
  story_uuid: t.String(),
  lang: t.String(),
  bytes: t.Integer(),
  expires_at: Timestamp,
})
export type SnapshotView = typeof SnapshotModel.static
