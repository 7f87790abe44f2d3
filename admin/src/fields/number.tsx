import { useEffect, useState } from 'react'
import { type FieldProps, inputClass } from './types'

/** A number; the text typed is kept while it is not a number yet (`-`, `1.`), the value only when it is one. */
export function NumberField({ id, name, value, onChange, describedBy, invalid }: FieldProps<number>) {
  const [text, setText] = useState(value === undefined ? '' : String(value))
  useEffect(() => {
    if (value === undefined ? text !== '' && Number.isFinite(Number(text)) : Number(text) !== value) setText(value === undefined ? '' : String(value))
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [value])
  return (
    <input
      id={id}
      name={name}
      type="text"
      inputMode="decimal"
      value={text}
      onChange={(e) => {
        setText(e.target.value)
        const t = e.target.value.trim()
        if (t === '') onChange(undefined)
        else if (Number.isFinite(Number(t))) onChange(Number(t))
      }}
      aria-invalid={invalid || undefined}
      aria-describedby={describedBy}
      className={inputClass}
    />
  )
}
