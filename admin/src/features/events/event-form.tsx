import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useMemo, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { localesQuery } from '../../api/queries'
import { CatalogError } from '../../components/catalog-error'
import { toast } from '../../components/toast'
import { Button, FieldErrors, TextField } from '../../components/ui'
import { fieldErrors, t } from './messages'
import { type EventInput, type EventItem, eventKeys, fromLocalInput, timeZones, toLocalInput } from './queries'

const INPUT = 'rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm aria-invalid:border-red-600'
const FIELD_TYPES = ['string', 'email', 'integer', 'boolean'] as const
type FieldType = (typeof FIELD_TYPES)[number]
interface ExtraField {
  key: string
  label: string
  type: FieldType
  required: boolean
}

/** The event's `fields` JSON Schema as rows of the builder (properties of `type: object`). */
function fieldsOf(schema: Record<string, unknown> | null | undefined): ExtraField[] {
  const props = (schema?.properties ?? {}) as Record<string, { type?: string; format?: string; title?: string }>
  const required = new Set((schema?.required as string[] | undefined) ?? [])
  return Object.entries(props).map(([key, p]) => ({
    key,
    label: p.title ?? '',
    type: p.format === 'email' ? 'email' : p.type === 'integer' || p.type === 'boolean' ? p.type : 'string',
    required: required.has(key),
  }))
}

function schemaOf(fields: ExtraField[]): Record<string, unknown> | null {
  const rows = fields.filter((f) => f.key.trim())
  if (!rows.length) return null
  const properties: Record<string, unknown> = {}
  for (const f of rows) {
    const base = f.type === 'email' ? { type: 'string', format: 'email', maxLength: 254 } : f.type === 'string' ? { type: 'string', maxLength: 1000 } : { type: f.type }
    properties[f.key.trim()] = { ...base, ...(f.label.trim() ? { title: f.label.trim() } : {}) }
  }
  const required = rows.filter((f) => f.required).map((f) => f.key.trim())
  return { type: 'object', properties, ...(required.length ? { required } : {}) }
}

const ERRORS = {
  slug: 'events.error.slug',
  starts_at: 'events.error.time',
  ends_at: 'events.error.ends',
  timezone: 'events.error.timezone',
  capacity: 'events.error.capacity',
} as const

