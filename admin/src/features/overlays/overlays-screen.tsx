import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi } from '@tanstack/react-router'
import { type FormEvent, useId, useState } from 'react'
import { ApiFailure, api, unwrap } from '../../api/client'
import { localesQuery } from '../../api/queries'
import { useCan } from '../../api/roles'
import { CatalogError } from '../../components/catalog-error'
import { PriorityList } from '../../components/priority-list'
import { PriorityScreen, usePriorityRules } from '../../components/priority-screen'
import { toast } from '../../components/toast'
import { Button, Dialog, FieldErrors, TextField } from '../../components/ui'
import { segmentsQuery } from '../segments/queries'
import { refusals, t } from './messages'
import { ACTIONS, bodyOf, type Overlay, type OverlayBody, overlayKeys, overlaysQuery } from './queries'
import { OverlayTester } from './tester'

const route = getRouteApi('/app/spaces/$space/overlays')
const INPUT = 'rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm aria-invalid:border-red-600'

/**
 * DOM overlay rules in the order they apply (lower priority first), reordered by dragging the handle or with
 * Alt+↑/↓ on it, switched on and off, created, edited and deleted (editor+), and a tester that applies the rules a
 * path gets to an HTML snippet on the server.
 */
export function OverlaysScreen() {
  const { space } = route.useParams()
  const canWrite = useCan(space, 'PUT', '/v1/spaces/{space}/dom-overlays/{id}')
  const canCreate = useCan(space, 'POST', '/v1/spaces/{space}/dom-overlays')
  const [editing, setEditing] = useState<Overlay | 'new' | null>(null)
  const rules = usePriorityRules({
    list: useQuery(overlaysQuery(space)),
    queryKey: overlayKeys.all(space),
    update: (o: Overlay, change) => unwrap(api.PUT('/v1/spaces/{space}/dom-overlays/{id}', { params: { path: { space, id: o.id } }, body: bodyOf(o, change) })),
    destroy: (o) => unwrap(api.DELETE('/v1/spaces/{space}/dom-overlays/{id}', { params: { path: { space, id: o.id } } })),
    said: {
      activated: (o) => t('overlays.activated', { name: o.name }),
      deactivated: (o) => t('overlays.deactivated', { name: o.name }),
      deleted: (o) => t('overlays.deleted', { name: o.name }),
    },
  })
  const { items, toggle } = rules

  return (
    <PriorityScreen
      rules={rules}
      canCreate={canCreate}
      onNew={() => setEditing('new')}
      words={{
        title: t('overlays.title'),
        intro: t('overlays.intro'),
        new: t('overlays.new'),
        empty: t('overlays.empty'),
        emptyCreate: t('overlays.emptyCreate'),
        emptyAsk: t('overlays.emptyAsk'),
        deleteTitle: (o) => t('overlays.deleteTitle', { name: o?.name ?? '' }),
        deleteText: t('overlays.deleteText'),
        delete: t('overlays.delete'),
      }}
    >
      {items.length ? (
        <PriorityList
          items={items}
          itemKey={(o) => o.id}
          canReorder={canWrite}
          onReorder={rules.reorder}
          testId="overlays"
          rowProps={(o) => ({ 'data-overlay': o.name })}
          text={{
            list: t('overlays.order'),
            help: t('overlays.orderHelp'),
            handle: (o, position) => t('overlays.handle', { name: o.name, position }),
            up: (o) => t('overlays.up', { name: o.name }),
            down: (o) => t('overlays.down', { name: o.name }),
            moved: (o, position, total) => t('overlays.moved', { name: o.name, position, total }),
          }}
        >
          {(o, { moveButtons }) => (
            <>
              <div className="min-w-40 flex-1">
                <p className="font-medium">{o.name}</p>
                <p className="text-xs text-slate-600">
                  <span className="font-mono">{o.path_pattern}</span> · <span className="font-mono">{o.selector}</span> ·{' '}
                  {t(`overlays.action.${o.action as (typeof ACTIONS)[number]}`)}
                  {o.attribute ? <span className="font-mono"> {o.attribute}</span> : null} ·{' '}
                  {o.segment_key ? t('overlays.forSegment', { segment: o.segment_key }) : t('overlays.everyone')}
                </p>
              </div>
              {canWrite ? (
                <label className="flex items-center gap-2 text-sm">
                  <input type="checkbox" role="switch" checked={o.active} onChange={() => toggle.mutate(o)} disabled={toggle.isPending} />
                  {t('overlays.active')}
                  <span className="sr-only">{o.name}</span>
                </label>
              ) : (
                <span className="text-sm">{o.active ? t('overlays.isActive') : t('overlays.isInactive')}</span>
              )}
              {canWrite ? (
                <div className="flex flex-wrap gap-2">
                  {moveButtons}
                  <Button onClick={() => setEditing(o)} aria-label={t('overlays.editNamed', { name: o.name })}>
                    {t('overlays.edit')}
                  </Button>
                  <Button tone="danger" onClick={() => rules.setDeleting(o)} aria-label={t('overlays.deleteNamed', { name: o.name })}>
                    {t('overlays.delete')}
                  </Button>
                </div>
              ) : null}
            </>
          )}
        </PriorityList>
      ) : null}
      <OverlayTester space={space} />
      <Dialog open={editing !== null} title={editing === 'new' ? t('overlays.new') : t('overlays.editTitle', { name: editing?.name ?? '' })} onClose={() => setEditing(null)}>
        {editing ? (
          <OverlayForm space={space} current={editing === 'new' ? null : editing} nextPriority={(items.length + 1) * 10} onDone={() => setEditing(null)} />
        ) : null}
      </Dialog>
    </PriorityScreen>
  )
}

