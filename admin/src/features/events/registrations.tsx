import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { CatalogError } from '../../components/catalog-error'
import { Pager } from '../../components/pager'
import { toast } from '../../components/toast'
import { Button, EmptyState, ErrorNotice, Skeleton } from '../../components/ui'
import { formatDateTime } from '../../i18n'
import { t } from './messages'
import { download, type EventItem, eventKeys, PER_PAGE, type Registration, type RegistrationStatus, registrationsQuery } from './queries'

const SELECT = 'rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm'
const BADGE: Record<string, string> = {
  confirmed: 'bg-emerald-100 text-emerald-900',
  waitlisted: 'bg-amber-100 text-amber-900',
  cancelled: 'bg-slate-200 text-slate-800',
}

export function StatusBadge({ status }: { status: string }) {
  const known = status === 'confirmed' || status === 'waitlisted' || status === 'cancelled'
  return <span className={`rounded px-1.5 py-0.5 text-xs font-medium ${BADGE[status] ?? ''}`}>{known ? t(`events.status.${status}`) : status}</span>
}

/**
 * An event's registrations (personal data: admins only): the waitlist in its order (who moves up next), every
 * registration in order of arrival with a status filter, cancel one, and the CSV export.
 */
export function Registrations({ space, event }: { space: string; event: EventItem }) {
  const headingId = useId()
  const filterId = useId()
  const [status, setStatus] = useState<RegistrationStatus | 'all'>('all')
  const [page, setPage] = useState(1)
  const list = useQuery(registrationsQuery(space, event.id, status, page))
  const waitlist = useQuery({ ...registrationsQuery(space, event.id, 'waitlisted', 1, 100), enabled: event.waitlist || event.waitlisted_count > 0 })
  const [csvError, setCsvError] = useState<unknown>(null)
  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id={headingId} className="text-lg font-semibold">{t('events.registrations')}</h2>
        <Button
          onClick={() => {
            setCsvError(null)
            download(`/v1/spaces/${encodeURIComponent(space)}/events/${event.id}/registrations.csv`, `${event.slug}-registrations.csv`).catch(setCsvError)
          }}
        >
          {t('events.csv')}
        </Button>
      </div>
      {csvError ? <p role="alert" className="text-sm text-red-700">{t('events.csvFailed')}</p> : null}
      <p className="text-sm text-slate-700" data-testid="counts">
        {t('events.counts', { confirmed: event.confirmed_count, capacity: event.capacity ?? '∞', waitlisted: event.waitlisted_count })}
      </p>
      {waitlist.data && waitlist.data.data.length > 0 ? (
        <div className="rounded-lg bg-amber-50 p-3 ring-1 ring-amber-200">
          <h3 className="text-sm font-semibold">{t('events.waitlistOrder')}</h3>
          <ol className="mt-1 list-decimal pl-6 text-sm" data-testid="waitlist">
            {waitlist.data.data.map((r) => (
              <li key={r.id}>
                {r.name} ({r.email}) · {formatDateTime(r.created_at)}
              </li>
            ))}
          </ol>
        </div>
      ) : null}
      <div className="flex items-center gap-2">
        <label htmlFor={filterId} className="text-sm font-medium">{t('events.filter')}</label>
        <select
          id={filterId}
          className={SELECT}
          value={status}
          onChange={(e) => {
            setStatus(e.target.value as RegistrationStatus | 'all')
            setPage(1)
          }}
        >
          <option value="all">{t('events.status.all')}</option>
          <option value="confirmed">{t('events.status.confirmed')}</option>
          <option value="waitlisted">{t('events.status.waitlisted')}</option>
          <option value="cancelled">{t('events.status.cancelled')}</option>
        </select>
      </div>
      {list.isPending ? <Skeleton /> : null}
      {list.error ? <ErrorNotice error={list.error} onRetry={() => list.refetch()} /> : null}
      {list.data && list.data.data.length === 0 ? <EmptyState title={t('events.noRegistrations')}>{t('events.noRegistrationsHint')}</EmptyState> : null}
      {list.data && list.data.data.length > 0 ? (
        <div className="overflow-x-auto rounded-lg bg-white ring-1 ring-slate-200">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">{t('events.registrations')}</caption>
            <thead className="bg-slate-50 text-slate-700">
              <tr>
                <th scope="col" className="px-3 py-2">{t('events.col.order')}</th>
                <th scope="col" className="px-3 py-2">{t('events.col.name')}</th>
                <th scope="col" className="px-3 py-2">{t('events.col.email')}</th>
                <th scope="col" className="px-3 py-2">{t('events.col.status')}</th>
                <th scope="col" className="px-3 py-2">{t('events.col.registered')}</th>
                <th scope="col" className="px-3 py-2"><span className="sr-only">{t('events.col.actions')}</span></th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((r, i) => (
                <Row key={r.id} space={space} event={event} r={r} n={(page - 1) * PER_PAGE + i + 1} />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {list.data ? <Pager page={page} perPage={PER_PAGE} total={list.data.meta.total} onPage={setPage} /> : null}
    </section>
  )
}

function Row({ space, event, r, n }: { space: string; event: EventItem; r: Registration; n: number }) {
  const queryClient = useQueryClient()
  const cancel = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/spaces/{space}/events/{id}/registrations/{registrationId}/cancel', { params: { path: { space, id: event.id, registrationId: r.id } } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: eventKeys.all(space) })
      toast(t('events.cancelled', { name: r.name }))
    },
  })
  const [confirming, setConfirming] = useState(false)
  const extra = Object.entries(r.fields)
  return (
    <tr className="border-t border-slate-200" data-registration={r.email}>
      <td className="px-3 py-2">{n}</td>
      <td className="px-3 py-2">
        {r.name}
        {extra.length ? <span className="block text-xs text-slate-600">{extra.map(([k, val]) => `${k}: ${typeof val === 'string' ? val : JSON.stringify(val)}`).join(' · ')}</span> : null}
      </td>
      <td className="px-3 py-2">{r.email}</td>
      <td className="px-3 py-2">
        <StatusBadge status={r.status} />
        {r.promoted_at ? <span className="block text-xs text-slate-600">{t('events.promoted', { at: formatDateTime(r.promoted_at) })}</span> : null}
      </td>
      <td className="px-3 py-2">{formatDateTime(r.created_at)}</td>
      <td className="px-3 py-2">
        {r.status !== 'cancelled' && !confirming ? (
          <Button tone="danger" onClick={() => setConfirming(true)} aria-label={t('events.cancelOf', { name: r.name })}>
            {t('events.cancelRegistration')}
          </Button>
        ) : null}
        {r.status !== 'cancelled' && confirming ? (
          <span role="group" aria-label={t('events.cancelConfirm', { name: r.name })} className="flex flex-wrap items-center gap-1">
            <span className="text-xs">{t('events.cancelConfirm', { name: r.name })}</span>
            <Button tone="danger" disabled={cancel.isPending} onClick={() => cancel.mutate()} autoFocus>{t('events.cancelYes')}</Button>
            <Button onClick={() => setConfirming(false)}>{t('events.cancelNo')}</Button>
          </span>
        ) : null}
        <CatalogError error={cancel.error} />
      </td>
    </tr>
  )
}
