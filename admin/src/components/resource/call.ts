import { api, unwrap } from '../../api/client'
import type { ManifestOperation } from '../../api/manifest-types'
import { en, type MessageKey } from '../../i18n/en'
import { t } from '../../i18n'

export type Row = Record<string, unknown>

/**
 * A manifest operation through the typed client's transport (bearer token, 401 handling, the error shape): the path
 * comes from the generated manifest, so it is one of schema.d.ts's paths, but only at run time.
 */
export function callOperation<T = unknown>(
  op: ManifestOperation,
  path: Record<string, string | number>,
  opts: { query?: Record<string, string | number | undefined>; body?: unknown } = {},
): Promise<T> {
  const client = api as unknown as Record<string, (p: string, init: object) => Promise<{ data?: T; error?: unknown; response: Response }>>
  const init = { params: { path, query: opts.query ?? {} }, ...(opts.body === undefined ? {} : { body: opts.body }) }
  return unwrap(client[op.method]!(op.path, init))
}

/** A catalog key that the manifest names (test/admin-api.test.ts checks that every one exists). */
export const tk = (key: string, values?: Record<string, string | number>) => t(key as MessageKey, values)

/** An API value (an outcome, a status) in the UI's language when the catalog names it, else as the API spells it. */
export const valueText = (value: string) => (`value.${value}` in en ? t(`value.${value}` as MessageKey) : value)
