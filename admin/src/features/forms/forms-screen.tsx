import { useQuery } from '@tanstack/react-query'
import { getRouteApi, Link } from '@tanstack/react-router'
import { useId } from 'react'
import { useCan } from '../../api/roles'
import { EmptyState, ErrorNotice, Skeleton } from '../../components/ui'
import { formatDateTime, formatNumber } from '../../i18n'
import { t } from './messages'
import type { MessageKey } from './messages'
import { formsQuery, SUBMIT_ACTIONS } from './queries'

const route = getRouteApi('/app/spaces/$space/forms')

/** Forms: the Space's live forms, newest first, each leading to its builder, embed snippet and submissions. */
export function FormsScreen() {
  const { space } = route.useParams()
  const titleId = useId()
  const forms = useQuery(formsQuery(space))
  const canCreate = useCan(space, 'POST', '/v1/spaces/{space}/forms')
  return (
    <section className="flex flex-col gap-6" aria-labelledby={titleId}>
      <header className="flex flex-wrap items-start gap-3">
        <div className="mr-auto">
          <h1 id={titleId} tabIndex={-1} className="text-xl font-semibold">
            {t('forms.title')}
          </h1>
          <p className="text-sm text-slate-700">{t('forms.intro')}</p>
        </div>
        {canCreate ? (
          <Link to="/spaces/$space/forms/$uuid" params={{ space, uuid: 'new' }} className="rounded-md bg-indigo-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-800">
            {t('forms.new')}
          </Link>
        ) : null}
      </header>
      {forms.isPending ? <Skeleton lines={4} /> : null}
      {forms.error ? <ErrorNotice error={forms.error} onRetry={() => forms.refetch()} /> : null}
      {forms.data && forms.data.length === 0 ? <EmptyState title={t('forms.empty')}>{canCreate ? t('forms.emptyHint') : null}</EmptyState> : null}
      {forms.data && forms.data.length > 0 ? (
        <div className="overflow-x-auto rounded-lg bg-white ring-1 ring-slate-200">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">{t('forms.title')}</caption>
            <thead className="bg-slate-50 text-slate-700">
              <tr>
                <th scope="col" className="px-3 py-2">{t('forms.col.name')}</th>
                <th scope="col" className="px-3 py-2">{t('forms.col.slug')}</th>
                <th scope="col" className="px-3 py-2">{t('forms.col.fields')}</th>
                <th scope="col" className="px-3 py-2">{t('forms.col.action')}</th>
                <th scope="col" className="px-3 py-2">{t('forms.col.updated')}</th>
              </tr>
            </thead>
            <tbody>
              {forms.data.map((f) => (
                <tr key={f.uuid} className="border-t border-slate-200" data-form={f.slug}>
                  <td className="px-3 py-2">
                    <Link to="/spaces/$space/forms/$uuid" params={{ space, uuid: f.uuid }} className="font-medium text-indigo-800 underline">
                      {f.label}
                    </Link>
                  </td>
                  <td className="px-3 py-2 font-mono text-xs">{f.slug}</td>
                  <td className="px-3 py-2">{formatNumber(f.fields.length)}</td>
                  <td className="px-3 py-2">{(SUBMIT_ACTIONS as readonly string[]).includes(f.submit_action) ? t(`forms.action.${f.submit_action}` as MessageKey) : f.submit_action}</td>
                  <td className="px-3 py-2">{formatDateTime(f.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  )
}
