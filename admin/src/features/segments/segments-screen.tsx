import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi } from '@tanstack/react-router'
import { type FormEvent, useId, useState } from 'react'
import { ApiFailure, api, unwrap } from '../../api/client'
import { useCan } from '../../api/roles'
import { CatalogError } from '../../components/catalog-error'
import { PriorityList, savePriorities } from '../../components/priority-list'
import { toast } from '../../components/toast'
import { Button, Dialog, EmptyState, ErrorNotice, Skeleton, TextField } from '../../components/ui'
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
  const titleId = useId()
  const queryClient = useQueryClient()
  const list = useQuery(segmentsQuery(space))
  const canWrite = useCan(space, 'PATCH', '/v1/spaces/{space}/audience-segments/{idOrKey}')
  const canCreate = useCan(space, 'POST', '/v1/spaces/{space}/audience-segments')
  const [editing, setEditing] = useState<Segment | 'new' | null>(null)
  const [deleting, setDeleting] = useState<Segment | null>(null)
  const [failure, setFailure] = useState<unknown>(null)
  const refresh = () => queryClient.invalidateQueries({ queryKey: segKeys.all(space) })

  const segments = list.data ?? []

  const patch = (s: Segment, body: { active?: boolean; priority?: number }) =>
    unwrap(api.PATCH('/v1/spaces/{space}/audience-segments/{idOrKey}', { params: { path: { space, idOrKey: String(s.id) } }, body }))

  const toggle = useMutation({
    mutationFn: (s: Segment) => patch(s, { active: !s.active }),
    onSuccess: ({ data }) => toast(data.active ? t('seg.activated', { label: data.label }) : t('seg.deactivated', { label: data.label })),
    onError: setFailure,
    onSettled: refresh,
  })
  const remove = useMutation({
    mutationFn: (s: Segment) => unwrap(api.DELETE('/v1/spaces/{space}/audience-segments/{idOrKey}', { params: { path: { space, idOrKey: String(s.id) } } })),
    onSuccess: () => {
      toast(t('seg.deleted', { label: deleting?.label ?? '' }))
      setDeleting(null)
    },
    onSettled: refresh,
  })

  /** Saves a new order as priorities 10, 20, 30, … (only the segments whose priority changes). */
  const reorder = (next: Segment[]) => {
    // A move made while an earlier one was saved comes with the segments as they were before that save: compared with
    // the ones refetched after it (in the cache), so a priority it changed is not taken as unchanged.
    const now = new Map((queryClient.getQueryData(segmentsQuery(space).queryKey) ?? []).map((x) => [x.id, x]))
    return savePriorities(next.map((x) => now.get(x.id) ?? x), (s, priority) => patch(s, { priority }))
      .catch(setFailure)
      .then(refresh)
  }

  return (
    <section className="flex flex-col gap-4" aria-labelledby={titleId}>
      <header className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <h1 id={titleId} tabIndex={-1} className="text-xl font-semibold">
            {t('seg.title')}
          </h1>
          <p className="text-sm text-slate-700">{t('seg.intro')}</p>
        </div>
        {canCreate ? (
          <Button tone="primary" onClick={() => setEditing('new')}>
            {t('seg.new')}
          </Button>
        ) : null}
      </header>
      {list.isPending ? <Skeleton lines={4} /> : null}
      <ErrorNotice error={list.error} onRetry={() => list.refetch()} />
      <CatalogError error={failure} />
      {list.data && segments.length === 0 ? <EmptyState title={t('seg.empty')}>{canCreate ? t('seg.emptyCreate') : t('seg.emptyAsk')}</EmptyState> : null}
      {segments.length ? (
        <PriorityList
          items={segments}
          itemKey={(s) => s.id}
          canReorder={canWrite}
          onReorder={reorder}
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
                <PreviewAs space={space} segment={s.key} label={s.label} onFail={setFailure} />
                {canWrite ? (
                  <Button tone="danger" onClick={() => setDeleting(s)} aria-label={t('seg.deleteNamed', { label: s.label })}>
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
      <Dialog open={deleting !== null} title={t('seg.deleteTitle', { label: deleting?.label ?? '' })} onClose={() => setDeleting(null)}>
        <p className="text-sm">{t('seg.deleteText')}</p>
        <CatalogError error={remove.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => setDeleting(null)}>{t('common.cancel')}</Button>
          <Button tone="danger" onClick={() => deleting && remove.mutate(deleting)} disabled={remove.isPending}>
            {t('seg.delete')}
          </Button>
        </div>
      </Dialog>
    </section>
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
