import { and, asc, count, desc, eq, ilike, inArray, isNull, like, ne, or, sql, type SQL } from 'drizzle-orm'
import { alias } from 'drizzle-orm/pg-core'
import { components, stories, storyContents, storyCounts, storyPublished, storyVersions } from './tables'
import type { DbOrTx, Tx } from '../../kernel/db'
import type { Blueprint, FieldDef } from './blocks'
import { likePrefix } from './paths'

export type StoryRow = typeof stories.$inferSelect
export type StoryWithParent = StoryRow & { parentUuid: string | null }
export type StoryStatus = StoryRow['status']

const parents = alias(stories, 'parent')

const withParent = { ...selectAll(), parentUuid: parents.uuid }

function selectAll() {
  return {
    id: stories.id,
    uuid: stories.uuid,
    spaceId: stories.spaceId,
    parentId: stories.parentId,
    lang: stories.lang,
    name: stories.name,
    slug: stories.slug,
    fullPath: stories.fullPath,
    depth: stories.depth,
    isFolder: stories.isFolder,
    status: stories.status,
    versionNo: stories.versionNo,
    hasUnpublishedChanges: stories.hasUnpublishedChanges,
    publishedAt: stories.publishedAt,
    firstPublishedAt: stories.firstPublishedAt,
    archivedAt: stories.archivedAt,
    createdAt: stories.createdAt,
    updatedAt: stories.updatedAt,
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** A malformed uuid names no Story (and must not reach Postgres, which would reject the cast). */
export const isUuid = (s: string) => UUID.test(s)

export async function findStory(db: DbOrTx, spaceId: number, uuid: string, lock = false): Promise<StoryWithParent | null> {
  if (!isUuid(uuid)) return null
  const q = db
    .select(withParent)
    .from(stories)
    .leftJoin(parents, eq(parents.id, stories.parentId))
    .where(and(eq(stories.spaceId, spaceId), eq(stories.uuid, uuid.toLowerCase())))
    .limit(1)
  const [row] = lock ? await q.for('update', { of: stories }) : await q
  return row ?? null
}

export async function contentsOf(db: DbOrTx, storyId: number) {
  return db.select().from(storyContents).where(eq(storyContents.storyId, storyId)).orderBy(asc(storyContents.lang))
}

export type ContentRow = typeof storyContents.$inferSelect
export type StoryPatch = Partial<typeof stories.$inferInsert>

/** Writes a Story row's changes and returns the row as it is now. */
export async function updateStoryRow(tx: Tx, storyId: number, patch: StoryPatch): Promise<StoryRow> {
  const [row] = await tx.update(stories).set(patch).where(eq(stories.id, storyId)).returning()
  return row
}

/** Adds a Story's content in a locale (its first, or a new translation). */
export async function insertContent(tx: Tx, row: typeof storyContents.$inferInsert) {
  await tx.insert(storyContents).values(row)
}

/** Rewrites a Story's content (and translated name) in a locale. */
export async function updateContent(tx: Tx, storyId: number, lang: string, set: { content: unknown; name: string | null; updatedAt: Date }) {
  await tx
    .update(storyContents)
    .set(set)
    .where(and(eq(storyContents.storyId, storyId), eq(storyContents.lang, lang)))
}

export async function contentIn(db: DbOrTx, storyId: number, lang: string): Promise<ContentRow | null> {
  const [row] = await db
    .select()
    .from(storyContents)
    .where(and(eq(storyContents.storyId, storyId), eq(storyContents.lang, lang)))
    .limit(1)
  return row ?? null
}

/** The locales each Story has content in. */
export async function translationsOf(db: DbOrTx, storyIds: number[]): Promise<Map<number, string[]>> {
  const map = new Map<number, string[]>()
  if (!storyIds.length) return map
  const rows = await db
    .select({ storyId: storyContents.storyId, lang: storyContents.lang })
    .from(storyContents)
    .where(inArray(storyContents.storyId, storyIds))
    .orderBy(asc(storyContents.lang))
  for (const r of rows) {
    const list = map.get(r.storyId) ?? []
    list.push(r.lang)
    map.set(r.storyId, list)
  }
  return map
}

export interface ListFilter {
  status?: StoryStatus
  parentId?: number | null
  q?: string
}

/** Moves Stories between status counters (delta per status), inside the transaction of the change. */
export async function adjustCounts(tx: Tx, spaceId: number, deltas: Partial<Record<StoryStatus, number>>) {
  const rows = Object.entries(deltas)
    .filter(([, n]) => n)
    .map(([status, count]) => ({ spaceId, status: status as StoryStatus, count: count! }))
  if (!rows.length) return
  await tx
    .insert(storyCounts)
    .values(rows)
    .onConflictDoUpdate({ target: [storyCounts.spaceId, storyCounts.status], set: { count: sql`${storyCounts.count} + excluded.count` } })
}

async function countedTotal(db: DbOrTx, spaceId: number, status: StoryStatus | undefined): Promise<number> {
  const rows = await db
    .select({ status: storyCounts.status, count: storyCounts.count })
    .from(storyCounts)
    .where(eq(storyCounts.spaceId, spaceId))
  let total = 0
  for (const r of rows) if (status ? r.status === status : r.status !== 'archived') total += r.count
  return total
}

/**
 * One page in full_path order; every filter combination is served by a (space_id, …, full_path) index. The total
 * comes from story_counts unless a parent or text filter needs a real count (a parent's children are an index range;
 * a text search scans the Space anyway).
 */
export async function listStories(db: DbOrTx, spaceId: number, f: ListFilter, limit: number, offset: number) {
  const where: SQL[] = [eq(stories.spaceId, spaceId)]
  if (f.status) where.push(eq(stories.status, f.status))
  else where.push(ne(stories.status, 'archived'))
  if (f.parentId !== undefined) where.push(f.parentId === null ? isNull(stories.parentId) : eq(stories.parentId, f.parentId))
  if (f.q) {
    const pattern = `%${f.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    where.push(or(ilike(stories.name, pattern), ilike(stories.fullPath, pattern))!)
  }
  const cond = and(...where)
  const counted = f.parentId === undefined && !f.q
  const [rows, total] = await Promise.all([
    db
      .select(withParent)
      .from(stories)
      .leftJoin(parents, eq(parents.id, stories.parentId))
      .where(cond)
      .orderBy(asc(stories.fullPath))
      .limit(limit)
      .offset(offset),
    counted
      ? countedTotal(db, spaceId, f.status)
      : db
          .select({ total: count() })
          .from(stories)
          .where(cond)
          .then(([r]) => Number(r.total)),
  ])
  return { rows, total }
}

export interface TreeNodeRow {
  id: number
  uuid: string
  parentId: number | null
  name: string
  slug: string
  fullPath: string
  depth: number
  isFolder: boolean
  status: StoryStatus
  hasUnpublishedChanges: boolean
}

const treeColumns = {
  id: stories.id,
  uuid: stories.uuid,
  parentId: stories.parentId,
  name: stories.name,
  slug: stories.slug,
  fullPath: stories.fullPath,
  depth: stories.depth,
  isFolder: stories.isFolder,
  status: stories.status,
  hasUnpublishedChanges: stories.hasUnpublishedChanges,
}

export async function rootsPage(db: DbOrTx, spaceId: number, limit: number, offset: number) {
  const cond = and(eq(stories.spaceId, spaceId), isNull(stories.parentId), ne(stories.status, 'archived'))
  const [rows, [{ total }]] = await Promise.all([
    db.select(treeColumns).from(stories).where(cond).orderBy(asc(stories.fullPath)).limit(limit).offset(offset),
    db.select({ total: count() }).from(stories).where(cond),
  ])
  return { rows: rows as TreeNodeRow[], total: Number(total) }
}

/** The children of some Stories, at most `limit` rows (uses the (space_id, parent_id, full_path) index). */
export async function childrenOf(db: DbOrTx, spaceId: number, parentIds: number[], limit: number): Promise<TreeNodeRow[]> {
  if (!parentIds.length) return []
  return (await db
    .select(treeColumns)
    .from(stories)
    .where(and(eq(stories.spaceId, spaceId), inArray(stories.parentId, parentIds), ne(stories.status, 'archived')))
    .orderBy(asc(stories.fullPath))
    .limit(limit)) as TreeNodeRow[]
}

/** Which of these Stories have at least one (non-archived) child. */
export async function withChildren(db: DbOrTx, spaceId: number, ids: number[]): Promise<Set<number>> {
  if (!ids.length) return new Set()
  const rows = await db
    .selectDistinct({ parentId: stories.parentId })
    .from(stories)
    .where(and(eq(stories.spaceId, spaceId), inArray(stories.parentId, ids), ne(stories.status, 'archived')))
  return new Set(rows.map((r) => r.parentId!))
}

export async function hasAnyChild(db: DbOrTx, storyId: number): Promise<boolean> {
  const [row] = await db.select({ id: stories.id }).from(stories).where(eq(stories.parentId, storyId)).limit(1)
  return !!row
}

/** The deepest depth in a subtree (the Story itself included). */
export async function subtreeMaxDepth(db: DbOrTx, spaceId: number, story: { depth: number; fullPath: string }) {
  const [row] = await db
    .select({ d: sql<number>`max(${stories.depth})` })
    .from(stories)
    .where(and(eq(stories.spaceId, spaceId), like(stories.fullPath, likePrefix(story.fullPath))))
  return Math.max(story.depth, Number(row?.d ?? 0))
}

/** Rewrites the paths of every descendant after their ancestor moved from `oldPath` to `newPath`. */
export async function moveDescendants(tx: Tx, spaceId: number, oldPath: string, newPath: string, depthDelta: number, now: Date) {
  return tx
    .update(stories)
    .set({
      fullPath: sql`${newPath} || substr(${stories.fullPath}, ${oldPath.length + 1})`,
      depth: sql`${stories.depth} + ${depthDelta}`,
      updatedAt: now,
    })
    .where(and(eq(stories.spaceId, spaceId), like(stories.fullPath, likePrefix(oldPath))))
    .returning({ id: stories.id })
}

export async function versionsPage(db: DbOrTx, storyId: number, limit: number, offset: number, lang?: string) {
  const where = lang === undefined ? eq(storyVersions.storyId, storyId) : and(eq(storyVersions.storyId, storyId), eq(storyVersions.lang, lang))
  const [rows, [{ total }]] = await Promise.all([
    db
      .select({
        versionNo: storyVersions.versionNo,
        lang: storyVersions.lang,
        name: storyVersions.name,
        slug: storyVersions.slug,
        fullPath: storyVersions.fullPath,
        authorUserId: storyVersions.authorUserId,
        createdAt: storyVersions.createdAt,
      })
      .from(storyVersions)
      .where(where)
      .orderBy(desc(storyVersions.versionNo))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(storyVersions).where(where),
  ])
  return { rows, total: Number(total) }
}

export async function versionOf(db: DbOrTx, storyId: number, versionNo: number) {
  const [row] = await db
    .select()
    .from(storyVersions)
    .where(and(eq(storyVersions.storyId, storyId), eq(storyVersions.versionNo, versionNo)))
    .limit(1)
  return row ?? null
}

// ---- Public read ----

export interface PublishedRow {
  id: number
  uuid: string
  slug: string
  fullPath: string
  storyLang: string
  lang: string
  name: string
  contentJson: string
  versionNo: number
  publishedAt: Date
}

/** The columns of a published snapshot row, content as JSON text (no parse, no re-serialisation). */
const PUBLISHED_ROW = {
  id: stories.id,
  uuid: stories.uuid,
  slug: stories.slug,
  fullPath: stories.fullPath,
  storyLang: stories.lang,
  lang: storyPublished.lang,
  name: storyPublished.name,
  contentJson: sql<string>`${storyPublished.content}::text`,
  versionNo: storyPublished.versionNo,
  publishedAt: storyPublished.publishedAt,
}

/** Every locale of the published snapshot at a path. */
export async function publishedByPath(db: DbOrTx, spaceId: number, fullPath: string): Promise<PublishedRow[]> {
  return db
    .select(PUBLISHED_ROW)
    .from(stories)
    .innerJoin(storyPublished, eq(storyPublished.storyId, stories.id))
    .where(and(eq(stories.spaceId, spaceId), eq(stories.fullPath, fullPath), eq(stories.status, 'published')))
}

/** `publishedByPath` for many paths in one query (the GraphQL list and batched reads prime the cache with it). */
export async function publishedByPaths(db: DbOrTx, spaceId: number, fullPaths: string[]): Promise<PublishedRow[]> {
  if (!fullPaths.length) return []
  return db
    .select(PUBLISHED_ROW)
    .from(stories)
    .innerJoin(storyPublished, eq(storyPublished.storyId, stories.id))
    .where(and(eq(stories.spaceId, spaceId), inArray(stories.fullPath, fullPaths), eq(stories.status, 'published')))
}

/** The full paths of published Stories by uuid (malformed uuids name nothing), in one query. */
export async function publishedPathsByUuids(db: DbOrTx, spaceId: number, uuids: string[]): Promise<Map<string, string>> {
  const valid = [...new Set(uuids.filter(isUuid).map((u) => u.toLowerCase()))]
  if (!valid.length) return new Map()
  const rows = await db
    .select({ uuid: stories.uuid, fullPath: stories.fullPath })
    .from(stories)
    .where(and(eq(stories.spaceId, spaceId), inArray(stories.uuid, valid), eq(stories.status, 'published')))
  return new Map(rows.map((r) => [r.uuid, r.fullPath]))
}

export type PublishedSort = 'full_path:asc' | 'full_path:desc' | 'published_at:asc' | 'published_at:desc'

/**
 * One page of the published Stories' full paths whose path starts with `prefix` (a plain prefix of `full_path`), and
 * how many there are: two queries, whatever the page size (the bodies are loaded in one more, publishedByPaths).
 */
export async function publishedPathsPage(
  db: DbOrTx,
  spaceId: number,
  o: { prefix: string | null; sort: PublishedSort; limit: number; offset: number },
): Promise<{ paths: string[]; total: number }> {
  const where: SQL[] = [eq(stories.spaceId, spaceId), eq(stories.status, 'published')]
  if (o.prefix) where.push(like(stories.fullPath, `${o.prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`))
  const cond = and(...where)
  const [field, dir] = o.sort.split(':') as ['full_path' | 'published_at', 'asc' | 'desc']
  const order = dir === 'asc' ? asc : desc
  const orderBy = field === 'full_path' ? [order(stories.fullPath)] : [order(stories.publishedAt), asc(stories.fullPath)]
  const rows = await db
    .select({ fullPath: stories.fullPath })
    .from(stories)
    .where(cond)
    .orderBy(...orderBy)
    .limit(o.limit)
    .offset(o.offset)
  const [c] = await db.select({ total: count() }).from(stories).where(cond)
  return { paths: rows.map((r) => r.fullPath), total: Number(c.total) }
}

export async function publishedByUuid(db: DbOrTx, spaceId: number, uuid: string) {
  if (!isUuid(uuid)) return []
  return db
    .select({
      storyLang: stories.lang,
      lang: storyPublished.lang,
      name: storyPublished.name,
      content: storyPublished.content,
      versionNo: storyPublished.versionNo,
      publishedAt: storyPublished.publishedAt,
    })
    .from(stories)
    .innerJoin(storyPublished, eq(storyPublished.storyId, stories.id))
    .where(and(eq(stories.spaceId, spaceId), eq(stories.uuid, uuid.toLowerCase()), eq(stories.status, 'published')))
}

/** Published snapshots in story id order (every locale of a Story on consecutive rows); pages by whole Stories. */
export async function publishedPage(db: DbOrTx, o: { afterId: number; limit: number; storyIds?: number[]; spaceId?: number }) {
  const where: SQL[] = [eq(stories.status, 'published'), sql`${stories.id} > ${o.afterId}`]
  if (o.storyIds) where.push(o.storyIds.length ? inArray(stories.id, o.storyIds) : sql`false`)
  if (o.spaceId !== undefined) where.push(eq(stories.spaceId, o.spaceId))
  const ids = db
    .select({ id: stories.id })
    .from(stories)
    .where(and(...where))
    .orderBy(asc(stories.id))
    .limit(o.limit)
  return db
    .select({
      id: stories.id,
      uuid: stories.uuid,
      spaceId: stories.spaceId,
      slug: stories.slug,
      fullPath: stories.fullPath,
      storyLang: stories.lang,
      status: stories.status,
      lang: storyPublished.lang,
      name: storyPublished.name,
      content: storyPublished.content,
      versionNo: storyPublished.versionNo,
      publishedAt: storyPublished.publishedAt,
    })
    .from(stories)
    .innerJoin(storyPublished, eq(storyPublished.storyId, stories.id))
    .where(inArray(stories.id, ids))
    .orderBy(asc(stories.id), asc(storyPublished.lang))
}

/** The latest drafts at a path, for preview: any status but archived. */
export async function draftsByPath(db: DbOrTx, spaceId: number, fullPath: string) {
  return db
    .select({
      id: stories.id,
      uuid: stories.uuid,
      slug: stories.slug,
      fullPath: stories.fullPath,
      storyLang: stories.lang,
      storyName: stories.name,
      versionNo: stories.versionNo,
      publishedAt: stories.publishedAt,
      lang: storyContents.lang,
      name: storyContents.name,
      content: storyContents.content,
    })
    .from(stories)
    .innerJoin(storyContents, eq(storyContents.storyId, stories.id))
    .where(and(eq(stories.spaceId, spaceId), eq(stories.fullPath, fullPath), ne(stories.status, 'archived')))
}

// ---- Component blueprints ----

export type ComponentRow = typeof components.$inferSelect

/**
 * The blueprint's fields in the author's order. jsonb stores object keys sorted its own way, so the order given is
 * kept in `field_order` and restored here; a field it does not name (never written so) follows in stored order.
 */
export function orderedSchema(r: Pick<ComponentRow, 'schema' | 'fieldOrder'>): Record<string, FieldDef> {
  const stored = r.schema as Record<string, FieldDef>
  const out: Record<string, FieldDef> = {}
  for (const name of r.fieldOrder ?? []) if (Object.hasOwn(stored, name)) out[name] = stored[name]
  for (const name of Object.keys(stored)) if (!Object.hasOwn(out, name)) out[name] = stored[name]
  return out
}

export const toBlueprint = (r: ComponentRow): Blueprint => ({
  name: r.name,
  display_name: r.displayName,
  is_root: r.isRoot,
  is_nestable: r.isNestable,
  schema: orderedSchema(r),
})

export async function blueprintsOf(db: DbOrTx, spaceId: number): Promise<Map<string, Blueprint>> {
  const rows = await db.select().from(components).where(eq(components.spaceId, spaceId))
  return new Map(rows.map((r) => [r.name, toBlueprint(r)]))
}

/**
 * How many live (not archived) Stories use a component in a draft or in the published snapshot. A jsonpath search
 * through every block, nested ones included.
 */
export async function storiesUsingComponent(db: DbOrTx, spaceId: number, name: string): Promise<number> {
  const path = `$.**.component ? (@ == ${JSON.stringify(name)})`
  const [row] = await db
    .select({ n: count() })
    .from(stories)
    .where(
      and(
        eq(stories.spaceId, spaceId),
        ne(stories.status, 'archived'),
        or(
          sql`exists (select 1 from ${storyContents} c where c.story_id = ${stories.id} and c.content @? ${path}::jsonpath)`,
          sql`exists (select 1 from ${storyPublished} p where p.story_id = ${stories.id} and p.content @? ${path}::jsonpath)`,
        ),
      ),
    )
  return Number(row.n)
}

// ---- The public list (GET /cdn/{space}/stories) ----

export type ListSortField = 'published_at' | 'first_published_at' | 'name' | 'full_path'

export interface PublicListFilter {
  /** `published`: the public snapshot; `draft`: every Story not archived, as a preview reads it. */
  mode: 'published' | 'draft'
  /** A plain prefix of `full_path` (with its leading slash). */
  prefix: string | null
  uuids: string[] | null
  paths: string[] | null
  /** The root blueprint: the component of the first top-level block (of the Story's own locale). */
  contentType: string | null
  isFolder: boolean | null
  sort: ListSortField
  desc: boolean
  /** The sort key and full path of the last row of the previous page (keyset paging). */
  after: { key: string | null; path: string } | null
  limit: number
}

/** The sort key as text (exact: timestamps with their microseconds and offset, so the next page compares exactly). */
function sortKey(f: PublicListFilter): SQL<string> | null {
  switch (f.sort) {
    case 'full_path':
      return null
    case 'published_at':
      return sql<string>`coalesce(${stories.publishedAt}, '-infinity'::timestamptz)`
    case 'first_published_at':
      return sql<string>`coalesce(${stories.firstPublishedAt}, '-infinity'::timestamptz)`
    case 'name':
      // Published: the published name of the Story's own locale (a draft rename must not reorder the public list).
      return f.mode === 'published'
        ? sql<string>`coalesce((select p.name from ${storyPublished} p where p.story_id = ${stories.id} and p.lang = ${stories.lang}), ${stories.name})`
        : sql<string>`${stories.name}`
  }
}

/**
 * One page of a Space's Stories for the public list: full paths (and the sort key of each, for the cursor), keyset
 * paged on (sort key, full_path) — never OFFSET, so page N costs what page 1 does and a Story that stays put is
 * returned exactly once however the others change meanwhile.
 */
export async function publicListPage(db: DbOrTx, spaceId: number, f: PublicListFilter): Promise<{ fullPath: string; key: string | null }[]> {
  const where: SQL[] = [eq(stories.spaceId, spaceId)]
  where.push(f.mode === 'published' ? eq(stories.status, 'published') : ne(stories.status, 'archived'))
  if (f.prefix) where.push(like(stories.fullPath, `${f.prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`))
  if (f.uuids) where.push(f.uuids.length ? inArray(stories.uuid, f.uuids) : sql`false`)
  if (f.paths) where.push(f.paths.length ? inArray(stories.fullPath, f.paths) : sql`false`)
  if (f.isFolder !== null) where.push(eq(stories.isFolder, f.isFolder))
  if (f.contentType !== null) {
    const table = f.mode === 'published' ? storyPublished : storyContents
    where.push(
      sql`exists (select 1 from ${table} c where c.story_id = ${stories.id} and c.lang = ${stories.lang} and c.content->'blocks'->0->>'component' = ${f.contentType})`,
    )
  }
  const key = sortKey(f)
  const cmp = f.desc ? sql.raw('<') : sql.raw('>')
  if (f.after) {
    if (key === null) where.push(sql`${stories.fullPath} ${cmp} ${f.after.path}`)
    else {
      const after = f.sort === 'name' ? sql`${f.after.key}` : sql`${f.after.key}::timestamptz`
      where.push(sql`(${key}, ${stories.fullPath}) ${cmp} (${after}, ${f.after.path})`)
    }
  }
  const dir = f.desc ? desc : asc
  const rows = await db
    .select({ fullPath: stories.fullPath, key: key === null ? sql<null>`null` : sql<string>`(${key})::text` })
    .from(stories)
    .where(and(...where))
    .orderBy(...(key === null ? [dir(stories.fullPath)] : [f.desc ? sql`${key} desc` : sql`${key} asc`, dir(stories.fullPath)]))
    .limit(f.limit)
  return rows
}
