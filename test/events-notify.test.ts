// NOTIFY coalesced after commit: the events of one transaction — and of transactions committing together — reach the
// other instances in one NOTIFY per channel, sent after commit; a NOTIFY that never comes costs latency, not events
// (each bus reads the outbox past its position). Runs on PGlite and, with TEST_DATABASE_URL, on Postgres.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { type AnyEvent, EVENTS_CHANNEL, type EventType, transact } from '../src/kernel/events'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(300_000)

let t: TestApp
let other: Awaited<ReturnType<TestApp['instance']>>
/** Every NOTIFY on the events channel, as seen by a LISTEN connection of its own. */
const notifies: string[] = []
/** The events of the types below that reached the other instance's bus. */
const seen: AnyEvent[] = []
let stopListening: () => Promise<void>

const BURST = 'test.burst' as EventType

beforeAll(async () => {
  t = await testApp()
  other = await t.instance()
  stopListening = await t.kernel.db.listen(EVENTS_CHANNEL, (p) => notifies.push(p))
  other.kernel.bus.subscribe('*', (e, { origin }) => {
    if (origin === 'remote' && String(e.type).startsWith('test.')) seen.push(e)
  })
  // Both buses connected (LISTEN up, catch-up position taken): start() waited for it.
})
afterAll(async () => {
  await stopListening?.()
  await other?.close()
  await t?.close()
})

/** Waits (bounded) until `cond` holds: delivery is asynchronous, the assert after it is not about time. */
async function until(cond: () => boolean, what: string) {
  for (let i = 0; i < 1000 && !cond(); i++) await Bun.sleep(10)
  if (!cond()) throw new Error(`timed out waiting for ${what}`)
}

/**
 * Runs the other instance's catch-up until `n` events have reached its bus (its own timer may run one too). The
 * catch-up stops at the oldest transaction running anywhere on the server (other databases' too), so on a shared
 * server one call may come short.
 */
async function catchUpTo(n: number): Promise<number> {
  for (let i = 0; i < 1000 && seen.length < n; i++) {
    await other.kernel.bus.catchUp()
    if (seen.length < n) await Bun.sleep(10)
  }
  return seen.length
}

async function emitMany(type: EventType, n: number, payload: (i: number) => Record<string, unknown> = (i) => ({ n: i })) {
  await transact(t.kernel, async (_tx, emit) => {
    for (let i = 0; i < n; i++) emit({ type, spaceId: null, payload: payload(i) as never })
  })
}

test('a transaction emitting 100 events sends one NOTIFY, after commit; the other instance gets all 100, once', async () => {
  await t.kernel.bus.flushNotify()
  notifies.length = 0
  seen.length = 0
  const sentBefore = t.kernel.bus.notifiesSent
  await emitMany(BURST, 100)
  await until(() => seen.length >= 100, '100 events on the other instance')
  await until(() => notifies.length >= 1, 'the NOTIFY')
  expect(t.kernel.bus.notifiesSent - sentBefore).toBe(1)
  expect(seen.map((e) => (e.payload as unknown as { n: number }).n)).toEqual(Array.from({ length: 100 }, (_, i) => i))
  // The catch-up reads the same rows from the outbox and hands none of them out again.
  expect(await other.kernel.bus.catchUp()).toBe(0)
  expect(seen.length).toBe(100)
  expect(notifies.length).toBeLessThanOrEqual(1)
})

test('events too large for one payload travel as id ranges the receivers read: few NOTIFYs, every event', async () => {
  await t.kernel.bus.flushNotify()
  notifies.length = 0
  seen.length = 0
  const sentBefore = t.kernel.bus.notifiesSent
  // ~500 bytes each: 300 events are ~150 KB, far above the 8000-byte NOTIFY limit.
  await emitMany(BURST, 300, (i) => ({ n: i, pad: 'x'.repeat(500) }))
  await until(() => seen.length >= 300, '300 events on the other instance')
  expect(t.kernel.bus.notifiesSent - sentBefore).toBe(1)
  const msg = JSON.parse(notifies[0])
  expect(msg.r).toBeDefined()
  expect(msg.e).toBeUndefined()
  expect(seen.map((e) => (e.payload as unknown as { n: number }).n)).toEqual(Array.from({ length: 300 }, (_, i) => i))
  expect(await other.kernel.bus.catchUp()).toBe(0)
})

test('transactions committing within one tick share one NOTIFY', async () => {
  await t.kernel.bus.flushNotify()
  notifies.length = 0
  seen.length = 0
  const sentBefore = t.kernel.bus.notifiesSent
  // Queued as transact() does after each commit; the coalescing window is far longer than this synchronous loop.
  const bus = t.kernel.bus
  await t.kernel.db.query(
    `insert into events (type, space_id, payload, created_at) select 'test.tick', null, jsonb_build_object('n', g), now() from generate_series(0, 19) g`,
  )
  const rows = await t.kernel.db.query<{ id: number | string; tx: string; payload: { n: number }; created_at: Date | string }>(
    `select id, tx::text as tx, payload, created_at from events where type = 'test.tick' order by id`,
  )
  for (const r of rows) {
    bus.announce(t.kernel.db, [{ id: Number(r.id), tx: r.tx, type: 'test.tick' as EventType, spaceId: null, payload: r.payload as never, createdAt: new Date(r.created_at) }])
  }
  await bus.flushNotify()
  expect(bus.notifiesSent - sentBefore).toBe(1)
  await until(() => seen.length >= 20, '20 events on the other instance')
  expect(seen.length).toBe(20)
})

test('a lost NOTIFY costs latency, not the event: the catch-up reads it from the outbox, once', async () => {
  seen.length = 0
  // Committed without any NOTIFY, as when the writing process dies between its commit and its send.
  await t.kernel.db.query(
    `insert into events (type, space_id, payload, created_at) select 'test.lost', null, jsonb_build_object('n', g), now() from generate_series(0, 49) g`,
  )
  expect(seen.length).toBe(0)
  expect(await catchUpTo(50)).toBe(50)
  expect(seen.filter((e) => e.type === ('test.lost' as EventType)).map((e) => (e.payload as unknown as { n: number }).n)).toEqual(
    Array.from({ length: 50 }, (_, i) => i),
  )
  expect(await other.kernel.bus.catchUp()).toBe(0)
  expect(seen.length).toBe(50)
})

// PGlite is one connection: a transaction held open would block the commit after it.
test.skipIf(!process.env.TEST_DATABASE_URL)('the catch-up never reads past a transaction still running: its events come once it commits', async () => {
  seen.length = 0
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  let inserted!: () => void
  const wrote = new Promise<void>((r) => (inserted = r))
  // An open transaction holding an outbox row (and so the snapshot's xmin) while a later one commits.
  const open = t.kernel.db.db.transaction(async (tx) => {
    await tx.execute(sql`insert into events (type, space_id, payload, created_at) values ('test.slow', null, '{"n":0}', now())`)
    inserted()
    await held
  })
  await wrote
  await t.kernel.db.query(`insert into events (type, space_id, payload, created_at) values ('test.fast', null, '{"n":1}', now())`)
  // The later commit waits behind the open transaction: reading it now would let the earlier one land behind.
  expect(await other.kernel.bus.catchUp()).toBe(0)
  release()
  await open
  expect(await catchUpTo(2)).toBe(2)
  expect(seen.map((e) => String(e.type)).sort()).toEqual(["test.fast", "test.slow"])
})