function OverlayForm({ space, current, nextPriority, onDone }: { space: string; current: Overlay | null; nextPriority: number; onDone: () => void }) {
  const queryClient = useQueryClient()
  const locales = useQuery(localesQuery(space))
  const segments = useQuery(segmentsQuery(space))
  const ids = { action: useId(), segment: useId(), attribute: useId() }
  const [name, setName] = useState(current?.name ?? '')
  const [pathPattern, setPathPattern] = useState(current?.path_pattern ?? '/**')
  const [selector, setSelector] = useState(current?.selector ?? '')
  const [action, setAction] = useState<OverlayBody['action']>((current?.action as OverlayBody['action']) ?? 'hide')
  const [attribute, setAttribute] = useState(current?.attribute ?? '')
  const [content, setContent] = useState<Record<string, string>>(current?.content ?? {})
  const [segment, setSegment] = useState(current?.segment_key ?? '')
  const save = useMutation({
    mutationFn: async () => {
      const filled = Object.fromEntries(Object.entries(content).filter(([, v]) => v !== ''))
      const body: OverlayBody = {
        name,
        path_pattern: pathPattern,
        selector,
        action,
        attribute: action === 'set_attribute' ? attribute : null,
        content: action === 'hide' ? {} : filled,
        segment_key: segment || null,
        active: current?.active ?? true,
        priority: current?.priority ?? nextPriority,
      }
      return current
        ? unwrap(api.PUT('/v1/spaces/{space}/dom-overlays/{id}', { params: { path: { space, id: current.id } }, body }))
        : unwrap(api.POST('/v1/spaces/{space}/dom-overlays', { params: { path: { space } }, body }))
    },
    onSuccess: async (r) => {
      await queryClient.invalidateQueries({ queryKey: overlayKeys.all(space) })
      toast(t('overlays.saved', { name: r.data.name }))
      onDone()
    },
  })
  const errors = save.error instanceof ApiFailure && save.error.status === 422 ? refusals(save.error.body.errors) : {}
  const at = (f: string) => errors[f]
  function submit(e: FormEvent) {
    e.preventDefault()
    save.mutate()
  }
  const codes = (locales.data ?? []).map((l) => l.code)
  return (
    <form onSubmit={submit} className="flex flex-col gap-3" noValidate data-testid="overlay-form">
      <TextField label={t('overlays.name')} value={name} onChange={(e) => setName(e.target.value)} required errors={at('name')} />
      <TextField
        label={t('overlays.pathPattern')}
        hint={t('overlays.pathHint')}
        value={pathPattern}
        onChange={(e) => setPathPattern(e.target.value)}
        required
        errors={at('path_pattern')}
        className="font-mono"
        autoComplete="off"
      />
      <TextField label={t('overlays.selector')} hint={t('overlays.selectorHint')} value={selector} onChange={(e) => setSelector(e.target.value)} required errors={at('selector')} autoComplete="off" />
      <div className="flex flex-col gap-1">
        <label htmlFor={ids.action} className="text-sm font-medium text-slate-800">
          {t('overlays.action')}
        </label>
        <select id={ids.action} className={INPUT} value={action} onChange={(e) => setAction(e.target.value as OverlayBody['action'])} aria-invalid={at('action') ? true : undefined}>
          {ACTIONS.map((a) => (
            <option key={a} value={a}>
              {t(`overlays.action.${a}`)}
            </option>
          ))}
        </select>
        <FieldErrors errors={at('action')} />
      </div>
      {action === 'set_attribute' ? (
        <TextField label={t('overlays.attribute')} hint={t('overlays.attributeHint')} value={attribute} onChange={(e) => setAttribute(e.target.value)} errors={at('attribute')} autoComplete="off" />
      ) : null}
      {action !== 'hide' ? (
        <fieldset className="flex flex-col gap-2">
          <legend className="sr-only">{t('overlays.contentHint')}</legend>
          {codes.map((code) => (
            <ContentField key={code} code={code} value={content[code] ?? ''} onChange={(v) => setContent({ ...content, [code]: v })} html={action !== 'replace_text' && action !== 'set_attribute'} />
          ))}
          <FieldErrors errors={at('content')} />
        </fieldset>
      ) : null}
      <div className="flex flex-col gap-1">
        <label htmlFor={ids.segment} className="text-sm font-medium text-slate-800">
          {t('overlays.segment')}
        </label>
        <select id={ids.segment} className={INPUT} value={segment} onChange={(e) => setSegment(e.target.value)} aria-invalid={at('segment_key') ? true : undefined}>
          <option value="">{t('overlays.segmentNone')}</option>
          {(segments.data ?? []).map((s) => (
            <option key={s.key} value={s.key}>
              {s.label}
            </option>
          ))}
        </select>
        <FieldErrors errors={at('segment_key')} />
      </div>
      <FieldErrors errors={at('priority')} />
      {save.error && !(save.error instanceof ApiFailure && save.error.status === 422) ? <CatalogError error={save.error} /> : null}
      <div className="flex justify-end gap-2">
        <Button onClick={onDone}>{t('common.cancel')}</Button>
        <Button tone="primary" type="submit" disabled={save.isPending}>
          {t('overlays.save')}
        </Button>
      </div>
    </form>
  )
}

function ContentField({ code, value, onChange, html }: { code: string; value: string; onChange: (v: string) => void; html: boolean }) {
  const id = useId()
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="text-sm font-medium text-slate-800">
        {t('overlays.contentIn', { code })}
      </label>
      <textarea id={id} rows={html ? 4 : 2} className={`${INPUT} ${html ? 'font-mono' : ''}`} value={value} onChange={(e) => onChange(e.target.value)} aria-describedby={html ? `${id}-hint` : undefined} />
      {html ? (
        <p id={`${id}-hint`} className="text-xs text-slate-600">
          {t('overlays.contentHint')}
        </p>
      ) : null}
    </div>
  )
}
