// A Story's life after saving: publish (the public snapshot of every locale), unpublish, archive and delete, each
// with its filter hook and events. service.ts re-exports the public names.
import { eq } from 'drizzle-orm'
import { stories, storyPublished } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import type { Tx } from '../../kernel/db'
import { notFound, validationFailed } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import { actorOf } from '../../kernel/filters'
import type { Kernel } from '../../kernel/kernel'
import { localeSettings } from '../spaces/locales'
import { applyUntranslatable, type Blueprint, type Doc } from './blocks'
import { StoryErrors, type StoryView } from './model'
import * as repo from './repo'
import type { StoryRow } from './repo'
import { eventPayload, mutable, viewOf } from './rules'

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
