import { and, eq } from 'drizzle-orm'
import { stories, storyContents, storyPublished, storyVersions } from '../../../db/schema'
import type { SpaceAccess } from '../../kernel/auth'
import type { DbOrTx, Tx } from '../../kernel/db'
import { AppError, notFound, uniqueAs, validationFailed } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { canonicalLocale } from '../../kernel/locale'
import { localeSettings } from '../spaces/locales'
import { applyUntranslatable, type Blueprint, contentErrors, type Doc } from './blocks'
import { actorOf } from '../../kernel/filters'
import { beforeSave } from './hooks'
import { isSlug, joinPath, MAX_STORY_DEPTH, SLUG_RULE } from './paths'
import { type BulkResult, StoryErrors, type StoryView, type TreeNode } from './model'
import * as repo from './repo'
import type { StoryRow, StoryStatus, StoryWithParent, TreeNodeRow } from './repo'

export const EMPTY_DOC: Doc = { type: 'doc', blocks: [] }
export const LIST_PAGE = { perPage: 25, max: 100 }
export const TREE_PAGE = { perPage: 25, max: 100 }
/** Nodes in one children/tree response; deeper levels are cut (meta.truncated) rather than answering megabytes. */
export const MAX_TREE_NODES = 5000

function view(s: StoryWithParent, translations: string[], shown?: { lang: string; name: string | null; content: unknown }): StoryView {
  const v: StoryView = {
    id: s.id,
    uuid: s.uuid,
    name: shown?.name ?? s.name,
    slug: s.slug,
    full_path: s.fullPath,
    parent_uuid: s.parentUuid,
    is_folder: s.isFolder,
    lang: shown?.lang ?? s.lang,
    primary_lang: s.lang,
    translations,
    version_no: s.versionNo,
    status: s.status,
    has_unpublished_changes: s.hasUnpublishedChanges,
    published_at: s.publishedAt?.toISOString() ?? null,
    archived_at: s.archivedAt?.toISOString() ?? null,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  }
  if (shown) v.content = shown.content
  return v
}

/** The event payload of spec section 6 (plus the id), with the Story as it is after the change. */
function eventPayload(s: Pick<StoryRow, 'id' | 'uuid' | 'slug' | 'fullPath' | 'lang' | 'versionNo'>, status: string) {
  return { story: { id: s.id, uuid: s.uuid, slug: s.slug, full_path: s.fullPath, lang: s.lang, version_no: s.versionNo, status } }
}

async function viewOf(db: Kernel['db']['db'] | Tx, spaceId: number, uuid: string, lang?: string): Promise<StoryView> {
  const s = await repo.findStory(db, spaceId, uuid)
  if (!s) throw notFound('Story')
  const contents = await repo.contentsOf(db, s.id)
  const want = lang ?? s.lang
  const c = contents.find((r) => r.lang === want)
  if (!c) throw StoryErrors.translationNotFound(`The Story has no content in "${want}".`)
  return view(
    s,
    contents.map((r) => r.lang),
    { lang: want, name: c.name, content: c.content },
  )
}

function langOrFail(raw: string, field = 'lang'): string {
  const c = canonicalLocale(raw)
  if (!c) throw validationFailed({ [field]: [`"${raw}" is not a valid BCP-47 language tag.`] })
  return c
}

async function spaceLocaleOrFail(tx: Kernel['db']['db'] | Tx, spaceId: number, lang: string) {
  const settings = await localeSettings(tx, spaceId)
  if (!settings.codes.includes(lang)) {
    throw validationFailed({ lang: [`"${lang}" is not one of this Space's locales (${settings.codes.join(', ')}).`] })
  }
  return settings
}

function validateContent(content: unknown, blueprints: Map<string, Blueprint>): Doc {
  const errors = contentErrors(content, blueprints)
  if (Object.keys(errors).length) throw validationFailed(errors, 'The content does not match its component blueprints.')
  return content as Doc
}

function slugOrFail(slug: string) {
  if (!isSlug(slug)) throw validationFailed({ slug: [SLUG_RULE] })
}

