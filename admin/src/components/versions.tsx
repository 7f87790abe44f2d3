import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { memo, useId, useState } from 'react'
import { api, unwrap } from '../api/client'
import { formatDateTime, formatNumber, t } from '../i18n'
import { ChangeList } from './diff-view'
import { diffStories } from './doc-diff'
import { Button, Dialog, ErrorNotice, Loading } from './ui'
import { queryKeys } from '../api/keys'

const versionQuery = (space: string, uuid: string, n: number) =>
  queryOptions({
    queryKey: queryKeys.version(space, uuid, n),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/stories/{uuid}/versions/{version_no}', { params: { path: { space, uuid, version_no: n } } }))).data,
    staleTime: Number.POSITIVE_INFINITY, // a version never changes
  })

/** The Story's versions in one locale, newest first (`current` in the key: a new version reloads the list). */
const versionsQuery = (space: string, uuid: string, lang: string, current: number) =>
  queryOptions({
    queryKey: queryKeys.versions(space, uuid, lang, current),
    queryFn: async () => unwrap(api.GET('/v1/spaces/{space}/stories/{uuid}/versions', { params: { path: { space, uuid }, query: { per_page: 50, lang } } })),
  })

/** The Stories whose versions panel is open in this tab (`space/uuid`). */
const openPanels = new Set<string>()

/**
 * The Story's versions in the locale on screen, newest first, with their authors: compare any two (field by field,
 * blocks by path, values as text), and restore one (its content and name are saved as a new version in that locale;
 * the API refuses a version of another locale, so nothing is written where the editor is not looking).
 */
