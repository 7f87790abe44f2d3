import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from '../../api/client'
import { queryKeys } from '../../api/keys'

/** The Tenant's plan, its limits and this period's usage (GET /v1/spaces/{space}/billing). */
export const billingQuery = (space: string) =>
  queryOptions({
    queryKey: queryKeys.billing(space),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/billing', { params: { path: { space } } }))).data,
  })
