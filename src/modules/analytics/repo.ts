import { type SQL, sql } from 'drizzle-orm'
import { type Database, type DbOrTx, rowsOf } from '../../kernel/db'
import type { BeaconRow } from './beacon'
import { addDays, DAY_MS, dayOf, dayStart } from './days'

// The analytics tables' queries. Counts come from the rollups (analytics_daily and its per-Story totals
// analytics_story_daily) for everything before the rollup's watermark (a few minutes ago) and from the raw rows
// (analytics_events) after it, so a query gives the same numbers before and after any rollup.

/** The rollup's unit: it adds every finished five minutes (UTC, from midnight) to the rollups at once. */
export const ROLLUP_SLOT_MS = 5 * 60_000
/**
 * A flush holding a beacon older than this goes through insertLateEvents, which also counts it into slots rolled up
 * meanwhile. A healthy flush writes within about a second of the beacon.
 */
export const LATE_MS = 60_000
/**
 * The rollup leaves a slot alone until this long after it ended. Above LATE_MS, so a beacon written the ordinary way
 * cannot fall into a rolled slot; the gap absorbs a slow insert and clock differences between instances.
 */
export const ROLLUP_GRACE_MS = 3 * 60_000
export const RAW_RETENTION_DAYS = 90

const slotFloor = (ms: number) => Math.floor(ms / ROLLUP_SLOT_MS) * ROLLUP_SLOT_MS
/** Raw rows before this are final (but for late writes); in 10-second steps, so requests share a cached instant. */
const settledBefore = (now: number) => Math.floor((now - ROLLUP_GRACE_MS) / 10_000) * 10_000

const rowsJson = (rows: BeaconRow[]) =>
  JSON.stringify(rows.map((r) => ({ s: r.spaceId, u: r.storyUuid, g: r.segmentKey, l: r.lang, d: r.device, r: r.referrer, t: r.at.toISOString() })))

/**
 * One multi-row insert of accepted beacons. The rows go in as one JSON parameter expanded by `jsonb_to_recordset` —
 * one parameter rather than seven per row — so building the statement costs the event loop next to nothing even at
 * 1,000 rows, on both drivers.
 */
export async function insertEvents(database: Pick<Database, 'query'>, rows: BeaconRow[]): Promise<void> {
  if (!rows.length) return
  await database.query(
    `insert into analytics_events (space_id, story_uuid, segment_key, lang, device, referrer, at)
     select s, u, g, l, d, r, t from jsonb_to_recordset($1::jsonb) as x(s int, u uuid, g text, l text, d text, r text, t timestamptz)`,
    [rowsJson(rows)],
  )
}

async function q<T>(db: DbOrTx, query: SQL): Promise<T[]> {
  return rowsOf<T>(await db.execute(query))
}

/** How far the rollup has gone. */
export interface Watermark {
  /** Every mount before this instant (epoch ms, a slot boundary) is in the rollups; raw rows count from it on. */
  at: number
  /** Late writes into rolled slots so far: part of every cached aggregate's key, so such a write outdates them. */
  revision: number
}

type StateRow = { d: string; m: number | string; r: number | string }
const atOf = (s: StateRow) => dayStart(s.d) + Number(s.m) * 60_000
const iso = (ms: number) => new Date(ms).toISOString()
const STATE = sql`select rolled_until::text as d, rolled_minutes as m, revision as r from analytics_rollup_state where id = 1`

export async function readWatermark(db: DbOrTx): Promise<Watermark> {
  const [row] = await q<StateRow>(db, STATE)
  return row ? { at: atOf(row), revision: Number(row.r) } : { at: 0, revision: 0 }
}
const same = (a: Watermark, b: Watermark) => a.at === b.at && a.revision === b.revision

export type Dim = 'story_uuid' | 'day' | 'lang' | 'segment_key' | 'device' | 'referrer'

