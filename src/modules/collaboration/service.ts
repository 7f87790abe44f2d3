import { and, asc, eq, lt, ne, sql } from 'drizzle-orm'
import { comments, presenceSessions } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { roleAtLeast } from '../../kernel/auth'
import { forbidden, KernelErrors, notFound, validationFailed } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import { rowsOf, type Tx } from '../../kernel/db'
import { userNames } from '../auth/service'
import { getStory, storyRefOrFail } from '../stories/service'
import { blockPaths, resolveAnchor } from './anchor'
import './events'
import { CollaborationErrors, type CommentView } from './model'
import type { PresenceRoster } from './roster'

export const PRUNE_AFTER_MS = 5 * 60_000

type CommentRow = typeof comments.$inferSelect

/** The acting person: Space-scoped tokens act for no one, so they may read but not write (the routes' `spaceUser` guard). */
function actor(access: SpaceAccess): number {
  if (access.principal.kind !== 'user') throw KernelErrors.userRequired()
  return access.principal.userId
}

async function storyOf(kernel: Kernel, access: SpaceAccess, uuid: string) {
  const story = await getStory(kernel, access, uuid) // 404 for a Story of another Space
  return { id: story.id, uuid: story.uuid, content: story.content as unknown }
}

// ---- Presence ----

/** Presence needs the Story's id and uuid only, not its content. */
const presenceStory = (kernel: Kernel, access: SpaceAccess, uuid: string) => storyRefOrFail(kernel.db.db, access.space.id, uuid)

/**
 * One heartbeat: one statement writes the session and reads what it was (a session of another user: 409), inside a
 * transaction that also records `presence.changed` when the session joined or moved to another block. The answer is
 * JSON text made from the Story's roster (each session's JSON made once per change), not a query per beat.
 */
export async function heartbeat(
  kernel: Kernel,
  roster: PresenceRoster,
  access: SpaceAccess,
  uuid: string,
  input: { session_id: string; block_path: string; selection: { anchor: number; head: number } },
): Promise<string> {
  const userId = actor(access)
  const story = await presenceStory(kernel, access, uuid)
  const sessionId = input.session_id.toLowerCase()
  const now = kernel.clock.now()
  const lastSeen = now.toISOString()
  const selection = { anchor: input.selection.anchor, head: input.selection.head }
  const userName = await roster.nameOf(userId)
  const session = { session_id: sessionId, user_id: userId, user_name: userName, block_path: input.block_path, selection, last_seen: lastSeen, left: false }
  const emitted = await transact(kernel, async (tx, emit) => {
    const [row] = rowsOf<{ prev_user: number | null; prev_block: string | null }>(
      await tx.execute(sql`
        with prev as (
          select user_id, block_path from presence_sessions where story_id = ${story.id} and session_id = ${sessionId} for update
        )
        insert into presence_sessions (story_id, session_id, space_id, user_id, block_path, selection, last_seen)
        values (${story.id}, ${sessionId}, ${access.space.id}, ${userId}, ${input.block_path}, ${JSON.stringify(selection)}::jsonb, ${lastSeen}::timestamptz)
        on conflict (story_id, session_id) do update
          set block_path = excluded.block_path, selection = excluded.selection, last_seen = excluded.last_seen
          where presence_sessions.user_id = excluded.user_id
        returning (select user_id from prev) as prev_user, (select block_path from prev) as prev_block`),
    )
    if (!row) throw CollaborationErrors.sessionTaken() // the row is someone else's: the update's condition failed
    if (row.prev_user !== null && row.prev_block === input.block_path) return false
    emit({ type: 'presence.changed', spaceId: access.space.id, payload: { story_uuid: story.uuid, ...session } })
    return true
  })
  // A beat that changed no block announces nothing: this instance's roster takes it now, the others' at their next
  // read of the database. A change reaches every roster (this one included) through presence.changed.
  if (!emitted) roster.apply(story.uuid, session)
  return `{"data":{"session_id":${JSON.stringify(sessionId)},"last_seen":"${lastSeen}","active":${await roster.activeJson(story, sessionId)}}}`
}

/** The active sessions as JSON text (`{"data": [...]}`). */
export async function listPresence(kernel: Kernel, roster: PresenceRoster, access: SpaceAccess, uuid: string): Promise<string> {
  return `{"data":${await roster.activeJson(await presenceStory(kernel, access, uuid))}}`
}

