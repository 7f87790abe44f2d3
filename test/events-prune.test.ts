// The events outbox is pruned after delivery: the hourly `events.prune` job deletes relayed rows (handled_at set)
// older than EVENTS_RETENTION_HOURS, in batches, and never an unrelayed one, however old.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { EVENTS_PRUNE_BATCH, JobQueue } from '../src/kernel/jobs'
import { createLogger } from '../src/kernel/logger'
import { loadConfig } from '../src/config'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(300_000)

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(async () => {
  await t?.close()
})

test('EVENTS_RETENTION_HOURS defaults to 24 and is checked', () => {
  expect(loadConfig({}).eventsRetentionHours).toBe(24)
  expect(loadConfig({ EVENTS_RETENTION_HOURS: '2' }).eventsRetentionHours).toBe(2)
  expect(() => loadConfig({ EVENTS_RETENTION_HOURS: '0' })).toThrow()
})

test('events.prune deletes relayed events past the retention, in batches, and keeps unrelayed and recent ones', async () => {
  const db = t.kernel.db
  await db.query('delete from events')
  const now = t.clock.ms()
  const at = (hoursAgo: number) => new Date(now - hoursAgo * 3_600_000).toISOString()
  // More old relayed rows than one batch, so the loop runs twice.
  const old = EVENTS_PRUNE_BATCH + 7
  await db.query(
    `insert into events (type, space_id, payload, created_at, handled_at)
     select 'story.published', null, '{}'::jsonb, $1::timestamptz, $1::timestamptz from generate_series(1, ${old})`,
    [at(50)],
  )
  await db.query(`insert into events (type, space_id, payload, created_at, handled_at) values ('story.published', null, '{"keep":"recent"}', $1, $1)`, [at(3)])
  await db.query(`insert into events (type, space_id, payload, created_at, handled_at) values ('story.published', null, '{"keep":"unrelayed"}', $1, null)`, [at(500)])

  const w = new JobQueue({ db, clock: t.clock, logger: createLogger('silent'), eventsRetentionHours: 24 })
  await w.enqueue('events.prune', { olderThanHours: 24 })
  expect(await w.runDueJobs()).toBeGreaterThanOrEqual(1)
  const left = await db.query<{ keep: string }>(`select payload->>'keep' as keep from events order by id`)
  expect(left.map((r) => r.keep).sort()).toEqual(['recent', 'unrelayed'])
  await db.query('delete from events')
})
