import { and, asc, eq, isNull, lt } from 'drizzle-orm'
import { JSONPathEnvironment } from 'json-p3'
import { datasourceEntrySets, datasourcePushSignatures, datasources } from '../../../db/schema'
import type { SpaceAccess } from '../../kernel/auth'
import { hmacSha256Hex, randomSecret, safeEqual, sha256Hex } from '../../kernel/crypto'
import { KernelErrors, notFound, uniqueAs, validationFailed } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import { parseCron } from '../../kernel/jobs'
import type { Kernel } from '../../kernel/kernel'
import { OutboundError, outboundFetch, parseOutboundUrl, resolveTarget } from '../../kernel/outbound'
import {
  type ConfigInput,
  type CreateDatasourceInput,
  DatasourceErrors,
  type DatasourceView,
  type DatasourceWithSecretView,
  type EntriesPageView,
  FIELD_TYPES,
  type FieldType,
  KEY_PATTERN,
  MASK,
  MAX_HEADERS,
  MAX_SCHEMA_FIELDS,
  type SyncResult,
  type UpdateDatasourceInput,
} from './model'
import type { DatasourceStore, Entry } from './store'

export const HEADERS_CONTEXT = 'datasource.headers'
export const URL_CONTEXT = 'datasource.url'
export const SECRET_CONTEXT = 'datasource.secret'
/** Pull limits (spec 4.13 and the issue): the whole call within 10 s, at most 5 MB of body, no redirects. */
export const PULL_TIMEOUT_MS = 10_000
export const PULL_MAX_BYTES = 5 * 1024 * 1024

export type Row = typeof datasources.$inferSelect
type DsType = Row['type']

/** The non-secret settings, as stored in `config`. */
interface StoredConfig {
  url?: string
  json_path?: string
  cron?: string
  header_names?: string[]
  allow_unsigned?: boolean
  schema?: Record<string, FieldType>
}

const KEY_RE = new RegExp(KEY_PATTERN)
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$/
const jsonPathEnv = new JSONPathEnvironment({ strict: true })

export const compileJsonPath = (path: string) => jsonPathEnv.compile(path)

/**
 * A URL as viewers see it: the user name, the password and every query value masked, like header values (an API key
 * travels in any of them). The scheme, host, path and query names stay readable.
 */
export function maskUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return MASK
  }
  const auth = url.username || url.password ? `${url.username ? MASK : ''}${url.password ? `:${MASK}` : ''}@` : ''
  let query = ''
  for (const [name, value] of url.searchParams) query += `${query ? '&' : '?'}${encodeURIComponent(name)}${value === '' ? '' : `=${MASK}`}`
  return `${url.protocol}//${auth}${url.host}${url.pathname}${query}`
}

/** The real URL of an http_json datasource: sealed, or (rows stored before URLs were sealed) in `config`. */
function realUrl(kernel: Kernel, row: Row): string | undefined {
  return row.urlSealed ? kernel.secrets.open(row.urlSealed, URL_CONTEXT) : (row.config as StoredConfig).url
}

/**
 * A URL sent in a PATCH with masked parts (as a GET answered it) keeps the stored values of those parts: the user
 * name, the password, and each masked query value by name and position. Returns the merged URL text, or why not.
 */
function unmaskUrl(input: string, stored: string | undefined): { url: string } | { error: string } {
  if (!input.includes(MASK)) return { url: input }
  let url: URL
  let old: URL | null = null
  try {
    url = new URL(input.trim())
  } catch {
    return { error: 'must be an absolute URL' }
  }
  try {
    old = stored ? new URL(stored) : null
  } catch {}
  const none = { error: `"${MASK}" keeps a stored value, but the stored URL has none there` }
  const masked = (v: string) => v === MASK || v === encodeURIComponent(MASK)
  if (masked(url.username)) {
    if (!old?.username) return none
    url.username = old.username
  }
  if (masked(url.password)) {
    if (!old?.password) return none
    url.password = old.password
  }
  const seen = new Map<string, number>()
  const params: [string, string][] = []
  for (const [name, value] of url.searchParams) {
    const n = seen.get(name) ?? 0
    seen.set(name, n + 1)
    if (value !== MASK) params.push([name, value])
    else {
      const kept = old?.searchParams.getAll(name)[n]
      if (kept === undefined) return none
      params.push([name, kept])
    }
  }
  if (params.length) url.search = new URLSearchParams(params).toString()
  if (url.href.includes(encodeURIComponent(MASK)) || url.href.includes(MASK)) return { error: `"${MASK}" may stand only for a whole user name, password or query value` }
  return { url: url.href }
}

