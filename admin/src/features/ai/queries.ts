import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from '../../api/client'
import type { paths } from '../../api/schema'

type JobQuery = NonNullable<paths['/v1/spaces/{space}/ai-jobs']['get']['parameters']['query']>
export type JobStatus = NonNullable<JobQuery['status']>
export type JobKind = NonNullable<JobQuery['kind']>
export const JOB_STATUSES = ['awaiting_review', 'queued', 'running', 'approved', 'rejected', 'failed'] as const satisfies readonly JobStatus[]
export const JOB_KINDS = ['translate', 'alt_text'] as const satisfies readonly JobKind[]
export const PER_PAGE = 25

/** Query keys of the AI screen: one factory, each starting with the API path it reads. */
export const aiKeys = {
  all: (space: string) => ['/v1/spaces', space, 'ai-jobs'] as const,
  jobs: (space: string, filter: { status?: JobStatus; kind?: JobKind; page: number }) => [...aiKeys.all(space), filter] as const,
  job: (space: string, uuid: string) => [...aiKeys.all(space), uuid] as const,
  status: (space: string) => ['/v1/spaces', space, 'ai/status'] as const,
}

export const aiJobsQuery = (space: string, filter: { status?: JobStatus; kind?: JobKind; page: number }) =>
  queryOptions({
    queryKey: aiKeys.jobs(space, filter),
    queryFn: () =>
      unwrap(
        api.GET('/v1/spaces/{space}/ai-jobs', {
          params: { path: { space }, query: { page: filter.page, per_page: PER_PAGE, ...(filter.status ? { status: filter.status } : {}), ...(filter.kind ? { kind: filter.kind } : {}) } },
        }),
      ),
  })

export const aiStatusQuery = (space: string) =>
  queryOptions({
    queryKey: aiKeys.status(space),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/ai/status', { params: { path: { space } } }))).data,
  })
