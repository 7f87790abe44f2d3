import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { Int, IntId, SpaceSlug, Timestamp, Uuid } from '../../kernel/schemas'
import { BLOCK_PATH_PATTERN } from './anchor'

export const CollaborationErrors = {
  sessionTaken: defineError('session_taken', 409, 'The presence session id belongs to another user.'),
}

const UUID_V4_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$'

export const BlockPath = t.String({
  pattern: BLOCK_PATH_PATTERN,
  maxLength: 256,
  error: 'must be a block path such as blocks/3 or blocks/3/headline (at most 256 characters)',
  description: 'A block of the Story draft by position (`blocks/3`), optionally a field below it (`blocks/3/headline`)',
})

export const StoryParams = t.Object({ space: SpaceSlug, uuid: Uuid })
export const SessionParams = t.Object({ space: SpaceSlug, uuid: Uuid, session_id: Uuid })
export const CommentParams = t.Object({ space: SpaceSlug, uuid: Uuid, id: IntId })

const Position = Int({ minimum: 0, maximum: 2_147_483_647, error: 'must be a non-negative integer' })

export const HeartbeatBody = t.Object({
  session_id: t.String({ pattern: UUID_V4_PATTERN, error: 'must be a UUID v4', description: 'Client-generated UUID v4' }),
  block_path: BlockPath,
  selection: t.Object({ anchor: Position, head: Position }),
})

export const PresenceModel = t.Object({
  session_id: t.String(),
  user_id: Int(),
  user_name: t.String(),
  block_path: t.String(),
  selection: t.Object({ anchor: Int(), head: Int() }),
  last_seen: Timestamp,
})
export type PresenceView = typeof PresenceModel.static

export const HeartbeatModel = t.Object({
  session_id: t.String(),
  last_seen: Timestamp,
  active: t.Array(PresenceModel, { description: 'The other sessions active on this Story (heartbeat at most 30 s old)' }),
})

const CommentBodyText = t.String({ minLength: 1, maxLength: 10_000, error: 'must be 1 to 10,000 characters' })

export const CreateCommentBody = t.Object({
  block_path: t.Optional(BlockPath), // required for a root comment (the service says so, keyed block_path); a reply takes its root's
  body: CommentBodyText,
  parent_id: t.Optional(t.Union([Int({ minimum: 1, maximum: 2_147_483_647 }), t.Null()], { error: 'must be a root comment id or null' })),
})
export const UpdateCommentBody = t.Object({ body: CommentBodyText })
export const CommentListQuery = t.Object({
  include_resolved: t.Optional(t.Union([t.Literal('0'), t.Literal('1')], { error: 'must be 0 or 1', description: '1: include resolved threads (default 0)' })),
})

export const CommentModel = t.Object({
  id: Int(),
  block_path: t.String({ description: 'Recomputed from the anchored block on every read; the last known path when the block is gone' }),
  block_uid: t.String(),
  body: t.Union([t.String(), t.Null()], { description: 'Verbatim (clients escape); null for a deleted root that keeps its replies' }),
  parent_id: t.Union([Int(), t.Null()]),
  resolved: t.Boolean(),
  author: t.Object({ id: Int(), name: t.String() }),
  created_at: Timestamp,
  updated_at: Timestamp,
  edited: t.Boolean(),
  orphaned: t.Boolean({ description: 'The anchored block is no longer in the draft' }),
  deleted: t.Boolean(),
})
export type CommentView = typeof CommentModel.static
