import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from './client'

/** Query keys are API paths: a mutation invalidates the paths it changed. */
export const spacesQuery = () =>
  queryOptions({ queryKey: ['/v1/spaces'], queryFn: async () => (await unwrap(api.GET('/v1/spaces'))).data })

export const treeQuery = (space: string) =>
  queryOptions({
    queryKey: ['/v1/spaces', space, 'stories/tree'],
    queryFn: async () => unwrap(api.GET('/v1/spaces/{space}/stories/tree', { params: { path: { space }, query: { depth: 10, per_page: 100 } } })),
  })

export const storySearchQuery = (space: string, q: string) =>
  queryOptions({
    queryKey: ['/v1/spaces', space, 'stories', { q }],
    queryFn: async () => unwrap(api.GET('/v1/spaces/{space}/stories', { params: { path: { space }, query: { q, per_page: 100 } } })),
  })

export const storyQuery = (space: string, uuid: string, lang?: string) =>
  queryOptions({
    queryKey: ['/v1/spaces', space, 'stories', uuid, { lang }],
    queryFn: async () =>
      (await unwrap(api.GET('/v1/spaces/{space}/stories/{uuid}', { params: { path: { space, uuid }, query: lang ? { lang } : {} } }))).data,
  })

export const componentsQuery = (space: string) =>
  queryOptions({
    queryKey: ['/v1/spaces', space, 'components'],
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/components', { params: { path: { space } } }))).data,
    staleTime: 60_000,
  })

export const localesQuery = (space: string) =>
  queryOptions({
    queryKey: ['/v1/spaces', space, 'locales'],
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/locales', { params: { path: { space } } }))).data,
    staleTime: 60_000,
  })
