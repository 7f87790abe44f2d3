import type { SpaceAccess } from '../../kernel/auth'
import { notFound, validationFailed } from '../../kernel/errors'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { canonicalLocale } from '../../kernel/locale'
import { usersByIds } from '../auth/service'
import * as repo from './repo'
import { LIST_PAGE, updateStory } from './service'
import type { StoryView } from './model'

// The version history of a Story: every save is a version in one locale. Listed per locale (the editor shows the
// history of the locale on screen), with the author's name, and restored only into the locale it was written in.

async function storyOrFail(kernel: Kernel, access: SpaceAccess, uuid: string) {
  const s = await repo.findStory(kernel.db.db, access.space.id, uuid)
  if (!s) throw notFound('Story')
  return s
}

type Author = { user_id: number; name: string | null } | null

async function authorsOf(kernel: Kernel, ids: (number | null)[]): Promise<(id: number | null) => Author> {
  const users = await usersByIds(kernel.db.db, ids.filter((id): id is number => id !== null))
  return (id) => (id === null ? null : { user_id: id, name: users.get(id)?.name ?? null })
}

function langFilter(lang: string | undefined): string | undefined {
  if (lang === undefined) return undefined
  const canonical = canonicalLocale(lang)
  if (!canonical) throw validationFailed({ lang: ['must be a BCP-47 language tag'] })
  return canonical
}

export async function listVersions(kernel: Kernel, access: SpaceAccess, uuid: string, query: { page?: number; per_page?: number; lang?: string }) {
  const s = await storyOrFail(kernel, access, uuid)
  const lang = langFilter(query.lang)
  const page = pageOf(query.page, query.per_page, LIST_PAGE)
  const { rows, total } = await repo.versionsPage(kernel.db.db, s.id, page.perPage, page.offset, lang)
  const author = await authorsOf(kernel, rows.map((r) => r.authorUserId))
  return {
    data: rows.map((r) => ({
      version_no: r.versionNo,
      lang: r.lang,
      name: r.name,
      slug: r.slug,
      full_path: r.fullPath,
      author: author(r.authorUserId),
      created_at: r.createdAt.toISOString(),
    })),
    meta: { total, page: page.page, per_page: page.perPage },
  }
}

export async function getVersion(kernel: Kernel, access: SpaceAccess, uuid: string, versionNo: number) {
  const s = await storyOrFail(kernel, access, uuid)
  const v = await repo.versionOf(kernel.db.db, s.id, versionNo)
  if (!v) throw notFound('Version')
  const author = await authorsOf(kernel, [v.authorUserId])
  return {
    version_no: v.versionNo,
    lang: v.lang,
    name: v.name,
    slug: v.slug,
    full_path: v.fullPath,
    content: v.content,
    author: author(v.authorUserId),
    created_at: v.createdAt.toISOString(),
  }
}

/**
 * Saves the content (and name) of an old version, in its locale, as a new version. Structure is not restored. With
 * `lang` (the locale the caller is looking at), a version of another locale is refused (422 naming `lang`) instead of
 * silently writing that locale.
 */
export async function restoreVersion(kernel: Kernel, access: SpaceAccess, uuid: string, versionNo: number, query: { lang?: string } = {}): Promise<StoryView> {
  const s = await storyOrFail(kernel, access, uuid)
  const expected = langFilter(query.lang)
  const v = await repo.versionOf(kernel.db.db, s.id, versionNo)
  if (!v) throw notFound('Version')
  if (expected !== undefined && v.lang !== expected) {
    throw validationFailed({ lang: [`version ${versionNo} is in ${v.lang}, not ${expected}: restoring it would write ${v.lang}`] }, 'The version is of another locale.')
  }
  return updateStory(kernel, access, uuid, { lang: v.lang, content: v.content, name: v.name })
}