/** Create or edit an event: texts per locale, times in the event's time zone, capacity, waitlist, registration window, extra fields. */
export function EventForm({ space, event, onDone }: { space: string; event: EventItem | null; onDone: (saved: EventItem | null) => void }) {
  const queryClient = useQueryClient()
  const locales = useQuery(localesQuery(space))
  const zones = useMemo(timeZones, [])
  const ids = { tz: useId(), start: useId(), end: useId(), closes: useId(), cap: useId(), fields: useId() }
  const initialTz = event?.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone
  const [v, setV] = useState(() => ({
    slug: event?.slug ?? '',
    title: { ...(event?.title ?? {}) } as Record<string, string>,
    description: { ...(event?.description ?? {}) } as Record<string, string>,
    timezone: initialTz,
    start: toLocalInput(event?.starts_at, initialTz),
    end: toLocalInput(event?.ends_at, initialTz),
    locationName: event?.location.name ?? '',
    address: event?.location.address ?? '',
    url: event?.location.url ?? '',
    capacity: event?.capacity == null ? '' : String(event.capacity),
    waitlist: event?.waitlist ?? false,
    open: event?.registration_open ?? true,
    closes: toLocalInput(event?.registration_closes_at, initialTz),
    published: event?.published ?? false,
    fields: fieldsOf(event?.fields),
  }))
  const set = <K extends keyof typeof v>(k: K, value: (typeof v)[K]) => setV((old) => ({ ...old, [k]: value }))
  const [fieldsTouched, setFieldsTouched] = useState(false)
  const save = useMutation({
    mutationFn: async () => {
      const body: EventInput = {
        slug: v.slug.trim(),
        title: Object.fromEntries(Object.entries(v.title).filter(([, s]) => s.trim())),
        description: Object.fromEntries(Object.entries(v.description).filter(([, s]) => s.trim())),
        starts_at: fromLocalInput(v.start, v.timezone),
        ends_at: fromLocalInput(v.end, v.timezone),
        timezone: v.timezone,
        location: { name: v.locationName.trim(), address: v.address.trim() || null, url: v.url.trim() || null },
        capacity: v.capacity.trim() ? Number(v.capacity) : null,
        waitlist: v.waitlist,
        registration_open: v.open,
        registration_closes_at: v.closes ? fromLocalInput(v.closes, v.timezone) : null,
        published: v.published,
        // An untouched schema goes back as it was (the builder shows only what it can write: keys, labels, types).
        fields: fieldsTouched ? schemaOf(v.fields) : (event?.fields ?? null),
      }
      return event
        ? (await unwrap(api.PUT('/v1/spaces/{space}/events/{id}', { params: { path: { space, id: event.id } }, body }))).data
        : (await unwrap(api.POST('/v1/spaces/{space}/events', { params: { path: { space } }, body }))).data
    },
    onSuccess: async (saved) => {
      await queryClient.invalidateQueries({ queryKey: eventKeys.all(space) })
      toast(t('events.saved', { title: saved.slug }))
      onDone(saved)
    },
  })
  const errs = fieldErrors(save.error, ERRORS)
  const codes = locales.data?.map((l) => l.code) ?? Object.keys(v.title)
  return (
    <form
      className="flex flex-col gap-4 rounded-lg bg-white p-4 ring-1 ring-slate-200"
      aria-label={event ? t('events.edit') : t('events.new')}
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
    >
      <h2 className="text-lg font-semibold">{event ? t('events.edit') : t('events.new')}</h2>
      <TextField label={t('events.slug')} value={v.slug} onChange={(e) => set('slug', e.target.value)} required errors={errs.slug} hint={t('events.slugHint')} />
      {codes.map((code) => (
        <fieldset key={code} className="flex flex-col gap-2 rounded-md p-3 ring-1 ring-slate-200">
          <legend className="px-1 text-sm font-medium">{t('events.language', { code })}</legend>
          <TextField label={t('events.titleIn', { code })} value={v.title[code] ?? ''} onChange={(e) => set('title', { ...v.title, [code]: e.target.value })} errors={errs[`title/${code}`] ?? errs.title} />
          <DescriptionField code={code} value={v.description[code] ?? ''} onChange={(s) => set('description', { ...v.description, [code]: s })} />
        </fieldset>
      ))}
      <div className="grid gap-3 sm:grid-cols-3">
        <div className="flex flex-col gap-1">
          <label htmlFor={ids.tz} className="text-sm font-medium text-slate-800">{t('events.timezone')}</label>
          <select id={ids.tz} className={INPUT} value={v.timezone} onChange={(e) => set('timezone', e.target.value)}>
            {zones.map((z) => (
              <option key={z} value={z}>{z}</option>
            ))}
          </select>
          <FieldErrors errors={errs.timezone} />
        </div>
        <div className="flex flex-col gap-1">
          <label htmlFor={ids.start} className="text-sm font-medium text-slate-800">{t('events.startsAt')}</label>
          <input id={ids.start} type="datetime-local" required className={INPUT} value={v.start} onChange={(e) => set('start', e.target.value)} aria-invalid={errs.starts_at ? true : undefined} />
          <FieldErrors errors={errs.starts_at} />
        </div>
        <div className="flex flex-col gap-1">
          <label htmlFor={ids.end} className="text-sm font-medium text-slate-800">{t('events.endsAt')}</label>
          <input id={ids.end} type="datetime-local" required className={INPUT} value={v.end} onChange={(e) => set('end', e.target.value)} aria-invalid={errs.ends_at ? true : undefined} />
          <FieldErrors errors={errs.ends_at} />
        </div>
      </div>
      <p className="text-xs text-slate-600">{t('events.timesIn', { zone: v.timezone })}</p>
      <div className="grid gap-3 sm:grid-cols-3">
        <TextField label={t('events.location')} value={v.locationName} onChange={(e) => set('locationName', e.target.value)} required errors={errs['location/name']} />
        <TextField label={t('events.address')} value={v.address} onChange={(e) => set('address', e.target.value)} />
        <TextField label={t('events.locationUrl')} type="url" value={v.url} onChange={(e) => set('url', e.target.value)} errors={errs['location/url']} />
      </div>
      <fieldset className="flex flex-col gap-3 rounded-md p-3 ring-1 ring-slate-200">
        <legend className="px-1 text-sm font-medium">{t('events.registration')}</legend>
        <div className="flex flex-wrap items-end gap-4">
          <div className="flex flex-col gap-1">
            <label htmlFor={ids.cap} className="text-sm font-medium text-slate-800">{t('events.capacity')}</label>
            <input id={ids.cap} type="number" min={1} max={1000000} className={`${INPUT} w-40`} value={v.capacity} onChange={(e) => set('capacity', e.target.value)} aria-describedby={`${ids.cap}-hint`} />
            <p id={`${ids.cap}-hint`} className="text-xs text-slate-600">{t('events.capacityHint')}</p>
            <FieldErrors errors={errs.capacity} />
          </div>
          <Check label={t('events.waitlist')} checked={v.waitlist} onChange={(c) => set('waitlist', c)} />
          <Check label={t('events.open')} checked={v.open} onChange={(c) => set('open', c)} />
          <div className="flex flex-col gap-1">
            <label htmlFor={ids.closes} className="text-sm font-medium text-slate-800">{t('events.closesAt')}</label>
            <input id={ids.closes} type="datetime-local" className={INPUT} value={v.closes} onChange={(e) => set('closes', e.target.value)} />
            <FieldErrors errors={errs.registration_closes_at} />
          </div>
        </div>
        <ExtraFields
          fields={v.fields}
          onChange={(f) => {
            setFieldsTouched(true)
            set('fields', f)
          }}
          errors={errs.fields}
        />
      </fieldset>
      <Check label={t('events.published')} checked={v.published} onChange={(c) => set('published', c)} />
      <CatalogError error={save.error} />
      <div className="flex gap-2">
        <Button tone="primary" type="submit" disabled={save.isPending}>{event ? t('events.save') : t('events.create')}</Button>
        <Button onClick={() => onDone(null)}>{t('common.cancel')}</Button>
      </div>
    </form>
  )
}

