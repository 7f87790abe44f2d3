import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useId, useRef, useState } from 'react'
import { ApiFailure, api, unwrap } from '../api/client'
import type { paths } from '../api/schema'
import { errorText, formatDateTime, t } from '../i18n'
import { Button, FieldErrors } from './ui'
import { queryKeys } from '../api/keys'

/** A planned publish or unpublish, as the API answers it. */
export type SchedulePlan = paths['/v1/spaces/{space}/stories/{uuid}/schedules']['get']['responses'][200]['content']['application/json']['data'][number]
type Action = SchedulePlan['action']

/** Every plan of the Space, soonest first: the Story tree marks the Stories they concern. */
export const spaceSchedulesQuery = (space: string) =>
  queryOptions({
    queryKey: queryKeys.schedules(space),
    queryFn: async () => unwrap(api.GET('/v1/spaces/{space}/stories/schedules', { params: { path: { space }, query: { per_page: 500 } } })),
    refetchInterval: 60_000,
  })

export const storySchedulesQuery = (space: string, uuid: string) =>
  queryOptions({
    queryKey: queryKeys.storySchedules(space, uuid),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/stories/{uuid}/schedules', { params: { path: { space, uuid } } }))).data,
  })

const planText = (p: SchedulePlan) => t(p.action === 'publish' ? 'schedule.planned.publish' : 'schedule.planned.unpublish', { when: formatDateTime(p.at) })

/** The tree's mark for a Story with plans: a clock and what is planned when. */
export function ScheduleMark({ plans }: { plans: SchedulePlan[] }) {
  if (!plans.length) return null
  const what = plans.map(planText).join(' · ')
  const failed = plans.some((p) => p.error !== null)
  return (
    <span
      className={`rounded px-1.5 text-xs ${failed ? 'bg-red-100 text-red-900' : 'bg-sky-100 text-sky-900'}`}
      title={t('schedule.mark', { what })}
      data-testid="schedule-mark"
    >
      <span aria-hidden>◷ </span>
      {what}
    </span>
  )
}

/** `YYYY-MM-DDTHH:mm` in the browser's time zone (what a datetime-local input shows) for an instant. */
function localInput(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
}

/**
 * The editor's schedule: the planned publish and unpublish of this Story (with who planned them and, when the time
 * came and the action was refused, why), a form to plan one at a minute in the browser's time zone, and cancel.
 * When a plan disappears (it ran), the Story is reloaded so the status line follows.
 */
export function SchedulePanel({ space, uuid, canWrite, disabled }: { space: string; uuid: string; canWrite: boolean; disabled: boolean }) {
  const queryClient = useQueryClient()
  const plans = useQuery({ ...storySchedulesQuery(space, uuid), refetchInterval: (q) => ((q.state.data?.length ?? 0) > 0 ? 30_000 : false) })
  const [action, setAction] = useState<Action>('publish')
  const [when, setWhen] = useState(() => localInput(new Date(Date.now() + 3_600_000)))
  const [notice, setNotice] = useState<string | null>(null)
  const actionId = useId()
  const whenId = useId()
  const list = plans.data ?? []
  const count = useRef(list.length)
  useEffect(() => {
    if (list.length < count.current) void queryClient.invalidateQueries({ queryKey: queryKeys.stories(space) })
    count.current = list.length
  }, [list.length, queryClient, space])
  const changed = async (text: string) => {
    setNotice(text)
    await queryClient.invalidateQueries({ queryKey: queryKeys.stories(space) })
    await queryClient.invalidateQueries({ queryKey: queryKeys.schedules(space) })
  }
  const plan = useMutation({
    mutationFn: () => {
      const at = new Date(when)
      return unwrap(
        api.PUT('/v1/spaces/{space}/stories/{uuid}/schedules/{action}', {
          params: { path: { space, uuid, action } },
          body: { at: Number.isNaN(at.getTime()) ? when : at.toISOString() },
        }),
      )
    },
    onSuccess: () => changed(t('schedule.saved')),
  })
  const cancel = useMutation({
    mutationFn: (a: Action) => unwrap(api.DELETE('/v1/spaces/{space}/stories/{uuid}/schedules/{action}', { params: { path: { space, uuid, action: a } } })),
    onSuccess: () => changed(t('schedule.cancelled')),
  })
  const atErrors = plan.error instanceof ApiFailure ? plan.error.body.errors?.at : undefined
  const failure = (plan.error && !atErrors ? plan.error : null) ?? cancel.error ?? plans.error
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone

  return (
    <section aria-labelledby={`${actionId}-title`} className="rounded-lg bg-white p-3 ring-1 ring-slate-200" data-testid="schedule-panel">
      <h2 id={`${actionId}-title`} className="text-sm font-semibold">
        {t('schedule.title')}
      </h2>
      {list.length === 0 && plans.data ? <p className="mt-1 text-sm text-slate-700">{t('schedule.none')}</p> : null}
      <ul className="mt-1 flex flex-col gap-1">
        {list.map((p) => (
          <li key={p.action} className="flex flex-wrap items-center gap-2 text-sm" data-plan={p.action}>
            <span className="font-medium">{planText(p)}</span>
            {p.created_by ? <span className="text-slate-600">{t('schedule.by', { name: p.created_by.name })}</span> : null}
            {p.error ? (
              <span role="alert" className="text-red-800">
                {t('schedule.failed', { error: p.error })}
              </span>
            ) : null}
            {canWrite ? (
              <Button
                className="px-2 py-0.5 text-xs"
                disabled={cancel.isPending}
                onClick={() => cancel.mutate(p.action)}
                aria-label={t('schedule.cancelOne', { action: t(p.action === 'publish' ? 'schedule.action.publish' : 'schedule.action.unpublish') })}
              >
                {t('schedule.cancel')}
              </Button>
            ) : null}
          </li>
        ))}
      </ul>
      {canWrite ? (
        <form
          className="mt-2 flex flex-wrap items-start gap-2 text-sm"
          onSubmit={(e) => {
            e.preventDefault()
            setNotice(null)
            plan.mutate()
          }}
        >
          <label htmlFor={actionId} className="flex flex-col text-xs font-medium">
            {t('schedule.action')}
            <select
              id={actionId}
              value={action}
              onChange={(e) => setAction(e.target.value as Action)}
              className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm"
            >
              <option value="publish">{t('schedule.action.publish')}</option>
              <option value="unpublish">{t('schedule.action.unpublish')}</option>
            </select>
          </label>
          <div className="flex flex-col text-xs font-medium">
            <label htmlFor={whenId}>{t('schedule.when')}</label>
            <input
              id={whenId}
              type="datetime-local"
              value={when}
              step={60}
              onChange={(e) => setWhen(e.target.value)}
              aria-invalid={atErrors?.length ? true : undefined}
              aria-describedby={`${whenId}-zone${atErrors?.length ? ` ${whenId}-err` : ''}`}
              className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm aria-invalid:border-red-600"
            />
            <span id={`${whenId}-zone`} className="font-normal text-slate-600">
              {t('schedule.timeZone', { zone })}
            </span>
            <FieldErrors id={`${whenId}-err`} errors={atErrors} />
          </div>
          <Button type="submit" tone="primary" className="mt-4" disabled={disabled || plan.isPending}>
            {t('schedule.set')}
          </Button>
        </form>
      ) : null}
      {failure ? (
        <p role="alert" className="mt-2 text-sm text-red-800">
          {errorText(failure)}
        </p>
      ) : null}
      <p aria-live="polite" className="mt-1 text-sm text-emerald-800">
        {notice}
      </p>
    </section>
  )
}
