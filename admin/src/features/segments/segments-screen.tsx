import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi } from '@tanstack/react-router'
import { type FormEvent, useId, useState } from 'react'
import { ApiFailure, api, unwrap } from '../../api/client'
import { useCan } from '../../api/roles'
import { CatalogError } from '../../components/catalog-error'
import { PriorityList } from '../../components/priority-list'
import { PriorityScreen, usePriorityRules } from '../../components/priority-screen'
import { toast } from '../../components/toast'
import { Button, Dialog, TextField } from '../../components/ui'
import { errorText, formatNumber } from '../../i18n'
import { t } from './messages'
import { errorsAt } from '../../components/form-hooks'
import { PreviewAs } from './preview-as'
import { type Rule, type Segment, segKeys, segmentsQuery } from './queries'
import { normalise, RuleBuilder } from './rule-builder'

const route = getRouteApi('/app/spaces/$space/segments')

/**
 * Audience segments: in priority order (the first active segment whose rules all match a reader wins), reordered by
 * dragging the handle or with Alt+↑/↓ on it, switched on and off, edited with the rule builder, and previewed.
 */
export function SegmentsScreen() {
  const { space } = route.useParams()
  const canWrite = useCan(space, 'PATCH', '/v1/spaces/{space}/audience-segments/{idOrKey}')
  const canCreate = useCan(space, 'POST', '/v1/spaces/{space}/audience-segments')
  const [editing, setEditing] = useState<Segment | 'new' | null>(null)
  const rules = usePriorityRules({
    list: useQuery(segmentsQuery(space)),
    queryKey: segKeys.all(space),
    update: (s: Segment, body) =>
      unwrap(api.PATCH('/v1/spaces/{space}/audience-segments/{idOrKey}', { params: { path: { space, idOrKey: String(s.id) } }, body })) as Promise<{ data: Segment }>,
    destroy: (s) => unwrap(api.DELETE('/v1/spaces/{space}/audience-segments/{idOrKey}', { params: { path: { space, idOrKey: String(s.id) } } })),
    said: {
      activated: (s) => t('seg.activated', { label: s.label }),
      deactivated: (s) => t('seg.deactivated', { label: s.label }),
      deleted: (s) => t('seg.deleted', { label: s.label }),
    },
  })
  const { items: segments, toggle } = rules

  return (
    <PriorityScreen
      rules={rules}
      canCreate={canCreate}
      onNew={() => setEditing('new')}
      words={{
        title: t('seg.title'),
        intro: t('seg.intro'),
        new: t('seg.new'),
        empty: t('seg.empty'),
        emptyCreate: t('seg.emptyCreate'),
        emptyAsk: t('seg.emptyAsk'),
        deleteTitle: (s) => t('seg.deleteTitle', { label: s?.label ?? '' }),
        deleteText: t('seg.deleteText'),
        delete: t('seg.delete'),
      }}
    >
      {segments.length ? (
        <PriorityList
          items={segments}
          itemKey={(s) => s.id}
          canReorder={canWrite}
          onReorder={rules.reorder}
          testId="segments"
          rowProps={(s) => ({ 'data-segment': s.key })}
          text={{
            list: t('seg.order'),
            help: t('seg.orderHelp'),
            handle: (s, position) => t('seg.handle', { label: s.label, position }),
            up: (s) => t('seg.up', { label: s.label }),
            down: (s) => t('seg.down', { label: s.label }),
            moved: (s, position, total) => t('seg.moved', { label: s.label, position, total }),
          }}
        >
          {(s, { moveButtons }) => (
            <>
              <div className="min-w-40 flex-1">
                <p className="font-medium">{s.label}</p>
                <p className="text-xs text-slate-600">
                  <span className="font-mono">{s.key}</span> · {summary(s)}
                </p>
              </div>
              {canWrite ? (
                <label className="flex items-center gap-2 text-sm">
                  <input type="checkbox" role="switch" checked={s.active} onChange={() => toggle.mutate(s)} disabled={toggle.isPending} />
                  {t('seg.active')}
                  <span className="sr-only">{s.label}</span>
                </label>
              ) : (
                <span className="text-sm">{s.active ? t('seg.isActive') : t('seg.isInactive')}</span>
              )}
              <div className="flex flex-wrap gap-2">
                {canWrite ? (
                  <>
                    {moveButtons}
                    <Button onClick={() => setEditing(s)} aria-label={t('seg.editNamed', { label: s.label })}>
                      {t('seg.edit')}
                    </Button>
                  </>
                ) : null}
                <PreviewAs space={space} segment={s.key} label={s.label} onFail={rules.setFailure} />
                {canWrite ? (
                  <Button tone="danger" onClick={() => rules.setDeleting(s)} aria-label={t('seg.deleteNamed', { label: s.label })}>
                    {t('seg.delete')}
                  </Button>
                ) : null}
              </div>
            </>
          )}
        </PriorityList>
      ) : null}
      <Dialog open={editing !== null} title={editing === 'new' ? t('seg.new') : t('seg.editTitle', { label: editing?.label ?? '' })} onClose={() => setEditing(null)}>
        {editing ? (
          <SegmentForm
            space={space}
            current={editing === 'new' ? null : editing}
            nextPriority={(segments.length + 1) * 10}
            onDone={() => setEditing(null)}
          />
        ) : null}
      </Dialog>
    </PriorityScreen>
  )
}

