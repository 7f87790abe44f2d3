// Stories: create, read and list, and what other modules call (the published snapshot, content attached to a
// Story). The rest lives beside it, named for what it does, and is re-exported here so callers import the service
// from one place: rules.ts (view, checks, the version a save writes), save.ts, lifecycle.ts (publish, unpublish,
// archive, delete), versions-history.ts (versions), tree.ts, bulk.ts.
import { and, asc, eq, sql } from 'drizzle-orm'
import { stories, storyContents } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import type { DbOrTx, Tx } from '../../kernel/db'
import { notFound, validationFailed } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import type { Blueprint, Doc } from './blocks'
import { beforeSave } from './hooks'
import type { StoryView } from './model'
import { joinPath, MAX_STORY_DEPTH } from './paths'
import * as repo from './repo'
import type { StoryStatus } from './repo'
import {
  EMPTY_DOC,
  eventPayload,
  LIST_PAGE,
  langOrFail,
  mutable,
  parentOrFail,
  pathTaken,
  slugOrFail,
  spaceLocaleOrFail,
  validateContent,
  view,
  viewOf,
  writeVersion,
} from './rules'

export { type BulkAction, bulkStories } from './bulk'
export { getVersion, listVersions, restoreVersion } from './versions-history'
export { archiveStory, deleteStory, publishStory, unpublishStory } from './lifecycle'
export { EMPTY_DOC, LIST_PAGE } from './rules'
export { type UpdateStoryInput, updateStory, updateStoryIn } from './save'
export { MAX_TREE_NODES, storyChildren, storyTree, TREE_PAGE } from './tree'

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

/**
 * Stories of the Space whose draft content (any locale) contains `text` verbatim — e.g. a datasource's `$ds:<key>.`
 * markers — by path, at most `limit` (and whether there were more). A scan of the Space's drafts: for screens, not reads.
 */
export async function storiesContaining(
  kernel: Kernel,
  spaceId: number,
  text: string,
  limit = 100,
): Promise<{ stories: { uuid: string; name: string; full_path: string; langs: string[] }[]; truncated: boolean }> {
  const rows = await kernel.db.db
    .select({ id: stories.id, uuid: stories.uuid, name: stories.name, fullPath: stories.fullPath, lang: storyContents.lang })
    .from(storyContents)
    .innerJoin(stories, eq(stories.id, storyContents.storyId))
    .where(and(eq(stories.spaceId, spaceId), sql`strpos(${storyContents.content}::text, ${text}) > 0`))
    .orderBy(asc(stories.fullPath), asc(storyContents.lang))
  const out: { uuid: string; name: string; full_path: string; langs: string[] }[] = []
  const seen = new Map<number, { langs: string[] }>()
  for (const r of rows) {
    const known = seen.get(r.id)
    if (known) known.langs.push(r.lang)
    else {
      const s = { uuid: r.uuid, name: r.name, full_path: r.fullPath, langs: [r.lang] }
      seen.set(r.id, s)
      out.push(s)
    }
  }
  return { stories: out.slice(0, limit), truncated: out.length > limit }
}
