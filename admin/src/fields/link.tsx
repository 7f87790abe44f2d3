import { type FieldProps, inputClass } from './types'
import { t } from '../i18n'

type Link = { url?: string; story_uuid?: string } & Record<string, unknown>

/**
 * A link `{url}`: http(s), mailto:, tel:, a path or an anchor — the API refuses anything else (javascript: too), and
 * the message shows here. A link to a Story (`{story_uuid}`) is kept as it is until a Story picker exists.
 */
export function LinkField({ id, name, value, onChange, describedBy, invalid }: FieldProps<Link>) {
  if (value?.story_uuid !== undefined && value.url === undefined) {
    return (
      <p id={id} className="text-sm text-slate-700">
        {t('field.link.story', { uuid: String(value.story_uuid) })}{' '}
        <button type="button" className="underline" onClick={() => onChange({ url: '' })}>
          {t('field.link.useUrl')}
        </button>
      </p>
    )
  }
  return (
    <input
      id={id}
      name={name}
      type="text"
      inputMode="url"
      placeholder={t('field.link.placeholder')}
      value={value?.url ?? ''}
      onChange={(e) => onChange(e.target.value === '' ? undefined : { ...value, url: e.target.value })}
      aria-invalid={invalid || undefined}
      aria-describedby={describedBy}
      className={inputClass}
    />
  )
}
