// Data in by pull: one http_json pull (outbound fetch, JSONPath), the sync now or on the datasource's cron, and the
// minute tick's housekeeping. service.ts re-exports the public names.
import { and, asc, eq, isNull, lt, lte, sql } from 'drizzle-orm'
import { datasourcePulls, datasourcePushSignatures, datasources } from './tables'
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
  // Kept for "test a JSONPath against the last pull" (before the path runs: a path matching nothing is worth testing).
  const pulledAt = kernel.clock.now()
  await kernel.db.db
    .insert(datasourcePulls)
    .values({ datasourceId: row.id, document: { v: doc } as never, pulledAt })
    .onConflictDoUpdate({ target: datasourcePulls.datasourceId, set: { document: { v: doc } as never, pulledAt } })
    // The datasource deleted meanwhile (the foreign key): nothing to keep, and the pull's result goes nowhere either.
    .catch((err) => kernel.logger.warn('datasource: the last pull was not kept', { datasource: row.key, error: String(err).slice(0, 200) }))
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
    const now = kernel.clock.now()
    const [failed] = await kernel.db.db
      .update(datasources)
      .set({ status: 'error', lastError: error, updatedAt: now, nextRunAt: nextRunOf((row.config as StoredConfig).cron, now) })
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
  // A finished run moves the schedule to the cron's next tick after it: usually the one the tick's claim already set
  // (no write); after a pull by hand while a tick was due, that due tick is served by this pull.
  const next = nextRunOf((stored.row.config as StoredConfig).cron, kernel.clock.now())
  if (next && next.getTime() !== stored.row.nextRunAt?.getTime()) {
    await kernel.db.db.update(datasources).set({ nextRunAt: next }).where(eq(datasources.id, id))
  }
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

/** When `cron` next fires strictly after `after` (whole minutes, UTC); null when it does not parse or never fires. */
export function nextRunOf(cron: string | undefined, after: Date): Date | null {
  if (!cron) return null
  try {
    return parseCron(cron).nextRun(after)
  } catch {
    // An expression that no longer parses never fires (it was valid when saved).
    return null
  }
}

/** Rows the minute tick claims per statement; it repeats until none is due. */
export const DUE_BATCH = 500

/**
 * Claims the datasources due at `now` and enqueues their pulls, in one transaction per batch: the rows whose
 * `next_run_at` has passed, soonest first, locked with `FOR UPDATE SKIP LOCKED` (an instance running the same claim at
 * the same time passes over them), moved on to their cron's next tick after `now`, and their `datasources.sync` jobs
 * inserted (deduplicated per datasource and due time) — so a due datasource is pulled once across the fleet, and a
 * crash before the commit leaves it due. Reads only due rows, through the partial index on `next_run_at`; no cron is
 * parsed for a datasource that is not due. Returns the ids claimed.
 */
export async function claimDueDatasources(kernel: Kernel, now: Date, limit = DUE_BATCH): Promise<number[]> {
  const claimed: number[] = []
  for (;;) {
    const batch = await kernel.db.db.transaction(async (tx) => {
      const rows = await tx
        .select({ id: datasources.id, config: datasources.config, nextRunAt: datasources.nextRunAt })
        .from(datasources)
        .where(lte(datasources.nextRunAt, now))
        .orderBy(asc(datasources.nextRunAt))
        .limit(limit)
        .for('update', { skipLocked: true })
      if (!rows.length) return []
      const moved = rows.map((r) => ({ id: r.id, next: nextRunOf((r.config as StoredConfig).cron, now)?.toISOString() ?? null }))
      await tx.execute(sql`update datasources d set next_run_at = v.next
        from json_to_recordset(${JSON.stringify(moved)}::json) as v(id int, next timestamptz) where d.id = v.id`)
      await kernel.jobs.enqueueMany(
        tx,
        rows.map((r) => ({ queue: 'datasources.sync' as const, payload: { datasourceId: r.id }, dedupeKey: `ds:${r.id}:${r.nextRunAt!.toISOString()}` })),
      )
      return rows.map((r) => r.id)
    })
    claimed.push(...batch)
    if (batch.length < limit) return claimed
  }
}

/**
 * Gives http_json datasources without a `next_run_at` their cron's next tick after `now` (rows stored before the
 * column existed, or by an instance of an older version during a rolling upgrade). Served by a partial index that
 * holds only such rows, so it costs nothing once they are scheduled.
 */
export async function scheduleUnscheduled(kernel: Kernel, now: Date, limit = DUE_BATCH): Promise<number> {
  const rows = await kernel.db.db
    .select({ id: datasources.id, config: datasources.config })
    .from(datasources)
    .where(and(eq(datasources.type, 'http_json'), isNull(datasources.nextRunAt)))
    .orderBy(asc(datasources.id))
    .limit(limit)
  const moved = rows.flatMap((r) => {
    const next = nextRunOf((r.config as StoredConfig).cron, now)
    return next ? [{ id: r.id, next: next.toISOString() }] : []
  })
  if (moved.length) {
    await kernel.db.db.execute(sql`update datasources d set next_run_at = v.next
      from json_to_recordset(${JSON.stringify(moved)}::json) as v(id int, next timestamptz) where d.id = v.id and d.next_run_at is null`)
  }
  return moved.length
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