export interface Scope {
  spaceId: number
  /** First and last day, both included. */
  from: string
  to: string
  storyUuids?: string[]
  /** The watermark as last read (readWatermark): its revision keys the cache; groupedSets moves it on when a rollup
   *  overtook it while it read the rollups. */
  watermark: Watermark
  /** The clock's time (epoch ms): raw rows older than ROLLUP_GRACE_MS are settled and cached. */
  now: number
}

type Base = { spaceId: number; storyUuids?: string[] }
/** Rolled-up days from..to (both included) of the wide rollups or of the per-Story totals; or raw rows in [from, to). */
type Source = { kind: 'wide' | 'totals'; from: string; to: string } | { kind: 'raw'; from: number; to: number }

/**
 * The counts of a Space from one source as one row set: (story_uuid, day, lang, segment_key, device, referrer,
 * mounts), unknown values as ''; the totals have story_uuid, day and mounts only.
 */
function counts(base: Base, src: Source): SQL {
  const stories = base.storyUuids
  const storyFilter = stories ? sql` and story_uuid in (${sql.join(stories.map((s) => sql`${s}::uuid`), sql`, `)})` : sql``
  if (src.kind === 'raw') {
    return sql`(select story_uuid, (at at time zone 'UTC')::date as day, coalesce(lang, '') as lang, coalesce(segment_key, '') as segment_key,
           device, coalesce(referrer, '') as referrer, 1::bigint as mounts from analytics_events
       where space_id = ${base.spaceId} and at >= ${iso(src.from)}::timestamptz and at < ${iso(src.to)}::timestamptz${storyFilter})`
  }
  if (src.kind === 'totals') {
    return sql`(select story_uuid, day, mounts::bigint as mounts from analytics_story_daily
       where space_id = ${base.spaceId} and day >= ${src.from}::date and day <= ${src.to}::date${storyFilter})`
  }
  return sql`(select story_uuid, day, lang, segment_key, device, referrer, mounts::bigint as mounts from analytics_daily
     where space_id = ${base.spaceId} and day >= ${src.from}::date and day <= ${src.to}::date${storyFilter})`
}

/** One group: the grouped dimensions ('' for the others and for unknown values), its mounts, and `recent` (splitAt). */
export type Grouped = Record<Dim, string> & { mounts: number; recent: number }
const DIMS: Dim[] = ['story_uuid', 'day', 'lang', 'segment_key', 'device', 'referrer']
/** The dimensions analytics_story_daily has: sets of only these read one row per Story and day. */
const TOTALS_DIMS: ReadonlySet<Dim> = new Set(['story_uuid', 'day'])

function toGrouped(r: Record<string, unknown>, dims: readonly Dim[]): Grouped {
  const out: Record<string, unknown> = {}
  for (const d of DIMS) out[d] = dims.includes(d) ? String(r[d] ?? '') : ''
  out.mounts = Number(r.mounts ?? 0)
  out.recent = Number(r.recent ?? 0)
  return out as Grouped
}

interface CacheEntry {
  lists: Grouped[][]
  size: number
  /** The instant the lists count up to. */
  at?: number
}

/**
 * Each query's counts up to a settled instant, kept in memory and moved forward by the raw rows since (groupedSets).
 * What they count changes only through a late write, which bumps the watermark's revision (part of every key), so they
 * stay true on every instance, whatever the others do. Bounded by the number of rows held; the oldest entries go
 * first.
 */
export class RollupCache {
  private entries = new Map<string, CacheEntry>()
  private held = 0
  private revision = 0
  hits = 0
  misses = 0

  constructor(private maxRows = 400_000) {}

  /** After a late write nothing held is reachable again: free it. */
  sync(w: Watermark) {
    if (w.revision > this.revision) {
      this.clear()
      this.revision = w.revision
    }
  }

  get(key: string): CacheEntry | undefined {
    const e = this.entries.get(key)
    if (e) this.hits++
    else this.misses++
    return e
  }

