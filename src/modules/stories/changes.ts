import { and, asc, eq, gt, like, or, sql } from 'drizzle-orm'
import { stories, storyChanges, storyContentVersions } from './tables'
import type { DbOrTx, Tx } from '../../kernel/db'
import type { NewEvent } from '../../kernel/events'
import { likePrefix } from './paths'

/**
 * The public change feed (`GET /cdn/{space}/changes`) and the Space content version (`meta.cv`).
 *
 * Each change of what the public sees — a publish, an unpublish, an archive or delete of a published Story, the move of
 * a published Story (or of an ancestor) — takes the next number of its Space in `story_content_versions` (an upsert:
 * the row stays locked until commit, so a Space's changes commit in number order and the feed's cursor never passes a
 * change that commits later) and becomes the Story's row in `story_changes`, replacing its previous one: a sync from
 * any cursor learns the final state of every Story changed since. The numbers survive restarts and are the same on
 * every instance (they live in the database); the cursor handed out is the number as a decimal string.
 *
 * Recorded by the stories module's own `inTx` hooks on its events, so every path that publishes, withdraws or moves
 * records it — inside the transaction of the change.
 */

export type ChangeKind = 'published' | 'unpublished' | 'moved' | 'deleted'

interface Change {
  uuid: string
  kind: ChangeKind
  fullPath: string
  fromPath: string | null
}

/** Numbers and stores changes of one Space; returns the Space's new content version. */
async function record(tx: Tx, spaceId: number, changes: Change[], now: Date): Promise<number> {
  if (!changes.length) return 0
  const [head] = await tx
    .insert(storyContentVersions)
    .values({ spaceId, seq: changes.length })
    .onConflictDoUpdate({ target: storyContentVersions.spaceId, set: { seq: sql`${storyContentVersions.seq} + ${changes.length}` } })
    .returning({ seq: storyContentVersions.seq })
  const first = head.seq - changes.length + 1
  await tx
    .insert(storyChanges)
    .values(changes.map((c, i) => ({ spaceId, seq: first + i, storyUuid: c.uuid, kind: c.kind, fullPath: c.fullPath, fromPath: c.fromPath, createdAt: now })))
    .onConflictDoUpdate({
      target: [storyChanges.spaceId, storyChanges.storyUuid],
      set: {
        seq: sql`excluded.seq`,
        kind: sql`excluded.kind`,
        fullPath: sql`excluded.full_path`,
        fromPath: sql`excluded.from_path`,
        createdAt: sql`excluded.created_at`,
      },
    })
  return head.seq
}

/** `story.published`: the Story is (again) public at its path. */
export function recordPublished(tx: Tx, e: NewEvent<'story.published'>, now: Date) {
  const s = e.payload.story
  return record(tx, e.spaceId!, [{ uuid: s.uuid, kind: 'published', fullPath: s.full_path, fromPath: null }], now)
}

/** `story.unpublished`: back to draft (`unpublished`), or archived / deleted (`deleted`). */
export function recordWithdrawn(tx: Tx, e: NewEvent<'story.unpublished'>, now: Date) {
  const s = e.payload.story
  const kind: ChangeKind = s.status === 'draft' ? 'unpublished' : 'deleted'
  return record(tx, e.spaceId!, [{ uuid: s.uuid, kind, fullPath: s.full_path, fromPath: null }], now)
}

/** `story.moved`: every published Story of the moved subtree (paths are already rewritten) changed path. */
export async function recordMoved(tx: Tx, e: NewEvent<'story.moved'>, now: Date) {
  const { id, from, to } = e.payload.story
  const rows = await tx
    .select({ uuid: stories.uuid, fullPath: stories.fullPath })
    .from(stories)
    .where(and(eq(stories.spaceId, e.spaceId!), eq(stories.status, 'published'), or(eq(stories.id, id), like(stories.fullPath, likePrefix(to)))))
    .orderBy(asc(stories.fullPath))
  const changes = rows.map((r) => ({ uuid: r.uuid, kind: 'moved' as const, fullPath: r.fullPath, fromPath: from + r.fullPath.slice(to.length) }))
  return record(tx, e.spaceId!, changes, now)
}

/** The Space's content version: the number of its latest public change (0: none yet). */
export async function contentVersion(db: DbOrTx, spaceId: number): Promise<number> {
  const [row] = await db.select({ seq: storyContentVersions.seq }).from(storyContentVersions).where(eq(storyContentVersions.spaceId, spaceId))
  return row?.seq ?? 0
}

export interface ChangeRow {
  seq: number
  kind: ChangeKind
  uuid: string
  fullPath: string
  fromPath: string | null
  createdAt: Date
}

/** The changes after `since`, oldest first: at most `limit` (one more tells whether there are more). */
export async function changesSince(db: DbOrTx, spaceId: number, since: number, limit: number): Promise<ChangeRow[]> {
  return db
    .select({
      seq: storyChanges.seq,
      kind: storyChanges.kind,
      uuid: storyChanges.storyUuid,
      fullPath: storyChanges.fullPath,
      fromPath: storyChanges.fromPath,
      createdAt: storyChanges.createdAt,
    })
    .from(storyChanges)
    .where(and(eq(storyChanges.spaceId, spaceId), gt(storyChanges.seq, since)))
    .orderBy(asc(storyChanges.seq))
    .limit(limit)
}
