import { useQuery } from '@tanstack/react-query'
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router'
import { useId, useState } from 'react'
import { useCan } from '../../api/roles'
import { Button, Dialog, EmptyState, ErrorNotice, Skeleton } from '../../components/ui'
import { formatDateTime, formatNumber } from '../../i18n'
import { t } from './messages'
import { DatasourceForm, type DatasourceView } from './datasource-form'
import { datasourcesQuery } from './queries'
import { keepSecret } from './secret-once'
import { DsStatus } from './status'
import { lastErrorText } from './words'

const route = getRouteApi('/app/spaces/$space/datasources')

/** Datasources: each one's state (last sync, the last error in words, revision, entries), and a new one. */
export function DatasourcesScreen() {
  const { space } = route.useParams()
  const titleId = useId()
  const navigate = useNavigate()
  const list = useQuery(datasourcesQuery(space))
  const canCreate = useCan(space, 'POST', '/v1/spaces/{space}/datasources')
  const [creating, setCreating] = useState(false)
  const rows = (list.data ?? []) as DatasourceView[]
  return (
    <section className="flex flex-col gap-4" aria-labelledby={titleId}>
      <header className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <h1 id={titleId} tabIndex={-1} className="text-xl font-semibold">
            {t('ds.title')}
          </h1>
          <p className="text-sm text-slate-700">{t('ds.intro')}</p>
        </div>
        {canCreate ? (
          <Button tone="primary" onClick={() => setCreating(true)}>
            {t('ds.new')}
          </Button>
        ) : null}
      </header>
      {list.isPending ? <Skeleton lines={4} /> : null}
      <ErrorNotice error={list.error} onRetry={() => list.refetch()} />
      {list.data && rows.length === 0 ? <EmptyState title={t('ds.empty')}>{canCreate ? t('ds.emptyCreate') : t('ds.emptyAsk')}</EmptyState> : null}
      {rows.length ? (
        <div className="overflow-x-auto rounded-lg bg-white ring-1 ring-slate-200">
          <table className="w-full text-left text-sm" data-testid="datasources">
            <caption className="sr-only">{t('ds.title')}</caption>
            <thead className="bg-slate-50 text-slate-700">
              <tr>
                <th scope="col" className="px-3 py-2">{t('ds.label')}</th>
                <th scope="col" className="px-3 py-2">{t('ds.type')}</th>
                <th scope="col" className="px-3 py-2">{t('ds.state')}</th>
                <th scope="col" className="px-3 py-2">{t('ds.lastSync')}</th>
                <th scope="col" className="px-3 py-2">{t('ds.revision')}</th>
                <th scope="col" className="px-3 py-2">{t('ds.entries')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.key} className="border-t border-slate-200 align-top" data-ds={d.key}>
                  <th scope="row" className="px-3 py-2 font-medium">
                    <Link to="/spaces/$space/datasources/$key" params={{ space, key: d.key }} className="text-indigo-800 underline">
                      {d.label}
                    </Link>
                    <div className="font-mono text-xs text-slate-600">{d.key}</div>
                  </th>
                  <td className="px-3 py-2">{t(`ds.type.${d.type}`)}</td>
                  <td className="px-3 py-2">
                    <DsStatus status={d.status} />
                    {d.last_error ? <p className="mt-1 max-w-md text-xs text-red-800" data-testid="last-error">{lastErrorText(d.last_error)}</p> : null}
                  </td>
                  <td className="px-3 py-2">{d.last_synced_at ? formatDateTime(d.last_synced_at) : t('common.never')}</td>
                  <td className="px-3 py-2">{formatNumber(d.revision)}</td>
                  <td className="px-3 py-2">{formatNumber(d.entry_count)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Dialog open={creating} title={t('ds.new')} onClose={() => setCreating(false)}>
        <DatasourceForm
          space={space}
          onCancel={() => setCreating(false)}
          onSaved={(saved) => {
            setCreating(false)
            // A push datasource's secret is shown once, on its page.
            if (saved.webhook_secret) keepSecret(saved.key, saved.webhook_secret)
            void navigate({ to: '/spaces/$space/datasources/$key', params: { space, key: saved.key } })
          }}
        />
      </Dialog>
    </section>
  )
}
