import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi } from '@tanstack/react-router'
import { useId, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { useCan } from '../../api/roles'
import { CatalogError } from '../../components/catalog-error'
import { Pager } from '../../components/pager'
import { toast } from '../../components/toast'
import { Button, EmptyState, ErrorNotice, Skeleton } from '../../components/ui'
import { language } from '../../i18n'
import { t } from './messages'
import { EventForm } from './event-form'
import { download, type EventItem, eventKeys, eventQuery, eventsQuery, PER_PAGE, type When } from './queries'
import { Registrations } from './registrations'

const route = getRouteApi('/app/spaces/$space/events')

/** When an event happens, on the wall clock of its own time zone (named). */
export function eventWhen(e: Pick<EventItem, 'starts_at' | 'ends_at' | 'timezone'>): string {
  const f = new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeStyle: 'short', timeZone: e.timezone })
  return `${f.formatRange(new Date(e.starts_at), new Date(e.ends_at))} (${e.timezone})`
}

const titleOf = (e: Pick<EventItem, 'title' | 'slug'>) => Object.values(e.title).find((s) => s) ?? e.slug

/** Events: upcoming and past, create/edit, an event's registrations and waitlist, its public link and calendar file. */
export function EventsScreen() {
  const { space } = route.useParams()
  const titleId = useId()
  const [when, setWhen] = useState<When>('upcoming')
  const [page, setPage] = useState(1)
  const [open, setOpen] = useState<string | null>(null)
  const [editing, setEditing] = useState<'new' | string | null>(null)
  const list = useQuery(eventsQuery(space, when, page))
  const canCreate = useCan(space, 'POST', '/v1/spaces/{space}/events')
  return (
    <section className="flex flex-col gap-5" aria-labelledby={titleId}>
      <header className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <h1 id={titleId} tabIndex={-1} className="text-xl font-semibold">{t('events.title')}</h1>
          <p className="text-sm text-slate-700">{t('events.intro')}</p>
        </div>
        {canCreate && editing === null ? (
          <Button tone="primary" onClick={() => setEditing('new')}>{t('events.new')}</Button>
        ) : null}
      </header>
      {editing === 'new' ? (
        <EventForm
          space={space}
          event={null}
          onDone={(saved) => {
            setEditing(null)
            if (saved) setOpen(saved.id)
          }}
        />
      ) : null}
      <div role="group" aria-label={t('events.when')} className="flex gap-2">
        {(['upcoming', 'past'] as const).map((w) => (
          <Button
            key={w}
            aria-pressed={when === w}
            tone={when === w ? 'primary' : 'secondary'}
            onClick={() => {
              setWhen(w)
              setPage(1)
            }}
          >
            {t(`events.${w}`)}
          </Button>
        ))}
      </div>
      {list.isPending ? <Skeleton /> : null}
      {list.error ? <ErrorNotice error={list.error} onRetry={() => list.refetch()} /> : null}
      {list.data && list.data.data.length === 0 ? (
        <EmptyState title={when === 'upcoming' ? t('events.emptyUpcoming') : t('events.emptyPast')}>{canCreate ? t('events.emptyHint') : null}</EmptyState>
      ) : null}
      {list.data && list.data.data.length > 0 ? (
        <div className="overflow-x-auto rounded-lg bg-white ring-1 ring-slate-200">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">{when === 'upcoming' ? t('events.upcoming') : t('events.past')}</caption>
            <thead className="bg-slate-50 text-slate-700">
              <tr>
                <th scope="col" className="px-3 py-2">{t('events.col.title')}</th>
                <th scope="col" className="px-3 py-2">{t('events.col.when')}</th>
                <th scope="col" className="px-3 py-2">{t('events.col.spots')}</th>
                <th scope="col" className="px-3 py-2">{t('events.col.state')}</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((e) => (
                <tr key={e.id} className={`border-t border-slate-200 ${open === e.id ? 'bg-indigo-50' : ''}`} data-event={e.slug}>
                  <th scope="row" className="px-3 py-2 font-medium">
                    <button type="button" className="text-left text-indigo-800 underline" aria-expanded={open === e.id} onClick={() => setOpen(open === e.id ? null : e.id)}>
                      {titleOf(e)}
                    </button>
                  </th>
                  <td className="px-3 py-2">{eventWhen(e)}</td>
                  <td className="px-3 py-2">
                    {t('events.spots', { confirmed: e.confirmed_count, capacity: e.capacity ?? '∞' })}
                    {e.waitlisted_count ? <span className="block text-xs text-slate-600">{t('events.waitlistedN', { n: e.waitlisted_count })}</span> : null}
                  </td>
                  <td className="px-3 py-2">{e.published ? t('events.isPublished') : t('events.isDraft')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {list.data ? <Pager page={page} perPage={PER_PAGE} total={list.data.meta.total} onPage={setPage} /> : null}
      {open ? (
        <EventDetail
          key={open}
          space={space}
          id={open}
          editing={editing === open}
          onEdit={(on) => setEditing(on ? open : null)}
          onDeleted={() => {
            setOpen(null)
            setEditing(null)
          }}
        />
      ) : null}
    </section>
  )
}

function EventDetail({ space, id, editing, onEdit, onDeleted }: { space: string; id: string; editing: boolean; onEdit: (on: boolean) => void; onDeleted: () => void }) {
  const headingId = useId()
  const queryClient = useQueryClient()
  const q = useQuery(eventQuery(space, id))
  const canEdit = useCan(space, 'PUT', '/v1/spaces/{space}/events/{id}')
  const canDelete = useCan(space, 'DELETE', '/v1/spaces/{space}/events/{id}')
  const canSeeRegistrations = useCan(space, 'GET', '/v1/spaces/{space}/events/{id}/registrations')
  const [confirming, setConfirming] = useState(false)
  const [icsError, setIcsError] = useState(false)
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/spaces/{space}/events/{id}', { params: { path: { space, id } } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: eventKeys.all(space) })
      toast(t('events.deleted'))
      onDeleted()
    },
  })
  if (q.isPending) return <Skeleton />
  if (q.error) return <ErrorNotice error={q.error} onRetry={() => q.refetch()} />
  const e = q.data
  const publicUrl = `${location.origin}/v1/cdn/${encodeURIComponent(space)}/events/${e.slug}`
  if (editing) return <EventForm space={space} event={e} onDone={() => onEdit(false)} />
  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-4 rounded-lg bg-white p-4 ring-1 ring-slate-200" data-testid="event-detail">
      <div className="flex flex-wrap items-start justify-between gap-2">
        <div>
          <h2 id={headingId} className="text-lg font-semibold">{titleOf(e)}</h2>
          <p className="text-sm text-slate-700">{eventWhen(e)}</p>
          <p className="text-sm text-slate-700">{[e.location.name, e.location.address].filter(Boolean).join(', ')}</p>
        </div>
        <div className="flex flex-wrap gap-2">
          {canEdit ? <Button onClick={() => onEdit(true)}>{t('events.editThis')}</Button> : null}
          <Button
            onClick={() => {
              setIcsError(false)
              download(`/v1/spaces/${encodeURIComponent(space)}/events/${e.id}/event.ics`, `${e.slug}.ics`).catch(() => setIcsError(true))
            }}
          >
            {t('events.ics')}
          </Button>
          {canDelete ? (
            <Button tone="danger" onClick={() => setConfirming(true)}>{t('events.delete')}</Button>
          ) : null}
        </div>
      </div>
      {icsError ? <p role="alert" className="text-sm text-red-700">{t('events.icsFailed')}</p> : null}
      {confirming ? (
        <div role="alertdialog" aria-label={t('events.deleteConfirm')} className="flex flex-wrap items-center gap-2 rounded-md bg-red-50 p-3 ring-1 ring-red-200">
          <span className="text-sm">{t('events.deleteConfirm')}</span>
          <Button tone="danger" onClick={() => remove.mutate()} disabled={remove.isPending}>{t('events.delete')}</Button>
          <Button onClick={() => setConfirming(false)}>{t('common.cancel')}</Button>
          <CatalogError error={remove.error} />
        </div>
      ) : null}
      <div className="flex flex-col gap-1 text-sm">
        <span className="font-medium">{t('events.publicLink')}</span>
        {e.published ? (
          <a href={publicUrl} target="_blank" rel="noreferrer" className="break-all text-indigo-800 underline" data-testid="public-link">{publicUrl}</a>
        ) : (
          <span className="text-slate-700">{t('events.notPublic')}</span>
        )}
      </div>
      {canSeeRegistrations ? <Registrations space={space} event={e} /> : <p className="text-sm text-slate-700">{t('events.registrationsAdmin')}</p>}
    </section>
  )
}
