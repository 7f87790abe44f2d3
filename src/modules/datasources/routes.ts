import { Elysia, t } from 'elysia'
import { KernelErrors } from '../../kernel/errors'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import type { RequestInfo } from '../../kernel/request-front'
import { type CompiledRule, compileRule } from '../../kernel/rate-limit'
import { Data, DataList, ErrorBody, SpaceParams } from '../../kernel/schemas'
import {
  CreateDatasourceBody,
  CronPreviewBody,
  CronPreviewModel,
  DatasourceModel,
  DatasourceParams,
  DatasourceWithSecretModel,
  EntriesPage,
  EntriesQuery,
  PushResultModel,
  SyncResultModel,
  TestPathBody,
  TestPathModel,
  UpdateDatasourceBody,
  UsageModel,
} from './model'
import { cronPreview, datasourceUsage, testJsonPath } from './tools'
import {
  createDatasource,
  deleteDatasource,
  getDatasource,
  listDatasources,
  listEntries,
  PUSH_MAX_BYTES,
  pushTarget,
  rotateSecret,
  storePush,
  syncByKey,
  updateDatasource,
  verifyPush,
} from './service'
import type { DatasourceStore } from './store'

/** 120 pushes a minute per datasource (not per IP: a sender's IP says nothing about which feed it fills). */
const PUSH_LIMIT: CompiledRule = compileRule({
  id: 'datasources.webhook',
  method: 'POST',
  path: '/v1/spaces/:space/datasources/:key/webhook',
  limit: 120,
  windowSeconds: 60,
})