async function parentOrFail(tx: Tx, spaceId: number, parentUuid: string) {
  const parent = await repo.findStory(tx, spaceId, parentUuid)
  if (!parent) throw validationFailed({ parent_uuid: ['No Story with this uuid in this Space.'] })
  if (parent.status === 'archived') throw validationFailed({ parent_uuid: ['The parent Story is archived.'] })
  return parent
}

function mutable(s: StoryRow) {
  if (s.status === 'archived') throw StoryErrors.storyArchived('The Story is archived; it can only be deleted.')
}

const pathTaken: (err: unknown) => never = uniqueAs('stories_space_path_key', () => StoryErrors.pathTaken('Another Story already has this full_path in the Space.'))

// ---- Create, read, list ----

export interface CreateStoryInput {
  name: string
  slug: string
  parent_uuid?: string | null
  is_folder?: boolean
  lang?: string
  content?: unknown
}

export async function createStory(kernel: Kernel, access: SpaceAccess, given: CreateStoryInput): Promise<StoryView> {
  // Filter hook (plugins) before the transaction: may veto, or amend the body (validated again).
  const input = await beforeSave(kernel, access, null, given)
  slugOrFail(input.slug)
  const lang = input.lang === undefined ? access.space.defaultLang : langOrFail(input.lang)
  const spaceId = access.space.id
  try {
    return await transact(kernel, async (tx, emit) => {
      await spaceLocaleOrFail(tx, spaceId, lang)
      const content = validateContent(input.content === undefined ? EMPTY_DOC : input.content, await repo.blueprintsOf(tx, spaceId))
      const parent = input.parent_uuid ? await parentOrFail(tx, spaceId, input.parent_uuid) : null
      const depth = (parent?.depth ?? 0) + 1
      if (depth > MAX_STORY_DEPTH) throw validationFailed({ parent_uuid: [`Stories nest at most ${MAX_STORY_DEPTH} levels deep.`] })
      const now = kernel.clock.now()
      const fullPath = joinPath(parent?.fullPath ?? null, input.slug)
      const [row] = await tx
        .insert(stories)
        .values({
          uuid: crypto.randomUUID(),
          spaceId,
          parentId: parent?.id ?? null,
          lang,
          name: input.name,
          slug: input.slug,
          fullPath,
          depth,
          isFolder: input.is_folder ?? false,
          status: 'draft',
          versionNo: 1,
          hasUnpublishedChanges: true,
          createdAt: now,
          updatedAt: now,
        })
        .returning()
      await tx.insert(storyContents).values({ storyId: row.id, lang, name: null, content, updatedAt: now })
      await repo.adjustCounts(tx, spaceId, { draft: 1 })
      emit({ type: 'story.created', spaceId, payload: eventPayload(row, 'draft') })
      await writeVersion(tx, row, { lang, name: input.name, content }, access, now, emit)
      return view({ ...row, parentUuid: parent?.uuid ?? null }, [lang], { lang, name: input.name, content })
    })
  } catch (err) {
    pathTaken(err)
  }
}

async function writeVersion(
  tx: Tx,
  s: StoryRow,
  saved: { lang: string; name: string; content: unknown },
  access: SpaceAccess,
  now: Date,
  emit: Emit,
) {
  await tx.insert(storyVersions).values({
    storyId: s.id,
    versionNo: s.versionNo,
    lang: saved.lang,
    name: saved.name,
    slug: s.slug,
    fullPath: s.fullPath,
    content: saved.content,
    authorUserId: access.principal.userId,
    createdAt: now,
  })
  emit({ type: 'version.created', spaceId: s.spaceId, payload: eventPayload(s, s.status) })
}

export async function getStory(kernel: Kernel, access: SpaceAccess, uuid: string, lang?: string): Promise<StoryView> {
  return viewOf(kernel.db.db, access.space.id, uuid, lang === undefined ? undefined : langOrFail(lang))
}

export interface ListQuery {
  status?: StoryStatus
  parent_uuid?: string
  q?: string
  page?: number
  per_page?: number
}