function view(row: Row): DatasourceView {
  const c = row.config as StoredConfig
  const config: DatasourceView['config'] = {}
  if (row.type === 'http_json') {
    // Masked also for rows stored before URLs were sealed (their `config.url` is the real one).
    config.url = c.url === undefined ? undefined : maskUrl(c.url)
    config.json_path = c.json_path
    config.cron = c.cron
    config.headers = Object.fromEntries((c.header_names ?? []).map((n) => [n, MASK]))
  } else {
    config.allow_unsigned = c.allow_unsigned ?? false
    config.schema = c.schema ?? {}
    if (row.secretFingerprint) config.secret_fingerprint = row.secretFingerprint
  }
  return {
    key: row.key,
    label: row.label,
    type: row.type,
    config,
    status: row.status,
    revision: row.revision,
    entry_count: row.entryCount,
    last_synced_at: row.lastSyncedAt?.toISOString() ?? null,
    last_error: row.lastError,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

// ---- config validation ----

const HTTP_FIELDS = ['url', 'json_path', 'cron', 'headers'] as const
const PUSH_FIELDS = ['secret_hash', 'allow_unsigned', 'schema'] as const

interface CheckedConfig {
  config: StoredConfig
  urlSealed?: string
  headersSealed?: string | null
  secret?: { plain: string; generated: boolean }
}

/** Checks an http_json URL: http(s), resolving only to addresses the outbound policy allows. */
async function checkUrl(kernel: Kernel, raw: string): Promise<string | string[]> {
  try {
    const url = parseOutboundUrl(raw.trim())
    await resolveTarget(url, { allowPrivate: kernel.config.outboundAllowPrivate }, AbortSignal.timeout(5_000))
    return raw.trim()
  } catch (err) {
    if (err instanceof OutboundError) return [err.message]
    throw err
  }
}

/**
 * Validates `input` for `type`, merged over the current settings on update. Every problem is reported at once,
 * keyed `config.<field>`.
 */
async function checkConfig(kernel: Kernel, type: DsType, input: ConfigInput, current: Row | null): Promise<CheckedConfig> {
  const errors: Record<string, string[]> = {}
  const fail = (field: string, msg: string) => (errors[`config.${field}`] ??= []).push(msg)
  const prev = (current?.config ?? {}) as StoredConfig
  const out: CheckedConfig = { config: {} }
  const foreign = type === 'http_json' ? PUSH_FIELDS : HTTP_FIELDS
  for (const f of foreign) if ((input as Record<string, unknown>)[f] !== undefined) fail(f, `is not a setting of a ${type} datasource`)

  if (type === 'http_json') {
    const url = input.url ?? prev.url
    const jsonPath = input.json_path ?? prev.json_path
    const cron = input.cron ?? prev.cron
    if (url === undefined) fail('url', 'is required')
    else if (input.url !== undefined) {
      const merged = unmaskUrl(input.url, current ? realUrl(kernel, current) : undefined)
      const checked = 'error' in merged ? [merged.error] : await checkUrl(kernel, merged.url)
      if (Array.isArray(checked)) for (const m of checked) fail('url', m)
      else {
        out.config.url = maskUrl(checked)
        out.urlSealed = kernel.secrets.seal(checked, URL_CONTEXT)
      }
    } else out.config.url = url
    if (jsonPath === undefined) fail('json_path', 'is required')
    else {
      try {
        compileJsonPath(jsonPath)
        out.config.json_path = jsonPath
      } catch (err) {
        fail('json_path', `is not a valid JSONPath expression (RFC 9535): ${(err as Error).message}`.slice(0, 300))
      }
    }
    if (cron === undefined) fail('cron', 'is required')
    else {
      try {
        parseCron(cron)
        out.config.cron = cron.trim().split(/\s+/).join(' ')
      } catch (err) {
        fail('cron', `is not a valid five-field cron expression: ${(err as Error).message}`.slice(0, 300))
      }
    }
    // Headers: the whole map is replaced; a masked value keeps the stored one for that name.
    const oldHeaders: Record<string, string> =
      current?.headersSealed ? JSON.parse(kernel.secrets.open(current.headersSealed, HEADERS_CONTEXT)) : {}
    if (input.headers !== undefined) {
      const entries = Object.entries(input.headers)
      if (entries.length > MAX_HEADERS) fail('headers', `at most ${MAX_HEADERS} headers`)
      const headers: Record<string, string> = {}
      const seen = new Set<string>()
      for (const [name, value] of entries) {
        const lower = name.toLowerCase()
        if (!HEADER_NAME.test(name)) fail(`headers.${name.slice(0, 60)}`, 'is not a valid header name')
        else if (seen.has(lower)) fail(`headers.${name}`, 'is given twice (header names are case-insensitive)')
        else if (/[\r\n\0]/.test(value)) fail(`headers.${name}`, 'must not contain line breaks or NUL')
        else if (value === MASK) {
          const old = Object.entries(oldHeaders).find(([n]) => n.toLowerCase() === lower)
          if (!old) fail(`headers.${name}`, `"${MASK}" keeps a stored value, but this header has none`)
          else headers[name] = old[1]
        } else headers[name] = value
        seen.add(lower)
      }
      out.config.header_names = Object.keys(headers)
      out.headersSealed = Object.keys(headers).length ? kernel.secrets.seal(JSON.stringify(headers), HEADERS_CONTEXT) : null
    } else {
      out.config.header_names = prev.header_names ?? []
    }
  } else {
    out.config.allow_unsigned = input.allow_unsigned ?? prev.allow_unsigned ?? false
    const schema = input.schema ?? prev.schema ?? {}
    const names = Object.keys(schema)
    if (names.length > MAX_SCHEMA_FIELDS) fail('schema', `at most ${MAX_SCHEMA_FIELDS} fields`)
    for (const [name, type] of Object.entries(schema)) {
      if (!name) fail('schema', 'field names must not be empty')
      if (!(FIELD_TYPES as readonly string[]).includes(type)) fail(`schema.${name.slice(0, 60)}`, `must be one of: ${FIELD_TYPES.join(', ')}`)
    }
    out.config.schema = schema
    const secretInput = input.secret_hash ?? (current ? undefined : 'auto')
    if (secretInput === 'auto') out.secret = { plain: randomSecret('dssec_'), generated: true }
    else if (secretInput !== undefined) {
      if (secretInput.length < 32) fail('secret_hash', 'must be "auto" or a secret of at least 32 characters')
      else out.secret = { plain: secretInput, generated: false }
    }
  }
  if (Object.keys(errors).length) throw validationFailed(errors)
  return out
}

const fingerprint = (secret: string) => sha256Hex(secret).slice(0, 16)

// ---- management ----

async function requireDatasource(kernel: Kernel, spaceId: number, key: string): Promise<Row> {
  if (!KEY_RE.test(key)) throw notFound('Datasource')
  const [row] = await kernel.db.db
    .select()
    .from(datasources)
    .where(and(eq(datasources.spaceId, spaceId), eq(datasources.key, key)))
    .limit(1)
  if (!row) throw notFound('Datasource')
  return row
}

export async function listDatasources(kernel: Kernel, access: SpaceAccess): Promise<DatasourceView[]> {
  const rows = await kernel.db.db.select().from(datasources).where(eq(datasources.spaceId, access.space.id)).orderBy(asc(datasources.key))
  return rows.map(view)
}

export async function getDatasource(kernel: Kernel, access: SpaceAccess, key: string): Promise<DatasourceView> {
  return view(await requireDatasource(kernel, access.space.id, key))
}

export async function createDatasource(kernel: Kernel, access: SpaceAccess, input: CreateDatasourceInput): Promise<DatasourceWithSecretView> {
  const checked = await checkConfig(kernel, input.type, input.config, null)
  const now = kernel.clock.now()
  try {
    const row = await transact(kernel, async (tx, emit) => {
      const [row] = await tx
        .insert(datasources)
        .values({
          spaceId: access.space.id,
          key: input.key,
          label: input.label,
          type: input.type,
          config: checked.config,
          urlSealed: checked.urlSealed ?? null,
          headersSealed: checked.headersSealed ?? null,
          secretSealed: checked.secret ? kernel.secrets.seal(checked.secret.plain, SECRET_CONTEXT) : null,
          secretFingerprint: checked.secret ? fingerprint(checked.secret.plain) : null,
          status: 'never_synced',
          revision: 0,
          entryCount: 0,
          createdAt: now,
          updatedAt: now,
        })
        .returning()
      emit({ type: 'datasource.changed', spaceId: access.space.id, payload: { key: row.key, id: row.id, revision: row.revision } })
      return row
    })
    const out: DatasourceWithSecretView = view(row)
    if (checked.secret?.generated) out.webhook_secret = checked.secret.plain
    return out
  } catch (err) {
    return uniqueAs('datasources_space_key_key', () => KernelErrors.conflict(`A datasource with the key "${input.key}" exists in this Space.`))(err)
  }
}

export async function updateDatasource(
  kernel: Kernel,
  access: SpaceAccess,
  key: string,
  input: UpdateDatasourceInput,
): Promise<DatasourceWithSecretView> {
  const current = await requireDatasource(kernel, access.space.id, key)
  if (input.type !== undefined && input.type !== current.type) {
    throw validationFailed({ type: ['cannot change after creation (delete the datasource and create a new one)'] })
  }
  const patch: Partial<typeof datasources.$inferInsert> = { updatedAt: kernel.clock.now() }
  if (input.label !== undefined) patch.label = input.label
  let secret: CheckedConfig['secret']
  if (input.config !== undefined) {
    const checked = await checkConfig(kernel, current.type, input.config, current)
    patch.config = checked.config
    if (checked.urlSealed !== undefined) patch.urlSealed = checked.urlSealed
    if (checked.headersSealed !== undefined) patch.headersSealed = checked.headersSealed
    if (checked.secret) {
      secret = checked.secret
      patch.secretSealed = kernel.secrets.seal(checked.secret.plain, SECRET_CONTEXT)
      patch.secretFingerprint = fingerprint(checked.secret.plain)
    }
  }
  const row = await transact(kernel, async (tx, emit) => {
    const [row] = await tx.update(datasources).set(patch).where(eq(datasources.id, current.id)).returning()
    if (row) emit({ type: 'datasource.changed', spaceId: access.space.id, payload: { key: row.key, id: row.id, revision: row.revision } })
    return row
  })
  if (!row) throw notFound('Datasource')
  const out: DatasourceWithSecretView = view(row)
  if (secret?.generated) out.webhook_secret = secret.plain
  return out
}

export async function deleteDatasource(kernel: Kernel, access: SpaceAccess, key: string): Promise<void> {
  const current = await requireDatasource(kernel, access.space.id, key)
  await transact(kernel, async (tx, emit) => {
    await tx.delete(datasources).where(eq(datasources.id, current.id))
    emit({ type: 'datasource.changed', spaceId: access.space.id, payload: { key: current.key, id: current.id, revision: null } })
  })
}

/** webhook_push: a new generated secret, shown this once; pushes signed with the old one fail from now on. */
export async function rotateSecret(kernel: Kernel, access: SpaceAccess, key: string): Promise<DatasourceWithSecretView> {
  const current = await requireDatasource(kernel, access.space.id, key)
  if (current.type !== 'webhook_push') throw validationFailed({ type: ['only webhook_push datasources have a signing secret'] })
  const secret = randomSecret('dssec_')
  const [row] = await kernel.db.db
    .update(datasources)
    .set({ secretSealed: kernel.secrets.seal(secret, SECRET_CONTEXT), secretFingerprint: fingerprint(secret), updatedAt: kernel.clock.now() })
    .where(eq(datasources.id, current.id))
    .returning()
  if (!row) throw notFound('Datasource')
  return { ...view(row), webhook_secret: secret }
}

// ---- data in ----

/** Turns the JSONPath result into entries: one array match → its items; otherwise the matches; scalars wrapped. */
export function entriesFromMatches(values: unknown[]): Entry[] {
  const items = values.length === 1 && Array.isArray(values[0]) ? (values[0] as unknown[]) : values
  return items.map((v) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Entry) : { value: v }))
}

