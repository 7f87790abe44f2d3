import { type FieldProps, inputClass } from './types'
import { t } from '../i18n'

export function SelectField({ id, name, def, value, onChange, describedBy, invalid }: FieldProps<string>) {
  return (
    <select
      id={id}
      name={name}
      value={value ?? ''}
      onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
      aria-invalid={invalid || undefined}
      aria-describedby={describedBy}
      className={inputClass}
    >
      <option value="">{def.required ? 'Choose…' : '(none)'}</option>
      {(def.options ?? []).map((o) => (
        <option key={o} value={o}>
          {o}
        </option>
      ))}
      {value !== undefined && !(def.options ?? []).includes(value) ? <option value={value}>{t('field.notOption', { value })}</option> : null}
    </select>
  )
}
