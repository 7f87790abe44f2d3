import { and, asc, count, eq, inArray, like, or } from 'drizzle-orm'
import { stories, storyContentVersions, storyPublished } from './tables'
import { changesSince, contentVersion } from './changes'
import type { Kernel } from '../../kernel/kernel'
import { likePrefix } from './paths'

// Read-only facts about the published Stories, for modules that keep a copy of the public surface (the search index)
// and need more than service.ts publishedSnapshots(): which Spaces to load, how many Stories (progress), where a moved
// subtree went, and a content-free listing to compare a copy against. Other modules call these instead of reading
// the stories tables.

type Db = Pick<Kernel, 'db'>

/** Spaces with at least one published Story (archived Spaces included: the caller checks liveness). */
export async function spacesWithPublishedStories(deps: Db): Promise<number[]> {
  const rows = await deps.db.db
    .selectDistinct({ spaceId: stories.spaceId })
    .from(stories)
    .where(eq(stories.status, 'published'))
    .orderBy(asc(stories.spaceId))
  return rows.map((r) => r.spaceId)
}

/** How many published Stories a Space has. */
export async function countPublishedStories(deps: Db, spaceId: number): Promise<number> {
  const [row] = await deps.db.db
    .select({ n: count() })
    .from(stories)
    .where(and(eq(stories.spaceId, spaceId), eq(stories.status, 'published')))
  return Number(row.n)
}

/** The published Story at `fullPath` and every published Story below it: id and current path (finds moves). */
export async function publishedPathsUnder(deps: Db, spaceId: number, fullPath: string): Promise<{ id: number; fullPath: string }[]> {
  return deps.db.db
    .select({ id: stories.id, fullPath: stories.fullPath })
    .from(stories)
    .where(
      and(
        eq(stories.spaceId, spaceId),
        eq(stories.status, 'published'),
        or(eq(stories.fullPath, fullPath), like(stories.fullPath, likePrefix(fullPath))),
      ),
    )
}

/** Every published snapshot's identity (no content), to compare a copy of the public surface with the source. */
export async function publishedVersions(deps: Db, spaceId: number): Promise<{ id: number; lang: string; fullPath: string; versionNo: number }[]> {
  return deps.db.db
    .select({ id: stories.id, lang: storyPublished.lang, fullPath: stories.fullPath, versionNo: storyPublished.versionNo })
    .from(stories)
    .innerJoin(storyPublished, eq(storyPublished.storyId, stories.id))
    .where(and(eq(stories.spaceId, spaceId), eq(stories.status, 'published')))
}

/** The uuids of a Space's published Stories (the published-story index loads a Space with it). */
export async function publishedStoryUuids(deps: Db, spaceId: number): Promise<string[]> {
  const rows = await deps.db.db
    .select({ uuid: stories.uuid })
    .from(stories)
    .where(and(eq(stories.spaceId, spaceId), eq(stories.status, 'published')))
  return rows.map((r) => r.uuid)
}

/** Current slug of each of a Space's Stories among `uuids` (any status; a deleted Story is absent). */
export async function storySlugs(deps: Db, spaceId: number, uuids: string[]): Promise<Map<string, string>> {
  if (!uuids.length) return new Map()
  const rows = await deps.db.db
    .select({ uuid: stories.uuid, slug: stories.slug })
    .from(stories)
    .where(and(eq(stories.spaceId, spaceId), inArray(stories.uuid, uuids)))
  return new Map(rows.map((r) => [r.uuid, r.slug]))
}

/** The content version (`meta.cv`, the change feed's latest number) of each of these Spaces; 0 for a Space without one. */
export async function contentVersionsOf(deps: Db, spaceIds: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>()
  if (!spaceIds.length) return out
  for (let i = 0; i < spaceIds.length; i += 5000) {
    const ids = spaceIds.slice(i, i + 5000)
    const rows = await deps.db.db
      .select({ spaceId: storyContentVersions.spaceId, seq: storyContentVersions.seq })
      .from(storyContentVersions)
      .where(inArray(storyContentVersions.spaceId, ids))
    for (const r of rows) out.set(r.spaceId, Number(r.seq))
  }
  return out
}

/** One Space's content version (0: no public change recorded yet). */
export async function spaceContentVersion(deps: Db, spaceId: number): Promise<number> {
  return contentVersion(deps.db.db, spaceId)
}

/**
 * The Stories whose public state changed after content version `since` (published, unpublished, moved, deleted), by
 * id where the Story still exists and by uuid always; at most `limit`.
 */
export async function storiesChangedSince(deps: Db, spaceId: number, since: number, limit: number): Promise<{ uuid: string; id: number | null }[]> {
  const changes = await changesSince(deps.db.db, spaceId, since, limit)
  if (!changes.length) return []
  const rows = await deps.db.db
    .select({ id: stories.id, uuid: stories.uuid })
    .from(stories)
    .where(and(eq(stories.spaceId, spaceId), inArray(stories.uuid, changes.map((c) => c.uuid))))
  const ids = new Map(rows.map((r) => [r.uuid, r.id]))
  return changes.map((c) => ({ uuid: c.uuid, id: ids.get(c.uuid) ?? null }))
}
