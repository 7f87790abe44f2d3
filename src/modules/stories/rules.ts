// What the Story changes share: the view of a Story, the event payload, the checks (language, the Space's locales,
// content against the blueprints, slug, parent, archived), the full_path clash and the version a save writes.
import { storyVersions } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import type { Tx } from '../../kernel/db'
import { notFound, uniqueAs, validationFailed } from '../../kernel/errors'
import type { Emit } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import { canonicalLocale } from '../../kernel/locale'
import { localeSettings } from '../spaces/locales'
import { type Blueprint, contentErrors, type Doc } from './blocks'
import { StoryErrors, type StoryView } from './model'
import { isSlug, SLUG_RULE } from './paths'
import * as repo from './repo'
import type { StoryRow, StoryWithParent } from './repo'

export const EMPTY_DOC: Doc = { type: 'doc', blocks: [] }
export const LIST_PAGE = { perPage: 25, max: 100 }

export function view(s: StoryWithParent, translations: string[], shown?: { lang: string; name: string | null; content: unknown }): StoryView {
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
export function eventPayload(s: Pick<StoryRow, 'id' | 'uuid' | 'slug' | 'fullPath' | 'lang' | 'versionNo'>, status: string) {
  return { story: { id: s.id, uuid: s.uuid, slug: s.slug, full_path: s.fullPath, lang: s.lang, version_no: s.versionNo, status } }
}

export async function viewOf(db: Kernel['db']['db'] | Tx, spaceId: number, uuid: string, lang?: string): Promise<StoryView> {
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

export function langOrFail(raw: string, field = 'lang'): string {
  const c = canonicalLocale(raw)
  if (!c) throw validationFailed({ [field]: [`"${raw}" is not a valid BCP-47 language tag.`] })
  return c
}

export async function spaceLocaleOrFail(tx: Kernel['db']['db'] | Tx, spaceId: number, lang: string) {
  const settings = await localeSettings(tx, spaceId)
  if (!settings.codes.includes(lang)) {
    throw validationFailed({ lang: [`"${lang}" is not one of this Space's locales (${settings.codes.join(', ')}).`] })
  }
  return settings
}

export function validateContent(content: unknown, blueprints: Map<string, Blueprint>): Doc {
  const errors = contentErrors(content, blueprints)
  if (Object.keys(errors).length) throw validationFailed(errors, 'The content does not match its component blueprints.')
  return content as Doc
}

export function slugOrFail(slug: string) {
  if (!isSlug(slug)) throw validationFailed({ slug: [SLUG_RULE] })
}

export async function parentOrFail(tx: Tx, spaceId: number, parentUuid: string) {
  const parent = await repo.findStory(tx, spaceId, parentUuid)
  if (!parent) throw validationFailed({ parent_uuid: ['No Story with this uuid in this Space.'] })
  if (parent.status === 'archived') throw validationFailed({ parent_uuid: ['The parent Story is archived.'] })
  return parent
}

export function mutable(s: StoryRow) {
  if (s.status === 'archived') throw StoryErrors.storyArchived('The Story is archived; it can only be deleted.')
}

export const pathTaken: (err: unknown) => never = uniqueAs('stories_space_path_key', () => StoryErrors.pathTaken('Another Story already has this full_path in the Space.'))

export async function writeVersion(
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

export async function storyOrFail(kernel: Kernel, access: SpaceAccess, uuid: string) {
  const s = await repo.findStory(kernel.db.db, access.space.id, uuid)
  if (!s) throw notFound('Story')
  return s
}
