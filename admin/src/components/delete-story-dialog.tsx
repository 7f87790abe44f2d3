import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, unwrap } from '../api/client'
import { t } from '../i18n'
import { CatalogError } from './catalog-error'
import { Button, Dialog } from './ui'
import { queryKeys } from '../api/keys'

/** Deleting one Story (or an empty folder) and its versions, after a confirmation; 409 while it has children. */
export function DeleteStoryDialog({
  space,
  target,
  onClose,
  onDeleted,
  leaving = false,
}: {
  space: string
  target: null | { uuid: string; name: string }
  onClose: () => void
  onDeleted: (name: string) => void | Promise<void>
  /** The screen shows the deleted Story (the editor): it leaves first, so nothing refetches a Story that is gone. */
  leaving?: boolean
}) {
  const queryClient = useQueryClient()
  const remove = useMutation({
    mutationFn: (uuid: string) => unwrap(api.DELETE('/v1/spaces/{space}/stories/{uuid}', { params: { path: { space, uuid } } })),
    onSuccess: async () => {
      if (leaving && target) await onDeleted(target.name)
      await queryClient.invalidateQueries({ queryKey: queryKeys.space(space) })
      if (!leaving && target) await onDeleted(target.name)
      remove.reset()
    },
  })
  const close = () => {
    remove.reset()
    onClose()
  }
  return (
    <Dialog open={target !== null} title={t('stories.deleteTitle', { name: target?.name ?? '' })} onClose={close}>
      <p className="text-sm text-slate-800">{t('stories.deleteBody')}</p>
      <CatalogError error={remove.error} />
      <div className="flex justify-end gap-2">
        <Button onClick={close}>{t('common.cancel')}</Button>
        <Button tone="danger" disabled={remove.isPending} onClick={() => target && remove.mutate(target.uuid)}>
          {t('stories.delete')}
        </Button>
      </div>
    </Dialog>
  )
}
