// Data in by pull: one http_json pull (outbound fetch, JSONPath), the sync now or on the datasource's cron, and the
// minute tick's housekeeping. service.ts re-exports the public names.
import { and, eq, isNull, lt } from 'drizzle-orm'
import { datasourcePushSignatures, datasources } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { notFound } from '../../kernel/errors'
import { parseCron } from '../../kernel/jobs'
import type { Kernel } from '../../kernel/kernel'
import { OutboundError, outboundFetch } from '../../kernel/outbound'
import { DatasourceErrors, type SyncResult } from './model'
import { storeEntries } from './entries'
import { compileJsonPath, HEADERS_CONTEXT, maskUrl, realUrl, requireDatasource, type Row, type StoredConfig, URL_CONTEXT } from './settings'
import type { DatasourceStore, Entry } from './store'

/** Pull limits (spec 4.13 and the issue): the whole call within 10 s, at most 5 MB of body, no redirects. */
export const PULL_TIMEOUT_MS = 10_000
export const PULL_MAX_BYTES = 5 * 1024 * 1024

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
