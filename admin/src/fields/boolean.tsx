import type { FieldProps } from './types'

export function BooleanField({ id, name, value, onChange, describedBy, invalid }: FieldProps<boolean>) {
  return (
    <input
      id={id}
      name={name}
      type="checkbox"
      checked={value === true}
      onChange={(e) => onChange(e.target.checked)}
      aria-invalid={invalid || undefined}
      aria-describedby={describedBy}
      className="h-4 w-4 accent-indigo-700"
    />
  )
}
