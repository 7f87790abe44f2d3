import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from '../../api/client'
import { queryKeys } from '../../api/keys'
import type { paths } from '../../api/schema'

type ListGet = paths['/v1/spaces/{space}/subscribers']['get']
export type Subscriber = ListGet['responses'][200]['content']['application/json']['data'][number]
export type SubscriberStatus = NonNullable<NonNullable<ListGet['parameters']['query']>['status']>
export const SUBSCRIBER_STATUSES = ['pending', 'confirmed', 'unsubscribed'] as const satisfies readonly SubscriberStatus[]
export const PER_PAGE = 25

export interface SubscriberFilter {
  status?: SubscriberStatus
  q: string
  page: number
}

/** Query keys of the Subscribers screen: one factory, each key starting with the API path it reads. */
export const subscriberKeys = {
  all: queryKeys.subscribers,
  list: (space: string, filter: SubscriberFilter) => queryKeys.subscriberList(space, { ...filter }),
  newsletter: queryKeys.newsletter,
}

const filterQuery = (f: { status?: SubscriberStatus; q: string }) => ({ ...(f.status ? { status: f.status } : {}), ...(f.q.trim() ? { q: f.q.trim() } : {}) })

export const subscribersQuery = (space: string, filter: SubscriberFilter) =>
  queryOptions({
    queryKey: subscriberKeys.list(space, filter),
    queryFn: () => unwrap(api.GET('/v1/spaces/{space}/subscribers', { params: { path: { space }, query: { page: filter.page, per_page: PER_PAGE, ...filterQuery(filter) } } })),
  })

export const newsletterQuery = (space: string) =>
  queryOptions({
    queryKey: subscriberKeys.newsletter(space),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/newsletter', { params: { path: { space } } }))).data,
  })

/** The CSV export's address with the list's filters. */
export function csvPath(space: string, f: { status?: SubscriberStatus; q: string }): string {
  const qs = new URLSearchParams(filterQuery(f)).toString()
  return `/v1/spaces/${encodeURIComponent(space)}/subscribers.csv${qs ? `?${qs}` : ''}`
}
