import { useId } from 'react'
import type { FieldProps } from './types'
import { t } from '../i18n'

/** Options as a group of checkboxes; the value keeps the blueprint's order. */
export function MultiselectField({ id, def, value, onChange, describedBy, invalid }: FieldProps<string[]>) {
  const base = useId()
  const chosen = new Set(value ?? [])
  const options = def.options ?? []
  return (
    <div id={id} role="group" aria-describedby={describedBy} aria-invalid={invalid || undefined} className="flex flex-wrap gap-3">
      {options.map((o, i) => (
        <label key={o} htmlFor={`${base}-${i}`} className="flex items-center gap-1 text-sm">
          <input
            id={`${base}-${i}`}
            type="checkbox"
            checked={chosen.has(o)}
            onChange={(e) => {
              const next = new Set(chosen)
              if (e.target.checked) next.add(o)
              else next.delete(o)
              const list = options.filter((x) => next.has(x))
              onChange(list.length ? list : undefined)
            }}
            className="h-4 w-4 accent-indigo-700"
          />
          {o}
        </label>
      ))}
      {[...chosen].filter((v) => !options.includes(v)).map((v) => (
        <span key={v} className="text-sm text-amber-800">
          {t('field.notOption', { value: v })}
        </span>
      ))}
    </div>
  )
}
