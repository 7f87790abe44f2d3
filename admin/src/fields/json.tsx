import { useState } from 'react'
import { type FieldProps, inputClass } from './types'
import { t } from '../i18n'

/** The fallback for a field type without its own editor yet: its JSON value, checked as you type. */
export function JsonField({ id, name, def, value, onChange, describedBy, invalid }: FieldProps<unknown>) {
  const [text, setText] = useState(value === undefined ? '' : JSON.stringify(value, null, 2))
  const [bad, setBad] = useState(false)
  return (
    <div className="flex flex-col gap-1">
      <textarea
        id={id}
        name={name}
        rows={4}
        value={text}
        onChange={(e) => {
          setText(e.target.value)
          if (e.target.value.trim() === '') {
            setBad(false)
            return onChange(undefined)
          }
          try {
            onChange(JSON.parse(e.target.value))
            setBad(false)
          } catch {
            setBad(true)
          }
        }}
        aria-invalid={invalid || bad || undefined}
        aria-describedby={describedBy}
        className={`${inputClass} font-mono`}
      />
      <p className="text-xs text-slate-600">
        {bad ? t('field.json.bad') : t('field.json.hint', { type: def.type })}
      </p>
    </div>
  )
}
