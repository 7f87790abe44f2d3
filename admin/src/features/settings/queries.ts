import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from '../../api/client'
import { queryKeys } from '../../api/keys'

/** A Space with its locales, preview URL and the caller's role (GET /v1/spaces/{space}). */
export const spaceQuery = (space: string) =>
  queryOptions({
    queryKey: queryKeys.spaceDetail(space),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}', { params: { path: { space } } }))).data,
  })
