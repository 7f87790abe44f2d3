import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi } from '@tanstack/react-router'
import { useId, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { queryKeys } from '../../api/keys'
import { useCan } from '../../api/roles'
import { CatalogError } from '../../components/catalog-error'
import { Notice } from '../../components/notice'
import { Button, Loading } from '../../components/ui'
import { formatBytes, formatDateTime, formatNumber, t } from '../../i18n'
import { Meter } from '../../components/meter'
import { billingQuery } from './queries'

const route = getRouteApi('/app/spaces/$space/billing')
const SELECT = 'rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm'

export const LIMITS = ['spaces', 'stories_per_space', 'asset_bytes', 'members_per_space', 'requests_per_month'] as const
type Limit = (typeof LIMITS)[number]
const amount = (limit: Limit, n: number) => (limit === 'asset_bytes' ? formatBytes(n) : formatNumber(n))

/** Billing: the Tenant's plan, each usage against its limit, and a plan change where self-serve is on. */
export function BillingScreen() {
  const { space } = route.useParams()
  const titleId = useId()
  const selectId = useId()
  const queryClient = useQueryClient()
  const billing = useQuery(billingQuery(space))
  const canChange = useCan(space, 'PATCH', '/v1/spaces/{space}/billing')
  const [plan, setPlan] = useState('')
  const [notice, setNotice] = useState<string | null>(null)
  const change = useMutation({
    mutationFn: (name: string) => unwrap(api.PATCH('/v1/spaces/{space}/billing', { params: { path: { space } }, body: { plan: name } })),
    onSuccess: async ({ data }) => {
      queryClient.setQueryData(billingQuery(space).queryKey, data)
      await queryClient.invalidateQueries({ queryKey: queryKeys.whoami() })
      setNotice(t('billing.changed', { plan: data.plan }))
    },
  })
  const b = billing.data
  return (
    <section className="flex flex-col gap-6" aria-labelledby={titleId}>
      <header>
        <h1 id={titleId} tabIndex={-1} className="text-xl font-semibold">
          {t('billing.title')}
        </h1>
        <p className="text-sm text-slate-700">{t('billing.intro')}</p>
      </header>
      <Notice text={notice} />
      {billing.isPending ? <Loading what={t('common.loading')} /> : null}
      <CatalogError error={billing.error} />
      {b ? (
        <>
          <p className="text-base" data-testid="plan">
            {t('billing.plan')} <strong>{b.plan}</strong>
          </p>
          <div className="overflow-x-auto rounded-lg bg-white ring-1 ring-slate-200">
            <table className="w-full text-left text-sm">
              <caption className="sr-only">{t('billing.usage')}</caption>
              <thead className="bg-slate-50 text-slate-700">
                <tr>
                  <th scope="col" className="px-3 py-2">{t('billing.limit')}</th>
                  <th scope="col" className="px-3 py-2">{t('billing.used')}</th>
                  <th scope="col" className="px-3 py-2">{t('billing.of')}</th>
                  <th scope="col" className="px-3 py-2"><span className="sr-only">{t('billing.share')}</span></th>
                </tr>
              </thead>
              <tbody>
                {LIMITS.map((l) => {
                  const max = b.limits[l]
                  return (
                    <tr key={l} id={`limit-${l}`} className="border-t border-slate-200" data-limit={l}>
                      <th scope="row" className="px-3 py-2 font-medium">{t(`billing.limit.${l}`)}</th>
                      <td className="px-3 py-2">{amount(l, b.usage[l])}</td>
                      <td className="px-3 py-2">{max === null ? t('billing.unlimited') : amount(l, max)}</td>
                      <td className="w-64 px-3 py-2">{max === null ? null : <Meter label={t(`billing.limit.${l}`)} value={b.usage[l]} max={max} />}</td>
                    </tr>
                  )
                })}
              </tbody>
            </table>
          </div>
          <p className="text-sm text-slate-700">{t('billing.period', { start: formatDateTime(b.period.start), end: formatDateTime(b.period.end) })}</p>
          {canChange && b.self_serve ? (
            <form
              className="flex flex-wrap items-end gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200"
              onSubmit={(e) => {
                e.preventDefault()
                change.mutate(plan || b.plan)
              }}
            >
              <div className="flex flex-col gap-1">
                <label htmlFor={selectId} className="text-sm font-medium text-slate-800">{t('billing.choose')}</label>
                <select id={selectId} value={plan || b.plan} onChange={(e) => setPlan(e.target.value)} className={SELECT}>
                  {b.plans.map((p) => (
                    <option key={p.name} value={p.name}>{p.name}</option>
                  ))}
                </select>
              </div>
              <Button tone="primary" type="submit" disabled={change.isPending || (plan || b.plan) === b.plan}>{t('billing.change')}</Button>
              <div className="basis-full"><CatalogError error={change.error} /></div>
            </form>
          ) : (
            <p className="text-sm text-slate-700">{t('billing.operatorChanges')}</p>
          )}
        </>
      ) : null}
    </section>
  )
}
