import { getRouteApi } from '@tanstack/react-router'
import { useId, useState } from 'react'
import { useCan } from '../../api/roles'
import { t } from './messages'
import { Orders } from './orders'
import { Products } from './products'
import { ShopSettings } from './shop-settings'

const route = getRouteApi('/app/spaces/$space/shop')
type Tab = 'products' | 'orders' | 'settings'

/** The shop: products, orders (admins) and the shop's settings, as tabs. */
export function ShopScreen() {
  const { space } = route.useParams()
  const titleId = useId()
  const canOrders = useCan(space, 'GET', '/v1/spaces/{space}/orders')
  const [tab, setTab] = useState<Tab>('products')
  const tabs: Tab[] = canOrders ? ['products', 'orders', 'settings'] : ['products', 'settings']
  return (
    <section className="flex flex-col gap-5" aria-labelledby={titleId}>
      <header>
        <h1 id={titleId} tabIndex={-1} className="text-xl font-semibold">{t('shop.title')}</h1>
        <p className="text-sm text-slate-700">{t('shop.intro')}</p>
      </header>
      <div role="tablist" aria-label={t('shop.title')} className="flex gap-2 border-b border-slate-200">
        {tabs.map((id) => (
          <button
            key={id}
            type="button"
            role="tab"
            id={`shop-tab-${id}`}
            aria-selected={tab === id}
            aria-controls="shop-panel"
            tabIndex={tab === id ? 0 : -1}
            className="-mb-px border-b-2 border-transparent px-3 py-2 text-sm font-medium text-slate-700 aria-selected:border-indigo-700 aria-selected:text-indigo-800"
            onClick={() => setTab(id)}
            onKeyDown={(e) => {
              const i = tabs.indexOf(id)
              const next = e.key === 'ArrowRight' ? tabs[(i + 1) % tabs.length] : e.key === 'ArrowLeft' ? tabs[(i + tabs.length - 1) % tabs.length] : null
              if (next) {
                e.preventDefault()
                setTab(next)
                document.getElementById(`shop-tab-${next}`)?.focus()
              }
            }}
          >
            {t(`shop.tab.${id}`)}
          </button>
        ))}
      </div>
      <div id="shop-panel" role="tabpanel" aria-labelledby={`shop-tab-${tab}`}>
        {tab === 'products' ? <Products space={space} /> : tab === 'orders' ? <Orders space={space} /> : <ShopSettings space={space} />}
      </div>
    </section>
  )
}
