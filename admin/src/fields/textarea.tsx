import { type FieldProps, inputClass } from './types'

export function TextareaField({ id, name, def, value, onChange, describedBy, invalid }: FieldProps<string>) {
  return (
    <textarea
      id={id}
      name={name}
      rows={4}
      value={value ?? ''}
      maxLength={def.max_length}
      onChange={(e) => onChange(e.target.value === '' && !def.required ? undefined : e.target.value)}
      aria-invalid={invalid || undefined}
      aria-describedby={describedBy}
      className={inputClass}
    />
  )
}
