// A datasource row's settings: the non-secret `config`, the sealed URL, headers and push secret, their checks on
// create and update, the masked view, and finding a row by key. service.ts re-exports the public names.
import { and, eq } from 'drizzle-orm'
import { JSONPathEnvironment } from 'json-p3'
import { datasources } from './tables'
import { randomSecret, sha256Hex } from '../../kernel/crypto'
import { notFound, validationFailed } from '../../kernel/errors'
import { parseCron } from '../../kernel/jobs'
import type { Kernel } from '../../kernel/kernel'
import { OutboundError, parseOutboundUrl, resolveTarget } from '../../kernel/outbound'
import {
  type ConfigInput,
  type DatasourceView,
  FIELD_TYPES,
  type FieldType,
  KEY_PATTERN,
  MASK,
  MAX_HEADERS,
  MAX_SCHEMA_FIELDS,
} from './model'

export const HEADERS_CONTEXT = 'datasource.headers'
export const URL_CONTEXT = 'datasource.url'
export const SECRET_CONTEXT = 'datasource.secret'

export type Row = typeof datasources.$inferSelect
export type DsType = Row['type']

/** The non-secret settings, as stored in `config`. */
export interface StoredConfig {
  url?: string
  json_path?: string
  cron?: string
  header_names?: string[]
  allow_unsigned?: boolean
  schema?: Record<string, FieldType>
}

export const KEY_RE = new RegExp(KEY_PATTERN)
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
export function realUrl(kernel: Kernel, row: Row): string | undefined {
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

export function view(row: Row): DatasourceView {
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
    ...(row.type === 'http_json' ? { next_run_at: row.nextRunAt?.toISOString() ?? null } : {}),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

// ---- config validation ----

const HTTP_FIELDS = ['url', 'json_path', 'cron', 'headers'] as const
const PUSH_FIELDS = ['secret_hash', 'allow_unsigned', 'schema'] as const

export interface CheckedConfig {
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
export async function checkConfig(kernel: Kernel, type: DsType, input: ConfigInput, current: Row | null): Promise<CheckedConfig> {
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

export const fingerprint = (secret: string) => sha256Hex(secret).slice(0, 16)

export async function requireDatasource(kernel: Kernel, spaceId: number, key: string): Promise<Row> {
  if (!KEY_RE.test(key)) throw notFound('Datasource')
  const [row] = await kernel.db.db
    .select()
    .from(datasources)
    .where(and(eq(datasources.spaceId, spaceId), eq(datasources.key, key)))
    .limit(1)
  if (!row) throw notFound('Datasource')
  return row
}
