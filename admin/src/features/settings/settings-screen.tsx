import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi, useNavigate } from '@tanstack/react-router'
import { type FormEvent, useEffect, useId, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { queryKeys } from '../../api/keys'
import { localesQuery } from '../../api/queries'
import { toast } from '../../components/toast'
import { SelectField, SettingsForm, SettingsPage, SettingsSection } from '../../components/settings-form'
import { Button, CatalogErrorRetry, Dialog, Skeleton, TextField } from '../../components/ui'
import { errorText, fieldErrors, t } from '../../i18n'
import { spaceQuery } from './queries'

const route = getRouteApi('/app/spaces/$space/settings')

/** Space settings: name, default locale and preview URL; the locales with their fallbacks; archiving the Space. */
export function SettingsScreen() {
  const { space } = route.useParams()
  const detail = useQuery(spaceQuery(space))
  return (
    <SettingsPage title={t('settings.title')} query={detail} lines={6}>
      {(data) => (
        <>
          <GeneralForm space={space} data={data} />
          <Locales space={space} />
          {!data.archived ? <ArchiveSpace space={space} name={data.name} /> : null}
        </>
      )}
    </SettingsPage>
  )
}

type SpaceData = Awaited<ReturnType<NonNullable<ReturnType<typeof spaceQuery>['queryFn']>>>

function GeneralForm({ space, data }: { space: string; data: SpaceData }) {
  const queryClient = useQueryClient()
  const [name, setName] = useState(data.name)
  const [preview, setPreview] = useState(data.preview_url ?? '')
  const [defaultLang, setDefaultLang] = useState(data.default_lang)
  useEffect(() => setDefaultLang(data.default_lang), [data.default_lang])
  const save = useMutation({
    mutationFn: async () =>
      (await unwrap(api.PATCH('/v1/spaces/{space}', { params: { path: { space } }, body: { name, preview_url: preview.trim() || null, default_lang: defaultLang } }))).data,
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.space(space) })
      await queryClient.invalidateQueries({ queryKey: queryKeys.spaces() })
      await queryClient.invalidateQueries({ queryKey: queryKeys.whoami() })
      toast(t('settings.saved'))
    },
  })
  const errors = fieldErrors(save.error, { name: 'settings.error.name', preview_url: 'settings.error.previewUrl', default_lang: 'settings.error.defaultLang' })
  return (
    <SettingsSection title={t('settings.general')}>
      <SettingsForm onSubmit={() => save.mutate()} error={Object.keys(errors).length ? null : save.error} submit={t('settings.save')} pending={save.isPending}>
        <TextField label={t('settings.name')} value={name} onChange={(e) => setName(e.target.value)} errors={errors.name} />
        <TextField
          label={t('settings.previewUrl')}
          type="url"
          value={preview}
          onChange={(e) => setPreview(e.target.value)}
          placeholder={t('settings.previewUrlPlaceholder')}
          hint={t('settings.previewUrlHint')}
          errors={errors.preview_url}
        />
        <SelectField label={t('settings.defaultLang')} value={defaultLang} onChange={(e) => setDefaultLang(e.target.value)}>
          {data.locales.map((code) => (
            <option key={code} value={code}>
              {localeName(code)}
            </option>
          ))}
        </SelectField>
      </SettingsForm>
    </SettingsSection>
  )
}

/** `de-AT` → "German (Austria) · de-AT", in the UI's language (Intl.DisplayNames). */
function localeName(code: string): string {
  try {
    const name = new Intl.DisplayNames([document.documentElement.lang || 'en'], { type: 'language' }).of(code)
    return name && name !== code ? `${name} · ${code}` : code
  } catch {
    return code
  }
}

