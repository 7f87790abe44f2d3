import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi } from '@tanstack/react-router'
import { useId, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { downloadFile } from '../../api/download'
import { useCan } from '../../api/roles'
import { CatalogError } from '../../components/catalog-error'
import { ListPager, ListToolbar } from '../../components/list-toolbar'
import { toast } from '../../components/toast'
import { Button, Dialog, EmptyState, ErrorNotice, Skeleton, TextField } from '../../components/ui'
import { formatDateTime } from '../../i18n'
import { fieldErrors, t } from './messages'
import type { MessageKey } from './messages'
import { csvPath, newsletterQuery, PER_PAGE, type Subscriber, SUBSCRIBER_STATUSES, subscriberKeys, type SubscriberStatus, subscribersQuery } from './queries'

const route = getRouteApi('/app/spaces/$space/subscribers')

const statusText = (s: string) => (SUBSCRIBER_STATUSES as readonly string[]).includes(s) ? t(`subscribers.status.${s}` as MessageKey) : s
const sourceText = (s: string) => (['subscribe', 'form', 'admin'].includes(s) ? t(`subscribers.source.${s}` as MessageKey) : s)
const BADGE: Record<string, string> = { pending: 'bg-amber-100 text-amber-900', confirmed: 'bg-emerald-100 text-emerald-900', unsubscribed: 'bg-slate-200 text-slate-800' }

/**
 * Subscribers (personal data: admins): the newsletter's list by status and search, unsubscribe, erase for good (the
 * address typed to confirm), the CSV with the same filters, and where the confirm and unsubscribe links lead.
 */
export function SubscribersScreen() {
  const { space } = route.useParams()
  const titleId = useId()
  const queryClient = useQueryClient()
  const [status, setStatus] = useState<SubscriberStatus | ''>('')
  const [q, setQ] = useState('')
  const [page, setPage] = useState(1)
  const [erasing, setErasing] = useState<Subscriber | null>(null)
  const [confirmText, setConfirmText] = useState('')
  const canUnsubscribe = useCan(space, 'PATCH', '/v1/spaces/{space}/subscribers/{id}')
  const canErase = useCan(space, 'DELETE', '/v1/spaces/{space}/subscribers/{id}')
  const filter = { status: status || undefined, q, page }
  const list = useQuery(subscribersQuery(space, filter))
  const rows = list.data?.data ?? []
  const total = list.data?.meta.total ?? 0
  const refresh = () => queryClient.invalidateQueries({ queryKey: subscriberKeys.all(space) })

  const unsubscribe = useMutation({
    mutationFn: async (s: Subscriber) => (await unwrap(api.PATCH('/v1/spaces/{space}/subscribers/{id}', { params: { path: { space, id: s.id } }, body: { status: 'unsubscribed' } }))).data,
    onSuccess: async (s) => {
      await refresh()
      toast(t('subscribers.unsubscribed', { email: s.email }))
    },
  })
  const erase = useMutation({
    mutationFn: async (s: Subscriber) => unwrap(api.DELETE('/v1/spaces/{space}/subscribers/{id}', { params: { path: { space, id: s.id } } })),
    onSuccess: async (_, s) => {
      setErasing(null)
      await refresh()
      toast(t('subscribers.erased', { email: s.email }))
    },
  })
  const csv = useMutation({ mutationFn: () => downloadFile(csvPath(space, filter), 'subscribers.csv') })

  return (
    <section className="flex flex-col gap-6" aria-labelledby={titleId}>
      <header>
        <h1 id={titleId} tabIndex={-1} className="text-xl font-semibold">
          {t('subscribers.title')}
        </h1>
        <p className="text-sm text-slate-700">{t('subscribers.intro')}</p>
      </header>
      <ListToolbar
        filters={[{ label: t('subscribers.filterStatus'), value: status, options: SUBSCRIBER_STATUSES, optionText: statusText, onChange: (v) => (setStatus(v as SubscriberStatus | ''), setPage(1)) }]}
        search={{ label: t('subscribers.search'), submit: t('subscribers.searchGo'), onSearch: (v) => (setQ(v), setPage(1)) }}
        exportCsv={{ label: t('subscribers.exportCsv'), onExport: () => csv.mutate(), busy: csv.isPending }}
      />
      <CatalogError error={csv.error ?? unsubscribe.error} />
      {list.isPending ? <Skeleton lines={4} /> : null}
      {list.error ? <ErrorNotice error={list.error} onRetry={() => list.refetch()} /> : null}
      {list.data && rows.length === 0 ? (
        <EmptyState title={q || status ? t('subscribers.noMatch') : t('subscribers.empty')}>{q || status ? null : t('subscribers.emptyHint')}</EmptyState>
      ) : null}
      {rows.length > 0 ? (
        <div className="overflow-x-auto rounded-lg bg-white ring-1 ring-slate-200">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">{t('subscribers.title')}</caption>
            <thead className="bg-slate-50 text-slate-700">
              <tr>
                <th scope="col" className="px-3 py-2">{t('subscribers.col.email')}</th>
                <th scope="col" className="px-3 py-2">{t('subscribers.col.name')}</th>
                <th scope="col" className="px-3 py-2">{t('subscribers.col.status')}</th>
                <th scope="col" className="px-3 py-2">{t('subscribers.col.source')}</th>
                <th scope="col" className="px-3 py-2">{t('subscribers.col.created')}</th>
                <th scope="col" className="px-3 py-2"><span className="sr-only">{t('resource.actions')}</span></th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => (
                <tr key={s.id} className="border-t border-slate-200 align-top" data-subscriber={s.email}>
                  <td className="px-3 py-2 break-all">{s.email}</td>
                  <td className="px-3 py-2">{s.name ?? ''}</td>
                  <td className="px-3 py-2">
                    <span className={`rounded px-1.5 py-0.5 text-xs font-medium ${BADGE[s.status] ?? ''}`}>{statusText(s.status)}</span>
                  </td>
                  <td className="px-3 py-2">{sourceText(s.source)}</td>
                  <td className="px-3 py-2 whitespace-nowrap">{formatDateTime(s.created_at)}</td>
                  <td className="px-3 py-2">
                    <div className="flex flex-wrap justify-end gap-2">
                      {canUnsubscribe && s.status !== 'unsubscribed' ? (
                        <Button disabled={unsubscribe.isPending} onClick={() => unsubscribe.mutate(s)} aria-label={t('subscribers.unsubscribeWho', { email: s.email })}>
                          {t('subscribers.unsubscribe')}
                        </Button>
                      ) : null}
                      {canErase ? (
                        <Button tone="danger" onClick={() => (erase.reset(), setConfirmText(''), setErasing(s))} aria-label={t('subscribers.eraseWho', { email: s.email })}>
                          {t('subscribers.erase')}
                        </Button>
                      ) : null}
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <ListPager page={page} perPage={PER_PAGE} total={total} onPage={setPage} />
      <Dialog open={erasing !== null} title={t('subscribers.eraseTitle', { email: erasing?.email ?? '' })} onClose={() => setErasing(null)}>
        <form
          className="flex flex-col gap-3"
          onSubmit={(e) => {
            e.preventDefault()
            if (erasing && confirmText.trim().toLowerCase() === erasing.email.toLowerCase()) erase.mutate(erasing)
          }}
        >
          <p className="text-sm">{t('subscribers.eraseText')}</p>
          <TextField label={t('subscribers.eraseConfirm', { email: erasing?.email ?? '' })} value={confirmText} autoComplete="off" onChange={(e) => setConfirmText(e.target.value)} />
          <CatalogError error={erase.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => setErasing(null)}>{t('common.cancel')}</Button>
            <Button type="submit" tone="danger" disabled={erase.isPending || !erasing || confirmText.trim().toLowerCase() !== erasing.email.toLowerCase()}>
              {t('subscribers.eraseGo')}
            </Button>
          </div>
        </form>
      </Dialog>
      <NewsletterSettings space={space} />
    </section>
  )
}

/** Where the mailed confirm and unsubscribe links lead after their button (303 with ?status=), or none. */
function NewsletterSettings({ space }: { space: string }) {
  const headingId = useId()
  const queryClient = useQueryClient()
  const settings = useQuery(newsletterQuery(space))
  const canSave = useCan(space, 'PUT', '/v1/spaces/{space}/newsletter')
  const [url, setUrl] = useState<string | null>(null)
  const value = url ?? settings.data?.newsletter_redirect_url ?? ''
  const save = useMutation({
    mutationFn: async () => (await unwrap(api.PUT('/v1/spaces/{space}/newsletter', { params: { path: { space } }, body: { newsletter_redirect_url: value.trim() || null } }))).data,
    onSuccess: async () => {
      setUrl(null)
      await queryClient.invalidateQueries({ queryKey: subscriberKeys.newsletter(space) })
      toast(t('subscribers.redirectSaved'))
    },
  })
  const errs = fieldErrors(save.error, { newsletter_redirect_url: 'subscribers.error.redirect' })
  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200">
      <h2 id={headingId} className="text-base font-semibold">
        {t('subscribers.redirectTitle')}
      </h2>
      <p className="text-sm text-slate-700">{t('subscribers.redirectIntro')}</p>
      {settings.error ? <ErrorNotice error={settings.error} onRetry={() => settings.refetch()} /> : null}
      <form
        className="flex flex-col gap-3"
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          if (canSave) save.mutate()
        }}
      >
        <TextField label={t('subscribers.redirectUrl')} hint={t('subscribers.redirectHint')} type="url" value={value} disabled={!canSave} errors={errs.newsletter_redirect_url} onChange={(e) => setUrl(e.target.value)} />
        {save.error && !errs.newsletter_redirect_url ? <CatalogError error={save.error} /> : null}
        {canSave ? (
          <div>
            <Button type="submit" tone="primary" disabled={save.isPending}>
              {t('subscribers.redirectSave')}
            </Button>
          </div>
        ) : null}
      </form>
    </section>
  )
}
