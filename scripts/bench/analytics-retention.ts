// Raw analytics retention on Postgres: one day of beacons removed by DELETE from one table (as before) against DROP
// TABLE of the day's partition (as now). Both tables hold the same rows (DAYS days × ROWS_PER_DAY) and the same two
// indexes; the script measures the removal's time, the WAL it writes, and what the table and its indexes weigh after.
//
//   bun scripts/bench/analytics-retention.ts [--url=postgres://postgres@127.0.0.1:5432/test] [--days=5] [--rows=200000]
//
// It works in a schema of its own (`bench_retention`), dropped at the end.
import postgres from 'postgres'

const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback
const url = arg('url', process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test')
const DAYS = Number(arg('days', '5'))
const ROWS_PER_DAY = Number(arg('rows', '200000'))
const DAY0 = '2026-08-01'

const sql = postgres(url, { max: 1, onnotice: () => {} })
const columns = `space_id integer not null, story_uuid uuid not null, segment_key text, lang text, device text not null, referrer text, at timestamptz not null`
const fill = (table: string) => `insert into ${table} (space_id, story_uuid, segment_key, lang, device, referrer, at)
  select (g % 5000) + 1, md5((g % 20000)::text)::uuid, null, 'en', (array['desktop','mobile','tablet'])[g % 3 + 1],
         case when g % 4 = 0 then 'https://ref.example' end,
         '${DAY0}'::timestamptz + (g::float8 / ${ROWS_PER_DAY}) * interval '1 day'
  from generate_series(0, ${DAYS * ROWS_PER_DAY - 1}) g`

async function lsn(): Promise<string> {
  const [r] = await sql.unsafe(`select pg_current_wal_lsn()::text as l`)
  return r.l
}
async function walSince(from: string): Promise<number> {
  const [r] = await sql.unsafe(`select pg_wal_lsn_diff(pg_current_wal_lsn(), '${from}')::float8 as b`)
  return Number(r.b)
}
async function bytes(table: string): Promise<number> {
  const [r] = await sql.unsafe(`select coalesce(sum(pg_total_relation_size(c.oid)), 0)::float8 as b from pg_class c
    where c.oid = '${table}'::regclass or c.oid in (select inhrelid from pg_inherits where inhparent = '${table}'::regclass)`)
  return Number(r.b)
}
const mb = (b: number) => Math.round((b / 1048576) * 10) / 10

async function main() {
  await sql.unsafe(`drop schema if exists bench_retention cascade; create schema bench_retention; set search_path = bench_retention`)
  // The table as it was: one heap, two indexes.
  await sql.unsafe(`create table plain (${columns}); create index on plain (space_id, at); create index on plain (at)`)
  // The table as it is: partitioned by day, the same indexes on the parent.
  await sql.unsafe(`create table parted (${columns}) partition by range (at); create table parted_default partition of parted default;
    create index on parted (space_id, at); create index on parted (at)`)
  for (let d = 0; d < DAYS; d++) {
    await sql.unsafe(`create table parted_d${d} partition of parted for values from ('${DAY0}'::timestamptz + interval '${d} day') to ('${DAY0}'::timestamptz + interval '${d + 1} day')`)
  }
  let t0 = performance.now()
  await sql.unsafe(fill('plain'))
  await sql.unsafe(fill('parted'))
  await sql.unsafe(`vacuum analyze plain`)
  await sql.unsafe(`vacuum analyze parted`)
  const seedMs = performance.now() - t0
  const cutoff = `'${DAY0}'::timestamptz + interval '1 day'`
  const result: Record<string, unknown> = { days: DAYS, rows_per_day: ROWS_PER_DAY, seed_ms: Math.round(seedMs) }

  const plainBefore = await bytes('plain')
  let w = await lsn()
  t0 = performance.now()
  const [del] = await sql.unsafe(`with d as (delete from plain where at < ${cutoff} returning 1) select count(*)::int as n from d`)
  result.delete = {
    rows: del.n,
    ms: Math.round(performance.now() - t0),
    wal_mb: mb(await walSince(w)),
    mb_before: mb(plainBefore),
    mb_after: mb(await bytes('plain')),
  }
  t0 = performance.now()
  await sql.unsafe(`vacuum plain`)
  ;(result.delete as Record<string, unknown>).vacuum_ms = Math.round(performance.now() - t0)
  ;(result.delete as Record<string, unknown>).mb_after_vacuum = mb(await bytes('plain'))

  const partedBefore = await bytes('parted')
  w = await lsn()
  t0 = performance.now()
  await sql.unsafe(`drop table parted_d0`)
  result.drop_partition = {
    ms: Math.round(performance.now() - t0),
    wal_mb: mb(await walSince(w)),
    mb_before: mb(partedBefore),
    mb_after: mb(await bytes('parted')),
  }
  const [{ v }] = await sql.unsafe(`select current_setting('server_version') as v`)
  result.postgres = v
  result.date = new Date().toISOString()
  console.log(JSON.stringify(result, null, 2))
  await sql.unsafe(`drop schema bench_retention cascade`)
}

try {
  await main()
} finally {
  await sql.end({ timeout: 5 })
}