/** A page of Stories in full_path order, without content. Archived Stories show only with status=archived. */
export async function listStories(kernel: Kernel, access: SpaceAccess, query: ListQuery) {
  const db = kernel.db.db
  const page = pageOf(query.page, query.per_page, LIST_PAGE)
  let parentId: number | undefined
  if (query.parent_uuid !== undefined) {
    const parent = await repo.findStory(db, access.space.id, query.parent_uuid)
    if (!parent) throw notFound('Parent Story')
    parentId = parent.id
  }
  const { rows, total } = await repo.listStories(
    db,
    access.space.id,
    { status: query.status, parentId, q: query.q?.trim() || undefined },
    page.perPage,
    page.offset,
  )
  const translations = await repo.translationsOf(
    db,
    rows.map((r) => r.id),
  )
  return {
    data: rows.map((r) => view(r, translations.get(r.id) ?? [])),
    meta: { total, page: page.page, per_page: page.perPage },
  }
}

// ---- Save ----

export interface UpdateStoryInput {
  name?: string
  slug?: string
  parent_uuid?: string | null
  content?: unknown
  lang?: string
  expected_version_no?: number
}

/**
 * Every save writes a StoryVersion and increments version_no. Content and name edits stay drafts until the next
 * publish; slug and parent changes move the Story and its whole subtree at once, public surface included.
 */
export async function updateStory(kernel: Kernel, access: SpaceAccess, uuid: string, given: UpdateStoryInput): Promise<StoryView> {
  // Filter hook (plugins) before the transaction: may veto, or amend the body (validated again).
  const input = await beforeSave(kernel, access, uuid, given)
  if (input.slug !== undefined) slugOrFail(input.slug)
  if (input.lang !== undefined) langOrFail(input.lang)
  try {
    return await transact(kernel, (tx, emit) => updateStoryIn(kernel, tx, emit, access, uuid, input))
  } catch (err) {
    pathTaken(err)
  }
}

/**
 * `updateStory` inside the caller's transaction (for modules whose own change must commit with the save, e.g. an
 * approved AI translation): same checks (blueprints, locale, `expected_version_no` → 409 version_conflict), same
 * version and events. A full_path clash surfaces as the database's unique violation: the caller's transaction fails.
 */
export async function updateStoryIn(kernel: Kernel, tx: Tx, emit: Emit, access: SpaceAccess, uuid: string, input: UpdateStoryInput): Promise<StoryView> {
  if (input.slug !== undefined) slugOrFail(input.slug)
  const lang = input.lang === undefined ? undefined : langOrFail(input.lang)
  const spaceId = access.space.id
  const s = await lockForSave(tx, spaceId, uuid, input.expected_version_no)
  const now = kernel.clock.now()
  const saveLang = lang ?? s.lang
  const isOwn = saveLang === s.lang
  const { existing, content } = await contentToSave(tx, spaceId, s, saveLang, input.content)
  const place = await placementAfterSave(tx, spaceId, s, input)
  const row = await repo.updateStoryRow(tx, s.id, storyPatch(s, place, input, isOwn, now))
  if (place.moved) {
    await repo.moveDescendants(tx, spaceId, s.fullPath, place.fullPath, place.depth - s.depth, now)
    emit({ type: 'story.moved', spaceId, payload: { story: { id: s.id, uuid: s.uuid, from: s.fullPath, to: place.fullPath } } })
  }
  const shownName = await saveLocaleContent(tx, row, saveLang, existing, input, content, now)
  const saved = { lang: saveLang, name: shownName ?? row.name, content }
  await writeVersion(tx, row, saved, access, now, emit)
  const translations = (await repo.contentsOf(tx, s.id)).map((r) => r.lang)
  return view({ ...row, parentUuid: place.parentUuid }, translations, saved)
}

/** The Story to save, locked for the transaction: 404 when absent, 409 when archived or not at the expected version. */
async function lockForSave(tx: Tx, spaceId: number, uuid: string, expectedVersionNo: number | undefined): Promise<StoryWithParent> {
  const s = await repo.findStory(tx, spaceId, uuid, true)
  if (!s) throw notFound('Story')
  mutable(s)
  if (expectedVersionNo !== undefined && expectedVersionNo !== s.versionNo) {
    throw StoryErrors.versionConflict(`The Story is at version ${s.versionNo}, not ${expectedVersionNo}; reload it and apply your change again.`)
  }
  return s
}

