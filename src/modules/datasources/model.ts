import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { Int, NullableTimestamp, oneOf, PageNo, perPage, SpaceSlug, Timestamp } from '../../kernel/schemas'

export const DatasourceErrors = {
  invalidSignature: defineError('invalid_signature', 401, 'Datasource push: the X-Service-Signature is missing or does not match.'),
  staleTimestamp: defineError('stale_timestamp', 401, 'Datasource push: X-Service-Timestamp is missing or more than 300 s from now.'),
  pushReplayed: defineError('push_replayed', 409, 'Datasource push: this signed push was accepted before (a replay); sign every push with a fresh X-Service-Timestamp.'),
  syncFailed: defineError('sync_failed', 502, 'POST …/sync: the pull from the source failed (the message says why); the last good entries stay.'),
}

export const KEY_PATTERN = '^[a-z][a-z0-9_]{0,63}$'
export const FIELD_TYPES = ['string', 'integer', 'number', 'boolean', 'object', 'array'] as const
export type FieldType = (typeof FIELD_TYPES)[number]
export const MAX_HEADERS = 20
export const MAX_SCHEMA_FIELDS = 100
/** What a masked header value looks like in responses; sent back in a PATCH it keeps the stored value. */
export const MASK = '••••'

const DsKey = t.String({ pattern: KEY_PATTERN, description: 'Datasource key: ^[a-z][a-z0-9_]{0,63}$ (used in `$ds:<key>.` markers)' })
export const DatasourceParams = t.Object({ space: SpaceSlug, key: DsKey })

const Label = t.String({ minLength: 1, maxLength: 200, error: 'is required (1 to 200 characters)' })

const Config = t.Object(
  {
    url: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 2048,
        error: 'must be an http or https URL (at most 2048 characters)',
        description: 'Stored encrypted; answered with the user name, password and every query value masked ("••••"). A masked part sent back keeps the stored one.',
      }),
    ),
    json_path: t.Optional(t.String({ minLength: 1, maxLength: 1000, error: 'must be a JSONPath expression (RFC 9535), at most 1000 characters' })),
    cron: t.Optional(t.String({ minLength: 1, maxLength: 200, error: 'must be a five-field cron expression' })),
    headers: t.Optional(
      t.Record(t.String({ maxLength: 200 }), t.String({ maxLength: 4096, error: 'must be a string (at most 4096 characters)' }), {
        description: `Request headers of the pull (at most ${MAX_HEADERS}); stored encrypted, returned masked ("${MASK}"). Sending "${MASK}" as a value keeps the stored one.`,
      }),
    ),
    secret_hash: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 512,
        error: 'must be "auto" or a secret of at least 32 characters',
        description: '"auto" generates a 32-byte secret (returned once as `webhook_secret`); any other value (≥ 32 characters) is the secret',
      }),
    ),
    allow_unsigned: t.Optional(t.Boolean({ error: 'must be true or false', description: 'Skip the signature check (default false)' })),
    schema: t.Optional(
      t.Record(t.String({ maxLength: 200 }), oneOf(FIELD_TYPES, { error: `must be one of: ${FIELD_TYPES.join(', ')}` }), {
        description: `Field name → type (at most ${MAX_SCHEMA_FIELDS}); pushed rows are checked against it`,
      }),
    ),
  },
  {
    description:
      'http_json: {url, json_path, cron, headers}; webhook_push: {secret_hash, allow_unsigned, schema}. Fields of the other type are refused.',
  },
)
export type ConfigInput = typeof Config.static

export const CreateDatasourceBody = t.Object({
  key: t.String({ pattern: KEY_PATTERN, error: 'must match ^[a-z][a-z0-9_]{0,63}$ (no dots or hyphens)' }),
  label: Label,
  type: oneOf(['http_json', 'webhook_push'], { error: 'must be http_json or webhook_push' }),
  config: Config,
})
export type CreateDatasourceInput = typeof CreateDatasourceBody.static

export const UpdateDatasourceBody = t.Object({
  label: t.Optional(Label),
  type: t.Optional(oneOf(['http_json', 'webhook_push'], { error: 'cannot change after creation' })),
  config: t.Optional(Config),
})
export type UpdateDatasourceInput = typeof UpdateDatasourceBody.static

