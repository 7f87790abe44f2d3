import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi } from '@tanstack/react-router'
import { type FormEvent, useId, useState } from 'react'
import { ApiFailure, api, unwrap } from '../api/client'
import { componentsQuery, localesQuery } from '../api/queries'
import type { paths } from '../api/schema'
import { useCan } from '../api/roles'
import { ComponentPicker, DeleteBlueprintDialog, LocaleTexts } from '../components/blueprint-parts'
import { Button, EmptyState, ErrorNotice, FieldErrors, Skeleton, TextField } from '../components/ui'
import { fieldErrors, formatNumber, type MessageKey, t } from '../i18n'
import type { Blueprint } from '../fields/types'
import { queryKeys } from '../api/keys'

const route = getRouteApi('/app/spaces/$space/components')

type ApiBlueprint = paths['/v1/spaces/{space}/components']['get']['responses'][200]['content']['application/json']['data'][number]
type FieldType = ApiBlueprint['schema'][string]['type']

/** Every field type the API has, in the order offered (a new type in the API fails the typecheck until listed). */
const TYPE_LABELS = {
  text: 'type.text',
  textarea: 'type.textarea',
  richtext: 'type.richtext',
  markdown: 'type.markdown',
  number: 'type.number',
  boolean: 'type.boolean',
  datetime: 'type.datetime',
  select: 'type.select',
  multiselect: 'type.multiselect',
  tags: 'type.tags',
  asset: 'type.asset',
  link: 'type.link',
  blocks: 'type.blocks',
} as const satisfies Record<FieldType, MessageKey>
const FIELD_TYPES = Object.keys(TYPE_LABELS) as FieldType[]

interface FieldDraft {
  key: string
  name: string
  type: FieldType
  required: boolean
  translatable: boolean
  options: string
  whitelist: string[]
  /** Locale code → text; empty texts are left out when saving. */
  label: Record<string, string>
  help: Record<string, string>
}

const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)

let keySeq = 0
const draftOf = (bp?: Blueprint): FieldDraft[] =>
  Object.entries(bp?.schema ?? {}).map(([name, d]) => ({
    key: `f${++keySeq}`,
    name,
    type: d.type as FieldType,
    required: d.required === true,
    translatable: d.translatable !== false,
    options: (d.options ?? []).join(', '),
    whitelist: d.component_whitelist ?? [],
    label: { ...(d.label ?? {}) },
    help: { ...(d.help ?? {}) },
  }))

const texts = (m: Record<string, string>) => {
  const kept = Object.fromEntries(Object.entries(m).filter(([, v]) => v.trim() !== '').map(([k, v]) => [k, v.trim()]))
  return Object.keys(kept).length ? kept : undefined
}

