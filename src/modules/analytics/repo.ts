import { type SQL, sql } from 'drizzle-orm'
import { type Database, type DbOrTx, rowsOf } from '../../kernel/db'
import type { BeaconRow } from './beacon'
import { addDays, dayOf, isoStart } from './days'

// The analytics tables' queries. Counts come from two places: analytics_daily for the days the rollup has finished
// (before `rolled_until`) and analytics_events (raw) from that day on, so a query gives the same numbers before and
// after a rollup.

const NOTHING_ROLLED = '1970-01-01'
/** The rollup leaves a day alone until this long after it ended (a flush may still be writing its last beacons). */
export const ROLLUP_GRACE_MS = 10 * 60_000
export const RAW_RETENTION_DAYS = 90

/**
 * One multi-row insert of accepted beacons. The rows go in as one JSON parameter expanded by `jsonb_to_recordset` —
 * one parameter rather than seven per row — so building the statement costs the event loop next to nothing even at
 * 1,000 rows, on both drivers.
 */
export async function insertEvents(database: Pick<Database, 'query'>, rows: BeaconRow[]): Promise<void> {
  if (!rows.length) return
  const json = JSON.stringify(
    rows.map((r) => ({ s: r.spaceId, u: r.storyUuid, g: r.segmentKey, l: r.lang, d: r.device, r: r.referrer, t: r.at.toISOString() })),
  )
  await database.query(
    `insert into analytics_events (space_id, story_uuid, segment_key, lang, device, referrer, at)
     select s, u, g, l, d, r, t from jsonb_to_recordset($1::jsonb) as x(s int, u uuid, g text, l text, d text, r text, t timestamptz)`,
    [json],
  )
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
  /** The first day not rolled up (rolledUntil), read once per operation. */
  watermark: string
}

type Part = { spaceId: number; from: string; to: string; storyUuids?: string[] }

/**
 * The counts of a Space between two days as one row set (story_uuid, day, lang, segment_key, device, referrer,
 * mounts), unknown values as ''. `rolled`: from the rollups; else from the raw rows.
 */
function counts(part: Part, rolled: boolean): SQL {
  const stories = part.storyUuids
  const storyFilter = stories ? sql` and story_uuid in (${sql.join(stories.map((s) => sql`${s}::uuid`), sql`, `)})` : sql``
  if (rolled) {
    return sql`(select story_uuid, day, lang, segment_key, device, referrer, mounts::bigint as mounts from analytics_daily
       where space_id = ${part.spaceId} and day >= ${part.from}::date and day <= ${part.to}::date${storyFilter})`
  }
  return sql`(select story_uuid, (at at time zone 'UTC')::date as day, coalesce(lang, '') as lang, coalesce(segment_key, '') as segment_key,
         device, coalesce(referrer, '') as referrer, 1::bigint as mounts from analytics_events
     where space_id = ${part.spaceId} and at >= ${isoStart(part.from)}::timestamptz and at < ${isoStart(addDays(part.to, 1))}::timestamptz${storyFilter})`
}

/** One group: the grouped dimensions ('' for the others and for unknown values), its mounts, and `recent` (splitAt). */
export type Grouped = Record<Dim, string> & { mounts: number; recent: number }
const DIMS: Dim[] = ['story_uuid', 'day', 'lang', 'segment_key', 'device', 'referrer']

function toGrouped(r: Record<string, unknown>, dims: readonly Dim[]): Grouped {
  const out: Record<string, unknown> = {}
  for (const d of DIMS) out[d] = dims.includes(d) ? String(r[d] ?? '') : ''
  out.mounts = Number(r.mounts ?? 0)
  out.recent = Number(r.recent ?? 0)
  return out as Grouped
}

/**
 * Aggregates of rolled-up days, kept in memory: a day before the watermark never changes (the rollup writes it once
 * and nothing updates it), so a result over such days stays true — on every instance, whatever the others do. Only
 * today's raw rows are counted afresh per request. Bounded by the number of rows held; the oldest entries go first.
 */
export class RollupCache {
  private entries = new Map<string, Grouped[][]>()
  private held = 0
  hits = 0
  misses = 0

  constructor(private maxRows = 400_000) {}

  get(key: string): Grouped[][] | undefined {
    const e = this.entries.get(key)
    if (e) this.hits++
    else this.misses++
    return e
  }

  set(key: string, value: Grouped[][]) {
    const size = value.reduce((n, l) => n + l.length, 0)
    if (size > this.maxRows) return
    while (this.held + size > this.maxRows && this.entries.size) {
      const [k, v] = this.entries.entries().next().value!
      this.entries.delete(k)
      this.held -= v.reduce((n, l) => n + l.length, 0)
    }
    this.entries.set(key, value)
    this.held += size
  }

