// Saving a Story: content, name, slug and parent in one version (the subtree moves with a new full_path), alone or
// inside the caller's transaction. service.ts re-exports the public names.
import type { SpaceAccess } from '../../kernel/auth'
import type { Tx } from '../../kernel/db'
import { notFound, validationFailed } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import type { Doc } from './blocks'
import { beforeSave } from './hooks'
import { StoryErrors, type StoryView } from './model'
import { joinPath, MAX_STORY_DEPTH } from './paths'
import * as repo from './repo'
import type { StoryRow, StoryWithParent } from './repo'
import { langOrFail, mutable, parentOrFail, pathTaken, slugOrFail, spaceLocaleOrFail, validateContent, view, writeVersion } from './rules'

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