export async function endSession(kernel: Kernel, access: SpaceAccess, uuid: string, sessionId: string) {
  const userId = actor(access)
  const story = await presenceStory(kernel, access, uuid)
  await transact(kernel, async (tx, emit) => {
    const gone = await tx
      .delete(presenceSessions)
      .where(and(eq(presenceSessions.storyId, story.id), eq(presenceSessions.sessionId, sessionId.toLowerCase()), eq(presenceSessions.userId, userId)))
      .returning({ sessionId: presenceSessions.sessionId })
    if (!gone.length) throw notFound('Presence session')
    emit({ type: 'presence.changed', spaceId: access.space.id, payload: { story_uuid: story.uuid, session_id: gone[0].sessionId, user_id: userId, block_path: null, left: true } })
  })
}

/** Deletes sessions silent for more than 5 minutes (the cron job; DELETE is optional for clients). */
export async function prunePresence(kernel: Kernel): Promise<number> {
  const before = new Date(kernel.clock.ms() - PRUNE_AFTER_MS)
  const gone = await kernel.db.db.delete(presenceSessions).where(lt(presenceSessions.lastSeen, before)).returning({ s: presenceSessions.sessionId })
  return gone.length
}

// ---- Comments ----

function views(rows: CommentRow[], content: unknown, names: Map<number, string>): CommentView[] {
  const paths = blockPaths(content)
  return rows.map((r) => {
    const at = paths.get(r.blockUid)
    return {
      id: r.id,
      block_path: at ? (r.blockSuffix ? `${at}/${r.blockSuffix}` : at) : r.blockPath,
      block_uid: r.blockUid,
      body: r.deleted ? null : r.body,
      parent_id: r.parentId,
      resolved: r.resolved,
      author: { id: r.authorUserId, name: names.get(r.authorUserId) ?? '' },
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
      edited: r.edited,
      orphaned: !at,
      deleted: r.deleted,
    }
  })
}

async function viewOne(kernel: Kernel, row: CommentRow, content: unknown): Promise<CommentView> {
  return views([row], content, await userNames(kernel, [row.authorUserId]))[0]
}

export async function listComments(kernel: Kernel, access: SpaceAccess, uuid: string, includeResolved: boolean) {
  const story = await storyOf(kernel, access, uuid)
  const rows = await kernel.db.db.select().from(comments).where(eq(comments.storyId, story.id)).orderBy(asc(comments.id))
  // A resolved thread is hidden as a whole: its root and the replies under it.
  const resolvedRoots = new Set(rows.filter((r) => r.parentId === null && r.resolved).map((r) => r.id))
  const shown = includeResolved ? rows : rows.filter((r) => !resolvedRoots.has(r.parentId ?? r.id))
  return views(shown, story.content, await userNames(kernel, shown.map((r) => r.authorUserId)))
}

async function requireComment(tx: Tx, storyId: number, id: number): Promise<CommentRow> {
  const [row] = await tx.select().from(comments).where(and(eq(comments.id, id), eq(comments.storyId, storyId))).for('update')
  if (!row) throw notFound('Comment')
  return row
}