  set(key: string, lists: Grouped[][], at?: number) {
    const size = lists.reduce((n, l) => n + l.length, 0)
    this.delete(key)
    if (size > this.maxRows) return
    while (this.held + size > this.maxRows && this.entries.size) this.delete(this.entries.keys().next().value!)
    this.entries.set(key, { lists, size, at })
    this.held += size
  }

  private delete(key: string) {
    const e = this.entries.get(key)
    if (!e) return
    this.entries.delete(key)
    this.held -= e.size
  }

  clear() {
    this.entries.clear()
    this.held = 0
  }
}

async function setsOf(db: DbOrTx, base: Base, src: Source, sets: Dim[][], splitAt?: string): Promise<Grouped[][]> {
  const used = DIMS.filter((d) => sets.some((set) => set.includes(d)))
  const recent = splitAt ? sql`sum(c.mounts) filter (where c.day >= ${splitAt}::date)` : sql`0`
  const flags = used.map((d) => sql.raw(`grouping(c.${d}) as g_${d}`))
  const cols = used.map((d) => sql.raw(`c.${d}::text as ${d}`))
  const setsSql = sql.raw(sets.map((set) => `(${set.map((d) => `c.${d}`).join(', ')})`).join(', '))
  const rows = await q<Record<string, unknown>>(
    db,
    sql`select ${sql.join([...cols, ...flags, sql`sum(c.mounts)::bigint as mounts`, sql`coalesce(${recent}, 0)::bigint as recent`], sql`, `)}
        from ${counts(base, src)} c group by grouping sets (${setsSql})`,
  )
  const out: Grouped[][] = sets.map(() => [])
  for (const r of rows) {
    const k = sets.findIndex((set) => used.every((d) => Number(r[`g_${d}`]) === (set.includes(d) ? 0 : 1)))
    if (k !== -1) out[k].push(toGrouped(r, sets[k]))
  }
  return out.map((list, k) => sortGroups(list, sets[k]))
}