/**
 * Why an outbound call failed, in words fit for the Space's editors (the reason is stored as `last_error` and answered
 * by `POST …/sync`): it names nothing the configured URL does not, so no address a host resolves to inside the
 * machine's networks and no driver text that may carry one.
 */
function outboundReason(err: OutboundError, url: string): string {
  let host = ''
  try {
    host = new URL(url).host
  } catch {}
  switch (err.kind) {
    case 'blocked_address':
      return `the host ${host} resolves to a loopback, private, link-local or otherwise internal address`
    case 'connection_failed': {
      const code = /^[A-Z][A-Z0-9_]{2,40}(?=:)/.exec(err.message)?.[0]
      return `could not connect to ${host}${code ? ` (${code})` : ''}`
    }
    default:
      return err.message
  }
}

/** One pull: the outbound fetch with the stored headers, then JSONPath. Throws an Error saying what went wrong. */
async function pull(kernel: Kernel, row: Row): Promise<Entry[]> {
  const c = row.config as StoredConfig
  const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'content-service-datasources' }
  if (row.headersSealed) Object.assign(headers, JSON.parse(kernel.secrets.open(row.headersSealed, HEADERS_CONTEXT)))
  const url = realUrl(kernel, row)!
  let res: Awaited<ReturnType<typeof outboundFetch>>
  try {
    res = await outboundFetch(
      url,
      { method: 'GET', headers, timeoutMs: PULL_TIMEOUT_MS, maxResponseBytes: PULL_MAX_BYTES + 1 },
      { allowPrivate: kernel.config.outboundAllowPrivate },
    )
  } catch (err) {
    if (err instanceof OutboundError) throw new Error(`${err.kind}: ${outboundReason(err, url)}`)
    throw err
  }
  if (res.status >= 300 && res.status < 400) throw new Error(`the source answered ${res.status} (redirects are not followed)`)
  if (res.status < 200 || res.status >= 300) throw new Error(`the source answered ${res.status}`)
  if (res.truncated || Buffer.byteLength(res.body) > PULL_MAX_BYTES) throw new Error(`the response body is larger than ${PULL_MAX_BYTES / 1024 / 1024} MB`)
  let doc: unknown
  try {
    doc = JSON.parse(res.body)
  } catch {
    throw new Error('the response body is not valid JSON')
  }
  const values = compileJsonPath(c.json_path!).query(doc as never).values()
  if (!values.length) throw new Error(`the JSONPath ${c.json_path} matched nothing`)
  return entriesFromMatches(values)
}

