import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { CatalogError } from '../../components/catalog-error'
import { Pager } from '../../components/pager'
import { toast } from '../../components/toast'
import { Button, EmptyState, ErrorNotice, Skeleton } from '../../components/ui'
import { formatDateTime } from '../../i18n'
import { t } from './messages'
import { money, MOVES, ORDER_STATUSES, type OrderStatus, orderQuery, ordersQuery, PER_PAGE, shopKeys } from './queries'

const SELECT = 'rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm'
const BADGE: Record<OrderStatus, string> = {
  pending: 'bg-amber-100 text-amber-900',
  paid: 'bg-sky-100 text-sky-900',
  fulfilled: 'bg-emerald-100 text-emerald-900',
  cancelled: 'bg-slate-200 text-slate-800',
}
const MOVE_LABEL = { paid: 'shop.markPaid', fulfilled: 'shop.fulfil', cancelled: 'shop.cancelOrder' } as const

function OrderBadge({ status }: { status: OrderStatus }) {
  return <span className={`rounded px-1.5 py-0.5 text-xs font-medium ${BADGE[status]}`}>{t(`shop.status.${status}`)}</span>
}

/** Orders (personal data: admins): newest first with a status filter; an order's lines, payment and its moves. */
export function Orders({ space }: { space: string }) {
  const headingId = useId()
  const filterId = useId()
  const [status, setStatus] = useState<OrderStatus | 'all'>('all')
  const [page, setPage] = useState(1)
  const [open, setOpen] = useState<string | null>(null)
  const list = useQuery(ordersQuery(space, page, status))
  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id={headingId} className="text-lg font-semibold">{t('shop.orders')}</h2>
        <div className="flex items-center gap-2">
          <label htmlFor={filterId} className="text-sm font-medium">{t('shop.show')}</label>
          <select id={filterId} className={SELECT} value={status} onChange={(e) => { setStatus(e.target.value as OrderStatus | 'all'); setPage(1) }}>
            <option value="all">{t('shop.status.all')}</option>
            {ORDER_STATUSES.map((s) => (
              <option key={s} value={s}>{t(`shop.status.${s}`)}</option>
            ))}
          </select>
        </div>
      </div>
      {list.isPending ? <Skeleton /> : null}
      {list.error ? <ErrorNotice error={list.error} onRetry={() => list.refetch()} /> : null}
      {list.data && list.data.data.length === 0 ? <EmptyState title={t('shop.noOrders')}>{t('shop.noOrdersHint')}</EmptyState> : null}
      {list.data && list.data.data.length > 0 ? (
        <div className="overflow-x-auto rounded-lg bg-white ring-1 ring-slate-200">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">{t('shop.orders')}</caption>
            <thead className="bg-slate-50 text-slate-700">
              <tr>
                <th scope="col" className="px-3 py-2">{t('shop.col.number')}</th>
                <th scope="col" className="px-3 py-2">{t('shop.col.buyer')}</th>
                <th scope="col" className="px-3 py-2">{t('shop.col.total')}</th>
                <th scope="col" className="px-3 py-2">{t('shop.col.status')}</th>
                <th scope="col" className="px-3 py-2">{t('shop.col.placed')}</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((o) => (
                <tr key={o.id} className={`border-t border-slate-200 ${open === o.id ? 'bg-indigo-50' : ''}`} data-order={o.number}>
                  <th scope="row" className="px-3 py-2 font-medium">
                    <button type="button" className="text-indigo-800 underline" aria-expanded={open === o.id} onClick={() => setOpen(open === o.id ? null : o.id)}>{o.number}</button>
                  </th>
                  <td className="px-3 py-2">{o.name}<span className="block text-xs text-slate-600">{o.email}</span></td>
                  <td className="px-3 py-2">{money(o.total, o.currency)}</td>
                  <td className="px-3 py-2"><OrderBadge status={o.status} /></td>
                  <td className="px-3 py-2">{formatDateTime(o.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {list.data ? <Pager page={page} perPage={PER_PAGE} total={list.data.meta.total} onPage={setPage} /> : null}
      {open ? <OrderDetail key={open} space={space} id={open} /> : null}
    </section>
  )
}

function OrderDetail({ space, id }: { space: string; id: string }) {
  const headingId = useId()
  const queryClient = useQueryClient()
  const q = useQuery(orderQuery(space, id))
  const move = useMutation({
    mutationFn: (to: 'paid' | 'fulfilled' | 'cancelled') => unwrap(api.PATCH('/v1/spaces/{space}/orders/{id}', { params: { path: { space, id } }, body: { status: to } })),
    onSuccess: async ({ data }) => {
      queryClient.setQueryData(shopKeys.order(space, id), data)
      await queryClient.invalidateQueries({ queryKey: shopKeys.all(space) })
      toast(t('shop.moved', { number: data.number, status: t(`shop.status.${data.status}`) }))
    },
  })
  if (q.isPending) return <Skeleton />
  if (q.error) return <ErrorNotice error={q.error} onRetry={() => q.refetch()} />
  const o = q.data
  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200" data-testid="order-detail">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 id={headingId} className="text-base font-semibold">{t('shop.orderTitle', { number: o.number })} <OrderBadge status={o.status} /></h3>
        <div className="flex flex-wrap gap-2" role="group" aria-label={t('shop.moves')}>
          {MOVES[o.status].map((to) => (
            <Button key={to} tone={to === 'cancelled' ? 'danger' : 'primary'} disabled={move.isPending} onClick={() => move.mutate(to)}>{t(MOVE_LABEL[to])}</Button>
          ))}
        </div>
      </div>
      <CatalogError error={move.error} />
      <dl className="grid gap-x-4 gap-y-1 text-sm sm:grid-cols-[auto_1fr]">
        <dt className="font-medium">{t('shop.buyer')}</dt>
        <dd>{o.name} · {o.email}</dd>
        {o.address ? (
          <>
            <dt className="font-medium">{t('shop.address')}</dt>
            <dd>{[o.address.line1, o.address.line2, `${o.address.postal_code ?? ''} ${o.address.city ?? ''}`.trim(), o.address.country].filter(Boolean).join(', ')}</dd>
          </>
        ) : null}
        {o.note ? (
          <>
            <dt className="font-medium">{t('shop.note')}</dt>
            <dd>{o.note}</dd>
          </>
        ) : null}
        <dt className="font-medium">{t('shop.payment')}</dt>
        <dd data-testid="payment">
          {o.payment_provider === 'stripe' ? t('shop.paymentStripe') : t('shop.paymentManual')}
          {o.paid_at ? ` · ${t('shop.paidAt', { at: formatDateTime(o.paid_at) })}` : ` · ${t('shop.unpaid')}`}
          {o.payment_error ? <span className="block text-red-700">{t('shop.paymentError', { error: o.payment_error })}</span> : null}
        </dd>
        {o.fulfilled_at ? (
          <>
            <dt className="font-medium">{t('shop.fulfilledAt')}</dt>
            <dd>{formatDateTime(o.fulfilled_at)}</dd>
          </>
        ) : null}
        {o.cancelled_at ? (
          <>
            <dt className="font-medium">{t('shop.cancelledAt')}</dt>
            <dd>{formatDateTime(o.cancelled_at)}{o.cancel_reason ? ` (${o.cancel_reason})` : ''}</dd>
          </>
        ) : null}
      </dl>
      <table className="w-full text-left text-sm">
        <caption className="text-left text-sm font-medium">{t('shop.lines')}</caption>
        <thead className="bg-slate-50 text-slate-700">
          <tr>
            <th scope="col" className="px-3 py-2">{t('shop.col.product')}</th>
            <th scope="col" className="px-3 py-2">{t('shop.col.unit')}</th>
            <th scope="col" className="px-3 py-2">{t('shop.col.quantity')}</th>
            <th scope="col" className="px-3 py-2">{t('shop.col.lineTotal')}</th>
          </tr>
        </thead>
        <tbody>
          {o.items.map((l) => (
            <tr key={l.product_id} className="border-t border-slate-200">
              <td className="px-3 py-2">{l.name}<span className="block text-xs text-slate-600">{l.slug}</span></td>
              <td className="px-3 py-2">{money(l.unit_price, o.currency)}</td>
              <td className="px-3 py-2">{l.quantity}</td>
              <td className="px-3 py-2">{money(l.line_total, o.currency)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr className="border-t border-slate-300 font-medium">
            <th scope="row" colSpan={3} className="px-3 py-2 text-right">{t('shop.total')}</th>
            <td className="px-3 py-2" data-testid="order-total">{money(o.total, o.currency)}</td>
          </tr>
        </tfoot>
      </table>
    </section>
  )
}
