import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { Data, DataList } from '../../kernel/schemas'
import { getStory } from '../stories/service'
import type { LiveHub } from './live'
import {
  CommentListQuery,
  CommentModel,
  CommentParams,
  CreateCommentBody,
  HeartbeatBody,
  HeartbeatModel,
  PresenceModel,
  SessionParams,
  StoryParams,
  UpdateCommentBody,
} from './model'
import type { PresenceRoster } from './roster'
import { createComment, deleteComment, endSession, heartbeat, listComments, listPresence, toggleResolved, updateComment } from './service'

const NoContent = t.Void({ description: 'No content' })
/** Presence answers are JSON text made by the roster (the shapes `response` declares, for OpenAPI). */
const json = (body: string) => new Response(body, { headers: { 'Content-Type': 'application/json' } })

/** Spec 4.10: presence heartbeats and threaded comments on a Story, and its live stream (beyond the spec). */
export function collaborationRoutes(kernel: Kernel, guards: Guards, hub: LiveHub, roster: PresenceRoster) {
  return new Elysia({ prefix: '/spaces/:space/stories/:uuid', tags: ['Collaboration'] })
    .use(guards)
    .post('/presence', async ({ access, params, body }) => json(await heartbeat(kernel, roster, access, params.uuid, body)), {
      params: StoryParams,
      body: HeartbeatBody,
      spaceUser: 'viewer',
      response: Data(HeartbeatModel),
      detail: {
        summary: 'Presence heartbeat (every 15 s); answers the other active sessions',
        description: 'Upserts the session by (Story, session_id). A session belongs to the user who created it (another user: 409 session_taken). Space-scoped tokens (any role): 403 user_required.',
      },
    })
    .get('/presence', async ({ access, params }) => json(await listPresence(kernel, roster, access, params.uuid)), {
      params: StoryParams,
      spaceRole: 'viewer',
      response: DataList(PresenceModel),
      detail: { summary: 'Sessions whose last heartbeat is at most 30 s old' },
    })
    .delete(
      '/presence/:session_id',
      async ({ access, params, set }) => {
        await endSession(kernel, access, params.uuid, params.session_id)
        set.status = 204
      },
      { params: SessionParams, spaceUser: 'viewer', response: { 204: NoContent }, detail: { summary: "End the caller's own session (someone else's: 404)" } },
    )
    .get('/comments', async ({ access, params, query }) => ({ data: await listComments(kernel, access, params.uuid, query.include_resolved === '1') }), {
      params: StoryParams,
      query: CommentListQuery,
      spaceRole: 'viewer',
      response: DataList(CommentModel),
      detail: { summary: 'Comments of the Story, oldest first (resolved threads only with include_resolved=1)' },
    })
    .post(
      '/comments',
      async ({ access, params, body, set }) => {
        set.status = 201
        return { data: await createComment(kernel, access, params.uuid, body) }
      },
      {
        params: StoryParams,
        body: CreateCommentBody,
        spaceUser: 'editor',
        response: { 201: Data(CommentModel) },
        detail: {
          summary: 'Post a comment anchored to a block, or a reply (parent_id: a root comment)',
          description:
            '`block_path` is resolved against the current draft to the block `_uid` (a path to no block: 422); it is required for a root comment (missing: 422 keyed `block_path`). ' +
            'A reply (`parent_id`) takes the root’s anchor: it may leave `block_path` out, and one it sends is ignored. Space-scoped tokens (any role): 403 user_required.',
        },
      },
    )
    .patch('/comments/:id', async ({ access, params, body }) => ({ data: await updateComment(kernel, access, params.uuid, Number(params.id), body) }), {
      params: CommentParams,
      body: UpdateCommentBody,
      spaceUser: 'editor',
      response: Data(CommentModel),
      detail: { summary: 'Edit the body (editors: own comments; admins: any)' },
    })
    .delete(
      '/comments/:id',
      async ({ access, params, set }) => {
        await deleteComment(kernel, access, params.uuid, Number(params.id))
        set.status = 204
      },
      {
        params: CommentParams,
        spaceUser: 'editor',
        response: { 204: NoContent },
        detail: { summary: 'Delete (a root with replies keeps the thread: body null, deleted true)' },
      },
    )
    .post('/comments/:id/resolve', async ({ access, params }) => ({ data: await toggleResolved(kernel, access, params.uuid, Number(params.id)) }), {
      params: CommentParams,
      spaceUser: 'editor',
      response: Data(CommentModel),
      detail: { summary: 'Toggle a thread resolved (editors: threads they started; admins: any; a reply: 422)' },
    })
    .get(
      '/live',
      async ({ access, params, set, request, server }) => {
        const story = await getStory(kernel, access, params.uuid) // 404 before the stream opens
        // The stream is quiet between events: exempt it from the idle timeout (keep-alive comments still flow).
        server?.timeout(request, 0)
        return hub.open(story.uuid, access.space.id, access.principal, set.headers as Record<string, string>)
      },
      {
        params: StoryParams,
        spaceRole: 'viewer',
        detail: {
          summary: 'Live stream of the Story (Server-Sent Events)',
          description:
            'Events: `presence` (a session joined, moved or left), `comment` (created, edited, deleted, resolved, reopened), `story` (a new version was saved), `shutdown` (`{reason: "server_shutdown", retry_ms}`: this instance is stopping; the stream ends next and EventSource reconnects after `retry_ms`, through the load balancer, to a running instance), `closing` (`{reason, retry_ms}`, then the stream ends: `lifetime` — it was open LIVE_STREAM_MAX_SECONDS, or its token expired; reconnect after `retry_ms`, access is checked anew — or `access_ended` — the caller was removed from the Space, or its token was revoked or signed out; a reconnect would be refused). Changes made on any instance arrive. A comment line every 25 s keeps proxies from closing the stream. One account (all its sessions) or Space token holds at most LIVE_STREAMS_PER_PRINCIPAL streams on an instance: one more is 429 `rate_limited`.',
          responses: {
            200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
            429: {
              description:
                '`rate_limited`: this account (all its sessions) or Space token holds LIVE_STREAMS_PER_PRINCIPAL streams on this instance already; `Retry-After`, `RateLimit-Limit` and `RateLimit-Remaining: 0` are set',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
            },
          },
        },
      },
    )
}
