import { type SQL, sql } from 'drizzle-orm'
import { analyticsEvents } from '../../../db/schema'
import { type DbOrTx, rowsOf } from '../../kernel/db'
import type { BeaconRow } from './beacon'
import { addDays, dayOf, isoStart } from './days'

// The analytics tables' queries. Counts come from two places: analytics_daily for the days the rollup has finished
// (before `rolled_until`) and analytics_events (raw) from that day on, so a query gives the same numbers before and
// after a rollup.

const NOTHING_ROLLED = '1970-01-01'
/** The rollup leaves a day alone until this long after it ended (a flush may still be writing its last beacons). */
export const ROLLUP_GRACE_MS = 10 * 60_000
export const RAW_RETENTION_DAYS = 90

export async function insertEvents(db: DbOrTx, rows: BeaconRow[]): Promise<void> {
  if (rows.length) await db.insert(analyticsEvents).values(rows)
}

async function q<T>(db: DbOrTx, query: SQL): Promise<T[]> {
  return rowsOf<T>(await db.execute(query))
}

/** The first day not rolled up yet. */
export async function rolledUntil(db: DbOrTx): Promise<string> {
  const [row] = await q<{ d: string }>(db, sql`select rolled_until::text as d from analytics_rollup_state where id = 1`)
  return row?.d ?? NOTHING_ROLLED
}

export type Dim = 'story_uuid' | 'day' | 'lang' | 'segment_key' | 'device' | 'referrer'

export interface Scope {
  spaceId: number
  /** First and last day, both included. */
  from: string
  to: string
  storyUuids?: string[]
}

/**
 * The counts of a Space between two days as one row set (story_uuid, day, lang, segment_key, device, referrer,
 * mounts), unknown values as ''. Finished, rolled-up days come from the rollups, the rest from raw rows.
 */
function counts(scope: Scope, watermark: string): SQL {
  const stories = scope.storyUuids
  const dailyTo = scope.to < watermark ? scope.to : addDays(watermark, -1)
  const rawFrom = scope.from > watermark ? scope.from : watermark
  const storyFilterDaily = stories ? sql` and story_uuid in (${sql.join(stories.map((s) => sql`${s}::uuid`), sql`, `)})` : sql``
  const storyFilterRaw = storyFilterDaily
  return sql`(
    select story_uuid, day, lang, segment_key, device, referrer, mounts::bigint as mounts from analytics_daily
     where space_id = ${scope.spaceId} and day >= ${scope.from}::date and day <= ${dailyTo}::date${storyFilterDaily}
    union all
    select story_uuid, (at at time zone 'UTC')::date as day, coalesce(lang, '') as lang, coalesce(segment_key, '') as segment_key,
           device, coalesce(referrer, '') as referrer, 1::bigint as mounts from analytics_events
     where space_id = ${scope.spaceId} and at >= ${isoStart(rawFrom)}::timestamptz and at < ${isoStart(addDays(scope.to, 1))}::timestamptz${storyFilterRaw}
  )`
}

export interface GroupOptions {
  /** Also count the mounts from this day on as `recent` (growth comparisons). */
  splitAt?: string
  /** Order by mounts (descending, then the dimensions) and page. */
  limit?: number
  offset?: number
  /** Leave out rows whose (single) dimension is '' (unknown). */
  knownOnly?: boolean
}

/** One group: the grouped dimensions ('' for the others and for unknown values), its mounts, and `recent` (splitAt). */
export type Grouped = Record<Dim, string> & { mounts: number; recent: number }
const DIMS: Dim[] = ['story_uuid', 'day', 'lang', 'segment_key', 'device', 'referrer']