/**
 * Replaces the entry set atomically with the datasource's new state; the revision moves only when the data differs.
 * Emits `datasource.synced` (and `datasource.changed` for the caches). Null when the datasource is gone.
 */
async function storeEntries(kernel: Kernel, id: number, entries: Entry[], signed?: SignedPush): Promise<{ row: Row; changed: boolean } | null> {
  const json = JSON.stringify(entries)
  const hash = sha256Hex(json)
  const now = kernel.clock.now()
  return transact(kernel, async (tx, emit) => {
    const [current] = await tx.select().from(datasources).where(eq(datasources.id, id)).for('update').limit(1)
    if (!current) return null
    if (signed) {
      // Under the datasource's row lock, so two copies of one push racing on two instances meet here: the second
      // finds the first's signature and is refused. Expired signatures of this datasource go first.
      await tx.delete(datasourcePushSignatures).where(and(eq(datasourcePushSignatures.datasourceId, id), lt(datasourcePushSignatures.expiresAt, now)))
      const fresh = await tx
        .insert(datasourcePushSignatures)
        .values({ datasourceId: id, signature: signed.signature, expiresAt: signed.expiresAt })
        .onConflictDoNothing()
        .returning({ signature: datasourcePushSignatures.signature })
      if (!fresh.length) {
        throw DatasourceErrors.pushReplayed(
          'This signed push was accepted before (a replay). Nothing was stored; sign every push with a fresh X-Service-Timestamp.',
        )
      }
    }
    const changed = current.dataHash !== hash
    const [row] = await tx
      .update(datasources)
      .set({
        revision: changed ? current.revision + 1 : current.revision,
        dataHash: hash,
        entryCount: entries.length,
        status: 'ok',
        lastSyncedAt: now,
        lastError: null,
        updatedAt: now,
      })
      .where(eq(datasources.id, id))
      .returning()
    if (changed) {
      await tx
        .insert(datasourceEntrySets)
        .values({ datasourceId: id, entries })
        .onConflictDoUpdate({ target: datasourceEntrySets.datasourceId, set: { entries } })
      emit({ type: 'datasource.changed', spaceId: row.spaceId, payload: { key: row.key, id: row.id, revision: row.revision } })
    }
    emit({
      type: 'datasource.synced',
      spaceId: row.spaceId,
      payload: { datasource: { key: row.key, label: row.label, type: row.type, entries: row.entryCount, synced_at: now.toISOString() } },
    })
    return { row, changed }
  })
}