export async function createComment(kernel: Kernel, access: SpaceAccess, uuid: string, input: { block_path?: string; body: string; parent_id?: number | null }) {
  const userId = actor(access)
  const story = await storyOf(kernel, access, uuid)
  const now = kernel.clock.now()
  let anchor: { uid: string; suffix: string; path: string }
  const parentId = input.parent_id ?? null
  if (parentId !== null) {
    const [root] = await kernel.db.db.select().from(comments).where(and(eq(comments.id, parentId), eq(comments.storyId, story.id)))
    if (!root || root.parentId !== null) throw validationFailed({ parent_id: ['must be the id of a root comment of this Story (threads have one level)'] })
    anchor = { uid: root.blockUid, suffix: root.blockSuffix, path: root.blockPath } // replies inherit the root's anchor
  } else {
    if (input.block_path === undefined) throw validationFailed({ block_path: ['is required for a root comment (a reply, with parent_id, takes its root’s anchor)'] })
    const a = resolveAnchor(story.content, input.block_path)
    if (!a) throw validationFailed({ block_path: ['names no block of the Story draft'] })
    anchor = { uid: a.uid, suffix: a.suffix, path: input.block_path }
  }
  const row = await transact(kernel, async (tx, emit) => {
    const [r] = await tx
      .insert(comments)
      .values({
        spaceId: access.space.id,
        storyId: story.id,
        parentId,
        blockUid: anchor.uid,
        blockSuffix: anchor.suffix,
        blockPath: anchor.path,
        body: input.body,
        authorUserId: userId,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
    emit({ type: 'comment.changed', spaceId: access.space.id, payload: { story_uuid: story.uuid, comment_id: r.id, action: 'created' } })
    return r
  })
  return viewOne(kernel, row, story.content)
}

/** Editors act on their own comments, admins on any. */
function mayChange(access: SpaceAccess, userId: number, row: CommentRow) {
  if (row.authorUserId === userId) return roleAtLeast(access.role, 'editor')
  return roleAtLeast(access.role, 'admin')
}

export async function updateComment(kernel: Kernel, access: SpaceAccess, uuid: string, id: number, input: { body: string }) {
  const userId = actor(access)
  const story = await storyOf(kernel, access, uuid)
  const row = await transact(kernel, async (tx, emit) => {
    const current = await requireComment(tx, story.id, id)
    if (current.deleted) throw notFound('Comment')
    if (!mayChange(access, userId, current)) throw forbidden('Editors edit their own comments; admins edit any.')
    const [r] = await tx
      .update(comments)
      .set({ body: input.body, edited: true, updatedAt: kernel.clock.now() })
      .where(eq(comments.id, current.id))
      .returning()
    emit({ type: 'comment.changed', spaceId: access.space.id, payload: { story_uuid: story.uuid, comment_id: r.id, action: 'edited' } })
    return r
  })
  return viewOne(kernel, row, story.content)
}

export async function deleteComment(kernel: Kernel, access: SpaceAccess, uuid: string, id: number) {
  const userId = actor(access)
  const story = await storyOf(kernel, access, uuid)
  await transact(kernel, async (tx, emit) => {
    const current = await requireComment(tx, story.id, id)
    if (current.deleted) throw notFound('Comment')
    if (!mayChange(access, userId, current)) throw forbidden('Editors delete their own comments; admins delete any.')
    const replies = current.parentId === null ? await tx.select({ id: comments.id }).from(comments).where(eq(comments.parentId, current.id)).limit(1) : []
    if (replies.length) {
      // The thread stays: the root keeps its place with its text removed.
      await tx.update(comments).set({ body: null, deleted: true, updatedAt: kernel.clock.now() }).where(eq(comments.id, current.id))
    } else {
      await tx.delete(comments).where(eq(comments.id, current.id))
      // The last reply of a deleted root takes the root with it.
      if (current.parentId !== null) {
        const [parent] = await tx.select().from(comments).where(eq(comments.id, current.parentId))
        if (parent?.deleted) {
          const left = await tx.select({ id: comments.id }).from(comments).where(and(eq(comments.parentId, parent.id), ne(comments.id, current.id))).limit(1)
          if (!left.length) await tx.delete(comments).where(eq(comments.id, parent.id))
        }
      }
    }
    emit({ type: 'comment.changed', spaceId: access.space.id, payload: { story_uuid: story.uuid, comment_id: current.id, action: 'deleted' } })
  })
}

export async function toggleResolved(kernel: Kernel, access: SpaceAccess, uuid: string, id: number) {
  const userId = actor(access)
  const story = await storyOf(kernel, access, uuid)
  const row = await transact(kernel, async (tx, emit) => {
    const current = await requireComment(tx, story.id, id)
    if (current.parentId !== null) throw validationFailed({ id: ['only a root comment resolves its thread; this is a reply'] })
    const allowed = roleAtLeast(access.role, 'admin') || (current.authorUserId === userId && roleAtLeast(access.role, 'editor'))
    if (!allowed) throw forbidden('Editors resolve threads they started; admins resolve any.')
    const [r] = await tx
      .update(comments)
      .set({ resolved: !current.resolved, updatedAt: kernel.clock.now() })
      .where(eq(comments.id, current.id))
      .returning()
    emit({ type: 'comment.changed', spaceId: access.space.id, payload: { story_uuid: story.uuid, comment_id: r.id, action: r.resolved ? 'resolved' : 'reopened' } })
    return r
  })
  return viewOne(kernel, row, story.content)
}

