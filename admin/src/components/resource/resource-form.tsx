import { type FormEvent, useId, useState } from 'react'
import { ApiFailure } from '../../api/client'
import type { ManifestField } from '../../api/manifest-types'
import { t } from '../../i18n'
import { CatalogError } from '../catalog-error'
import { Button, FieldErrors } from '../ui'
import { type Row, tk } from './call'

const INPUT = 'rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm aria-invalid:border-red-600'

/**
 * What a person reads for a field the API refused (422 `errors` keyed by the field's name): a sentence in the UI's
 * language built from the field's JSON Schema (what the field takes), not the server's English pattern.
 */
export function fieldSentence(field: ManifestField, value: unknown): string {
  const label = tk(field.label)
  const empty = value === undefined || value === '' || (Array.isArray(value) && value.length === 0)
  if (field.required && empty && field.widget !== 'checklist') return t('form.error.required', { label })
  switch (field.widget) {
    case 'url':
      return t('form.error.url', { label, max: field.maxLength ?? 2048 })
    case 'checklist':
      return t('form.error.choose', { label, min: field.minItems ?? 1 })
    case 'select':
      return t('form.error.choice', { label, options: (field.options ?? []).join(', ') })
    case 'number':
      return field.minimum !== undefined && field.maximum !== undefined
        ? t('form.error.range', { label, min: field.minimum, max: field.maximum })
        : t('form.error.number', { label })
    case 'checkbox':
      return t('form.error.invalid', { label })
    default:
      return field.maxLength !== undefined ? t('form.error.length', { label, min: field.minLength ?? 0, max: field.maxLength }) : t('form.error.invalid', { label })
  }
}

/** The form of a create or update operation: one control per body field, the API's 422s at their fields. */
export function ResourceForm({
  fields,
  initial,
  submitLabel,
  busy,
  error,
  onSubmit,
  onCancel,
}: {
  fields: readonly ManifestField[]
  initial?: Row
  submitLabel: string
  busy: boolean
  error: unknown
  onSubmit: (body: Row) => void
  onCancel: () => void
}) {
  const [values, setValues] = useState<Row>(() => {
    const v: Row = {}
    for (const f of fields) {
      const start = initial?.[f.name]
      v[f.name] = start ?? (f.widget === 'checklist' ? [] : f.widget === 'checkbox' ? true : f.widget === 'select' ? f.options?.[0] : '')
    }
    return v
  })
  const set = (name: string, value: unknown) => setValues((v) => ({ ...v, [name]: value }))
  const keyed = error instanceof ApiFailure ? (error.body.errors ?? {}) : {}
  const errorsOf = (f: ManifestField) => (keyed[f.name] || Object.keys(keyed).some((k) => k.startsWith(`${f.name}/`)) ? [fieldSentence(f, values[f.name])] : undefined)

  const submit = (e: FormEvent) => {
    e.preventDefault()
    const body: Row = {}
    for (const f of fields) {
      const v = values[f.name]
      if (f.widget === 'number') {
        if (v === '' || v === undefined) continue
        body[f.name] = Number(v)
      } else if ((v === '' || v === undefined) && !f.required) continue
      else body[f.name] = v
    }
    onSubmit(body)
  }

  return (
    <form onSubmit={submit} noValidate className="flex flex-col gap-4">
      {fields.map((f) => (
        <FieldControl key={f.name} field={f} value={values[f.name]} errors={errorsOf(f)} onChange={(v) => set(f.name, v)} />
      ))}
      {/* A 422 reads "Some fields need a change" here, and the sentences at the fields say which. */}
      <CatalogError error={error} />
      <div className="flex justify-end gap-2">
        <Button onClick={onCancel}>{t('common.cancel')}</Button>
        <Button tone="primary" type="submit" disabled={busy}>
          {submitLabel}
        </Button>
      </div>
    </form>
  )
}

function FieldControl({ field, value, errors, onChange }: { field: ManifestField; value: unknown; errors?: string[]; onChange: (v: unknown) => void }) {
  const id = useId()
  const label = tk(field.label)
  const described = errors ? `${id}-err` : field.help ? `${id}-help` : undefined
  const help = field.help && !errors ? (
    <p id={`${id}-help`} className="text-xs text-slate-600">
      {tk(field.help)}
    </p>
  ) : null
  if (field.widget === 'checkbox')
    return (
      <div className="flex flex-col gap-1">
        <label className="flex items-center gap-2 text-sm font-medium text-slate-800">
          <input type="checkbox" checked={value === true} aria-describedby={described} onChange={(e) => onChange(e.target.checked)} />
          {label}
        </label>
        {help}
        <FieldErrors id={`${id}-err`} errors={errors} />
      </div>
    )
  if (field.widget === 'checklist') {
    const chosen = new Set(Array.isArray(value) ? (value as string[]) : [])
    const toggle = (o: string, on: boolean) => {
      const next = new Set(chosen)
      if (on) next.add(o)
      else next.delete(o)
      onChange((field.options ?? []).filter((x) => next.has(x)))
    }
    return (
      <fieldset className="flex flex-col gap-1" aria-describedby={described} aria-invalid={errors ? true : undefined}>
        <legend className="text-sm font-medium text-slate-800">{label}</legend>
        <div className="grid max-h-56 grid-cols-1 gap-x-4 overflow-y-auto rounded-md p-2 ring-1 ring-slate-200 sm:grid-cols-2">
          {(field.options ?? []).map((o) => (
            <label key={o} className="flex items-center gap-2 py-0.5 text-sm">
              <input type="checkbox" checked={chosen.has(o)} onChange={(e) => toggle(o, e.target.checked)} />
              <code className="text-xs">{o}</code>
            </label>
          ))}
        </div>
        {help}
        <FieldErrors id={`${id}-err`} errors={errors} />
      </fieldset>
    )
  }
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="text-sm font-medium text-slate-800">
        {label}
      </label>
      {field.widget === 'select' ? (
        <select id={id} value={String(value ?? '')} aria-describedby={described} aria-invalid={errors ? true : undefined} onChange={(e) => onChange(e.target.value)} className={INPUT}>
          {(field.options ?? []).map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      ) : (
        <input
          id={id}
          type={field.widget === 'url' ? 'url' : field.widget === 'number' ? 'number' : 'text'}
          value={value === undefined || value === null ? '' : String(value)}
          required={field.required}
          maxLength={field.maxLength}
          min={field.minimum}
          max={field.maximum}
          aria-describedby={described}
          aria-invalid={errors ? true : undefined}
          onChange={(e) => onChange(e.target.value)}
          className={INPUT}
        />
      )}
      {help}
      <FieldErrors id={`${id}-err`} errors={errors} />
    </div>
  )
}
