import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from '../../api/client'
import type { paths } from '../../api/schema'
import { queryKeys } from '../../api/keys'

type JobQuery = NonNullable<paths['/v1/spaces/{space}/ai-jobs']['get']['parameters']['query']>
export type JobStatus = NonNullable<JobQuery['status']>
export type JobKind = NonNullable<JobQuery['kind']>
export const JOB_STATUSES = ['awaiting_review', 'queued', 'running', 'approved', 'rejected', 'failed'] as const satisfies readonly JobStatus[]
export const JOB_KINDS = ['translate', 'alt_text'] as const satisfies readonly JobKind[]
export const PER_PAGE = 25

export const aiJobsQuery = (space: string, filter: { status?: JobStatus; kind?: JobKind; page: number }) =>
  queryOptions({
    queryKey: queryKeys.aiJobList(space, filter),
    queryFn: () =>
      unwrap(
        api.GET('/v1/spaces/{space}/ai-jobs', {
          params: { path: { space }, query: { page: filter.page, per_page: PER_PAGE, ...(filter.status ? { status: filter.status } : {}), ...(filter.kind ? { kind: filter.kind } : {}) } },
        }),
      ),
  })

export const aiStatusQuery = (space: string) =>
  queryOptions({
    queryKey: queryKeys.aiStatus(space),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/ai/status', { params: { path: { space } } }))).data,
  })
