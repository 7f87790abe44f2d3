import { type FieldProps, inputClass } from './types'

export function TextField({ id, name, def, value, onChange, describedBy, invalid }: FieldProps<string>) {
  return (
    <input
      id={id}
      name={name}
      type="text"
      value={value ?? ''}
      maxLength={def.max_length}
      onChange={(e) => onChange(e.target.value === '' && !def.required ? undefined : e.target.value)}
      aria-invalid={invalid || undefined}
      aria-describedby={describedBy}
      className={inputClass}
    />
  )
}
