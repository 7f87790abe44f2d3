import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { localesQuery } from '../../api/queries'
import { useCan } from '../../api/roles'
import { AssetPicker, AssetThumb } from '../../components/asset-picker'
import { CatalogError } from '../../components/catalog-error'
import { Pager } from '../../components/pager'
import { toast } from '../../components/toast'
import { Button, EmptyState, ErrorNotice, Skeleton, TextField } from '../../components/ui'
import { fieldErrors, t } from './messages'
import { fromMinor, money, PER_PAGE, type Product, productsQuery, shopKeys, shopSettingsQuery, toMinor } from './queries'

/** Products: list with search, price in the Space's currency, stock and the active switch; create and edit. */
export function Products({ space }: { space: string }) {
  const headingId = useId()
  const [page, setPage] = useState(1)
  const [q, setQ] = useState('')
  const [editing, setEditing] = useState<Product | 'new' | null>(null)
  const list = useQuery(productsQuery(space, page, q))
  const settings = useQuery(shopSettingsQuery(space))
  const canCreate = useCan(space, 'POST', '/v1/spaces/{space}/products')
  const canEdit = useCan(space, 'PATCH', '/v1/spaces/{space}/products/{id}')
  const queryClient = useQueryClient()
  const toggle = useMutation({
    mutationFn: (p: Product) => unwrap(api.PATCH('/v1/spaces/{space}/products/{id}', { params: { path: { space, id: p.id } }, body: { active: !p.active } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: shopKeys.all(space) }),
  })
  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-3">
      <div className="flex flex-wrap items-end justify-between gap-2">
        <h2 id={headingId} className="text-lg font-semibold">{t('shop.products')}</h2>
        <div className="flex flex-wrap items-end gap-2">
          <TextField label={t('shop.search')} type="search" value={q} onChange={(e) => { setQ(e.target.value); setPage(1) }} />
          {canCreate && editing === null ? <Button tone="primary" onClick={() => setEditing('new')}>{t('shop.newProduct')}</Button> : null}
        </div>
      </div>
      {editing ? <ProductForm space={space} product={editing === 'new' ? null : editing} currency={settings.data?.currency ?? null} onDone={() => setEditing(null)} /> : null}
      {list.isPending ? <Skeleton /> : null}
      {list.error ? <ErrorNotice error={list.error} onRetry={() => list.refetch()} /> : null}
      {list.data && list.data.data.length === 0 ? <EmptyState title={t('shop.noProducts')}>{canCreate ? t('shop.noProductsHint') : null}</EmptyState> : null}
      {list.data && list.data.data.length > 0 ? (
        <div className="overflow-x-auto rounded-lg bg-white ring-1 ring-slate-200">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">{t('shop.products')}</caption>
            <thead className="bg-slate-50 text-slate-700">
              <tr>
                <th scope="col" className="px-3 py-2">{t('shop.col.product')}</th>
                <th scope="col" className="px-3 py-2">{t('shop.col.price')}</th>
                <th scope="col" className="px-3 py-2">{t('shop.col.stock')}</th>
                <th scope="col" className="px-3 py-2">{t('shop.col.active')}</th>
                <th scope="col" className="px-3 py-2"><span className="sr-only">{t('shop.col.actions')}</span></th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((p) => {
                const name = Object.values(p.name).find((s) => s) ?? p.slug
                return (
                  <tr key={p.id} className="border-t border-slate-200" data-product={p.slug}>
                    <th scope="row" className="px-3 py-2 font-medium">
                      <span className="flex items-center gap-2">
                        {p.images[0] ? <AssetThumb space={space} asset={{ uuid: p.images[0], content_type: 'image/jpeg' }} className="h-10 w-10" /> : null}
                        <span>{name}<span className="block text-xs font-normal text-slate-600">{p.slug}</span></span>
                      </span>
                    </th>
                    <td className="px-3 py-2">{money(p.price, p.currency)}</td>
                    <td className="px-3 py-2">{p.stock === null ? t('shop.unlimited') : p.stock}</td>
                    <td className="px-3 py-2">
                      <label className="flex items-center gap-2">
                        <input type="checkbox" checked={p.active} disabled={!canEdit || toggle.isPending} onChange={() => toggle.mutate(p)} aria-label={t('shop.activeOf', { name })} />
                        {p.active ? t('shop.active') : t('shop.inactive')}
                      </label>
                    </td>
                    <td className="px-3 py-2">{canEdit ? <Button onClick={() => setEditing(p)} aria-label={t('shop.editOf', { name })}>{t('shop.edit')}</Button> : null}</td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      ) : null}
      <CatalogError error={toggle.error} />
      {list.data ? <Pager page={page} perPage={PER_PAGE} total={list.data.meta.total} onPage={setPage} /> : null}
    </section>
  )
}

function ProductForm({ space, product, currency, onDone }: { space: string; product: Product | null; currency: string | null; onDone: () => void }) {
  const queryClient = useQueryClient()
  const locales = useQuery(localesQuery(space))
  const codes = locales.data?.map((l) => l.code) ?? Object.keys(product?.name ?? { en: '' })
  const [cur, setCur] = useState(product?.currency ?? currency ?? 'EUR')
  const [v, setV] = useState(() => ({
    slug: product?.slug ?? '',
    name: { ...(product?.name ?? {}) } as Record<string, string>,
    price: product ? fromMinor(product.price, product.currency) : '',
    stock: product?.stock == null ? '' : String(product.stock),
    active: product?.active ?? true,
    images: [...(product?.images ?? [])],
  }))
  const [picking, setPicking] = useState(false)
  const [priceError, setPriceError] = useState(false)
  const save = useMutation({
    mutationFn: async () => {
      const price = toMinor(v.price, cur)
      if (price === null) {
        setPriceError(true)
        throw new Error('price')
      }
      setPriceError(false)
      const body = {
        slug: v.slug.trim(),
        name: Object.fromEntries(Object.entries(v.name).filter(([, s]) => s.trim())),
        price,
        currency: cur,
        stock: v.stock.trim() ? Number(v.stock) : null,
        active: v.active,
        images: v.images,
      }
      return product
        ? unwrap(api.PATCH('/v1/spaces/{space}/products/{id}', { params: { path: { space, id: product.id } }, body }))
        : unwrap(api.POST('/v1/spaces/{space}/products', { params: { path: { space } }, body }))
    },
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: shopKeys.all(space) })
      toast(t('shop.productSaved', { slug: v.slug }))
      onDone()
    },
  })
  const errs = fieldErrors(save.error, { slug: 'shop.error.slug', price: 'shop.error.price', stock: 'shop.error.stock' })
  return (
    <form
      aria-label={product ? t('shop.editProduct') : t('shop.newProduct')}
      className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200"
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
    >
      <h3 className="text-base font-semibold">{product ? t('shop.editProduct') : t('shop.newProduct')}</h3>
      <div className="grid gap-3 sm:grid-cols-2">
        <TextField label={t('shop.slug')} value={v.slug} required onChange={(e) => setV({ ...v, slug: e.target.value })} errors={errs.slug} />
        {codes.map((code) => (
          <TextField key={code} label={t('shop.nameIn', { code })} value={v.name[code] ?? ''} onChange={(e) => setV({ ...v, name: { ...v.name, [code]: e.target.value } })} errors={errs[`name/${code}`] ?? errs.name} />
        ))}
        <TextField
          label={t('shop.priceIn', { currency: cur })}
          inputMode="decimal"
          value={v.price}
          required
          onChange={(e) => setV({ ...v, price: e.target.value })}
          errors={priceError ? [t('shop.error.price')] : errs.price}
        />
        {currency ? null : <TextField label={t('shop.currency')} value={cur} maxLength={3} onChange={(e) => setCur(e.target.value.toUpperCase())} hint={t('shop.currencyFirst')} errors={errs.currency} />}
        <TextField label={t('shop.stock')} type="number" min={0} value={v.stock} onChange={(e) => setV({ ...v, stock: e.target.value })} hint={t('shop.stockHint')} errors={errs.stock} />
      </div>
      <label className="flex items-center gap-2 text-sm">
        <input type="checkbox" checked={v.active} onChange={(e) => setV({ ...v, active: e.target.checked })} />
        {t('shop.activeLabel')}
      </label>
      <div className="flex flex-col gap-2">
        <span className="text-sm font-medium">{t('shop.images')}</span>
        <ul className="flex flex-wrap gap-2">
          {v.images.map((uuid, i) => (
            <li key={uuid} className="flex flex-col items-center gap-1">
              <AssetThumb space={space} asset={{ uuid, content_type: 'image/jpeg' }} className="h-16 w-16" />
              <Button onClick={() => setV({ ...v, images: v.images.filter((x) => x !== uuid) })} aria-label={t('shop.removeImage', { n: i + 1 })}>✕</Button>
            </li>
          ))}
        </ul>
        <div><Button onClick={() => setPicking(true)} disabled={v.images.length >= 20}>{t('shop.addImage')}</Button></div>
      </div>
      <AssetPicker
        space={space}
        open={picking}
        onClose={() => setPicking(false)}
        onPick={(a) => {
          setPicking(false)
          if (!v.images.includes(a.uuid)) setV({ ...v, images: [...v.images, a.uuid] })
        }}
      />
      {save.error instanceof Error && save.error.message === 'price' ? null : <CatalogError error={save.error} />}
      <div className="flex gap-2">
        <Button tone="primary" type="submit" disabled={save.isPending}>{t('shop.saveProduct')}</Button>
        <Button onClick={onDone}>{t('common.cancel')}</Button>
      </div>
    </form>
  )
}