function summary(s: Segment): string {
  if (s.match_all) return t('seg.matchAllShort')
  return t('seg.ruleCount', { n: formatNumber(s.rules.length) })
}

function SegmentForm({ space, current, nextPriority, onDone }: { space: string; current: Segment | null; nextPriority: number; onDone: () => void }) {
  const queryClient = useQueryClient()
  const [key, setKey] = useState(current?.key ?? '')
  const [label, setLabel] = useState(current?.label ?? '')
  const [matchAll, setMatchAll] = useState(current?.match_all ?? false)
  const [rules, setRules] = useState<Rule[]>(current?.rules ?? [{ type: 'language', operator: 'eq', value: '' }])
  const save = useMutation({
    mutationFn: async () => {
      const body = { key, label, match_all: matchAll, rules: matchAll ? [] : rules.map(normalise) }
      return current
        ? unwrap(api.PATCH('/v1/spaces/{space}/audience-segments/{idOrKey}', { params: { path: { space, idOrKey: String(current.id) } }, body }))
        : unwrap(api.POST('/v1/spaces/{space}/audience-segments', { params: { path: { space } }, body: { ...body, priority: nextPriority } }))
    },
    onSuccess: async (r) => {
      await queryClient.invalidateQueries({ queryKey: segKeys.all(space) })
      toast(t('seg.saved', { label: r.data.label }))
      for (const w of r.warnings) toast(w.code === 'country_rule_inactive' ? t('seg.warn.country') : w.message, 'error')
      onDone()
    },
  })
  const errors = save.error instanceof ApiFailure ? (save.error.body.errors ?? {}) : {}
  function submit(e: FormEvent) {
    e.preventDefault()
    save.mutate()
  }
  return (
    <form onSubmit={submit} className="flex flex-col gap-3" noValidate data-testid="segment-form">
      <TextField label={t('seg.key')} hint={t('seg.keyHint')} value={key} onChange={(e) => setKey(e.target.value)} required errors={errorsAt(save.error, 'key')} autoComplete="off" />
      <TextField label={t('seg.label')} value={label} onChange={(e) => setLabel(e.target.value)} required errors={errorsAt(save.error, 'label')} />
      <label className="flex items-center gap-2 text-sm">
        <input type="checkbox" checked={matchAll} onChange={(e) => setMatchAll(e.target.checked)} />
        {t('seg.matchAll')}
      </label>
      {matchAll ? (
        <p className="text-sm text-slate-700">{t('seg.matchAllHelp')}</p>
      ) : (
        <fieldset className="flex flex-col gap-2">
          <legend className="text-sm font-medium">{t('seg.rules')}</legend>
          <p className="text-xs text-slate-600">{t('seg.rulesHelp')}</p>
          <RuleBuilder space={space} rules={rules} onChange={setRules} errors={errors} />
        </fieldset>
      )}
      {save.error && !(save.error instanceof ApiFailure && save.error.status === 422) ? <CatalogError error={save.error} /> : null}
      {save.error instanceof ApiFailure && save.error.status === 422 ? (
        <p role="alert" className="text-sm text-red-700">
          {errorsAt(save.error, 'rules')?.length || errorsAt(save.error, 'match_all')?.length ? t('seg.needRules') : errorText(save.error)}
        </p>
      ) : null}
      <div className="flex justify-end gap-2">
        <Button onClick={onDone}>{t('common.cancel')}</Button>
        <Button tone="primary" type="submit" disabled={save.isPending}>
          {t('seg.save')}
        </Button>
      </div>
    </form>
  )
}
