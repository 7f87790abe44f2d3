import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from '../../api/client'
import { queryKeys } from '../../api/keys'

export type Days = 7 | 30 | 90
export const DAYS: Days[] = [7, 30, 90]

export const analyticsKeys = {
  all: (space: string) => queryKeys.analytics(space),
  overview: (space: string, days: Days) => [...analyticsKeys.all(space), 'overview', days] as const,
  story: (space: string, uuid: string, days: number) => queryKeys.storyAnalytics(space, uuid, days),
}

export const overviewQuery = (space: string, days: Days) =>
  queryOptions({
    queryKey: analyticsKeys.overview(space, days),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/analytics/overview', { params: { path: { space }, query: { days: String(days) as '7' | '30' | '90' } } }))).data,
  })

export const storyAnalyticsQuery = (space: string, uuid: string, days: number) =>
  queryOptions({
    queryKey: analyticsKeys.story(space, uuid, days),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/stories/{uuid}/analytics', { params: { path: { space, uuid }, query: { days } } }))).data,
  })