export const VersionsPanel = memo(function VersionsPanel({
  space,
  uuid,
  current,
  lang,
  disabled,
  readOnly = false,
  onRestored,
}: {
  space: string
  uuid: string
  current: number
  /** The locale on screen: only its versions are listed and restored. */
  lang: string
  disabled: boolean
  /** No Restore (a role that cannot write). */
  readOnly?: boolean
  /** After a restore: the editor reloads the Story (its document, version and status line). */
  onRestored?: () => void | Promise<void>
}) {
  const queryClient = useQueryClient()
  const [restoring, setRestoring] = useState<number | null>(null)
  const [pair, setPair] = useState<{ from: number | null; to: number | null }>({ from: null, to: null })
  const [compared, setCompared] = useState<{ from: number; to: number } | null>(null)
  const fromId = useId()
  const toId = useId()
  const [restored, setRestored] = useState<{ n: number; now: number } | null>(null)
  const versions = useQuery(versionsQuery(space, uuid, lang, current))
  const restore = useMutation({
    mutationFn: (versionNo: number) =>
      unwrap(
        api.POST('/v1/spaces/{space}/stories/{uuid}/versions/{version_no}/restore', { params: { path: { space, uuid, version_no: versionNo }, query: { lang } } }),
      ),
    onSuccess: async (answer, versionNo) => {
      setRestoring(null)
      setRestored({ n: versionNo, now: answer.data.version_no })
      await queryClient.invalidateQueries({ queryKey: queryKeys.space(space) })
      await onRestored?.()
    },
  })
  const author = (a: { user_id: number; name: string | null } | null) => (a === null ? t('versions.tokenAuthor') : (a.name ?? t('versions.unknownAuthor')))
  const list = versions.data?.data ?? []
  // The newest version of this locale is what the editor shows (the Story's version_no may belong to another locale).
  const shown = list[0]?.version_no
  // Defaults: the newest version against the one before it.
  const from = pair.from ?? list[1]?.version_no ?? null
  const to = pair.to ?? list[0]?.version_no ?? null
  const a = useQuery({ ...versionQuery(space, uuid, compared?.from ?? 0), enabled: compared !== null })
  const b = useQuery({ ...versionQuery(space, uuid, compared?.to ?? 0), enabled: compared !== null })
  const changes = a.data && b.data ? diffStories({ name: a.data.name, content: a.data.content }, { name: b.data.name, content: b.data.content }) : null

  return (
    <details
      className="rounded-lg bg-white p-3 ring-1 ring-slate-200"
      // Open stays open when the editor re-renders the panel (someone else saved: the editor loads their version).
      open={openPanels.has(`${space}/${uuid}`)}
      onToggle={(e) => {
        if (e.currentTarget.open) openPanels.add(`${space}/${uuid}`)
        else openPanels.delete(`${space}/${uuid}`)
      }}
    >
      <summary
        className="cursor-pointer text-sm font-semibold"
        // Recorded at the click, before the (asynchronous) toggle event: a re-render in between (a save arriving over
        // the live stream) must not close the panel the editor just opened.
        onClick={(e) => {
          const key = `${space}/${uuid}`
          if ((e.currentTarget.parentElement as HTMLDetailsElement).open) openPanels.delete(key)
          else openPanels.add(key)
        }}
      >
        {t('versions.title')}
      </summary>
      <p className="mt-1 text-xs text-slate-600">{t('versions.list', { lang })}</p>
      {versions.isPending ? <Loading what={t('versions.loading')} /> : null}
      <ErrorNotice error={versions.error ?? restore.error} />
      {restored ? (
        <p role="status" className="mt-2 text-sm text-emerald-800">
          {t('versions.restored', { n: restored.n, now: restored.now })}
        </p>
      ) : null}
      {versions.data && list.length === 0 ? <p className="mt-2 text-sm text-slate-700">{t('versions.empty', { lang })}</p> : null}
      <ol className="mt-2 divide-y divide-slate-100" aria-label={t('versions.title')} data-lang={lang}>
        {list.map((v) => (
          <li key={v.version_no} className="flex items-center gap-3 py-1.5 text-sm" data-version={v.version_no}>
            <span className="w-24 font-medium">{t('versions.version', { n: v.version_no })}</span>
            <span className="flex-1 text-slate-700">
              {formatDateTime(v.created_at)} · <span data-testid="version-author">{author(v.author)}</span>
            </span>
            {v.version_no === shown ? (
              <span className="text-xs text-slate-600">{t('versions.current')}</span>
            ) : readOnly ? null : (
              <Button className="px-2 py-0.5 text-xs" disabled={disabled} onClick={() => setRestoring(v.version_no)} aria-label={t('versions.restoreOne', { n: v.version_no })}>
                {t('versions.restore')}
              </Button>
            )}
          </li>
        ))}
      </ol>

      {list.length > 1 ? (
        <section aria-label={t('versions.compareTitle')} className="mt-3 flex flex-col gap-2 border-t border-slate-100 pt-3">
          <form
            className="flex flex-wrap items-end gap-2 text-sm"
            onSubmit={(e) => {
              e.preventDefault()
              if (from !== null && to !== null) setCompared({ from, to })
            }}
          >
            <label htmlFor={fromId} className="flex flex-col text-xs font-medium">
              {t('versions.compare')}
              <select id={fromId} value={from ?? ''} onChange={(e) => setPair((p) => ({ ...p, from: Number(e.target.value) }))} className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm">
                {list.map((v) => (
                  <option key={v.version_no} value={v.version_no}>
                    {t('versions.version', { n: v.version_no })}
                  </option>
                ))}
              </select>
            </label>
            <label htmlFor={toId} className="flex flex-col text-xs font-medium">
              {t('versions.with')}
              <select id={toId} value={to ?? ''} onChange={(e) => setPair((p) => ({ ...p, to: Number(e.target.value) }))} className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm">
                {list.map((v) => (
                  <option key={v.version_no} value={v.version_no}>
                    {t('versions.version', { n: v.version_no })}
                  </option>
                ))}
              </select>
            </label>
            <Button type="submit">{t('versions.showDiff')}</Button>
          </form>
          <ErrorNotice error={a.error ?? b.error} />
          {compared && !changes && !a.error && !b.error ? <Loading what={t('versions.comparing')} /> : null}
          {compared && changes ? (
            <div className="flex flex-col gap-1">
              <p className="text-xs text-slate-700" aria-live="polite">
                {t(changes.length === 1 ? 'versions.changesOne' : 'versions.changes', { from: compared.from, to: compared.to, count: formatNumber(changes.length) })}
              </p>
              <ChangeList changes={changes} label={t('versions.changesLabel', { from: compared.from, to: compared.to })} />
            </div>
          ) : null}
        </section>
      ) : null}

      <Dialog open={restoring !== null} title={t('versions.restoreTitle', { n: restoring ?? '' })} onClose={() => setRestoring(null)}>
        <p className="text-sm">{t('versions.restoreExplain', { lang })}</p>
        <div className="flex justify-end gap-2">
          <Button onClick={() => setRestoring(null)}>{t('common.cancel')}</Button>
          <Button tone="primary" disabled={restore.isPending} onClick={() => restoring !== null && restore.mutate(restoring)}>
            {t('versions.restore')}
          </Button>
        </div>
      </Dialog>
    </details>
  )
})
