import { useState } from 'react'
import { Button } from '../components/ui'
import { type FieldProps, inputClass } from './types'
import { t as tr } from '../i18n'

/** Free tags: type and press Enter (or a comma); each tag has its remove button. */
export function TagsField({ id, name, value, onChange, describedBy, invalid }: FieldProps<string[]>) {
  const [draft, setDraft] = useState('')
  const tags = value ?? []
  const commit = () => {
    const add = draft
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t && !tags.includes(t))
    if (add.length) onChange([...tags, ...add])
    setDraft('')
  }
  return (
    <div className="flex flex-col gap-2">
      {tags.length ? (
        <ul className="flex flex-wrap gap-2" aria-label={tr('field.tags.of', { name })}>
          {tags.map((t) => (
            <li key={t} className="flex items-center gap-1 rounded bg-slate-200 px-2 py-0.5 text-sm">
              {t}
              <button
                type="button"
                aria-label={tr('field.tags.remove', { tag: t })}
                onClick={() => {
                  const next = tags.filter((x) => x !== t)
                  onChange(next.length ? next : undefined)
                }}
                className="text-slate-700"
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <div className="flex gap-2">
        <input
          id={id}
          name={name}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' || e.key === ',') {
              e.preventDefault()
              commit()
            }
          }}
          onBlur={commit}
          aria-invalid={invalid || undefined}
          aria-describedby={describedBy}
          className={inputClass}
        />
        <Button onClick={commit}>{tr('field.tags.add')}</Button>
      </div>
    </div>
  )
}