/** Runs a pull of one datasource now (scheduled job or `POST …/sync`). Failure keeps the last good entries. */
export async function syncDatasource(kernel: Kernel, store: DatasourceStore, id: number): Promise<SyncResult | null> {
  const [row] = await kernel.db.db.select().from(datasources).where(eq(datasources.id, id)).limit(1)
  if (!row) return null
  if (row.type !== 'http_json') return { entries: row.entryCount, sample: null, revision: row.revision, status: row.status, ignored: true, error: null }
  let entries: Entry[]
  try {
    entries = await pull(kernel, row)
  } catch (err) {
    const error = (err instanceof Error ? err.message : String(err)).slice(0, 1000)
    const [failed] = await kernel.db.db
      .update(datasources)
      .set({ status: 'error', lastError: error, updatedAt: kernel.clock.now() })
      .where(eq(datasources.id, id))
      .returning()
    kernel.logger.warn('datasource pull failed', { datasource: row.key, space_id: row.spaceId, error })
    const set = failed ? await store.entries(failed.spaceId, failed.key).catch(() => null) : null
    return {
      entries: failed?.entryCount ?? row.entryCount,
      sample: set?.entries[0] ?? null,
      revision: failed?.revision ?? row.revision,
      status: 'error',
      ignored: false,
      error,
    }
  }
  const stored = await storeEntries(kernel, id, entries)
  if (!stored) return null
  return { entries: entries.length, sample: entries[0] ?? null, revision: stored.row.revision, status: 'ok', ignored: false, error: null }
}

