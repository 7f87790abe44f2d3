import { type FieldProps, inputClass } from './types'

const pad = (n: number) => String(n).padStart(2, '0')

/** ISO 8601 (what the API stores) → the local `YYYY-MM-DDTHH:mm` a datetime-local input shows. */
export function toLocalInput(iso: string | undefined): string {
  if (!iso) return ''
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return ''
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
}

export function DatetimeField({ id, name, value, onChange, describedBy, invalid }: FieldProps<string>) {
  return (
    <input
      id={id}
      name={name}
      type="datetime-local"
      value={toLocalInput(value)}
      onChange={(e) => {
        const d = new Date(e.target.value)
        onChange(e.target.value === '' || Number.isNaN(d.getTime()) ? undefined : d.toISOString())
      }}
      aria-invalid={invalid || undefined}
      aria-describedby={describedBy}
      className={inputClass}
    />
  )
}
