import { useNavigate } from '@tanstack/react-router'
import { type ReactNode, useCallback, useRef, useState } from 'react'
import { useCan } from '../../../api/roles'
import { useScreenCommand } from '../../../components/command-palette'
import { DeleteStoryDialog } from '../../../components/delete-story-dialog'
import { PreviewButton } from '../../../components/preview-button'
import { SchedulePanel } from '../../../components/schedule'
import { toast } from '../../../components/toast'
import { Button, Dialog, type StoryState } from '../../../components/ui'
import { t } from '../../../i18n'
import { publicUrl } from './doc'
import type { StoryAction, StoryDraft } from './use-story-draft'

const CONFIRM_VERB = { publish: 'stories.publish', unpublish: 'stories.unpublish', archive: 'editor.archive' } as const

interface ToolbarStory {
  name: string
  full_path: string
  status: string
  is_folder: boolean
  version_no: number
}

/**
 * The editor's actions: Save (Ctrl/⌘+S), Preview, Unpublish, Publish, Archive and Delete, each only for a role that
 * may, each confirmed first (the palette's "Publish this Story" asks the same, unsaved edits first). A dirty draft
 * must be saved before it is published, archived or deleted.
 */
export function EditorToolbar({
  space,
  uuid,
  story: s,
  state,
  draft,
  canWrite,
  beside,
}: {
  space: string
  uuid: string
  story: ToolbarStory
  state: StoryState
  draft: StoryDraft
  canWrite: boolean
  /** Rendered after Preview: the visual editor's split-view toggle. */
  beside?: ReactNode
}) {
  const navigate = useNavigate()
  const { dirty, saving } = draft
  const [confirm, setConfirm] = useState<null | StoryAction>(null)
  const canPublish = useCan(space, 'POST', '/v1/spaces/{space}/stories/{uuid}/publish')
  const canDelete = useCan(space, 'DELETE', '/v1/spaces/{space}/stories/{uuid}')
  const [deleting, setDeleting] = useState<null | { uuid: string; name: string }>(null)
  // The command palette's "Publish this Story": the same confirmation as the Publish button (unsaved edits first).
  const paletteDirty = useRef(dirty)
  paletteDirty.current = dirty
  useScreenCommand(
    useCallback(
      (command) => {
        if (command !== 'publish' || !canPublish) return
        if (paletteDirty.current) toast(t('palette.saveFirst'), 'error')
        else setConfirm('publish')
      },
      [canPublish],
    ),
  )

  return (
    <>
      <div className="ml-auto flex flex-wrap gap-2">
        {canWrite ? (
          <Button tone="primary" onClick={() => draft.save()} disabled={saving || !dirty} aria-keyshortcuts="Control+S">
            {saving ? t('editor.saving') : t('editor.save')}
          </Button>
        ) : null}
        {!s.is_folder ? <PreviewButton space={space} path={s.full_path} dirty={dirty} /> : null}
        {beside}
        {!canWrite ? null : s.status === 'published' ? (
          <Button onClick={() => setConfirm('unpublish')} disabled={dirty}>
            {t('stories.unpublish')}
          </Button>
        ) : null}
        {canWrite ? (
          <Button tone="primary" onClick={() => setConfirm('publish')} disabled={dirty || s.status === 'archived' || state === 'published'}>
            {t('stories.publish')}
          </Button>
        ) : null}
        {canWrite && s.status !== 'archived' && !s.is_folder ? (
          <Button tone="danger" onClick={() => setConfirm('archive')} disabled={dirty}>
            {t('editor.archive')}
          </Button>
        ) : null}
        {canDelete ? (
          <Button tone="danger" onClick={() => setDeleting({ uuid, name: s.name })} disabled={dirty}>
            {t('stories.delete')}
          </Button>
        ) : null}
      </div>

      <Dialog open={confirm !== null} title={t(`editor.confirm.${confirm ?? 'publish'}`, { name: s.name })} onClose={() => setConfirm(null)}>
        <p className="text-sm">
          {confirm === 'publish'
            ? t('editor.confirm.publishText', { version: s.version_no, url: publicUrl(space, s.full_path) })
            : confirm === 'unpublish'
              ? t('editor.confirm.unpublishText')
              : t('editor.confirm.archiveText')}
        </p>
        <div className="flex justify-end gap-2">
          <Button onClick={() => setConfirm(null)}>{t('common.cancel')}</Button>
          <Button
            tone={confirm === 'archive' ? 'danger' : 'primary'}
            onClick={() => {
              if (!confirm) return
              setConfirm(null)
              void draft.act(confirm)
            }}
          >
            {t(CONFIRM_VERB[confirm ?? 'publish'])}
          </Button>
        </div>
      </Dialog>

      <DeleteStoryDialog
        space={space}
        target={deleting}
        leaving
        onClose={() => setDeleting(null)}
        onDeleted={async (name) => {
          setDeleting(null)
          toast(t('stories.deleted', { name }))
          await navigate({ to: '/spaces/$space', params: { space }, search: {} })
        }}
      />
    </>
  )
}

/** Scheduled publish and unpublish of the Story (not of a folder or an archived Story). */
export function EditorSchedule({ space, uuid, story: s, canWrite }: { space: string; uuid: string; story: ToolbarStory; canWrite: boolean }) {
  if (s.is_folder || s.status === 'archived') return null
  return <SchedulePanel space={space} uuid={uuid} canWrite={canWrite} disabled={false} />
}