/**
 * `POST …/sync`: a pull the caller waits for. A failed pull is recorded first (status `error`, `last_error`; the last
 * good entries stay), then answered 502 `sync_failed` with the reason — never a 200 that reads like success.
 */
export async function syncByKey(kernel: Kernel, store: DatasourceStore, access: SpaceAccess, key: string): Promise<SyncResult> {
  const row = await requireDatasource(kernel, access.space.id, key)
  const result = await syncDatasource(kernel, store, row.id)
  if (!result) throw notFound('Datasource')
  if (result.status === 'error' && !result.ignored) {
    throw DatasourceErrors.syncFailed(`The pull from the source failed: ${result.error ?? 'unknown error'}. The last good entries (${result.entries}) stay.`)
  }
  return result
}

/** The http_json datasources whose cron fires at `tick` (a whole minute, UTC). */
export async function dueDatasources(kernel: Kernel, tick: Date): Promise<number[]> {
  const rows = await kernel.db.db.select({ id: datasources.id, config: datasources.config }).from(datasources).where(eq(datasources.type, 'http_json'))
  const before = new Date(tick.getTime() - 1000)
  const minute = Math.floor(tick.getTime() / 60_000)
  const due: number[] = []
  for (const r of rows) {
    const cron = (r.config as StoredConfig).cron
    if (!cron) continue
    try {
      const next = parseCron(cron).nextRun(before)
      if (next && Math.floor(next.getTime() / 60_000) === minute) due.push(r.id)
    } catch {
      // An expression that no longer parses never fires (it was valid when saved).
    }
  }
  return due
}