/**
 * The content a save leaves in `saveLang` (the given one, validated against the blueprints, else the stored one) and
 * the locale's stored row. A new translation needs content, in a locale of the Space.
 */
async function contentToSave(tx: Tx, spaceId: number, s: StoryRow, saveLang: string, given: unknown) {
  if (saveLang !== s.lang) await spaceLocaleOrFail(tx, spaceId, saveLang)
  const existing = await repo.contentIn(tx, s.id, saveLang)
  if (!existing && given === undefined) {
    throw validationFailed({ content: [`is required to add the "${saveLang}" translation.`] })
  }
  const content = given === undefined ? (existing!.content as Doc) : validateContent(given, await repo.blueprintsOf(tx, spaceId))
  return { existing, content }
}

/** Where a save puts the Story in the tree. */
interface Placement {
  parentId: number | null
  parentUuid: string | null
  slug: string
  fullPath: string
  depth: number
  /** The full path changes: the subtree moves with it. */
  moved: boolean
}

/**
 * The Story's parent, slug, full path and depth after the save. 422 for a parent that is the Story itself or one of its
 * descendants, or a move that would nest the subtree deeper than MAX_STORY_DEPTH.
 */
async function placementAfterSave(tx: Tx, spaceId: number, s: StoryWithParent, input: UpdateStoryInput): Promise<Placement> {
  let parentId = s.parentId
  let parentUuid = s.parentUuid
  let parentPath: string | null = s.fullPath.slice(0, s.fullPath.length - s.slug.length - 1) || null
  let depth = s.depth
  if (input.parent_uuid !== undefined && input.parent_uuid !== s.parentUuid) {
    if (input.parent_uuid === null) {
      parentId = null
      parentUuid = null
      parentPath = null
      depth = 1
    } else {
      const parent = await parentOrFail(tx, spaceId, input.parent_uuid)
      if (parent.id === s.id || parent.fullPath.startsWith(`${s.fullPath}/`)) {
        throw validationFailed({ parent_uuid: ['A Story cannot move under itself or one of its descendants.'] })
      }
      parentId = parent.id
      parentUuid = parent.uuid
      parentPath = parent.fullPath
      depth = parent.depth + 1
    }
  }
  const slug = input.slug ?? s.slug
  const fullPath = joinPath(parentPath, slug)
  const moved = fullPath !== s.fullPath
  if (moved) {
    const deepest = await repo.subtreeMaxDepth(tx, spaceId, s)
    if (deepest - s.depth + depth > MAX_STORY_DEPTH) {
      throw validationFailed({ parent_uuid: [`Stories nest at most ${MAX_STORY_DEPTH} levels deep.`] })
    }
  }
  return { parentId, parentUuid, slug, fullPath, depth, moved }
}

/** The Story row's changes: the next version, the placement, and the name when the save renames its own locale. */
function storyPatch(s: StoryRow, place: Placement, input: UpdateStoryInput, isOwn: boolean, now: Date): repo.StoryPatch {
  const patch: repo.StoryPatch = {
    versionNo: s.versionNo + 1,
    updatedAt: now,
    parentId: place.parentId,
    slug: place.slug,
    fullPath: place.fullPath,
    depth: place.depth,
  }
  if (input.content !== undefined || input.name !== undefined) patch.hasUnpublishedChanges = true
  if (isOwn && input.name !== undefined) patch.name = input.name
  return patch
}

/**
 * Writes the saved locale's content row (a new translation is inserted; an existing row is updated when the save
 * changes its content or a translation's name) and returns the name shown in that locale: the Story's own name (`row`
 * is the Story after the save) in its own locale, else the translation's name (null: it has none).
 */
async function saveLocaleContent(
  tx: Tx,
  row: StoryRow,
  lang: string,
  existing: repo.ContentRow | null,
  input: UpdateStoryInput,
  content: Doc,
  now: Date,
): Promise<string | null> {
  const isOwn = lang === row.lang
  const nameChanged = input.name !== undefined
  let shownName: string | null = isOwn ? row.name : (existing?.name ?? null)
  if (!isOwn && nameChanged) shownName = input.name!
  if (existing) {
    if (input.content !== undefined || (!isOwn && nameChanged)) {
      await repo.updateContent(tx, row.id, lang, { content, name: isOwn ? null : shownName, updatedAt: now })
    }
  } else {
    await repo.insertContent(tx, { storyId: row.id, lang, name: shownName, content, updatedAt: now })
  }
  return shownName
}

