import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from '../../api/client'
import { queryKeys } from '../../api/keys'

/** The datasources' reads: keys start with the API path (under `queryKeys.space`), one `queryOptions` per operation. */
export const dsKeys = {
  all: queryKeys.datasources,
  one: queryKeys.datasource,
}

export const datasourcesQuery = (space: string) =>
  queryOptions({
    queryKey: dsKeys.all(space),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/datasources', { params: { path: { space } } }))).data,
  })

export const datasourceQuery = (space: string, key: string) =>
  queryOptions({
    queryKey: dsKeys.one(space, key),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/datasources/{key}', { params: { path: { space, key } } }))).data,
  })

/** `revision`: the datasource's revision, so a sync that changed the entries reads them again. */
export const entriesQuery = (space: string, key: string, page: number, q: string, revision: number | null = null) =>
  queryOptions({
    queryKey: queryKeys.datasourceEntries(space, key, page, q, revision),
    queryFn: async () =>
      unwrap(api.GET('/v1/spaces/{space}/datasources/{key}/entries', { params: { path: { space, key }, query: { page, per_page: 10, ...(q ? { q } : {}) } } })),
    placeholderData: (prev) => prev,
  })

export const usageQuery = (space: string, key: string) =>
  queryOptions({
    queryKey: queryKeys.datasourceUsage(space, key),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/datasources/{key}/usage', { params: { path: { space, key } } }))).data,
  })

export const cronPreviewQuery = (space: string, cron: string) =>
  queryOptions({
    queryKey: queryKeys.cronPreview(space, cron),
    queryFn: async () => (await unwrap(api.POST('/v1/spaces/{space}/datasources/cron-preview', { params: { path: { space } }, body: { cron, count: 3 } }))).data,
    enabled: cron.trim().length > 0,
    retry: false,
    staleTime: 30_000,
  })
