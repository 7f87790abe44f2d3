import { useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { ApiFailure, api, unwrap } from '../api/client'
import { spacesQuery } from '../api/queries'
import { Button, Dialog, ErrorNotice, TextField } from './ui'
import { t } from '../i18n'
import { queryKeys } from '../api/keys'

/**
 * "Preview": mints a one-hour, read-only preview token and opens the Space's site at the Story's path with the token
 * in the URL fragment, where `/service-admin.js` shows the drafts and Edit links (docs/in-page-editing.md). A Space
 * without a preview URL asks for one first (admins set it; others are told whom to ask).
 */
export function PreviewButton({ space, path, dirty }: { space: string; path: string; dirty: boolean }) {
  const queryClient = useQueryClient()
  const spaces = useQuery(spacesQuery())
  const current = spaces.data?.find((s) => s.slug === space)
  const [asking, setAsking] = useState(false)
  const [siteUrl, setSiteUrl] = useState('')
  const [errors, setErrors] = useState<string[] | undefined>()
  const [failure, setFailure] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  async function open() {
    setFailure(null)
    setBusy(true)
    try {
      const { data } = await unwrap(api.POST('/v1/spaces/{space}/preview-tokens', { params: { path: { space } }, body: { path } }))
      if (data.url) window.open(data.url, '_blank', 'noopener,noreferrer')
      else setAsking(true)
    } catch (e) {
      setFailure(e)
    } finally {
      setBusy(false)
    }
  }

  async function saveUrl(e: FormEvent) {
    e.preventDefault()
    setErrors(undefined)
    try {
      await unwrap(api.PATCH('/v1/spaces/{space}', { params: { path: { space } }, body: { preview_url: siteUrl } }))
      await queryClient.invalidateQueries({ queryKey: queryKeys.spaces() })
      setAsking(false)
      await open()
    } catch (err) {
      if (err instanceof ApiFailure && err.body.errors?.preview_url) setErrors([t('settings.error.previewUrl')])
      else setErrors([err instanceof Error ? err.message : String(err)])
    }
  }

  return (
    <>
      <Button
        onClick={() => (current && !current.preview_url ? setAsking(true) : open())}
        disabled={busy}
        title={dirty ? t('preview.titleDirty') : t('preview.title')}
      >
        {busy ? t('preview.opening') : t('preview.button')}
      </Button>
      {failure ? (
        <div className="basis-full">
          <ErrorNotice error={failure} />
        </div>
      ) : null}
      <Dialog open={asking} title={t('preview.where')} onClose={() => setAsking(false)}>
        {current?.role === 'admin' ? (
          <form onSubmit={saveUrl} className="flex flex-col gap-3">
            <p className="text-sm text-slate-700">
              {t('preview.explain1')} <code>{'/service-admin.js'}</code> {t('preview.explain2')} <code>{`data-space="${space}"`}</code> {t('preview.explain3')}
            </p>
            <TextField
              label={t('preview.url')}
              type="url"
              required
              placeholder={t('settings.previewUrlPlaceholder')}
              value={siteUrl}
              onChange={(e) => setSiteUrl(e.target.value)}
              errors={errors}
            />
            <div className="flex justify-end gap-2">
              <Button onClick={() => setAsking(false)}>{t('common.cancel')}</Button>
              <Button tone="primary" type="submit">
                {t('preview.save')}
              </Button>
            </div>
          </form>
        ) : (
          <>
            <p className="text-sm text-slate-700">{t('preview.noUrl')}</p>
            <div className="flex justify-end">
              <Button onClick={() => setAsking(false)}>{t('common.close')}</Button>
            </div>
          </>
        )}
      </Dialog>
    </>
  )
}