// ---- Publishing ----

/** The snapshot of every locale as the public will see it: translations get untranslatable fields from the source. */
async function snapshotContents(tx: Tx, s: StoryRow) {
  const [contents, settings] = await Promise.all([repo.contentsOf(tx, s.id), localeSettings(tx, s.spaceId)])
  const own = contents.find((c) => c.lang === s.lang)!
  let blueprints: Map<string, Blueprint> | null = null
  const out: { lang: string; name: string; content: unknown }[] = []
  for (const c of contents) {
    // Content in a locale the Space no longer has is kept but not served.
    if (c.lang !== s.lang && !settings.codes.includes(c.lang)) continue
    let content = c.content
    if (c.lang !== s.lang) {
      blueprints ??= await repo.blueprintsOf(tx, s.spaceId)
      content = applyUntranslatable(c.content as Doc, own.content as Doc, blueprints)
    }
    out.push({ lang: c.lang, name: c.name ?? s.name, content })
  }
  return out
}

/**
 * Publishes the current drafts of every locale as the public snapshot. Publishing a published Story without
 * unpublished changes does nothing (no event).
 */
export async function publishStory(kernel: Kernel, access: SpaceAccess, uuid: string): Promise<StoryView> {
  // Filter hook (plugins) before the transaction: may veto. The draft is read only when a handler wants it.
  const actor = actorOf(access)
  if (kernel.filters.active('story.before_publish', actor)) {
    const s = await viewOf(kernel.db.db, access.space.id, uuid)
    const { uuid: id, name, slug, full_path, lang, version_no, content } = s
    await kernel.filters.run('story.before_publish', { story: { uuid: id, name, slug, full_path, lang, version_no, content } }, actor)
  }
  await transact(kernel, async (tx, emit) => {
    const s = await repo.findStory(tx, access.space.id, uuid, true)
    if (!s) throw notFound('Story')
    mutable(s)
    if (s.isFolder) throw validationFailed({ is_folder: ['Folders are not published; publish the Stories in them.'] }, 'A folder cannot be published.')
    if (s.status === 'published' && !s.hasUnpublishedChanges) return
    const now = kernel.clock.now()
    const snapshot = await snapshotContents(tx, s)
    await tx.delete(storyPublished).where(eq(storyPublished.storyId, s.id))
    await tx
      .insert(storyPublished)
      .values(snapshot.map((c) => ({ storyId: s.id, lang: c.lang, name: c.name, content: c.content, versionNo: s.versionNo, publishedAt: now })))
    const [row] = await tx
      .update(stories)
      .set({ status: 'published', hasUnpublishedChanges: false, publishedAt: now, firstPublishedAt: s.firstPublishedAt ?? now, updatedAt: now })
      .where(eq(stories.id, s.id))
      .returning()
    if (s.status !== 'published') await repo.adjustCounts(tx, s.spaceId, { [s.status]: -1, published: 1 })
    emit({ type: 'story.published', spaceId: s.spaceId, payload: eventPayload(row, 'published') })
  })
  return viewOf(kernel.db.db, access.space.id, uuid)
}

/** Leaving `published` removes the public snapshot and emits story.unpublished (inside the caller's transaction). */
async function withdraw(tx: Tx, kernel: Kernel, s: StoryRow, emit: Emit, statusAfter: string) {
  if (s.status !== 'published') return
  await tx.delete(storyPublished).where(eq(storyPublished.storyId, s.id))
  emit({ type: 'story.unpublished', spaceId: s.spaceId, payload: eventPayload(s, statusAfter) })
}