  clear() {
    this.entries.clear()
    this.held = 0
  }
}

async function setsOf(db: DbOrTx, part: Part, rolled: boolean, sets: Dim[][], splitAt?: string): Promise<Grouped[][]> {
  const used = DIMS.filter((d) => sets.some((set) => set.includes(d)))
  const recent = splitAt ? sql`sum(c.mounts) filter (where c.day >= ${splitAt}::date)` : sql`0`
  const flags = used.map((d) => sql.raw(`grouping(c.${d}) as g_${d}`))
  const cols = used.map((d) => sql.raw(`c.${d}::text as ${d}`))
  const setsSql = sql.raw(sets.map((set) => `(${set.map((d) => `c.${d}`).join(', ')})`).join(', '))
  const rows = await q<Record<string, unknown>>(
    db,
    sql`select ${sql.join([...cols, ...flags, sql`sum(c.mounts)::bigint as mounts`, sql`coalesce(${recent}, 0)::bigint as recent`], sql`, `)}
        from ${counts(part, rolled)} c group by grouping sets (${setsSql})`,
  )
  const out: Grouped[][] = sets.map(() => [])
  for (const r of rows) {
    const k = sets.findIndex((set) => used.every((d) => Number(r[`g_${d}`]) === (set.includes(d) ? 0 : 1)))
    if (k !== -1) out[k].push(toGrouped(r, sets[k]))
  }
  return out.map((list, k) => sortGroups(list, sets[k]))
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const keyOf = (set: Dim[], g: Grouped) => (set.length === 1 ? g[set[0]] : set.map((d) => g[d]).join('\u0000'))
/** Most mounts first, ties by the grouped values. */
const sortGroups = (list: Grouped[], set: Dim[]) => list.sort((a, b) => b.mounts - a.mounts || cmp(keyOf(set, a), keyOf(set, b)))

/**
 * Mounts over the scope grouped by each of `sets` (a set is a list of dimensions), in one scan per source (GROUPING
 * SETS): rollups for the days before the watermark (from `cache` when it holds them), raw rows from it on. Returns
 * one list per set, most mounts first, ties by the grouped values; `splitAt` also counts the mounts from that day on
 * as `recent`.
 */
export async function groupedSets(db: DbOrTx, scope: Scope, sets: Dim[][], opts: { splitAt?: string; cache?: RollupCache } = {}): Promise<Grouped[][]> {
  const { watermark } = scope
  const dailyTo = scope.to < watermark ? scope.to : addDays(watermark, -1)
  const rawFrom = scope.from > watermark ? scope.from : watermark
  const base = { spaceId: scope.spaceId, storyUuids: scope.storyUuids }
  const rolledPart = async () => {
    if (scope.from > dailyTo) return sets.map(() => [] as Grouped[])
    const key = JSON.stringify([scope.spaceId, scope.from, dailyTo, scope.storyUuids ?? null, sets, opts.splitAt ?? null])
    const hit = opts.cache?.get(key)
    if (hit) return hit
    const fresh = await setsOf(db, { ...base, from: scope.from, to: dailyTo }, true, sets, opts.splitAt)
    opts.cache?.set(key, fresh)
    return fresh
  }
  const rawPart = () => (rawFrom > scope.to ? Promise.resolve(sets.map(() => [] as Grouped[])) : setsOf(db, { ...base, from: rawFrom, to: scope.to }, false, sets, opts.splitAt))
  const [rolled, raw] = await Promise.all([rolledPart(), rawPart()])
  // Both lists arrive sorted; one of them empty (a range of only finished days, or only today) needs no merge. The
  // lists are shared with the cache: read-only from here on.
  return sets.map((set, k) => {
    if (!raw[k].length) return rolled[k]
    if (!rolled[k].length) return raw[k]
    const merged = new Map<string, Grouped>()
    for (const g of rolled[k]) merged.set(keyOf(set, g), { ...g })
    for (const g of raw[k]) {
      const m = merged.get(keyOf(set, g))
      if (m) {
        m.mounts += g.mounts
        m.recent += g.recent
      } else merged.set(keyOf(set, g), { ...g })
    }
    return sortGroups([...merged.values()], set)
  })
}

/** Stories by mounts over the scope (most first, then by uuid), one page of them, and how many Stories had mounts. */
export async function topStories(db: DbOrTx, scope: Scope, limit: number, offset: number, cache?: RollupCache): Promise<{ total: number; rows: Grouped[] }> {
  const [all] = await groupedSets(db, scope, [['story_uuid']], { cache })
  return { total: all.length, rows: all.slice(offset, offset + limit) }
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