/** The component blueprints of a Space: the schema every Story form is built from. */
export function ComponentsScreen() {
  const { space } = route.useParams()
  // The blueprint editor shows the Space's blueprints as they are now (other screens may hold a minute-old list).
  const components = useQuery({ ...componentsQuery(space), refetchOnMount: 'always' })
  const [editing, setEditing] = useState<null | { bp?: Blueprint }>(null)
  const [deleting, setDeleting] = useState<string | null>(null)
  // Blueprints are changed by a role that may (whoami's role against x-min-role); others read them.
  const canEdit = useCan(space, 'POST', '/v1/spaces/{space}/components')
  if (components.isPending) return <Skeleton lines={5} />
  if (components.isError) return <ErrorNotice error={components.error} onRetry={() => components.refetch()} />
  return (
    <div className="flex flex-col gap-4">
      <div className="flex items-center gap-3">
        <h1 className="flex-1 text-2xl font-semibold">{t('nav.components')}</h1>
        {canEdit ? (
          <Button tone="primary" onClick={() => setEditing({})}>
            {t('components.new')}
          </Button>
        ) : null}
      </div>
      {components.data.length === 0 && !editing ? (
        <EmptyState title={t('editor.noComponent')}>{t('components.emptyText')}</EmptyState>
      ) : null}
      {components.data.length ? (
        <ul aria-label={t('nav.components')} className="divide-y divide-slate-200 rounded-lg bg-white ring-1 ring-slate-200">
          {components.data.map((c) => (
            <li key={c.name} className="flex items-center gap-3 px-4 py-2 text-sm">
              <span className="font-medium">{c.display_name}</span>
              <code className="text-xs text-slate-600">{c.name}</code>
              <span className="text-slate-700">
                {t('components.fields', { count: formatNumber(Object.keys(c.schema).length) })}
                {c.is_root ? t('components.topLevel') : ''}
                {c.is_nestable ? t('components.nestable') : ''}
              </span>
              {canEdit ? (
                <Button className="ml-auto px-2 py-0.5 text-xs" onClick={() => setEditing({ bp: c as Blueprint })} aria-label={t('components.editOf', { name: c.display_name })}>
                  {t('components.edit')}
                </Button>
              ) : null}
              {canEdit ? (
                <Button className="px-2 py-0.5 text-xs" tone="danger" onClick={() => setDeleting(c.name)} aria-label={t('blueprint.delete.title', { name: c.display_name })}>
                  {t('blueprint.delete.confirm')}
                </Button>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      {editing ? (
        <ComponentForm key={editing.bp?.name ?? 'new'} space={space} bp={editing.bp} blueprints={components.data as Blueprint[]} onClose={() => setEditing(null)} />
      ) : null}
      <DeleteBlueprintDialog space={space} name={deleting} onClose={() => setDeleting(null)} />
    </div>
  )
}

function ComponentForm({ space, bp, blueprints, onClose }: { space: string; bp?: Blueprint; blueprints: Blueprint[]; onClose: () => void }) {
  const queryClient = useQueryClient()
  const locales = useQuery(localesQuery(space))
  const codes = locales.data?.map((l) => l.code) ?? []
  const [fields, setFields] = useState<FieldDraft[]>(() => draftOf(bp))
  const [isRoot, setIsRoot] = useState(bp?.is_root ?? true)
  const [isNestable, setIsNestable] = useState(bp?.is_nestable ?? false)
  const [errors, setErrors] = useState<Record<string, string[]>>({})
  const save = useMutation({
    mutationFn: async (body: { name: string; display_name: string; is_root: boolean; is_nestable: boolean; schema: Record<string, unknown> }) =>
      bp
        ? unwrap(api.PUT('/v1/spaces/{space}/components/{name}', { params: { path: { space, name: bp.name } }, body }))
        : unwrap(api.POST('/v1/spaces/{space}/components', { params: { path: { space } }, body })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.components(space) })
      onClose()
    },
    onError: (err) => setErrors(err instanceof ApiFailure ? fieldErrors(err, { name: 'components.error.name' }) : {}),
  })
  const update = (key: string, patch: Partial<FieldDraft>) => setFields((fs) => fs.map((f) => (f.key === key ? { ...f, ...patch } : f)))
  const move = (i: number, to: number) =>
    setFields((fs) => {
      if (to < 0 || to >= fs.length) return fs
      const next = fs.slice()
      const [f] = next.splice(i, 1)
      next.splice(to, 0, f)
      return next
    })
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget)
    const schema: Record<string, unknown> = {}
    for (const f of fields) {
      schema[f.name.trim()] = {
        type: f.type,
        ...(f.required ? { required: true } : {}),
        ...(f.translatable ? {} : { translatable: false }),
        // No options typed: leave them out, so the API's message says they are required.
        ...((f.type === 'select' || f.type === 'multiselect') && list(f.options).length ? { options: list(f.options) } : {}),
        ...(f.type === 'blocks' && f.whitelist.length ? { component_whitelist: f.whitelist } : {}),
        ...(texts(f.label) ? { label: texts(f.label) } : {}),
        ...(texts(f.help) ? { help: texts(f.help) } : {}),
      }
    }
    setErrors({})
    save.mutate({
      name: String(form.get('name') ?? bp?.name ?? '').trim(),
      display_name: String(form.get('display_name') ?? '').trim() || String(form.get('name') ?? bp?.name ?? ''),
      is_root: isRoot,
      is_nestable: isNestable,
      schema,
    })
  }
  return (
    <form onSubmit={submit} aria-label={bp ? t('components.editOf', { name: bp.display_name }) : t('components.new')} className="flex flex-col gap-4 rounded-lg bg-white p-4 ring-1 ring-slate-200" noValidate>
      <h2 className="text-lg font-semibold">{bp ? t('components.editTitle', { name: bp.display_name }) : t('components.new')}</h2>
      <div className="grid gap-3 sm:grid-cols-2">
        <TextField label={t('stories.name')} name="name" defaultValue={bp?.name} required disabled={!!bp} hint={t('components.nameHint')} errors={errors.name} />
        <TextField label={t('components.displayName')} name="display_name" defaultValue={bp?.display_name} errors={errors.display_name} />
      </div>
      <div className="flex gap-6 text-sm">
        <label className="flex items-center gap-2">
          <input type="checkbox" checked={isRoot} onChange={(e) => setIsRoot(e.target.checked)} className="h-4 w-4 accent-indigo-700" />
          {t('components.isRoot')}
        </label>
        <label className="flex items-center gap-2">
          <input type="checkbox" checked={isNestable} onChange={(e) => setIsNestable(e.target.checked)} className="h-4 w-4 accent-indigo-700" />
          {t('components.isNestable')}
        </label>
      </div>
      <FieldErrors errors={errors.schema} />
      <fieldset className="flex flex-col gap-3">
        <legend className="mb-2 text-sm font-semibold">{t('components.fieldsTitle')}</legend>
        {fields.length === 0 ? <p className="text-sm text-slate-600">{t('components.noFields')}</p> : null}
        {fields.map((f, i) => (
          <FieldEditorRow
            key={f.key}
            field={f}
            index={i}
            count={fields.length}
            errors={errors}
            locales={codes}
            blueprints={blueprints}
            self={bp?.name}
            onChange={(patch) => update(f.key, patch)}
            onMove={(to) => move(i, to)}
            onRemove={() => setFields((fs) => fs.filter((x) => x.key !== f.key))}
          />
        ))}
        <div>
          <Button
            onClick={() =>
              setFields((fs) => [...fs, { key: `f${++keySeq}`, name: '', type: 'text', required: false, translatable: true, options: '', whitelist: [], label: {}, help: {} }])
            }
          >
            {t('components.addField')}
          </Button>
        </div>
      </fieldset>
      <ErrorNotice error={save.error} />
      <div className="flex justify-end gap-2">
        <Button onClick={onClose}>{t('common.cancel')}</Button>
        <Button tone="primary" type="submit" disabled={save.isPending}>
          {bp ? t('components.save') : t('components.create')}
        </Button>
      </div>
    </form>
  )
}

function FieldEditorRow({
  field,
  index,
  count,
  errors,
  locales,
  blueprints,
  self,
  onChange,
  onMove,
  onRemove,
}: {
  field: FieldDraft
  index: number
  count: number
  errors: Record<string, string[]>
  locales: string[]
  blueprints: Blueprint[]
  /** The blueprint being edited (it may allow itself). */
  self?: string
  onChange: (patch: Partial<FieldDraft>) => void
  onMove: (to: number) => void
  onRemove: () => void
}) {
  const id = useId()
  const at = `schema/${field.name.trim()}`
  const messages = field.name.trim()
    ? Object.entries(errors)
        .filter(([k]) => k === at || k.startsWith(`${at}/`))
        .map(([k, m]) => `${k.slice(at.length + 1) || t('components.field')}: ${m.join('; ')}`)
    : []
  const label = field.name || t('components.fieldN', { n: index + 1 })
  return (
    <div className="flex flex-col gap-2 rounded-md border border-slate-200 p-3" data-schema-field={field.name}>
      <div className="flex flex-wrap items-end gap-3">
        <div className="flex flex-col gap-1">
          <label htmlFor={`${id}-name`} className="text-xs font-medium">
            {t('components.fieldName')}
          </label>
          <input
            id={`${id}-name`}
            value={field.name}
            onChange={(e) => onChange({ name: e.target.value })}
            className="rounded-md border border-slate-300 px-2 py-1 text-sm"
          />
        </div>
        <div className="flex flex-col gap-1">
          <label htmlFor={`${id}-type`} className="text-xs font-medium">
            {t('components.type')}
          </label>
          <select
            id={`${id}-type`}
            value={field.type}
            onChange={(e) => onChange({ type: e.target.value as FieldType })}
            className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm"
          >
            {FIELD_TYPES.map((ft) => (
              <option key={ft} value={ft}>
                {t(TYPE_LABELS[ft])}
              </option>
            ))}
          </select>
        </div>
        <label className="flex items-center gap-1 text-sm">
          <input type="checkbox" checked={field.required} onChange={(e) => onChange({ required: e.target.checked })} className="h-4 w-4 accent-indigo-700" />
          {t('components.required')}
        </label>
        <label className="flex items-center gap-1 text-sm">
          <input type="checkbox" checked={field.translatable} onChange={(e) => onChange({ translatable: e.target.checked })} className="h-4 w-4 accent-indigo-700" />
          {t('components.translatable')}
        </label>
        <div className="ml-auto flex gap-1">
          <Button className="px-2 py-0.5 text-xs" disabled={index === 0} onClick={() => onMove(index - 1)} aria-label={t('blocks.up', { title: label })}>
            ↑
          </Button>
          <Button className="px-2 py-0.5 text-xs" disabled={index === count - 1} onClick={() => onMove(index + 1)} aria-label={t('blocks.down', { title: label })}>
            ↓
          </Button>
          <Button className="px-2 py-0.5 text-xs" onClick={onRemove} aria-label={t('blocks.removeOf', { title: label })}>
            {t('blocks.remove')}
          </Button>
        </div>
      </div>
      {field.type === 'select' || field.type === 'multiselect' ? (
        <div className="flex flex-col gap-1">
          <label htmlFor={`${id}-options`} className="text-xs font-medium">
            {t('components.options')}
          </label>
          <input id={`${id}-options`} value={field.options} onChange={(e) => onChange({ options: e.target.value })} className="rounded-md border border-slate-300 px-2 py-1 text-sm" />
        </div>
      ) : null}
      {field.type === 'blocks' ? <ComponentPicker blueprints={blueprints} self={self} value={field.whitelist} onChange={(whitelist) => onChange({ whitelist })} /> : null}
      <LocaleTexts locales={locales} label={field.label} help={field.help} onChange={(patch) => onChange(patch)} />
      <FieldErrors errors={messages} />
    </div>
  )
}
