// Data in by push (webhook_push): the signature and timestamp checks, the schema check of the rows, and storing them.
// service.ts re-exports the public names.
import { hmacSha256Hex, safeEqual } from '../../kernel/crypto'
import { notFound, validationFailed } from '../../kernel/errors'
import type { Kernel } from '../../kernel/kernel'
import { DatasourceErrors, type FieldType } from './model'
import { storeEntries } from './entries'
import { requireDatasource, type Row, SECRET_CONTEXT, type StoredConfig } from './settings'
import type { Entry } from './store'

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