export async function unpublishStory(kernel: Kernel, access: SpaceAccess, uuid: string): Promise<StoryView> {
  await transact(kernel, async (tx, emit) => {
    const s = await repo.findStory(tx, access.space.id, uuid, true)
    if (!s) throw notFound('Story')
    mutable(s)
    if (s.status !== 'published') return
    const now = kernel.clock.now()
    await tx.update(stories).set({ status: 'draft', updatedAt: now }).where(eq(stories.id, s.id))
    await repo.adjustCounts(tx, s.spaceId, { published: -1, draft: 1 })
    await withdraw(tx, kernel, s, emit, 'draft')
  })
  return viewOf(kernel.db.db, access.space.id, uuid)
}

/**
 * Hides the Story everywhere public. story.deleted fires here (and not again at a later hard delete); a published
 * Story also fires story.unpublished. Archiving again changes nothing.
 */
export async function archiveStory(kernel: Kernel, access: SpaceAccess, uuid: string): Promise<StoryView> {
  await beforeDelete(kernel, access, uuid, 'archive')
  await transact(kernel, async (tx, emit) => {
    const s = await repo.findStory(tx, access.space.id, uuid, true)
    if (!s) throw notFound('Story')
    if (s.status === 'archived') return
    const now = kernel.clock.now()
    await tx.update(stories).set({ status: 'archived', archivedAt: now, updatedAt: now }).where(eq(stories.id, s.id))
    await repo.adjustCounts(tx, s.spaceId, { [s.status]: -1, archived: 1 })
    await withdraw(tx, kernel, s, emit, 'archived')
    emit({ type: 'story.deleted', spaceId: s.spaceId, payload: eventPayload(s, 'archived') })
  })
  return viewOf(kernel.db.db, access.space.id, uuid)
}

/** Filter hook (plugins) before an archive or delete, outside the transaction: may veto. Reads the Story only when wanted. */
async function beforeDelete(kernel: Kernel, access: SpaceAccess, uuid: string, operation: 'archive' | 'delete') {
  const actor = actorOf(access)
  if (!kernel.filters.active('story.before_delete', actor)) return
  const s = await repo.findStory(kernel.db.db, access.space.id, uuid)
  if (!s) throw notFound('Story')
  const story = { uuid: s.uuid, name: s.name, slug: s.slug, full_path: s.fullPath, lang: s.lang, status: s.status }
  await kernel.filters.run('story.before_delete', { operation, story }, actor)
}

/** Removes the Story and its versions. A Story with children must have them moved or deleted first. */
export async function deleteStory(kernel: Kernel, access: SpaceAccess, uuid: string): Promise<void> {
  await beforeDelete(kernel, access, uuid, 'delete')
  await transact(kernel, async (tx, emit) => {
    const s = await repo.findStory(tx, access.space.id, uuid, true)
    if (!s) throw notFound('Story')
    if (await repo.hasAnyChild(tx, s.id)) {
      throw StoryErrors.hasChildren('The Story has children; move or delete them first.')
    }
    await withdraw(tx, kernel, s, emit, 'deleted')
    if (s.status !== 'archived') emit({ type: 'story.deleted', spaceId: s.spaceId, payload: eventPayload(s, 'deleted') })
    await tx.delete(stories).where(eq(stories.id, s.id))
    await repo.adjustCounts(tx, s.spaceId, { [s.status]: -1 })
  })
}

// ---- Versions ----

async function storyOrFail(kernel: Kernel, access: SpaceAccess, uuid: string) {
  const s = await repo.findStory(kernel.db.db, access.space.id, uuid)
  if (!s) throw notFound('Story')
  return s
}

// The version history (list, one, restore) is in versions-history.ts.

// ---- Tree ----

const node = (r: TreeNodeRow): TreeNode => ({
  uuid: r.uuid,
  name: r.name,
  slug: r.slug,
  full_path: r.fullPath,
  is_folder: r.isFolder,
  status: r.status,
  has_unpublished_changes: r.hasUnpublishedChanges,
})

type Branch = { children?: TreeNode[]; has_children?: boolean }

