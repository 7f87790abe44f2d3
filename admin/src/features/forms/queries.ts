import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from '../../api/client'
import { queryKeys } from '../../api/keys'
import type { paths } from '../../api/schema'

type FormsGet = paths['/v1/spaces/{space}/forms']['get']
export type Form = FormsGet['responses'][200]['content']['application/json']['data'][number]
export type FormBody = NonNullable<paths['/v1/spaces/{space}/forms']['post']['requestBody']>['content']['application/json']
export type FormFieldDef = Form['fields'][number]
export type FieldType = FormFieldDef['type']
type SubmissionsGet = paths['/v1/spaces/{space}/forms/{uuid}/submissions']['get']
export type Submission = SubmissionsGet['responses'][200]['content']['application/json']['data'][number]

/** The 11 field types of the API (src/modules/forms/model.ts), in the builder's order. */
export const FIELD_TYPES = ['text', 'textarea', 'email', 'tel', 'number', 'select', 'radio', 'checkbox', 'file', 'hidden', 'consent'] as const satisfies readonly FieldType[]
/** Types whose values are free text: they take `max_length`. */
export const TEXT_TYPES: readonly FieldType[] = ['text', 'textarea', 'email', 'tel', 'hidden']
export const SUBMIT_ACTIONS = ['store', 'email', 'webhook', 'lead'] as const
export const SUBMISSIONS_PER_PAGE = 25

/** Query keys of the forms screens: one factory, each key starting with the API path it reads. */
export const formKeys = {
  all: queryKeys.forms,
  form: queryKeys.form,
  submissions: (space: string, uuid: string, filter?: { q: string; spam: boolean; page: number }) => queryKeys.submissions(space, uuid, filter),
  version: queryKeys.serverVersion,
}

export const formsQuery = (space: string) =>
  queryOptions({
    queryKey: formKeys.all(space),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/forms', { params: { path: { space } } }))).data,
  })

export const formQuery = (space: string, uuid: string) =>
  queryOptions({
    queryKey: formKeys.form(space, uuid),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/forms/{uuid}', { params: { path: { space, uuid } } }))).data,
  })

export const submissionsQuery = (space: string, uuid: string, filter: { q: string; spam: boolean; page: number }) =>
  queryOptions({
    queryKey: formKeys.submissions(space, uuid, filter),
    queryFn: () =>
      unwrap(
        api.GET('/v1/spaces/{space}/forms/{uuid}/submissions', {
          params: {
            path: { space, uuid },
            query: { page: filter.page, per_page: SUBMISSIONS_PER_PAGE, ...(filter.q.trim() ? { q: filter.q.trim() } : {}), ...(filter.spam ? { spam: 'only' as const } : {}) },
          },
        }),
      ),
  })

/** The embed script's address and its SRI hash (GET /v1/version), for the snippet. */
export const versionQuery = () =>
  queryOptions({
    queryKey: formKeys.version(),
    queryFn: async () => (await unwrap(api.GET('/v1/version', {}))).components.embed_js,
    staleTime: 60 * 60_000,
  })
