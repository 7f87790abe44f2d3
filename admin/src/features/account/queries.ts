import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from '../../api/client'
import { queryKeys } from '../../api/keys'

/** The signed-in user with the profile's language and theme (GET /v1/auth/me). */
export const meQuery = () =>
  queryOptions({ queryKey: queryKeys.me(), queryFn: async () => (await unwrap(api.GET('/v1/auth/me'))).data, staleTime: 60_000 })
