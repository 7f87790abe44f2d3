import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from '../../api/client'
import { queryKeys } from '../../api/keys'

export interface Rule {
  type: string
  operator: string
  value: string | string[]
  key?: string
}
export interface Segment {
  id: number
  key: string
  label: string
  priority: number
  active: boolean
  rules: Rule[]
  match_all: boolean
}

export const segKeys = {
  all: queryKeys.segments,
  variants: queryKeys.variants,
}

export const segmentsQuery = (space: string) =>
  queryOptions({
    queryKey: segKeys.all(space),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/audience-segments', { params: { path: { space } } }))).data as Segment[],
  })

export const variantsQuery = (space: string, uuid: string) =>
  queryOptions({
    queryKey: segKeys.variants(space, uuid),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/stories/{uuid}/variants', { params: { path: { space, uuid } } }))).data,
  })

/** Opens the Space's preview (a one-hour preview token) at `path` with the segment named: the bridge reads its variants. */
export async function previewAs(space: string, segment: string, path = '/'): Promise<boolean> {
  const { data } = await unwrap(api.POST('/v1/spaces/{space}/preview-tokens', { params: { path: { space } }, body: { path } }))
  if (!data.url) return false
  window.open(`${data.url}&service-segment=${encodeURIComponent(segment)}`, '_blank', 'noopener,noreferrer')
  return true
}