/** Mounts grouped by `dims` over the scope (only groups with mounts). */
export async function grouped(db: DbOrTx, scope: Scope, dims: Dim[], opts: GroupOptions = {}): Promise<Grouped[]> {
  const watermark = await rolledUntil(db)
  const cols = dims.map((d) => (d === 'day' ? sql.raw(`c.day::text as day`) : sql.raw(`c.${d}::text as ${d}`)))
  const keys = sql.raw(dims.map((d) => `c.${d}`).join(', ') || '1')
  const recent = opts.splitAt ? sql`sum(c.mounts) filter (where c.day >= ${opts.splitAt}::date)` : sql`0`
  const known = opts.knownOnly && dims.length === 1 ? sql.raw(` where c.${dims[0]} <> ''`) : sql``
  const page =
    opts.limit !== undefined
      ? sql` order by mounts desc, ${sql.raw(dims.map((d) => `${d} asc`).join(', ') || '1')} limit ${opts.limit} offset ${opts.offset ?? 0}`
      : sql``
  const rows = await q<Record<string, unknown>>(
    db,
    sql`select ${sql.join([...cols, sql`sum(c.mounts)::bigint as mounts`, sql`coalesce(${recent}, 0)::bigint as recent`], sql`, `)}
        from ${counts(scope, watermark)} c${known}
        ${dims.length ? sql`group by ${keys}` : sql``}${page}`,
  )
  return rows.map((r) => {
    const out: Record<string, unknown> = {}
    for (const d of DIMS) out[d] = dims.includes(d) ? String(r[d] ?? '') : ''
    out.mounts = Number(r.mounts ?? 0)
    out.recent = Number(r.recent ?? 0)
    return out as Grouped
  })
}

/** How many Stories had mounts in the scope. */
export async function countStories(db: DbOrTx, scope: Scope): Promise<number> {
  const watermark = await rolledUntil(db)
  const [row] = await q<{ n: unknown }>(db, sql`select count(distinct c.story_uuid)::bigint as n from ${counts(scope, watermark)} c`)
  return Number(row?.n ?? 0)
}

export interface RollupResult {
  days: string[]
  deleted: number
  rolledUntil: string
}

/**
 * The daily job: rolls every finished day (ended at least ROLLUP_GRACE_MS ago) not rolled yet into analytics_daily,
 * moves the watermark, then deletes raw rows older than RAW_RETENTION_DAYS (only rolled days). One transaction for
 * the rollup, so the watermark and the rows it promises move together; re-running is harmless.
 */
export async function rollup(db: DbOrTx, now: Date): Promise<RollupResult> {
  const lastFinished = dayOf(now.getTime() - ROLLUP_GRACE_MS - 86_400_000)
  const days: string[] = []
  const until = await db.transaction(async (tx) => {
    const [state] = await q<{ d: string }>(tx, sql`select rolled_until::text as d from analytics_rollup_state where id = 1 for update`)
    let next = state?.d
    if (!next) {
      const [first] = await q<{ d: string | null }>(tx, sql`select min(at at time zone 'UTC')::date::text as d from analytics_events`)
      next = first?.d ?? addDays(lastFinished, 1)
    }
    while (next <= lastFinished) {
      await q(
        tx,
        sql`insert into analytics_daily (space_id, day, story_uuid, lang, segment_key, device, referrer, mounts)
            select space_id, ${next}::date, story_uuid, coalesce(lang, ''), coalesce(segment_key, ''), device, coalesce(referrer, ''), count(*)::int
              from analytics_events
             where at >= ${isoStart(next)}::timestamptz and at < ${isoStart(addDays(next, 1))}::timestamptz
             group by space_id, story_uuid, coalesce(lang, ''), coalesce(segment_key, ''), device, coalesce(referrer, '')
            on conflict do nothing`,
      )
      days.push(next)
      next = addDays(next, 1)
    }
    await q(
      tx,
      sql`insert into analytics_rollup_state (id, rolled_until, updated_at) values (1, ${next}::date, ${now.toISOString()}::timestamptz)
          on conflict (id) do update set rolled_until = excluded.rolled_until, updated_at = excluded.updated_at`,
    )
    return next
  })
  // Retention: raw rows of days older than 90 days, and only of days already rolled up.
  let cutoff = addDays(dayOf(now), -RAW_RETENTION_DAYS)
  if (cutoff > until) cutoff = until
  const [deleted] = await q<{ n: unknown }>(
    db,
    sql`with d as (delete from analytics_events where at < ${isoStart(cutoff)}::timestamptz returning 1) select count(*)::bigint as n from d`,
  )
  return { days, deleted: Number(deleted?.n ?? 0), rolledUntil: until }
}
