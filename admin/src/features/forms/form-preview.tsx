import { useId, useState } from 'react'
import { t } from './messages'
import { type Draft, type FieldDraft, optionList } from './draft'

const INPUT = 'w-full rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm'
const INPUT_TYPES: Partial<Record<FieldDraft['type'], string>> = { text: 'text', email: 'email', tel: 'tel', number: 'number', file: 'url' }

/**
 * The form as a visitor sees it, drawn from the builder's state on every change (the same markup the embed snippet
 * writes): a sample, so its button sends nothing. `lang`: which success message to show after a try.
 */
export function FormPreview({ draft, lang }: { draft: Draft; lang: string }) {
  const headingId = useId()
  const [tried, setTried] = useState(false)
  return (
    <section aria-labelledby={headingId} className="rounded-lg bg-white p-4 ring-1 ring-slate-200" data-testid="form-preview">
      <h2 id={headingId} className="text-base font-semibold">
        {t('forms.preview')}
      </h2>
      <p className="mb-3 text-xs text-slate-600">{t('forms.previewHint')}</p>
      <form
        className="flex flex-col gap-3"
        aria-label={draft.label || t('forms.untitled')}
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          setTried(true)
        }}
      >
        {draft.fields.map((f) => (
          <PreviewField key={f.id} field={f} />
        ))}
        <div>
          <button type="submit" className="rounded-md bg-indigo-700 px-3 py-1.5 text-sm font-medium text-white">
            {t('forms.embed.submitText')}
          </button>
        </div>
        <p role="status" className="text-sm text-emerald-900">
          {tried ? draft.successMessage[lang]?.trim() || t('forms.embed.thanks') : ''}
        </p>
      </form>
    </section>
  )
}

function PreviewField({ field: f }: { field: FieldDraft }) {
  const id = useId()
  const label = f.label || t('forms.untitledField')
  const mark = f.required ? <span aria-hidden="true"> *</span> : null
  if (f.type === 'hidden') return <input type="hidden" name={f.key} />
  if (f.type === 'checkbox' || f.type === 'consent')
    return (
      <div className="flex items-start gap-2 text-sm">
        <input id={id} type="checkbox" name={f.key} required={f.required} className="mt-1" />
        <label htmlFor={id}>
          {label}
          {mark}
        </label>
      </div>
    )
  if (f.type === 'radio')
    return (
      <fieldset className="text-sm">
        <legend className="font-medium">
          {label}
          {mark}
        </legend>
        {optionList(f.options).map((o, i) => (
          <label key={`${i}-${o}`} className="mr-4 inline-flex items-center gap-1">
            <input type="radio" name={`${id}-${f.key}`} value={o} required={f.required} />
            {o}
          </label>
        ))}
      </fieldset>
    )
  const max = f.maxLength.trim() ? Number(f.maxLength) : undefined
  return (
    <div className="flex flex-col gap-1 text-sm">
      <label htmlFor={id} className="font-medium">
        {label}
        {mark}
      </label>
      {f.type === 'textarea' ? (
        <textarea id={id} name={f.key} required={f.required} maxLength={max} rows={3} className={INPUT} />
      ) : f.type === 'select' ? (
        <select id={id} name={f.key} required={f.required} className={INPUT}>
          <option value="">{t('forms.choose')}</option>
          {optionList(f.options).map((o, i) => (
            <option key={`${i}-${o}`} value={o}>
              {o}
            </option>
          ))}
        </select>
      ) : (
        <input id={id} type={INPUT_TYPES[f.type] ?? 'text'} name={f.key} required={f.required} maxLength={max} className={INPUT} />
      )}
    </div>
  )
}