/** Spec 4.13: datasources of a Space (viewer reads, editor writes) and the signed ingest (anonymous). */
export function datasourceRoutes(
  kernel: Kernel,
  guards: Guards,
  store: DatasourceStore,
  requestInfo: (request: Request) => RequestInfo,
) {
  return new Elysia({ prefix: '/spaces/:space/datasources', tags: ['Datasources'] })
    .use(guards)
    .get('/', async ({ access }) => ({ data: await listDatasources(kernel, access) }), {
      params: SpaceParams,
      spaceRole: 'viewer',
      response: DataList(DatasourceModel),
      detail: { summary: 'List datasources', description: 'Every datasource of the Space by key; header values masked, secrets never shown.' },
    })
    .post(
      '/',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await createDatasource(kernel, access, body) }
      },
      {
        params: SpaceParams,
        body: CreateDatasourceBody,
        spaceRole: 'editor',
        response: { 201: Data(DatasourceWithSecretModel) },
        detail: {
          summary: 'Create a datasource',
          description:
            '`http_json` {url, json_path, cron, headers}: the URL must pass the outbound policy, the JSONPath (RFC 9535) and the ' +
            'five-field cron are checked at save. `webhook_push` {secret_hash, allow_unsigned, schema}: `secret_hash: "auto"` ' +
            '(the default) generates a secret returned once as `webhook_secret`. 409 when the key exists.',
        },
      },
    )
    .post('/cron-preview', ({ body }) => ({ data: cronPreview(kernel, body.cron, body.count) }), {
      params: SpaceParams,
      body: CronPreviewBody,
      spaceRole: 'viewer',
      response: Data(CronPreviewModel),
      detail: {
        summary: 'Next runs of a cron expression',
        description: 'The next `count` (default 5, at most 10) times a five-field cron expression fires after now, UTC, as a pull schedule would; 422 keyed `cron` when it does not parse.',
      },
    })
    .get('/:key', async ({ access, params }) => ({ data: await getDatasource(kernel, access, params.key) }), {
      params: DatasourceParams,
      spaceRole: 'viewer',
      response: Data(DatasourceModel),
      detail: { summary: 'One datasource', description: 'Settings (header values masked, secret as a fingerprint), status, revision, entry count.' },
    })
    .patch('/:key', async ({ access, params, body }) => ({ data: await updateDatasource(kernel, access, params.key, body) }), {
      params: DatasourceParams,
      body: UpdateDatasourceBody,
      spaceRole: 'editor',
      response: Data(DatasourceWithSecretModel),
      detail: {
        summary: 'Update a datasource',
        description:
          'Label and settings; `type` cannot change (422). `headers` replaces the map; a value of "••••" keeps the stored one. ' +
          'A new `secret_hash` ("auto" or a secret) replaces the push secret ("auto" returns it once as `webhook_secret`).',
      },
    })
    .delete(
      '/:key',
      async ({ access, params, set }) => {
        await deleteDatasource(kernel, access, params.key)
        set.status = 204
      },
      {
        params: DatasourceParams,
        spaceRole: 'editor',
        response: { 204: t.Void() },
        detail: { summary: 'Delete a datasource', description: 'Its entries go with it; markers of its key render empty from now on.' },
      },
    )
    .post('/:key/rotate-secret', async ({ access, params }) => ({ data: await rotateSecret(kernel, access, params.key) }), {
      params: DatasourceParams,
      spaceRole: 'editor',
      response: Data(DatasourceWithSecretModel),
      detail: { summary: 'Rotate the push secret', description: 'webhook_push only (422 otherwise): a new secret, returned once as `webhook_secret`.' },
    })
    .post('/:key/sync', async ({ access, params }) => ({ data: await syncByKey(kernel, store, access, params.key) }), {
      params: DatasourceParams,
      spaceRole: 'editor',
      response: { 200: Data(SyncResultModel), 502: ErrorBody },
      detail: {
        summary: 'Pull now',
        description:
          'http_json: runs the pull now (10 s, 5 MB, no redirects) and answers the entry count, the first entry and the revision. ' +
          'A failed pull (unreachable source, non-2xx answer, redirect, body over 5 MB, not JSON, JSONPath matching nothing) answers 502 `sync_failed` ' +
          'with the reason in `message`; it is recorded as `status: "error"` and `last_error` on the datasource and the last good entries stay. webhook_push: `ignored: true`.',
      },
    })
    .post('/:key/test-path', async ({ access, params, body }) => ({ data: await testJsonPath(kernel, access, params.key, body.json_path) }), {
      params: DatasourceParams,
      body: TestPathBody,
      spaceRole: 'editor',
      response: Data(TestPathModel),
      detail: {
        summary: 'Try a JSONPath against the last pull',
        description:
          'http_json only (422 otherwise): applies `json_path` to the document the last pull received (kept even when the stored path matched nothing) and answers ' +
          'how many values it selects, how many entries a pull would store and the first 20 of them. Fetches nothing and changes nothing; `pulled_at: null` when nothing was pulled yet. 422 keyed `json_path` for an invalid path.',
      },
    })
    .get('/:key/usage', async ({ access, params }) => ({ data: await datasourceUsage(kernel, access, params.key) }), {
      params: DatasourceParams,
      spaceRole: 'viewer',
      response: Data(UsageModel),
      detail: { summary: 'Stories using the datasource', description: 'Stories whose draft content (any locale) holds a `$ds:<key>.` marker, by path (at most 100; `truncated` when there are more).' },
    })
    .get(
      '/:key/entries',
      async ({ access, params, query }) => listEntries(kernel, store, access, params.key, { page: query.page, perPage: query.per_page, q: query.q }),
      {
        params: DatasourceParams,
        query: EntriesQuery,
        spaceRole: 'viewer',
        response: EntriesPage,
        detail: {
          summary: 'Entries',
          description: 'Entries as markers see them, paginated (page 1, per_page 25, at most 100); `q` matches any string value, case-insensitively.',
        },
      },
    )
    .post(
      '/:key/webhook',
      async ({ space, params, body, request, set }) => {
        const row = await pushTarget(kernel, space.id, params.key)
        const decision = await kernel.rateLimiter.hit(PUSH_LIMIT, `${space.id}:${row.id}`)
        Object.assign(set.headers, decision.headers)
        if (!decision.allowed) throw KernelErrors.rateLimited('Too many pushes to this datasource. Retry after the time given in Retry-After.', undefined, decision.headers)
        const raw = requestInfo(request).rawBody ?? new Uint8Array(0)
        if (raw.byteLength > PUSH_MAX_BYTES) throw KernelErrors.payloadTooLarge('A push body is at most 1 MB.')
        const signed = verifyPush(kernel, row, raw, request.headers.get('x-service-signature'), request.headers.get('x-service-timestamp'))
        if (body === undefined || body === null || typeof body !== 'object') {
          throw KernelErrors.validationFailed('The request is not valid.', { body: ['must be an entry object or an array of entry objects'] })
        }
        return { data: await storePush(kernel, row, body, signed) }
      },
      {
        // Anonymous (the signature authenticates): an unknown Space reads like an unknown datasource.
        publicSpace: { notFound: 'Datasource' },
        params: DatasourceParams,
        body: t.Unknown({ description: 'One entry object, or an array of them: replaces the whole entry set' }),
        response: { 200: Data(PushResultModel), 401: ErrorBody, 409: ErrorBody, 413: ErrorBody, 429: ErrorBody },
        detail: {
          summary: 'Signed push (anonymous)',
          description:
            'Headers `X-Service-Signature: sha256=<hex>` (HMAC-SHA256 of `<timestamp>.<raw body>` with the datasource secret) and ' +
            '`X-Service-Timestamp` (Unix seconds). The body replaces the entry set atomically and bumps the revision when the data ' +
            'changed. 401 `invalid_signature` (bad or missing signature), 401 `stale_timestamp` (more than 300 s from now), 409 `push_replayed` ' +
            '(this signed push was accepted before: a signature is remembered while its timestamp is in the window), 404 for an ' +
            'unknown Space or datasource or an http_json one, 413 over 1 MB, 422 with errors keyed `<index>.<field>` when a row does ' +
            'not fit the schema (nothing stored), 429 past 120 pushes a minute per datasource. `allow_unsigned` skips the signature check only.',
        },
      },
    )
}
