import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { useCan } from '../../api/roles'
import { CatalogError } from '../../components/catalog-error'
import { toast } from '../../components/toast'
import { Button, ErrorNotice, Skeleton, TextField } from '../../components/ui'
import { formatDateTime } from '../../i18n'
import { fieldErrors, t } from './messages'
import { shopKeys, shopSettingsQuery, stripeQuery } from './queries'

/** The shop's settings: currency and Stripe's return addresses (editor), and the Space's own Stripe keys, masked (admin). */
export function ShopSettings({ space }: { space: string }) {
  const headingId = useId()
  const queryClient = useQueryClient()
  const settings = useQuery(shopSettingsQuery(space))
  const canEdit = useCan(space, 'PATCH', '/v1/spaces/{space}/shop')
  const canStripe = useCan(space, 'GET', '/v1/spaces/{space}/payments/stripe')
  const [v, setV] = useState<{ currency: string; success_url: string; cancel_url: string } | null>(null)
  const s = settings.data
  const form = v ?? { currency: s?.currency ?? '', success_url: s?.success_url ?? '', cancel_url: s?.cancel_url ?? '' }
  const save = useMutation({
    mutationFn: () =>
      unwrap(
        api.PATCH('/v1/spaces/{space}/shop', {
          params: { path: { space } },
          body: { ...(form.currency ? { currency: form.currency.trim().toUpperCase() } : {}), success_url: form.success_url.trim() || null, cancel_url: form.cancel_url.trim() || null },
        }),
      ),
    onSuccess: async () => {
      setV(null)
      await queryClient.invalidateQueries({ queryKey: shopKeys.all(space) })
      toast(t('shop.settingsSaved'))
    },
  })
  const errs = fieldErrors(save.error, { currency: 'shop.error.currency', success_url: 'shop.error.url', cancel_url: 'shop.error.url' })
  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-4">
      <h2 id={headingId} className="text-lg font-semibold">{t('shop.settings')}</h2>
      {settings.isPending ? <Skeleton /> : null}
      {settings.error ? <ErrorNotice error={settings.error} onRetry={() => settings.refetch()} /> : null}
      {s ? (
        <form
          aria-label={t('shop.settings')}
          className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200"
          onSubmit={(e) => {
            e.preventDefault()
            save.mutate()
          }}
        >
          <TextField label={t('shop.currency')} value={form.currency} maxLength={3} disabled={!canEdit} onChange={(e) => setV({ ...form, currency: e.target.value.toUpperCase() })} hint={t('shop.currencyHint')} errors={errs.currency} />
          <TextField label={t('shop.successUrl')} type="url" value={form.success_url} disabled={!canEdit} onChange={(e) => setV({ ...form, success_url: e.target.value })} hint={t('shop.urlHint')} errors={errs.success_url} />
          <TextField label={t('shop.cancelUrl')} type="url" value={form.cancel_url} disabled={!canEdit} onChange={(e) => setV({ ...form, cancel_url: e.target.value })} errors={errs.cancel_url} />
          <p className="text-sm text-slate-700">{t('shop.nextNumber', { n: s.next_order_number })}</p>
          <CatalogError error={save.error} />
          {canEdit ? <div><Button tone="primary" type="submit" disabled={save.isPending || v === null}>{t('shop.saveSettings')}</Button></div> : null}
        </form>
      ) : null}
      {canStripe ? <Stripe space={space} /> : <p className="text-sm text-slate-700">{t('shop.stripeAdmin')}</p>}
    </section>
  )
}

function Stripe({ space }: { space: string }) {
  const headingId = useId()
  const queryClient = useQueryClient()
  const q = useQuery(stripeQuery(space))
  const [secret, setSecret] = useState('')
  const [hook, setHook] = useState('')
  const [confirming, setConfirming] = useState(false)
  const done = async (text: string) => {
    setSecret('')
    setHook('')
    setConfirming(false)
    await queryClient.invalidateQueries({ queryKey: shopKeys.stripe(space) })
    toast(text)
  }
  const put = useMutation({
    mutationFn: () => unwrap(api.PUT('/v1/spaces/{space}/payments/stripe', { params: { path: { space } }, body: { secret_key: secret.trim(), webhook_secret: hook.trim() } })),
    onSuccess: () => done(t('shop.keysSaved')),
  })
  const del = useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/spaces/{space}/payments/stripe', { params: { path: { space } } })),
    onSuccess: () => done(t('shop.keysRemoved')),
  })
  const errs = fieldErrors(put.error, { secret_key: 'shop.error.secretKey', webhook_secret: 'shop.error.webhookSecret' })
  if (q.isPending) return <Skeleton />
  if (q.error) return <ErrorNotice error={q.error} onRetry={() => q.refetch()} />
  const s = q.data
  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200" data-testid="stripe">
      <h3 id={headingId} className="text-base font-semibold">{t('shop.stripe')}</h3>
      <p className="text-sm" data-testid="payment-source">
        {s.source === 'space' ? t('shop.source.space') : s.source === 'instance' ? t('shop.source.instance') : t('shop.source.none')}
      </p>
      {s.secret_key ? (
        <dl className="grid gap-x-4 gap-y-1 text-sm sm:grid-cols-[auto_1fr]">
          <dt className="font-medium">{t('shop.secretKey')}</dt>
          <dd><code>{s.secret_key}</code></dd>
          <dt className="font-medium">{t('shop.webhookSecret')}</dt>
          <dd><code>{s.webhook_secret}</code></dd>
          <dt className="font-medium">{t('shop.keysChanged')}</dt>
          <dd>{formatDateTime(s.updated_at)}</dd>
        </dl>
      ) : null}
      <p className="text-sm">
        {t('shop.webhookUrl')} <code className="break-all">{s.webhook_url}</code>
      </p>
      <form
        aria-label={t('shop.setKeys')}
        className="flex flex-col gap-3"
        onSubmit={(e) => {
          e.preventDefault()
          put.mutate()
        }}
      >
        <TextField label={t('shop.secretKey')} type="password" autoComplete="off" value={secret} onChange={(e) => setSecret(e.target.value)} required errors={errs.secret_key} />
        <TextField label={t('shop.webhookSecret')} type="password" autoComplete="off" value={hook} onChange={(e) => setHook(e.target.value)} required errors={errs.webhook_secret} />
        <CatalogError error={put.error ?? del.error} />
        <div className="flex flex-wrap gap-2">
          <Button tone="primary" type="submit" disabled={put.isPending}>{t('shop.setKeys')}</Button>
          {s.source === 'space' ? <Button tone="danger" onClick={() => setConfirming(true)}>{t('shop.removeKeys')}</Button> : null}
        </div>
        {confirming ? (
          <div role="alertdialog" aria-label={t('shop.removeConfirm')} className="flex flex-wrap items-center gap-2 rounded-md bg-red-50 p-3 ring-1 ring-red-200">
            <span className="text-sm">{t('shop.removeConfirm')}</span>
            <Button tone="danger" onClick={() => del.mutate()} disabled={del.isPending}>{t('shop.removeKeys')}</Button>
            <Button onClick={() => setConfirming(false)}>{t('common.cancel')}</Button>
          </div>
        ) : null}
      </form>
    </section>
  )
}