// ---- push ----

export interface PushInput {
  spaceId: number
  key: string
  raw: Uint8Array
  body: unknown
  signature: string | null
  timestamp: string | null
}

/** The datasource a push is addressed to: only webhook_push ones exist for the ingest (anything else is 404). */
export async function pushTarget(kernel: Kernel, spaceId: number, key: string): Promise<Row> {
  const row = await requireDatasource(kernel, spaceId, key)
  if (row.type !== 'webhook_push') throw notFound('Datasource')
  return row
}

/** Checks a row against the schema; messages keyed `<index>.<field>`. An empty schema takes any object. */
function checkRows(rows: unknown[], schema: Record<string, FieldType>): Record<string, string[]> {
  const errors: Record<string, string[]> = {}
  const fields = Object.keys(schema)
  for (const [i, row] of rows.entries()) {
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      errors[String(i)] = ['must be a JSON object']
      continue
    }
    if (!fields.length) continue
    for (const [name, value] of Object.entries(row)) {
      const type = Object.hasOwn(schema, name) ? schema[name] : undefined
      if (!type) {
        ;(errors[`${i}.${name}`] ??= []).push('is not a field of the schema')
        continue
      }
      if (value === null) continue
      if (!fits(value, type)) (errors[`${i}.${name}`] ??= []).push(`must be ${type === 'integer' || type === 'array' || type === 'object' ? 'an' : 'a'} ${type}`)
    }
  }
  return errors
}

function fits(v: unknown, type: FieldType): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string'
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v)
    case 'number':
      return typeof v === 'number' && Number.isFinite(v)
    case 'boolean':
      return typeof v === 'boolean'
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v)
    case 'array':
      return Array.isArray(v)
  }
}

/**
 * Stores a verified push: the body (one object or an array) replaces the entry set. A signed push is remembered by its
 * signature until its timestamp leaves the window, in the same transaction: the same push again is refused (409).
 */
export async function storePush(
  kernel: Kernel,
  row: Row,
  body: unknown,
  signed: SignedPush | null = null,
): Promise<{ entries: number; revision: number; changed: boolean }> {
  const rows = Array.isArray(body) ? body : [body]
  const schema = (row.config as StoredConfig).schema ?? {}
  const errors = checkRows(rows, schema)
  if (Object.keys(errors).length) throw validationFailed(errors, 'Some rows do not fit the datasource schema; nothing was stored.')
  const stored = await storeEntries(kernel, row.id, rows as Entry[], signed ?? undefined)
  if (!stored) throw notFound('Datasource')
  return { entries: rows.length, revision: stored.row.revision, changed: stored.changed }
}

export const openSecret = (kernel: Kernel, row: Row) => (row.secretSealed ? kernel.secrets.open(row.secretSealed, SECRET_CONTEXT) : null)

// ---- entries ----

function containsText(v: unknown, needle: string, depth = 0): boolean {
  if (typeof v === 'string') return v.toLowerCase().includes(needle)
  if (depth > 32 || typeof v !== 'object' || v === null) return false
  for (const x of Array.isArray(v) ? v : Object.values(v)) if (containsText(x, needle, depth + 1)) return true
  return false
}

/**
 * A page of entries as the public surface sees them (the in-memory copy markers resolve from). `q` matches
 * case-insensitively in any string value, nested ones included. Null when there is no such datasource.
 */