/** Level by level below `roots`, one indexed query per level, up to `depth` levels or MAX_TREE_NODES nodes. */
async function growTree(kernel: Kernel, spaceId: number, roots: { id: number; node: Branch }[], depth: number) {
  let frontier = roots
  let budget = MAX_TREE_NODES - roots.length
  let truncated = false
  for (let level = 0; level < depth && frontier.length; level++) {
    const rows = budget > 0 ? await repo.childrenOf(kernel.db.db, spaceId, frontier.map((f) => f.id), budget + 1) : []
    if (rows.length > budget) {
      truncated = true
      break
    }
    budget -= rows.length
    const byParent = new Map(frontier.map((f) => [f.id, f.node]))
    for (const f of frontier) f.node.children = []
    const next: { id: number; node: Branch }[] = []
    for (const r of rows) {
      const n = node(r)
      byParent.get(r.parentId!)!.children!.push(n)
      next.push({ id: r.id, node: n })
    }
    frontier = next
  }
  // The last level loaded (or the level where the budget ran out) says whether there is more below.
  const open = frontier.filter((f) => f.node.children === undefined)
  const more = await repo.withChildren(kernel.db.db, spaceId, open.map((f) => f.id))
  for (const f of open) f.node.has_children = more.has(f.id)
  return truncated
}

export async function storyChildren(kernel: Kernel, access: SpaceAccess, uuid: string, depth: number) {
  const s = await storyOrFail(kernel, access, uuid)
  const root: { id: number; node: Branch } = { id: s.id, node: {} }
  const truncated = await growTree(kernel, access.space.id, [root], depth)
  return { data: root.node.children ?? [], meta: { depth, truncated } }
}

/** The whole tree, paginated by root Story (archived Stories and their subtrees are left out). */
export async function storyTree(kernel: Kernel, access: SpaceAccess, query: { page?: number; per_page?: number; depth: number }) {
  const page = pageOf(query.page, query.per_page, TREE_PAGE)
  const { rows, total } = await repo.rootsPage(kernel.db.db, access.space.id, page.perPage, page.offset)
  const roots = rows.map((r) => ({ id: r.id, node: node(r) }))
  const truncated = await growTree(kernel, access.space.id, roots, query.depth - 1)
  return {
    data: roots.map((r) => r.node),
    meta: { total, page: page.page, per_page: page.perPage, depth: query.depth, truncated },
  }
}

// ---- Bulk ----

export type BulkAction = 'publish' | 'unpublish' | 'archive' | 'delete' | 'move'

/**
 * Applies one action to many Stories, each in its own transaction: a failure is reported for its item and does not
 * undo the others. Deletes run deepest first so a parent and its children can go in one call.
 */
export async function bulkStories(
  kernel: Kernel,
  access: SpaceAccess,
  input: { action: BulkAction; uuids: string[]; parent_uuid?: string | null },
): Promise<{ data: BulkResult[]; meta: { succeeded: number; failed: number } }> {
  if (input.action === 'move' && input.parent_uuid === undefined) {
    throw validationFailed({ parent_uuid: ['is required for move (null moves to the root).'] })
  }
  const uuids = [...new Set(input.uuids.map((u) => u.toLowerCase()))]
  let order = uuids
  if (input.action === 'delete') {
    const depthOf = new Map<string, number>()
    for (const u of uuids) depthOf.set(u, (await repo.findStory(kernel.db.db, access.space.id, u))?.depth ?? 0)
    order = [...uuids].sort((a, b) => depthOf.get(b)! - depthOf.get(a)!)
  }
  const results = new Map<string, BulkResult>()
  for (const uuid of order) {
    try {
      switch (input.action) {
        case 'publish':
          results.set(uuid, done(uuid, await publishStory(kernel, access, uuid)))
          break
        case 'unpublish':
          results.set(uuid, done(uuid, await unpublishStory(kernel, access, uuid)))
          break
        case 'archive':
          results.set(uuid, done(uuid, await archiveStory(kernel, access, uuid)))
          break
        case 'move':
          results.set(uuid, done(uuid, await updateStory(kernel, access, uuid, { parent_uuid: input.parent_uuid })))
          break
        case 'delete':
          await deleteStory(kernel, access, uuid)
          results.set(uuid, { uuid, ok: true, status: 'deleted' })
          break
      }
    } catch (err) {
      if (!(err instanceof AppError)) throw err
      const r: BulkResult = { uuid, ok: false, status_code: err.status, error: err.code, message: err.message }
      if (err.fields) r.errors = err.fields
      results.set(uuid, r)
    }
  }
  const data = uuids.map((u) => results.get(u)!)
  const succeeded = data.filter((r) => r.ok).length
  return { data, meta: { succeeded, failed: data.length - succeeded } }
}

