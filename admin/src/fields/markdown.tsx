import { type FieldProps, inputClass } from './types'

/** Markdown source, edited as text (a rendered preview would need a sanitising renderer: not yet). */
export function MarkdownField({ id, name, def, value, onChange, describedBy, invalid }: FieldProps<string>) {
  return (
    <textarea
      id={id}
      name={name}
      rows={8}
      spellCheck
      value={value ?? ''}
      maxLength={def.max_length}
      onChange={(e) => onChange(e.target.value === '' && !def.required ? undefined : e.target.value)}
      aria-invalid={invalid || undefined}
      aria-describedby={describedBy}
      className={`${inputClass} font-mono`}
    />
  )
}