export async function entriesPage(
  store: DatasourceStore,
  spaceId: number,
  key: string,
  opts: { page?: number; perPage?: number; q?: string } = {},
): Promise<EntriesPageView | null> {
  const set = await store.entries(spaceId, key)
  if (!set) return null
  const page = Math.max(1, opts.page ?? 1)
  const perPage = Math.min(100, Math.max(1, opts.perPage ?? 25))
  const needle = opts.q?.trim().toLowerCase()
  const all = needle ? set.entries.filter((e) => containsText(e, needle)) : set.entries
  return {
    data: all.slice((page - 1) * perPage, page * perPage),
    meta: { total: all.length, page, per_page: perPage, revision: set.revision },
  }
}

export async function listEntries(
  kernel: Kernel,
  store: DatasourceStore,
  access: SpaceAccess,
  key: string,
  opts: { page?: number; perPage?: number; q?: string },
): Promise<EntriesPageView> {
  if (!KEY_RE.test(key)) throw notFound('Datasource')
  const page = await entriesPage(store, access.space.id, key, opts)
  if (!page) throw notFound('Datasource')
  return page
}

// ---- push verification ----

/** Spec 4.13/8: a push more than 300 s from now (either way) is refused. */
export const PUSH_WINDOW_SECONDS = 300
export const PUSH_MAX_BYTES = 1024 * 1024

/**
 * Checks `X-Service-Signature: sha256=<hex>` = HMAC-SHA256(secret, `<timestamp>.<raw body>`) in constant time, then
 * the timestamp window. The signature is checked first, so an unsigned caller learns nothing about the clock. With
 * `allow_unsigned` the signature is not checked; a timestamp, when sent, still has to be within the window.
 */
export function verifyPush(kernel: Kernel, row: Row, raw: Uint8Array, signature: string | null, timestamp: string | null): SignedPush | null {
  const unsigned = (row.config as StoredConfig).allow_unsigned === true
  let given = ''
  if (!unsigned) {
    const secret = openSecret(kernel, row)
    given = signature?.trim().toLowerCase() ?? ''
    const expected = secret && timestamp !== null ? `sha256=${hmacSha256Hex(secret, `${timestamp}.`, raw)}` : ''
    if (!expected || !/^sha256=[0-9a-f]{64}$/.test(given) || !safeEqual(given, expected)) {
      throw DatasourceErrors.invalidSignature('The X-Service-Signature header is missing or does not match the body.')
    }
  }
  if (timestamp === null && unsigned) return null
  const ts = timestamp !== null && /^[0-9]{1,12}$/.test(timestamp.trim()) ? Number(timestamp.trim()) : Number.NaN
  const now = kernel.clock.ms() / 1000
  if (!Number.isFinite(ts) || Math.abs(now - ts) > PUSH_WINDOW_SECONDS) {
    throw DatasourceErrors.staleTimestamp(`X-Service-Timestamp must be Unix seconds within ${PUSH_WINDOW_SECONDS} s of now.`)
  }
  // Past the window the timestamp check refuses the push by itself: its signature need not be kept longer.
  return unsigned ? null : { signature: given.slice(7), expiresAt: new Date((ts + PUSH_WINDOW_SECONDS) * 1000 + 1000) }
}

/** A signed push's signature (hex) and when it may be forgotten. */
export interface SignedPush {
  signature: string
  expiresAt: Date
}

/**
 * Housekeeping of the minute tick: forgets push signatures past their window (every instance's), and seals the URLs
 * of datasources stored before URLs were sealed (their `config.url` then keeps only the masked form).
 */
export async function maintainDatasources(kernel: Kernel): Promise<void> {
  await kernel.db.db.delete(datasourcePushSignatures).where(lt(datasourcePushSignatures.expiresAt, kernel.clock.now()))
  const legacy = await kernel.db.db
    .select({ id: datasources.id, config: datasources.config })
    .from(datasources)
    .where(and(eq(datasources.type, 'http_json'), isNull(datasources.urlSealed)))
    .limit(100)
  for (const r of legacy) {
    const c = r.config as StoredConfig
    if (!c.url) continue
    await kernel.db.db
      .update(datasources)
      .set({ urlSealed: kernel.secrets.seal(c.url, URL_CONTEXT), config: { ...c, url: maskUrl(c.url) } })
      .where(and(eq(datasources.id, r.id), isNull(datasources.urlSealed)))
  }
}