const done = (uuid: string, v: StoryView): BulkResult => ({ uuid, ok: true, status: v.status, full_path: v.full_path })

// ---- For other modules (search indexing, GraphQL): the public snapshot, never drafts ----

export interface PublishedSnapshot {
  id: number
  uuid: string
  space_id: number
  slug: string
  full_path: string
  primary_lang: string
  status: StoryStatus
  locales: { lang: string; name: string; content: Doc; version_no: number; published_at: string }[]
}

/**
 * Published Stories in id order after `afterId` (a page of at most `limit`), each with every published locale.
 * `storyIds` narrows to given Stories (an indexer reacting to story.published). Unpublished Stories are absent.
 * A public read when `spaceId` is given (the search index loads a Space with it): a read replica may serve it.
 */
export async function publishedSnapshots(
  kernel: Kernel,
  opts: { afterId?: number; limit?: number; storyIds?: number[]; spaceId?: number } = {},
): Promise<PublishedSnapshot[]> {
  const page = (db: Kernel['db']['db']) =>
    repo.publishedPage(db, {
      afterId: opts.afterId ?? 0,
      limit: Math.min(opts.limit ?? 100, 1000),
      storyIds: opts.storyIds,
      spaceId: opts.spaceId,
    })
  const rows = opts.spaceId === undefined ? await page(kernel.db.db) : await kernel.replicas.read(opts.spaceId, page)
  const out: PublishedSnapshot[] = []
  for (const r of rows) {
    let s = out[out.length - 1]
    if (!s || s.id !== r.id) {
      s = { id: r.id, uuid: r.uuid, space_id: r.spaceId, slug: r.slug, full_path: r.fullPath, primary_lang: r.storyLang, status: r.status, locales: [] }
      out.push(s)
    }
    s.locales.push({ lang: r.lang, name: r.name, content: r.content as Doc, version_no: r.versionNo, published_at: r.publishedAt.toISOString() })
  }
  return out
}

/** The component blueprints of a Space (e.g. for an indexer that weighs fields by type). */
export async function spaceBlueprints(kernel: Kernel, spaceId: number): Promise<Map<string, Blueprint>> {
  return repo.blueprintsOf(kernel.db.db, spaceId)
}

// ---- For modules that attach content to a Story (audience-segment variants) ----

export interface StoryRef {
  id: number
  uuid: string
  lang: string
  status: StoryStatus
}

/** The Story `uuid` of the Space (404 otherwise, a Story of another Space included). */
export async function storyRefOrFail(db: DbOrTx, spaceId: number, uuid: string): Promise<StoryRef> {
  const s = await repo.findStory(db, spaceId, uuid)
  if (!s) throw notFound('Story')
  return { id: s.id, uuid: s.uuid, lang: s.lang, status: s.status }
}

/**
 * Inside the transaction of a change to content attached to the Story: locks the Story (404; archived: 409), so the
 * change and a concurrent publish are ordered, and marks it as having unpublished changes — the attached content
 * reaches the public snapshot at the next publish, like a draft save.
 */
export async function touchStoryContent(tx: Tx, kernel: Kernel, spaceId: number, uuid: string): Promise<StoryRef> {
  const s = await repo.findStory(tx, spaceId, uuid, true)
  if (!s) throw notFound('Story')
  mutable(s)
  await tx.update(stories).set({ hasUnpublishedChanges: true, updatedAt: kernel.clock.now() }).where(eq(stories.id, s.id))
  return { id: s.id, uuid: s.uuid, lang: s.lang, status: s.status }
}

/** Validates content against the Space's component blueprints exactly as a Story save does (422 keyed by field path). */
export async function checkStoryContent(db: DbOrTx, spaceId: number, content: unknown): Promise<Doc> {
  return validateContent(content, await repo.blueprintsOf(db, spaceId))
}