function Locales({ space }: { space: string }) {
  const queryClient = useQueryClient()
  const locales = useQuery(localesQuery(space))
  const [code, setCode] = useState('')
  const [fallback, setFallback] = useState('')
  const [removing, setRemoving] = useState<string | null>(null)
  const fallbackId = useId()
  const refresh = async () => {
    await queryClient.invalidateQueries({ queryKey: queryKeys.space(space) })
  }
  const add = useMutation({
    mutationFn: async () =>
      (await unwrap(api.POST('/v1/spaces/{space}/locales', { params: { path: { space } }, body: { code: code.trim(), fallback: fallback || null } }))).data,
    onSuccess: async (data) => {
      setCode('')
      setFallback('')
      await refresh()
      toast(t('settings.localeAdded', { code: data.code }))
    },
  })
  const remove = useMutation({
    mutationFn: async (c: string) => unwrap(api.DELETE('/v1/spaces/{space}/locales/{code}', { params: { path: { space, code: c } } })),
    onSuccess: async (_d, c) => {
      setRemoving(null)
      await refresh()
      toast(t('settings.localeRemoved', { code: c }))
    },
  })
  const change = useMutation({
    mutationFn: async (v: { code: string; fallback?: string | null; position?: number; focus?: 'up' | 'down' }) =>
      (await unwrap(api.PATCH('/v1/spaces/{space}/locales/{code}', { params: { path: { space, code: v.code } }, body: { fallback: v.fallback, position: v.position } }))).data,
    onSuccess: async (data, v) => {
      await refresh()
      if (v.position !== undefined) {
        toast(t('settings.localeMoved', { code: data.code, n: data.position + 1 }))
        setRefocus({ code: data.code, dir: v.focus ?? 'up', position: data.position })
      } else {
        toast(t('settings.fallbackChanged', { code: data.code }))
      }
    },
  })
  // Keep the keyboard on the moved row once it is rendered in its new place: its button in the same direction, or the
  // other one at either end of the list.
  const [refocus, setRefocus] = useState<{ code: string; dir: 'up' | 'down'; position: number } | null>(null)
  useEffect(() => {
    if (!refocus || locales.data?.findIndex((l) => l.code === refocus.code) !== refocus.position) return
    const row = document.querySelector(`[data-locale="${CSS.escape(refocus.code)}"]`)
    const same = row?.querySelector<HTMLButtonElement>(`button[data-move="${refocus.dir}"]:not(:disabled)`)
    ;(same ?? row?.querySelector<HTMLButtonElement>('button[data-move]:not(:disabled)'))?.focus()
    setRefocus(null)
  }, [refocus, locales.data])
  const changeErrors = fieldErrors(change.error, { fallback: 'settings.error.fallbackChange', position: 'settings.error.position' })
  const errors = fieldErrors(add.error, { code: 'settings.error.code', fallback: 'settings.error.fallback' })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    add.mutate()
  }
  const list = locales.data ?? []
  return (
    <SettingsSection title={t('settings.locales')}>
      <p className="text-sm text-slate-700">{t('settings.localesText')}</p>
      {locales.isPending ? <Skeleton lines={3} /> : null}
      {locales.isError ? <CatalogErrorRetry error={locales.error} onRetry={() => locales.refetch()} /> : null}
      {list.length ? (
        <div className="overflow-x-auto">
          <table className="w-full text-sm">
          <thead>
            <tr className="text-left">
              <th scope="col" className="py-1 pr-3 font-semibold">
                {t('settings.locale')}
              </th>
              <th scope="col" className="py-1 pr-3 font-semibold">
                {t('settings.fallbackChain')}
              </th>
              <th scope="col" className="py-1 font-semibold">
                <span className="sr-only">{t('settings.actions')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((l, i) => (
              <tr key={l.code} className="border-t border-slate-200" data-locale={l.code}>
                <td className="py-1.5 pr-3">
                  {localeName(l.code)} {l.is_default ? <strong className="ml-1 rounded bg-indigo-50 px-1.5 py-0.5 text-xs text-indigo-900">{t('settings.default')}</strong> : null}
                </td>
                <td className="py-1.5 pr-3">
                  <select
                    aria-label={t('settings.fallbackOf', { code: l.code })}
                    value={l.fallback ?? ''}
                    onChange={(e) => change.isPending || change.mutate({ code: l.code, fallback: e.target.value || null })}
                    className="w-full max-w-48 rounded-md border border-slate-300 bg-white px-2 py-1 text-sm"
                  >
                    <option value="">{t('settings.fallbackAuto')}</option>
                    {list
                      .filter((o) => o.code !== l.code)
                      .map((o) => (
                        <option key={o.code} value={o.code} disabled={leadsTo(o.code, l.code, list)}>
                          {localeName(o.code)}
                        </option>
                      ))}
                  </select>
                  <div className="mt-0.5 text-xs text-slate-700">{chain(l.code, list)}</div>
                </td>
                <td className="py-1.5 text-right">
                  <Button
                    tone="secondary"
                    data-move="up"
                    aria-label={t('settings.moveUp', { code: l.code })}
                    disabled={i === 0}
                    onClick={() => change.isPending || change.mutate({ code: l.code, position: i - 1, focus: 'up' })}
                  >
                    <span aria-hidden="true">↑</span>
                  </Button>{' '}
                  <Button
                    tone="secondary"
                    data-move="down"
                    aria-label={t('settings.moveDown', { code: l.code })}
                    disabled={i === list.length - 1}
                    onClick={() => change.isPending || change.mutate({ code: l.code, position: i + 1, focus: 'down' })}
                  >
                    <span aria-hidden="true">↓</span>
                  </Button>
                  {l.is_default ? null : (
                    <Button tone="secondary" className="ml-1" onClick={() => setRemoving(l.code)} aria-label={t('settings.removeLocale', { code: l.code })}>
                      {t('settings.remove')}
                    </Button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      ) : null}
      {change.isError ? (
        Object.keys(changeErrors).length ? (
          <p role="alert" className="text-sm text-red-800">
            {Object.values(changeErrors).flat().join(' ')}
          </p>
        ) : (
          <CatalogErrorRetry error={change.error} />
        )
      ) : null}
      <form onSubmit={submit} className="flex flex-wrap items-end gap-3" noValidate>
        <div className="min-w-40 flex-1">
          <TextField label={t('settings.newLocale')} value={code} onChange={(e) => setCode(e.target.value)} placeholder={t('settings.newLocalePlaceholder')} hint={t('settings.newLocaleHint')} errors={errors.code} />
        </div>
        <div className="flex max-w-full min-w-0 flex-col gap-1">
          <label htmlFor={fallbackId} className="text-sm font-medium text-slate-800">
            {t('settings.fallback')}
          </label>
          <select id={fallbackId} value={fallback} onChange={(e) => setFallback(e.target.value)} className="max-w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm" aria-invalid={errors.fallback ? true : undefined}>
            <option value="">{t('settings.fallbackAuto')}</option>
            {list.map((l) => (
              <option key={l.code} value={l.code}>
                {localeName(l.code)}
              </option>
            ))}
          </select>
          {errors.fallback ? (
            <p role="alert" className="text-xs text-red-700">
              {errors.fallback.join(' ')}
            </p>
          ) : null}
        </div>
        <Button tone="primary" type="submit" disabled={add.isPending || !code.trim()}>
          {t('settings.addLocale')}
        </Button>
      </form>
      {add.isError && !Object.keys(errors).length ? <CatalogErrorRetry error={add.error} /> : null}
      <Dialog open={removing !== null} title={t('settings.removeLocale.confirm', { code: removing ?? '' })} onClose={() => setRemoving(null)}>
        <p className="text-sm text-slate-700">{t('settings.removeLocale.text')}</p>
        {remove.isError ? <CatalogErrorRetry error={remove.error} /> : null}
        <div className="flex justify-end gap-2">
          <Button onClick={() => setRemoving(null)}>{t('common.cancel')}</Button>
          <Button tone="danger" onClick={() => removing && remove.mutate(removing)} disabled={remove.isPending}>
            {t('settings.remove')}
          </Button>
        </div>
      </Dialog>
    </SettingsSection>
  )
}

/** Whether `from`'s explicit fallback chain reaches `to` (choosing `from` as `to`'s fallback would close a cycle). */
function leadsTo(from: string, to: string, list: { code: string; fallback: string | null }[]): boolean {
  const seen = new Set<string>()
  for (let c: string | null = from; c && !seen.has(c); c = list.find((l) => l.code === c)?.fallback ?? null) {
    if (c === to) return true
    seen.add(c)
  }
  return false
}

/** The chain a locale's content falls back along: `de-AT → de → en`. */
function chain(code: string, list: { code: string; fallback: string | null }[]): string {
  const seen = new Set([code])
  const out: string[] = []
  let next = list.find((l) => l.code === code)?.fallback ?? null
  while (next && !seen.has(next)) {
    out.push(next)
    seen.add(next)
    next = list.find((l) => l.code === next)?.fallback ?? null
  }
  return out.length ? out.join(' → ') : t('settings.noFallback')
}

function ArchiveSpace({ space, name }: { space: string; name: string }) {
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const [open, setOpen] = useState(false)
  const [typed, setTyped] = useState('')
  const archive = useMutation({
    mutationFn: async () => unwrap(api.POST('/v1/spaces/{space}/archive', { params: { path: { space } } })),
    onSuccess: async () => {
      setOpen(false)
      // Leave the Space first: its layout would otherwise see it gone from whoami and say access was lost.
      await navigate({ to: '/' })
      toast(t('settings.archived', { name }))
      await queryClient.invalidateQueries({ queryKey: queryKeys.spaces() })
      await queryClient.invalidateQueries({ queryKey: queryKeys.whoami() })
    },
  })
  return (
    <SettingsSection title={t('settings.archive')}>
      <p className="text-sm text-slate-700">{t('settings.archiveText')}</p>
      <div>
        <Button tone="danger" onClick={() => setOpen(true)}>
          {t('settings.archiveButton')}
        </Button>
      </div>
      <Dialog
        open={open}
        title={t('settings.archive.confirm', { name })}
        onClose={() => {
          setOpen(false)
          setTyped('')
        }}
      >
        <form
          onSubmit={(e) => {
            e.preventDefault()
            if (typed === space) archive.mutate()
          }}
          className="flex flex-col gap-3"
        >
          <p className="text-sm text-slate-700">{t('settings.archive.text')}</p>
          <TextField label={t('settings.archive.type', { slug: space })} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
          {archive.isError ? <p role="alert" className="text-sm text-red-800">{errorText(archive.error)}</p> : null}
          <div className="flex justify-end gap-2">
            <Button onClick={() => setOpen(false)}>{t('common.cancel')}</Button>
            <Button tone="danger" type="submit" disabled={typed !== space || archive.isPending}>
              {t('settings.archiveButton')}
            </Button>
          </div>
        </form>
      </Dialog>
    </SettingsSection>
  )
}

