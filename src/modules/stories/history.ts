// A Story's version history: list, read one, restore one (saved as a new version). service.ts re-exports them.
import type { SpaceAccess } from '../../kernel/auth'
import { notFound } from '../../kernel/errors'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import type { StoryView } from './model'
import * as repo from './repo'
import { LIST_PAGE, storyOrFail } from './rules'
import { updateStory } from './save'

export async function listVersions(kernel: Kernel, access: SpaceAccess, uuid: string, query: { page?: number; per_page?: number }) {
  const s = await storyOrFail(kernel, access, uuid)
  const page = pageOf(query.page, query.per_page, LIST_PAGE)
  const { rows, total } = await repo.versionsPage(kernel.db.db, s.id, page.perPage, page.offset)
  return {
    data: rows.map((r) => ({
      version_no: r.versionNo,
      lang: r.lang,
      name: r.name,
      slug: r.slug,
      full_path: r.fullPath,
      author: r.authorUserId === null ? null : { user_id: r.authorUserId },
      created_at: r.createdAt.toISOString(),
    })),
    meta: { total, page: page.page, per_page: page.perPage },
  }
}

export async function getVersion(kernel: Kernel, access: SpaceAccess, uuid: string, versionNo: number) {
  const s = await storyOrFail(kernel, access, uuid)
  const v = await repo.versionOf(kernel.db.db, s.id, versionNo)
  if (!v) throw notFound('Version')
  return {
    version_no: v.versionNo,
    lang: v.lang,
    name: v.name,
    slug: v.slug,
    full_path: v.fullPath,
    content: v.content,
    author: v.authorUserId === null ? null : { user_id: v.authorUserId },
    created_at: v.createdAt.toISOString(),
  }
}

/** Saves the content (and name) of an old version, in its locale, as a new version. Structure is not restored. */
export async function restoreVersion(kernel: Kernel, access: SpaceAccess, uuid: string, versionNo: number): Promise<StoryView> {
  const s = await storyOrFail(kernel, access, uuid)
  const v = await repo.versionOf(kernel.db.db, s.id, versionNo)
  if (!v) throw notFound('Version')
  return updateStory(kernel, access, uuid, { lang: v.lang, content: v.content, name: v.name })
}
