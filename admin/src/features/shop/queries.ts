import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from '../../api/client'
import type { paths } from '../../api/schema'
import { language } from '../../i18n'
import { queryKeys } from '../../api/keys'

export type Product = paths['/v1/spaces/{space}/products/{id}']['get']['responses'][200]['content']['application/json']['data']
export type Order = paths['/v1/spaces/{space}/orders/{id}']['get']['responses'][200]['content']['application/json']['data']
export type OrderStatus = Order['status']
export const ORDER_STATUSES = ['pending', 'paid', 'fulfilled', 'cancelled'] as const satisfies readonly OrderStatus[]
export const PER_PAGE = 25

/** The moves the API allows from each status (PATCH /orders/{id}): pending → paid → fulfilled, pending|paid → cancelled. */
export const MOVES: Record<OrderStatus, ('paid' | 'fulfilled' | 'cancelled')[]> = {
  pending: ['paid', 'cancelled'],
  paid: ['fulfilled', 'cancelled'],
  fulfilled: [],
  cancelled: [],
}

export const shopKeys = {
  all: (space: string) => queryKeys.shop(space),
  settings: (space: string) => [...shopKeys.all(space), 'settings'] as const,
  stripe: (space: string) => [...shopKeys.all(space), 'stripe'] as const,
  products: (space: string, page: number, q: string) => [...shopKeys.all(space), 'products', page, q] as const,
  orders: (space: string, page: number, status: OrderStatus | 'all') => [...shopKeys.all(space), 'orders', page, status] as const,
  order: (space: string, id: string) => [...shopKeys.all(space), 'order', id] as const,
}

export const shopSettingsQuery = (space: string) =>
  queryOptions({ queryKey: shopKeys.settings(space), queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/shop', { params: { path: { space } } }))).data })

export const stripeQuery = (space: string) =>
  queryOptions({ queryKey: shopKeys.stripe(space), queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/payments/stripe', { params: { path: { space } } }))).data })

export const productsQuery = (space: string, page: number, q: string) =>
  queryOptions({
    queryKey: shopKeys.products(space, page, q),
    queryFn: () => unwrap(api.GET('/v1/spaces/{space}/products', { params: { path: { space }, query: { page, per_page: PER_PAGE, ...(q ? { q } : {}) } } })),
  })

export const ordersQuery = (space: string, page: number, status: OrderStatus | 'all') =>
  queryOptions({
    queryKey: shopKeys.orders(space, page, status),
    queryFn: () => unwrap(api.GET('/v1/spaces/{space}/orders', { params: { path: { space }, query: { page, per_page: PER_PAGE, ...(status === 'all' ? {} : { status }) } } })),
  })

export const orderQuery = (space: string, id: string) =>
  queryOptions({ queryKey: shopKeys.order(space, id), queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/orders/{id}', { params: { path: { space, id } } }))).data })

/** Digits after the decimal point of a currency (EUR 2, JPY 0). */
export function minorDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
  } catch {
    return 2
  }
}

/** Minor units as money in the UI's language: 1999 EUR → 19,99 €. */
export function money(minor: number, currency: string | null | undefined): string {
  if (!currency) return String(minor)
  const d = minorDigits(currency)
  try {
    return new Intl.NumberFormat(language, { style: 'currency', currency }).format(minor / 10 ** d)
  } catch {
    return `${minor / 10 ** d} ${currency}`
  }
}

/** A typed amount (19.99 or 19,99) as minor units; null when it is not a number with at most the currency's digits. */
export function toMinor(text: string, currency: string): number | null {
  const d = minorDigits(currency)
  const s = text.trim().replace(',', '.')
  if (!new RegExp(`^\\d+(\\.\\d{0,${d}})?$`).test(s)) return null
  const [whole, frac = ''] = s.split('.')
  return Number(whole) * 10 ** d + Number((frac + '0'.repeat(d)).slice(0, d) || '0')
}

export const fromMinor = (minor: number, currency: string) => {
  const d = minorDigits(currency)
  return d ? (minor / 10 ** d).toFixed(d) : String(minor)
}
