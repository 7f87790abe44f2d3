import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId } from 'react'
import { api, unwrap } from '../api/client'
import type { Blueprint } from '../fields/types'
import { t } from '../i18n'
import { Button, Dialog, ErrorNotice } from './ui'
import { queryKeys } from '../api/keys'
import { componentUsageQuery } from '../api/queries'

/**
 * A blocks field's "Allowed components": checkboxes of the Space's nestable blueprints (and the one being edited,
 * which may nest itself), so no name can be mistyped. A name no longer in the Space stays listed, checked, until
 * it is unchecked (the API refuses it).
 */
export function ComponentPicker({
  blueprints,
  self,
  value,
  onChange,
}: {
  blueprints: Blueprint[]
  self?: string
  value: string[]
  onChange: (names: string[]) => void
}) {
  const id = useId()
  const offered = blueprints.filter((b) => b.is_nestable || b.name === self).map((b) => ({ name: b.name, label: b.display_name }))
  for (const name of value) if (!offered.some((o) => o.name === name)) offered.push({ name, label: name })
  const toggle = (name: string, on: boolean) => onChange(on ? [...value, name] : value.filter((n) => n !== name))
  return (
    <fieldset className="flex flex-col gap-1" aria-describedby={`${id}-hint`} data-testid="component-picker">
      <legend className="text-xs font-medium">{t('blueprint.allowed')}</legend>
      {offered.length === 0 ? <p className="text-xs text-slate-600">{t('blueprint.noOthers')}</p> : null}
      <div className="flex flex-wrap gap-x-4 gap-y-1">
        {offered.map((o) => (
          <label key={o.name} className="flex items-center gap-1 text-sm">
            <input type="checkbox" checked={value.includes(o.name)} onChange={(e) => toggle(o.name, e.target.checked)} className="h-4 w-4 accent-indigo-700" />
            {o.label}
            <code className="text-xs text-slate-600">{o.name}</code>
          </label>
        ))}
      </div>
      <p id={`${id}-hint`} className="text-xs text-slate-600">
        {t('blueprint.allowedHint')}
      </p>
    </fieldset>
  )
}

/** A field's label and help text per locale of the Space (what the Story editor shows instead of the key). */
export function LocaleTexts({
  locales,
  label,
  help,
  onChange,
}: {
  locales: string[]
  label: Record<string, string>
  help: Record<string, string>
  onChange: (patch: { label?: Record<string, string>; help?: Record<string, string> }) => void
}) {
  const id = useId()
  return (
    <div className="grid gap-2 sm:grid-cols-2">
      {locales.map((lang) => (
        <div key={lang} className="contents">
          <div className="flex flex-col gap-1">
            <label htmlFor={`${id}-label-${lang}`} className="text-xs font-medium">
              {t('blueprint.label', { lang })}
            </label>
            <input
              id={`${id}-label-${lang}`}
              value={label[lang] ?? ''}
              maxLength={120}
              onChange={(e) => onChange({ label: { ...label, [lang]: e.target.value } })}
              className="rounded-md border border-slate-300 px-2 py-1 text-sm"
            />
          </div>
          <div className="flex flex-col gap-1">
            <label htmlFor={`${id}-help-${lang}`} className="text-xs font-medium">
              {t('blueprint.help', { lang })}
            </label>
            <input
              id={`${id}-help-${lang}`}
              value={help[lang] ?? ''}
              maxLength={1000}
              onChange={(e) => onChange({ help: { ...help, [lang]: e.target.value } })}
              className="rounded-md border border-slate-300 px-2 py-1 text-sm"
            />
          </div>
        </div>
      ))}
    </div>
  )
}

/**
 * Deleting a blueprint: first how many Stories use it (the API refuses while any does) and which whitelists name it,
 * then the delete.
 */
export function DeleteBlueprintDialog({ space, name, onClose }: { space: string; name: string | null; onClose: () => void }) {
  const queryClient = useQueryClient()
  const usage = useQuery({ ...componentUsageQuery(space, name), enabled: name !== null })
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/spaces/{space}/components/{name}', { params: { path: { space, name: name ?? '' } } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.components(space) })
      onClose()
    },
  })
  const inUse = (usage.data?.stories ?? 0) > 0
  return (
    <Dialog open={name !== null} title={t('blueprint.delete.title', { name: name ?? '' })} onClose={onClose}>
      <div className="flex flex-col gap-2 text-sm" data-testid="blueprint-usage">
        {usage.isPending ? <p aria-live="polite">{t('blueprint.usage.checking')}</p> : null}
        {usage.data ? <p className={inUse ? 'text-red-800' : ''}>{inUse ? t('blueprint.usage.inUse', { count: usage.data.stories }) : t('blueprint.usage.unused')}</p> : null}
        {usage.data?.allowed_in.length ? <p>{t('blueprint.usage.allowedIn', { names: usage.data.allowed_in.join(', ') })}</p> : null}
        <ErrorNotice error={usage.error ?? remove.error} />
      </div>
      <div className="flex justify-end gap-2">
        <Button onClick={onClose}>{t('common.cancel')}</Button>
        <Button tone="danger" disabled={!usage.data || inUse || remove.isPending} onClick={() => remove.mutate()}>
          {t('blueprint.delete.confirm')}
        </Button>
      </div>
    </Dialog>
  )
}