function DescriptionField({ code, value, onChange }: { code: string; value: string; onChange: (s: string) => void }) {
  const id = useId()
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="text-sm font-medium text-slate-800">{t('events.descriptionIn', { code })}</label>
      <textarea id={id} rows={3} className={INPUT} value={value} onChange={(e) => onChange(e.target.value)} />
    </div>
  )
}

function Check({ label, checked, onChange }: { label: string; checked: boolean; onChange: (c: boolean) => void }) {
  return (
    <label className="flex items-center gap-2 text-sm">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      {label}
    </label>
  )
}

/** The extra registration fields: a row per property (key, label, type, required) → the event's JSON Schema. */
function ExtraFields({ fields, onChange, errors }: { fields: ExtraField[]; onChange: (f: ExtraField[]) => void; errors?: string[] }) {
  const put = (i: number, patch: Partial<ExtraField>) => onChange(fields.map((f, j) => (j === i ? { ...f, ...patch } : f)))
  return (
    <div className="flex flex-col gap-2">
      <h3 className="text-sm font-medium">{t('events.fields')}</h3>
      <p className="text-xs text-slate-600">{t('events.fieldsHint')}</p>
      {fields.map((f, i) => (
        <div key={i} className="flex flex-wrap items-center gap-2" data-extra-field={i}>
          <input aria-label={t('events.fieldKey', { n: i + 1 })} className={`${INPUT} w-36`} value={f.key} pattern="[A-Za-z_][A-Za-z0-9_]*" onChange={(e) => put(i, { key: e.target.value })} />
          <input aria-label={t('events.fieldLabel', { n: i + 1 })} className={`${INPUT} w-48`} value={f.label} onChange={(e) => put(i, { label: e.target.value })} />
          <select aria-label={t('events.fieldType', { n: i + 1 })} className={INPUT} value={f.type} onChange={(e) => put(i, { type: e.target.value as FieldType })}>
            {FIELD_TYPES.map((ty) => (
              <option key={ty} value={ty}>{t(`events.fieldType.${ty}`)}</option>
            ))}
          </select>
          <label className="flex items-center gap-1 text-sm">
            <input type="checkbox" checked={f.required} onChange={(e) => put(i, { required: e.target.checked })} />
            {t('events.fieldRequired')}
          </label>
          <Button onClick={() => onChange(fields.filter((_, j) => j !== i))} aria-label={t('events.fieldRemove', { n: i + 1 })}>{t('events.remove')}</Button>
        </div>
      ))}
      <div>
        <Button onClick={() => onChange([...fields, { key: '', label: '', type: 'string', required: false }])}>{t('events.fieldAdd')}</Button>
      </div>
      <FieldErrors errors={errors} />
    </div>
  )
}
