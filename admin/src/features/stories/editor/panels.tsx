import type { ReactNode } from 'react'
import { CommentsPanel } from '../../../components/collab'
import { VersionsPanel } from '../../../components/versions'
import { StoryAnalyticsPanel } from '../../analytics/story-panel'
import { LinkSuggestions, SeoSuggestions } from '../../ai/seo-panel'
import { VariantsPanel } from '../../segments/variants-panel'
import type { MessageKey } from '../../../i18n/en'
import { EditorSchedule } from './toolbar'
import type { EditorCollab } from './use-editor-collab'
import type { StoryDraft } from './use-story-draft'

/** What a panel of the editor gets: the Story on screen, its draft, the collaboration state and the caller's rights. */
export interface EditorPanelProps {
  space: string
  uuid: string
  /** The locale on screen (the Story's own when no `?lang`). */
  lang: string
  story: { name: string; full_path: string; status: string; is_folder: boolean; version_no: number; primary_lang: string }
  draft: StoryDraft
  collab: EditorCollab
  canWrite: boolean
}

/**
 * A panel of the Story editor, in one of its slots (admin/README.md, "The Story editor's parts"):
 * - `side`: the column beside the form (comments); `wide` makes the column as wide as the form (a split view).
 * - `below`: under the form (schedule, versions), shown in every locale state.
 * - `tab`: a tab beside "Content" (the form); with one or more, the editor shows a tab list above the form.
 * A panel that renders `null` takes no room.
 */
export interface EditorPanel {
  id: string
  slot: 'side' | 'below' | 'tab'
  /** The tab's name (slot `tab`). */
  label?: MessageKey
  /** A `side` panel as wide as the form. */
  wide?: boolean
  render: (props: EditorPanelProps) => ReactNode
}

/** The editor's panels, in the order they show in their slot. */
export const EDITOR_PANELS: EditorPanel[] = [
  {
    id: 'comments',
    slot: 'side',
    render: ({ space, uuid, collab }) => (
      <CommentsPanel space={space} uuid={uuid} live={collab.live} target={collab.commentTarget} onTarget={collab.setCommentTarget} savedPath={collab.savedPath} />
    ),
  },
  {
    id: 'schedule',
    slot: 'below',
    render: ({ space, uuid, story, canWrite }) => <EditorSchedule space={space} uuid={uuid} story={story} canWrite={canWrite} />,
  },
  {
    id: 'seo',
    slot: 'below',
    render: ({ space, uuid, story, lang, draft, canWrite }) =>
      draft.showForm && !story.is_folder && draft.doc ? (
        <SeoSuggestions space={space} uuid={uuid} lang={lang} blocks={draft.doc.blocks} onBlocks={draft.onBlocks} canWrite={canWrite} />
      ) : null,
  },
  {
    id: 'links',
    slot: 'below',
    render: ({ space, uuid, story, lang, draft, canWrite }) =>
      draft.showForm && !story.is_folder && draft.doc ? (
        <LinkSuggestions space={space} uuid={uuid} lang={lang} blocks={draft.doc.blocks} onBlocks={draft.onBlocks} canWrite={canWrite} />
      ) : null,
  },
  {
    id: 'analytics',
    slot: 'below',
    render: ({ space, uuid, story }) => (story.is_folder ? null : <StoryAnalyticsPanel space={space} uuid={uuid} />),
  },
  {
    id: 'variants',
    slot: 'below',
    render: ({ space, uuid, story, lang, draft }) =>
      draft.showForm && !story.is_folder ? <VariantsPanel space={space} uuid={uuid} lang={lang} path={story.full_path} /> : null,
  },
  {
    id: 'versions',
    slot: 'below',
    render: ({ space, uuid, story, lang, draft, canWrite }) =>
      draft.showForm ? (
        <VersionsPanel space={space} uuid={uuid} current={story.version_no} lang={lang} disabled={draft.dirty || story.status === 'archived'} readOnly={!canWrite} onRestored={draft.reload} />
      ) : null,
  },
]

export const panelsIn = (slot: EditorPanel['slot']) => EDITOR_PANELS.filter((p) => p.slot === slot)