/** Rolled-up days from..to: sets of Stories and days from the per-Story totals, the others from the wide rollups. */
async function rolledSets(db: DbOrTx, base: Base, from: string, to: string, sets: Dim[][], splitAt?: string): Promise<Grouped[][]> {
  const narrow = sets.filter((set) => set.every((d) => TOTALS_DIMS.has(d)))
  const wide = sets.filter((set) => !narrow.includes(set))
  const [n, w] = await Promise.all([
    narrow.length ? setsOf(db, base, { kind: 'totals', from, to }, narrow, splitAt) : [],
    wide.length ? setsOf(db, base, { kind: 'wide', from, to }, wide, splitAt) : [],
  ])
  return sets.map((set) => (narrow.includes(set) ? n[narrow.indexOf(set)] : w[wide.indexOf(set)]))
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const keyOf = (set: Dim[], g: Grouped) => (set.length === 1 ? g[set[0]] : set.map((d) => g[d]).join('\u0000'))
/** Most mounts first, ties by the grouped values. Sets with `day` stay in no particular order: they only feed series. */
const sortGroups = (list: Grouped[], set: Dim[]) => (set.includes('day') ? list : list.sort((a, b) => b.mounts - a.mounts || cmp(keyOf(set, a), keyOf(set, b))))

/**
 * One set's groups from several sources, summed. The longest list (usually a cached year of finished days) is not
 * copied: its groups go out as they are, unless a shorter list adds to them. A set with `day` is only concatenated:
 * its consumers add up per day anyway (a group may appear once per source), and keying a year of days per Story
 * would cost more than the rest of the request. The result is shared with the cache: read-only.
 */
function merge(set: Dim[], lists: Grouped[][], keyed = false): Grouped[] {
  const full = lists.filter((l) => l.length)
  if (full.length <= 1) return full[0] ?? []
  if (!keyed && set.includes('day')) return full.flat()
  full.sort((a, b) => b.length - a.length)
  const extra = new Map<string, Grouped>()
  for (const list of full.slice(1)) {
    for (const g of list) {
      const k = keyOf(set, g)
      const m = extra.get(k)
      if (m) {
        m.mounts += g.mounts
        m.recent += g.recent
      } else extra.set(k, { ...g })
    }
  }
  const out: Grouped[] = []
  for (const g of full[0]) {
    const k = keyOf(set, g)
    const m = extra.get(k)
    if (!m) out.push(g)
    else {
      out.push({ ...g, mounts: g.mounts + m.mounts, recent: g.recent + m.recent })
      extra.delete(k)
    }
  }
  for (const m of extra.values()) out.push(m)
  return sortGroups(out, set)
}

/**
 * Mounts over the scope grouped by each of `sets` (a set is a list of dimensions), in one scan per source (GROUPING
 * SETS). Returns one list per set, most mounts first, ties by the grouped values; a set with `day` is unordered and
 * may list a group once per source (add them up). `splitAt` also counts the mounts from that day on as `recent`.
 *
 * The counts up to a settled instant — raw rows older than ROLLUP_GRACE_MS, final but for late writes, which bump the
 * revision in the key — are built once from the rollups (everything before the watermark) and the raw rows after it,
 * then held in `cache` and moved forward by the raw rows since; each request counts afresh only the rows after the
 * settled instant, the last few minutes. Without a cache the watermark is the limit.
 */
export async function groupedSets(db: DbOrTx, scope: Scope, sets: Dim[][], opts: { splitAt?: string; cache?: RollupCache } = {}): Promise<Grouped[][]> {
  const { cache, splitAt } = opts
  const rawTo = dayStart(scope.to) + DAY_MS
  const settleAt = Math.min(rawTo, Math.max(dayStart(scope.from), settledBefore(scope.now)))
  cache?.sync(scope.watermark)
  // A page of Stories is cached Story by Story: when the page changes, only the Stories new to it are read in full.
  const stories = scope.storyUuids
  const sharded = !!cache && !!stories && stories.length > 0 && sets.every((set) => set.includes('story_uuid'))
  const shards = sharded ? stories.length : 1
  const filter = (idx: number[]) => (sharded ? idx.map((i) => stories[i]) : stories)
  const base = (idx: number[]): Base => ({ spaceId: scope.spaceId, storyUuids: filter(idx) })
  /** Lists of a read over the shards `idx`, one per shard. */
  const split = (idx: number[], lists: Grouped[][]): Grouped[][][] => {
    if (!sharded) return [lists]
    const at = new Map(idx.map((i, n) => [stories[i], n]))
    const out = idx.map(() => sets.map(() => [] as Grouped[]))
    lists.forEach((list, k) => {
      for (const g of list) out[at.get(g.story_uuid)!]?.[k].push(g)
    })
    return out
  }
  const keyOfShard = (i: number) =>
    JSON.stringify([scope.spaceId, scope.from, scope.to, sharded ? stories[i] : (stories ?? null), sets, splitAt ?? null, scope.watermark.revision])

  const settled: Settled[] = new Array(shards)
  const cold: number[] = []
  const behind = new Map<number, number[]>()
  for (let i = 0; i < shards; i++) {
    const hit = cache?.get(keyOfShard(i))
    if (hit?.at === undefined || hit.at > settleAt) cold.push(i)
    else {
      settled[i] = { lists: hit.lists, at: hit.at, cached: true }
      if (hit.at < settleAt) (behind.get(hit.at) ?? behind.set(hit.at, []).get(hit.at)!).push(i)
    }
  }
  await Promise.all([
    cold.length
      ? settledSets(db, { ...scope, storyUuids: filter(cold) }, sets, cache ? settleAt : null, splitAt).then((r) => {
          split(cold, r.lists).forEach((lists, n) => (settled[cold[n]] = { lists, at: r.at, valid: r.valid }))
          scope.watermark = r.watermark
        })
      : null,
    ...[...behind].map(async ([from, idx]) => {
      const delta = split(idx, await setsOf(db, base(idx), { kind: 'raw', from, to: settleAt }, sets, splitAt))
      idx.forEach((i, n) => (settled[i] = { lists: sets.map((set, k) => merge(set, [settled[i].lists[k], delta[n][k]], true)), at: settleAt }))
    }),
  ])
  if (cache) settled.forEach((e, i) => !e.cached && e.valid !== false && cache.set(keyOfShard(i), e.lists, e.at))

  // The rows after the settled instant, read afresh (one read per instant the shards reached: as a rule one).
  const byAt = new Map<number, number[]>()
  settled.forEach((e, i) => e.at < rawTo && (byAt.get(e.at) ?? byAt.set(e.at, []).get(e.at)!).push(i))
  const fresh = await Promise.all([...byAt].map(([from, idx]) => setsOf(db, base(idx), { kind: 'raw', from, to: rawTo }, sets, splitAt)))
  return sets.map((set, k) => {
    const own = sharded ? settled.flatMap((e) => e.lists[k]) : settled[0].lists[k]
    const out = merge(set, [own, ...fresh.map((f) => f[k])])
    // A concatenation of the Stories' lists is in no order yet.
    return sharded && out === own ? sortGroups(own, set) : out
  })
}

interface Settled {
  lists: Grouped[][]
  /** The instant the lists count up to. */
  at: number
  /** Straight from the cache (nothing to store again). */
  cached?: boolean
  /** False when rollups overtook the reads four times: answered, not cached. */
  valid?: boolean
}

/**
 * The scope's counts up to `settleAt` (or up to the watermark): the rollups for everything before the watermark, raw
 * rows from it on. The watermark is read again after the rollups: a rollup that committed in between may have added
 * rows the raw read also counts, so then it all is read again from the new watermark (returned).
 */
async function settledSets(db: DbOrTx, scope: Scope, sets: Dim[][], settleAt: number | null, splitAt?: string) {
  const base: Base = { spaceId: scope.spaceId, storyUuids: scope.storyUuids }
  const start = dayStart(scope.from)
  const rawTo = dayStart(scope.to) + DAY_MS
  const none = () => sets.map(() => [] as Grouped[])
  for (let attempt = 0; ; attempt++) {
    const w = scope.watermark
    const at = Math.min(Math.max(w.at, start), rawTo)
    const rolled = at > start ? await rolledSets(db, base, scope.from, dayOf(at - 1), sets, splitAt) : none()
    const after = await readWatermark(db)
    const valid = same(after, w)
    // Four rollups cannot overtake one request in practice; should they, the last reads are answered, uncached.
    if (!valid && attempt < 3) {
      scope.watermark = after
      continue
    }
    const until = settleAt === null ? at : Math.max(at, settleAt)
    const raw = until > at ? await setsOf(db, base, { kind: 'raw', from: at, to: until }, sets, splitAt) : none()
    return { lists: sets.map((set, k) => merge(set, [rolled[k], raw[k]], true)), at: until, valid, watermark: scope.watermark }
  }
}

/** Stories by mounts over the scope (most first, then by uuid), one page of them, and how many Stories had mounts. */
export async function topStories(db: DbOrTx, scope: Scope, limit: number, offset: number, cache?: RollupCache): Promise<{ total: number; rows: Grouped[] }> {
  const [all] = await groupedSets(db, scope, [['story_uuid']], { cache })
  return { total: all.length, rows: all.slice(offset, offset + limit) }
}

/**
 * Adds the mounts of `source` (raw-shaped rows: space_id, story_uuid, lang, segment_key, device, referrer, at) to the
 * rollups of their days, wide and per Story, in one statement. Returns how many mounts it added.
 */
async function addToRollups(tx: DbOrTx, source: SQL): Promise<number> {
  const [r] = await q<{ n: unknown }>(
    tx,
    sql`with c as (
          select space_id, (at at time zone 'UTC')::date as day, story_uuid, coalesce(lang, '') as lang, coalesce(segment_key, '') as segment_key,
                 device, coalesce(referrer, '') as referrer, count(*)::int as mounts
            from ${source} e group by 1, 2, 3, 4, 5, 6, 7),
        wide as (
          insert into analytics_daily (space_id, day, story_uuid, lang, segment_key, device, referrer, mounts)
          select space_id, day, story_uuid, lang, segment_key, device, referrer, mounts from c
          on conflict (space_id, day, story_uuid, lang, segment_key, device, referrer) do update set mounts = analytics_daily.mounts + excluded.mounts),
        totals as (
          insert into analytics_story_daily (space_id, day, story_uuid, mounts)
          select space_id, day, story_uuid, sum(mounts)::int from c group by 1, 2, 3
          on conflict (space_id, day, story_uuid) do update set mounts = analytics_story_daily.mounts + excluded.mounts)
        select coalesce(sum(mounts), 0)::bigint as n from c`,
  )
  return Number(r?.n ?? 0)
}

const lockState = (tx: DbOrTx) => q<StateRow>(tx, sql`${STATE} for update`)

/**
 * Beacons written late (a flush the database refused for a while): inserted like any batch, and those before the
 * watermark — in slots rolled up meanwhile — are also added to the rollups. The revision is bumped, since cached
 * aggregates may hold the raw rows of those minutes already settled. The state row's lock orders this against a
 * rollup in progress. Returns how many mounts went into rolled slots.
 */
export async function insertLateEvents(db: DbOrTx, rows: BeaconRow[]): Promise<number> {
  if (!rows.length) return 0
  const json = rowsJson(rows)
  const recordset = sql`jsonb_to_recordset(${json}::jsonb) as x(s int, u uuid, g text, l text, d text, r text, t timestamptz)`
  return db.transaction(async (tx) => {
    const [state] = await lockState(tx)
    await tx.execute(sql`insert into analytics_events (space_id, story_uuid, segment_key, lang, device, referrer, at) select s, u, g, l, d, r, t from ${recordset}`)
    if (!state) return 0
    const added = await addToRollups(
      tx,
      sql`(select s as space_id, u as story_uuid, g as segment_key, l as lang, d as device, r as referrer, t as at from ${recordset} where t < ${iso(atOf(state))}::timestamptz)`,
    )
    await tx.execute(sql`update analytics_rollup_state set revision = revision + 1 where id = 1`)
    return added
  })
}

export interface RollupResult {
  /** Slots rolled up by this run, and the mounts they held. */
  slots: number
  mounts: number
  /** Raw rows deleted (older than the retention) from the default partition. */
  deleted: number
  /** Day partitions of raw rows dropped whole (older than the retention). */
  partitionsDropped: number
  /** The new watermark (ISO instant). */
  rolledUntil: string
}

/**
 * The rollup job: adds every finished slot (ended at least ROLLUP_GRACE_MS ago) not rolled yet to the rollups, moves
 * the watermark, then deletes raw rows of days older than RAW_RETENTION_DAYS (only rolled ones). One transaction for
 * the rollup, so the watermark and the counts it promises move together; re-running is harmless.
 */
export async function rollup(db: DbOrTx, now: Date): Promise<RollupResult> {
  const end = slotFloor(now.getTime() - ROLLUP_GRACE_MS)
  const done = await db.transaction(async (tx) => {
    const [state] = await lockState(tx)
    let start = state ? atOf(state) : null
    if (start === null) {
      const [first] = await q<{ ms: number | string | null }>(tx, sql`select floor(extract(epoch from min(at)) * 1000)::float8 as ms from analytics_events`)
      start = first?.ms != null ? slotFloor(Number(first.ms)) : end
    }
    const mounts =
      start < end ? await addToRollups(tx, sql`(select * from analytics_events where at >= ${iso(start)}::timestamptz and at < ${iso(end)}::timestamptz)`) : 0
    // The watermark never moves back (a clock set back runs into slots already rolled).
    const until = Math.max(start, end)
    const day = dayOf(until)
    await q(
      tx,
      sql`insert into analytics_rollup_state (id, rolled_until, rolled_minutes, updated_at)
          values (1, ${day}::date, ${(until - dayStart(day)) / 60_000}, ${now.toISOString()}::timestamptz)
          on conflict (id) do update set rolled_until = excluded.rolled_until, rolled_minutes = excluded.rolled_minutes, updated_at = excluded.updated_at`,
    )
    return { slots: Math.max(0, (end - start) / ROLLUP_SLOT_MS), mounts, until }
  })
  // Retention: raw rows of days older than 90 days, and only of slots already rolled up — whole day partitions
  // dropped, no bulk DELETE (no dead rows for vacuum, no index churn); rows in the default partition deleted.
  const cutoff = Math.min(dayStart(addDays(dayOf(now), -RAW_RETENTION_DAYS)), done.until)
  const { dropped } = await maintainRawPartitions(db, now, cutoff)
  const [deleted] = await q<{ n: unknown }>(
    db,
    sql`with d as (delete from analytics_events_default where at < ${iso(cutoff)}::timestamptz returning 1) select count(*)::bigint as n from d`,
  )
  return { slots: done.slots, mounts: done.mounts, deleted: Number(deleted?.n ?? 0), partitionsDropped: dropped, rolledUntil: iso(done.until) }
}

/** Day partitions kept ready ahead of today (the rollup runs every five minutes; one is enough, three absorb outages). */
export const RAW_PARTITIONS_AHEAD = 3
const PARTITION_RE = /^analytics_events_p(\d{4})(\d{2})(\d{2})$/
const partitionName = (day: string) => `analytics_events_p${day.replaceAll('-', '')}`

/**
 * Raw rows (analytics_events) are partitioned by UTC day (`PARTITION BY RANGE (at)`, one `analytics_events_pYYYYMMDD`
 * per day, and `analytics_events_default` for rows of a day without one). Creates today's and the next
 * RAW_PARTITIONS_AHEAD days' partitions (skipping a day the default partition already holds rows of: those stay
 * there), and drops every day partition that ends at or before `cutoff`. Several instances may run it at once.
 */
export async function maintainRawPartitions(db: DbOrTx, now: Date, cutoff: number): Promise<{ created: number; dropped: number }> {
  const existing = await q<{ name: string }>(
    db,
    sql`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'analytics_events'::regclass`,
  )
  const names = new Set(existing.map((r) => r.name))
  let created = 0
  for (let i = 0; i <= RAW_PARTITIONS_AHEAD; i++) {
    const day = addDays(dayOf(now), i)
    const name = partitionName(day)
    if (names.has(name)) continue
    const from = iso(dayStart(day))
    const to = iso(dayStart(day) + DAY_MS)
    const [held] = await q<{ held: boolean }>(
      db,
      sql`select exists(select 1 from analytics_events_default where at >= ${from}::timestamptz and at < ${to}::timestamptz) as held`,
    )
    if (held?.held) continue
    try {
      await q(
        db,
        sql.raw(`create table if not exists "${name}" partition of analytics_events for values from ('${from}') to ('${to}')`),
      )
      created++
    } catch {
      // Another instance created it, or a row of that day reached the default partition meanwhile: the next run sees.
    }
  }
  let dropped = 0
  for (const name of names) {
    const m = PARTITION_RE.exec(name)
    if (!m) continue
    const end = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) + DAY_MS
    if (end > cutoff) continue
    await q(db, sql.raw(`drop table if exists "${name}"`))
    dropped++
  }
  return { created, dropped }
}