export const DatasourceModel = t.Object({
  key: t.String(),
  label: t.String(),
  type: oneOf(['http_json', 'webhook_push']),
  config: t.Object({
    url: t.Optional(t.String({ description: `The URL with its user name, password and query values masked ("${MASK}")` })),
    json_path: t.Optional(t.String()),
    cron: t.Optional(t.String()),
    headers: t.Optional(t.Record(t.String(), t.String(), { description: `Header names with masked values ("${MASK}")` })),
    allow_unsigned: t.Optional(t.Boolean()),
    schema: t.Optional(t.Record(t.String(), t.String())),
    secret_fingerprint: t.Optional(t.String({ description: 'First 16 hex characters of SHA-256 of the secret; the secret itself is never shown again' })),
  }),
  status: oneOf(['ok', 'error', 'never_synced']),
  revision: Int({ description: '+1 per successful sync or push that changed the data' }),
  entry_count: Int(),
  last_synced_at: NullableTimestamp,
  last_error: t.Union([t.String(), t.Null()]),
  next_run_at: t.Optional(t.Union([Timestamp, t.Null()], { description: 'http_json: when the cron next pulls (UTC)' })),
  created_at: Timestamp,
  updated_at: Timestamp,
})
export type DatasourceView = typeof DatasourceModel.static

export const DatasourceWithSecretModel = t.Composite([
  DatasourceModel,
  t.Object({ webhook_secret: t.Optional(t.String({ description: 'webhook_push: the signing secret, shown this once' })) }),
])
export type DatasourceWithSecretView = typeof DatasourceWithSecretModel.static

const Entry = t.Record(t.String(), t.Unknown(), { description: 'One entry (a JSON object)' })

export const SyncResultModel = t.Object({
  entries: Int({ description: 'Entries after the sync (the last good set when it failed)' }),
  sample: t.Union([Entry, t.Null()], { description: 'The first entry' }),
  revision: Int(),
  status: oneOf(['ok', 'error', 'never_synced']),
  ignored: t.Boolean({ description: 'true for webhook_push datasources: there is nothing to pull' }),
  error: t.Union([t.String(), t.Null()], { description: 'Why the pull failed (the last good entries stay)' }),
})
export type SyncResult = typeof SyncResultModel.static

export const PushResultModel = t.Object({
  entries: Int({ description: 'Entries now stored (the push replaced the whole set)' }),
  revision: Int(),
  changed: t.Boolean({ description: 'Whether the data differs from what was stored (the revision moved)' }),
})

export const EntriesQuery = t.Object({
  page: t.Optional(PageNo),
  per_page: t.Optional(perPage(100, 25)),
  q: t.Optional(t.String({ maxLength: 200, description: 'Case-insensitive substring of any string value' })),
})

export const EntriesPage = t.Object({
  data: t.Array(Entry),
  meta: t.Object({ total: Int(), page: Int(), per_page: Int(), revision: Int() }),
})
export type EntriesPageView = typeof EntriesPage.static

// ---- Helpers of the admin screens: the last pull through another JSONPath, a cron's next runs, the Stories using a key ----

export const TestPathBody = t.Object({
  json_path: t.String({ minLength: 1, maxLength: 1000, error: 'must be a JSONPath expression (RFC 9535), at most 1000 characters' }),
})

export const TEST_PATH_SAMPLE = 20

export const TestPathModel = t.Object({
  pulled_at: t.Union([Timestamp, t.Null()], { description: 'When the document was pulled; null: nothing pulled yet (run a sync first)' }),
  matches: Int({ description: 'Values the path selects' }),
  entries: Int({ description: 'Entries a pull with this path would store' }),
  sample: t.Array(Entry, { description: `The first ${TEST_PATH_SAMPLE} of those entries` }),
})

export const CronPreviewBody = t.Object({
  cron: t.String({ minLength: 1, maxLength: 200, error: 'must be a five-field cron expression' }),
  count: t.Optional(Int({ minimum: 1, maximum: 10, error: 'must be 1 to 10', description: 'How many runs (default 5)' })),
})

export const CronPreviewModel = t.Object({
  runs: t.Array(Timestamp, { description: 'The next runs after now, UTC (fewer when the expression fires less often)' }),
})

export const UsageModel = t.Object({
  stories: t.Array(
    t.Object({
      uuid: t.String(),
      name: t.String(),
      full_path: t.String(),
      langs: t.Array(t.String(), { description: 'Locales whose draft holds a marker of this key' }),
    }),
  ),
  truncated: t.Boolean({ description: `More Stories use it than listed (at most ${100})` }),
})
