// Raw analytics in day partitions: the rollup job creates today's and the next days' partitions ahead, rows land in
// them, and past the 90-day retention a day goes by DROP TABLE of its partition (no bulk DELETE); rows of days without
// a partition sit in the default partition and are deleted there. The rollups' numbers never change.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { addDays, dayOf } from '../src/modules/analytics/days'
import { insertEvents, RAW_PARTITIONS_AHEAD, RAW_RETENTION_DAYS, rollup } from '../src/modules/analytics/repo'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(300_000)

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(async () => {
  await t?.close()
})

const partitions = async () =>
  (
    await t.kernel.db.query<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'analytics_events'::regclass order by 1`,
    )
  ).map((r) => r.name)

const row = (at: Date, storyUuid = '00000000-0000-4000-8000-000000000001') => ({
  spaceId: 1,
  storyUuid,
  segmentKey: null,
  lang: 'en',
  device: 'desktop' as const,
  referrer: null,
  at,
})

test('partitions are made ahead, rows land in them, old days are dropped whole and the totals stay', async () => {
  const start = t.clock.now()
  const d0 = dayOf(start)
  // A row of today written before any partition exists: it goes to the default partition.
  await insertEvents(t.kernel.db, [row(new Date(start.getTime() - 60_000))])
  await rollup(t.kernel.db.db, t.clock.now())
  const made = await partitions()
  // Today is held by the default partition already, so its partition is not made; the next days' are.
  expect(made).toContain('analytics_events_default')
  for (let i = 1; i <= RAW_PARTITIONS_AHEAD; i++) expect(made).toContain(`analytics_events_p${addDays(d0, i).replaceAll('-', '')}`)
  expect(made).not.toContain(`analytics_events_p${d0.replaceAll('-', '')}`)

  // Tomorrow: its rows land in its partition.
  t.clock.advance(86_400_000)
  const d1 = dayOf(t.clock.now())
  await insertEvents(t.kernel.db, [row(t.clock.now()), row(t.clock.now()), row(new Date(t.clock.ms() + 1000))])
  const where = await t.kernel.db.query<{ part: string; n: number }>(
    `select tableoid::regclass::text as part, count(*)::int as n from analytics_events group by 1 order by 1`,
  )
  expect(where).toEqual([
    { part: 'analytics_events_default', n: 1 },
    { part: `analytics_events_p${d1.replaceAll('-', '')}`, n: 3 },
  ])

  // Roll both days up (the day after d1, past the grace), then read the totals.
  t.clock.advance(86_400_000)
  await rollup(t.kernel.db.db, t.clock.now())
  const totals = async () =>
    t.kernel.db.query<{ day: string; mounts: number }>(`select day::text as day, sum(mounts)::int as mounts from analytics_daily group by 1 order by 1`)
  const before = await totals()
  expect(before).toEqual([
    { day: d0, mounts: 1 },
    { day: d1, mounts: 3 },
  ])

  // Past the retention of d1: its partition is dropped (not deleted from), d0's row goes from the default partition.
  t.clock.advance(RAW_RETENTION_DAYS * 86_400_000)
  expect(dayOf(t.clock.now())).toBe(addDays(d1, RAW_RETENTION_DAYS + 1))
  const r = await rollup(t.kernel.db.db, t.clock.now())
  expect(r.partitionsDropped).toBeGreaterThanOrEqual(1)
  expect(r.deleted).toBe(1)
  const left = await partitions()
  expect(left).not.toContain(`analytics_events_p${d1.replaceAll('-', '')}`)
  for (let i = 0; i <= RAW_PARTITIONS_AHEAD; i++) expect(left).toContain(`analytics_events_p${addDays(dayOf(t.clock.now()), i).replaceAll('-', '')}`)
  expect((await t.kernel.db.query<{ n: number }>('select count(*)::int as n from analytics_events'))[0].n).toBe(0)
  expect(await totals()).toEqual(before)
  // Running again changes nothing.
  const again = await rollup(t.kernel.db.db, t.clock.now())
  expect([again.partitionsDropped, again.deleted]).toEqual([0, 0])
  expect(await partitions()).toEqual(left)
})
