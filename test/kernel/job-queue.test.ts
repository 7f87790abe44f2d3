import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { transact } from '../../src/kernel/events'
import { JobQueue, type JobQueueOptions, nextCronRun, parseCron, PermanentJobError, startWorkers } from '../../src/kernel/jobs'
import { createLogger } from '../../src/kernel/logger'
import { type TestApp, testApp } from '../helpers/app'

// Generous: on a loaded machine the embedded database alone can take minutes to start; no test waits on speed.
setDefaultTimeout(300_000)
/** Waits for a NOTIFY wake-up: a third of the 60 s poll interval the tests set, so only a notification can be that early. */
const NOTIFY_BOUND_MS = 20_000

let t: TestApp
let queueCounter = 0
const freshQueue = (name = 'test') => `${name}.${++queueCounter}`

beforeAll(async () => {
  t = await testApp()
})

afterAll(async () => {
  await t?.close()
})

/** Another worker instance on the same database and clock (as a second server process would be). */
function worker(opts: Partial<JobQueueOptions> = {}) {
  return new JobQueue({ db: t.kernel.db, clock: t.clock, logger: createLogger('silent'), ...opts })
}

async function jobRow(id: number) {
  const [row] = await t.kernel.db.query<{ status: string; attempts: number; run_at: Date; last_error: string | null }>(
    'select status, attempts, run_at, last_error from jobs where id = $1',
    [id],
  )
  return row
}

function deferred<T = void>() {
  let resolve!: (v: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

describe('queue', () => {
  test('an enqueued job runs once with its payload', async () => {
    const w = worker()
    const q = freshQueue()
    const seen: unknown[] = []
    w.define(q, { handler: async ({ job }) => void seen.push(job.payload) })
    const id = await w.enqueue(q, { n: 7 })
    expect(id).toBeNumber()
    expect(await w.runDueJobs()).toBe(1)
    expect(await w.runDueJobs()).toBe(0)
    expect(seen).toEqual([{ n: 7 }])
    expect((await jobRow(id!)).status).toBe('done')
  })

  test('a job waits for its run time on the clock', async () => {
    const w = worker()
    const q = freshQueue()
    let runs = 0
    w.define(q, { handler: async () => void runs++ })
    await w.enqueue(q, {}, { runAt: new Date(t.clock.now().getTime() + 60_000) })
    await w.runDueJobs()
    expect(runs).toBe(0)
    t.clock.advance(59_999)
    await w.runDueJobs()
    expect(runs).toBe(0)
    t.clock.advance(1)
    await w.runDueJobs()
    expect(runs).toBe(1)
  })

  test('a dedupe key keeps at most one live job per key', async () => {
    const w = worker()
    const q = freshQueue()
    let runs = 0
    w.define(q, { handler: async () => void runs++ })
    const first = await w.enqueue(q, { v: 1 }, { dedupeKey: 'k' })
    const second = await w.enqueue(q, { v: 2 }, { dedupeKey: 'k' })
    const other = await w.enqueue(q, { v: 3 }, { dedupeKey: 'other' })
    expect(first).toBeNumber()
    expect(second).toBeNull()
    expect(other).toBeNumber()
    await w.runDueJobs()
    expect(runs).toBe(2)
    // Once the first is done, the key is free again.
    expect(await w.enqueue(q, { v: 4 }, { dedupeKey: 'k' })).toBeNumber()
  })

  test('a job enqueued in a rolled-back transaction never exists', async () => {
    const w = worker()
    const q = freshQueue()
    let runs = 0
    w.define(q, { handler: async () => void runs++ })
    await expect(
      t.kernel.db.db.transaction(async (tx) => {
        await w.enqueue(q, {}, { tx })
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    await w.runDueJobs()
    expect(runs).toBe(0)
    const rows = await t.kernel.db.query('select id from jobs where queue = $1', [q])
    expect(rows).toHaveLength(0)
  })

  test("a failing job is retried on its queue's schedule, then fails", async () => {
    const w = worker()
    const q = freshQueue()
    const attempts: number[] = []
    w.define(q, {
      retryDelaysMs: [1_000, 5_000],
      handler: async ({ job }) => {
        attempts.push(job.attempt)
        throw new Error(`boom ${job.attempt}`)
      },
    })
    const id = (await w.enqueue(q, {}))!
    await w.runDueJobs()
    expect(attempts).toEqual([1])
    expect((await jobRow(id)).status).toBe('pending')
    t.clock.advance(999)
    await w.runDueJobs()
    expect(attempts).toEqual([1])
    t.clock.advance(1)
    await w.runDueJobs()
    expect(attempts).toEqual([1, 2])
    t.clock.advance(4_999)
    await w.runDueJobs()
    expect(attempts).toEqual([1, 2])
    t.clock.advance(1)
    await w.runDueJobs()
    expect(attempts).toEqual([1, 2, 3])
    const row = await jobRow(id)
    expect(row.status).toBe('failed')
    expect(row.attempts).toBe(3)
    expect(row.last_error).toContain('boom 3')
    t.clock.advance(3_600_000)
    await w.runDueJobs()
    expect(attempts).toEqual([1, 2, 3])
  })

  test('a permanent error fails the job without retries', async () => {
    const w = worker()
    const q = freshQueue()
    let runs = 0
    w.define(q, {
      retryDelaysMs: [1_000],
      handler: async () => {
        runs++
        throw new PermanentJobError('cannot work')
      },
    })
    const id = (await w.enqueue(q, {}))!
    await w.runDueJobs()
    t.clock.advance(60_000)
    await w.runDueJobs()
    expect(runs).toBe(1)
    expect((await jobRow(id)).status).toBe('failed')
  })

  test("a handler's writes and its job's new state commit together, or not at all", async () => {
    await t.kernel.db.query('create table if not exists job_test_marks (job_id bigint, attempt int)')
    const w = worker()
    const q = freshQueue()
    w.define(q, {
      retryDelaysMs: [1_000],
      handler: async (ctx) => {
        await t.kernel.db.db.transaction(async (tx) => {
          await tx.execute(sql`insert into job_test_marks values (${ctx.job.id}, ${ctx.job.attempt})`)
          await ctx.settle(tx, { status: 'done' })
          // The first attempt fails after settling: its transaction, settle included, rolls back.
          if (ctx.job.attempt === 1) throw new Error('after settle')
        })
      },
    })
    const id = (await w.enqueue(q, {}))!
    await w.runDueJobs()
    expect((await jobRow(id)).status).toBe('pending')
    expect(await t.kernel.db.query('select * from job_test_marks where job_id = $1', [id])).toHaveLength(0)
    t.clock.advance(1_000)
    await w.runDueJobs()
    expect((await jobRow(id)).status).toBe('done')
    expect(await t.kernel.db.query('select attempt from job_test_marks where job_id = $1', [id])).toEqual([{ attempt: 2 }])
  })
})

describe('time limits (timeoutMs)', () => {
  test('a running job past its time is failed by the queue, its signal aborted and onTimeout called', async () => {
    const w = worker({ leaseMs: 30_000 })
    const q = freshQueue()
    const started = deferred()
    const timedOut: { id: number; error: string }[] = []
    let reason: unknown = null
    let settleError: unknown = null
    w.define(q, {
      timeoutMs: 600_000,
      onTimeout: async (job, error) => void timedOut.push({ id: job.id, error }),
      handler: async (ctx) => {
        started.resolve()
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }))
        reason = ctx.signal.reason
        // Too late: the queue failed the job; its settle cannot turn it into done.
        try {
          await t.kernel.db.db.transaction((tx) => ctx.settle(tx, { status: 'done' }))
        } catch (err) {
          settleError = err
        }
      },
    })
    const id = (await w.enqueue(q, {}))!
    const run = w.runDueJobs()
    await started.promise
    t.clock.advance(599_999)
    expect(await w.expireOverdue()).toBe(0)
    expect((await jobRow(id)).status).toBe('running')
    t.clock.advance(1)
    expect(await w.expireOverdue()).toBe(1)
    await run
    expect((reason as Error)?.name).toBe('JobTimeoutError')
    expect((settleError as Error)?.name).toBe('LeaseLostError')
    expect(timedOut).toEqual([{ id, error: 'timed out after 600 s' }])
    const row = await jobRow(id)
    expect(row.status).toBe('failed')
    expect(row.last_error).toBe('timed out after 600 s')
    expect(await w.expireOverdue()).toBe(0)
    expect(timedOut).toHaveLength(1)
  })

  test('a job that finishes in time is not touched by its time limit', async () => {
    const w = worker()
    const q = freshQueue()
    const timedOut: number[] = []
    w.define(q, { timeoutMs: 1_000, onTimeout: async (job) => void timedOut.push(job.id), handler: async () => {} })
    const id = (await w.enqueue(q, {}))!
    expect(await w.runDueJobs()).toBe(1)
    t.clock.advance(5_000)
    expect(await w.expireOverdue()).toBe(0)
    expect((await jobRow(id)).status).toBe('done')
    expect(timedOut).toEqual([])
  })

  test('a lease-expired job of a queue with a time limit is failed by another instance, not claimed again', async () => {
    const w = worker({ leaseMs: 30_000 })
    const q = freshQueue()
    const attempts: number[] = []
    const timedOut: { id: number; error: string }[] = []
    w.define(q, {
      timeoutMs: 600_000,
      onTimeout: async (job, error) => void timedOut.push({ id: job.id, error }),
      handler: async ({ job }) => void attempts.push(job.attempt),
    })
    const id = (await w.enqueue(q, {}))!
    // What a process killed in the middle of the job leaves behind: running, leased, never settled.
    const until = new Date(t.clock.now().getTime() + 30_000).toISOString()
    await t.kernel.db.query(
      `update jobs set status = 'running', attempts = 1, claim_token = 'dead', locked_by = 'dead-worker', locked_until = $2 where id = $1`,
      [id, until],
    )
    t.clock.advance(29_999)
    await w.runDueJobs()
    expect((await jobRow(id)).status).toBe('running')
    t.clock.advance(1)
    await w.runDueJobs()
    await w.runDueJobs()
    expect(attempts).toEqual([])
    const row = await jobRow(id)
    expect(row.status).toBe('failed')
    expect(row.last_error).toContain('lease expired')
    expect(timedOut.map((x) => x.id)).toEqual([id])
  })

  test('with retries left and within its time, a lease-expired job is claimed again', async () => {
    const w = worker({ leaseMs: 30_000 })
    const q = freshQueue()
    const attempts: number[] = []
    w.define(q, { timeoutMs: 600_000, retryDelaysMs: [1_000], handler: async ({ job }) => void attempts.push(job.attempt) })
    const id = (await w.enqueue(q, {}))!
    const until = new Date(t.clock.now().getTime() + 30_000).toISOString()
    await t.kernel.db.query(
      `update jobs set status = 'running', attempts = 1, claim_token = 'dead', locked_by = 'dead-worker', locked_until = $2, updated_at = $3 where id = $1`,
      [id, until, t.clock.now().toISOString()],
    )
    t.clock.advance(30_000)
    await w.runDueJobs()
    expect(attempts).toEqual([2])
    expect((await jobRow(id)).status).toBe('done')
  })
})

describe('leases', () => {
  test('a job whose worker died is claimed again once its lease has run out', async () => {
    const w = worker({ leaseMs: 30_000 })
    const q = freshQueue()
    const attempts: number[] = []
    w.define(q, { handler: async ({ job }) => void attempts.push(job.attempt) })
    const id = (await w.enqueue(q, {}))!
    // What a process killed in the middle of the job leaves behind: running, leased, never settled.
    const until = new Date(t.clock.now().getTime() + 30_000).toISOString()
    await t.kernel.db.query(
      `update jobs set status = 'running', attempts = 1, claim_token = 'dead', locked_by = 'dead-worker', locked_until = $2 where id = $1`,
      [id, until],
    )
    await w.runDueJobs()
    expect(attempts).toEqual([])
    t.clock.advance(29_999)
    await w.runDueJobs()
    expect(attempts).toEqual([])
    t.clock.advance(1)
    await w.runDueJobs()
    expect(attempts).toEqual([2])
    expect((await jobRow(id)).status).toBe('done')
  })

  test('a worker that lost its lease cannot settle the job the new holder finished', async () => {
    await t.kernel.db.query('create table if not exists job_test_marks (job_id bigint, attempt int)')
    const q = freshQueue()
    const slow = worker({ leaseMs: 10_000 })
    const fast = worker({ leaseMs: 10_000 })
    const started = deferred()
    const release = deferred()
    let slowError: unknown = null
    slow.define(q, {
      handler: async (ctx) => {
        started.resolve()
        await release.promise
        try {
          await t.kernel.db.db.transaction(async (tx) => {
            await tx.execute(sql`insert into job_test_marks values (${ctx.job.id}, ${ctx.job.attempt})`)
            await ctx.settle(tx, { status: 'done' })
          })
        } catch (err) {
          slowError = err
          throw err
        }
      },
    })
    fast.define(q, { handler: async () => {} })
    const id = (await slow.enqueue(q, {}))!
    const slowRun = slow.runDueJobs()
    await started.promise
    t.clock.advance(10_000)
    expect(await fast.runDueJobs()).toBe(1)
    release.resolve()
    await slowRun
    expect((slowError as Error)?.name).toBe('LeaseLostError')
    const row = await jobRow(id)
    expect(row.status).toBe('done')
    expect(row.attempts).toBe(2)
    expect(await t.kernel.db.query('select * from job_test_marks where job_id = $1', [id])).toHaveLength(0)
  })

  test('two workers running side by side never run a job twice', async () => {
    const q = freshQueue()
    const a = worker({ pollIntervalMs: 20 })
    const b = worker({ pollIntervalMs: 20 })
    const runs = new Map<number, string[]>()
    let active = 0
    let maxActive = 0
    const handler = (name: string) => async ({ job }: { job: { id: number } }) => {
      active++
      maxActive = Math.max(maxActive, active)
      runs.set(job.id, [...(runs.get(job.id) ?? []), name])
      await Bun.sleep(2)
      active--
    }
    a.define(q, { concurrency: 4, handler: handler('a') })
    b.define(q, { concurrency: 4, handler: handler('b') })
    const ids = await a.enqueueMany(
      t.kernel.db.db,
      Array.from({ length: 60 }, (_, i) => ({ queue: q, payload: { i } })),
    )
    await a.start()
    await b.start()
    const deadline = Date.now() + 15_000
    while (runs.size < ids.length && Date.now() < deadline) await Bun.sleep(20)
    await a.stop()
    await b.stop()
    expect(runs.size).toBe(ids.length)
    for (const [, who] of runs) expect(who).toHaveLength(1)
    const byWorker = [...runs.values()].flat()
    expect(byWorker.filter((w) => w === 'a').length + byWorker.filter((w) => w === 'b').length).toBe(ids.length)
    expect(maxActive).toBeGreaterThan(1)
    const statuses = await t.kernel.db.query<{ status: string; n: number }>(
      'select status, count(*)::int as n from jobs where queue = $1 group by status',
      [q],
    )
    expect(statuses).toEqual([{ status: 'done', n: ids.length }])
  })
})

describe('background workers', () => {
  test('a started worker runs a new job at once, woken by NOTIFY rather than by polling', async () => {
    const w = worker({ pollIntervalMs: 60_000 })
    const q = freshQueue()
    const ran = deferred<number>()
    w.define(q, { handler: async ({ job }) => ran.resolve(job.id) })
    await w.start()
    try {
      // Let the start-up poll finish so only a notification can find the job.
      await Bun.sleep(50)
      const id = await w.enqueue(q, {})
      // Run well before the next poll (60 s) could have found it: only NOTIFY wakes it that early. No bound tighter
      // than that: on a loaded machine "at once" can take seconds.
      const got = await Promise.race([ran.promise, Bun.sleep(NOTIFY_BOUND_MS).then(() => -1)])
      expect(got).toBe(id!)
    } finally {
      await w.stop()
    }
  })

  test('stop() waits for the jobs in flight to settle', async () => {
    const w = worker({ pollIntervalMs: 20 })
    const q = freshQueue()
    const started = deferred()
    w.define(q, {
      handler: async () => {
        started.resolve()
        await Bun.sleep(150)
      },
    })
    await w.start()
    const id = (await w.enqueue(q, {}))!
    await started.promise
    await w.stop()
    expect((await jobRow(id)).status).toBe('done')
  })

  // Only the embedded database is owned by one process; on Postgres a running job may belong to a live instance.
  test.skipIf(!!process.env.TEST_DATABASE_URL)('startWorkers on the embedded database reclaims what a previous process left running', async () => {
    const w = worker({ pollIntervalMs: 20, leaseMs: 3_600_000 })
    const q = freshQueue()
    const ran = deferred()
    w.define(q, { handler: async () => ran.resolve() })
    const id = (await w.enqueue(q, {}))!
    const until = new Date(t.clock.now().getTime() + 3_600_000).toISOString()
    await t.kernel.db.query(`update jobs set status = 'running', attempts = 1, claim_token = 'x', locked_until = $2 where id = $1`, [id, until])
    const workers = await startWorkers({ jobs: w, db: t.kernel.db })
    try {
      await Promise.race([ran.promise, Bun.sleep(3_000).then(() => Promise.reject(new Error('not reclaimed')))])
    } finally {
      await workers.stop()
    }
    expect((await jobRow(id)).status).toBe('done')
  })
})

describe('several instances on Postgres', () => {
  // `serve --no-worker` and `worker` in separate processes: the HTTP instance's events must wake the worker at once.
  test.skipIf(!process.env.TEST_DATABASE_URL)('an event written by an instance without workers wakes the relay of one with workers', async () => {
    const user = await t.register()
    const space = await t.createSpace(user.token)
    const [{ id: sid }] = await t.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [space.slug])
    await t.kernel.jobs.runDueJobs()
    const other = worker({ pollIntervalMs: 60_000 })
    const seen = deferred<number>()
    other.onOutbox('spy', async (_tx, events) => {
      const mine = events.find((e) => e.spaceId === sid && e.type === 'story.deleted')
      if (mine) seen.resolve(mine.id)
    })
    await other.start()
    try {
      await Bun.sleep(50)
      // t.kernel runs no workers: its bus hands the event to jobs.outboxWritten(), which sends NOTIFY. Seen well before
      // the next poll (60 s) means NOTIFY woke the relay.
      await transact(t.kernel, async (_tx, e) => e({ type: 'story.deleted', spaceId: sid, payload: {} as never }))
      const id = await Promise.race([seen.promise, Bun.sleep(NOTIFY_BOUND_MS).then(() => -1)])
      expect(id).toBeGreaterThan(0)
    } finally {
      await other.stop()
    }
  })
})

describe('cron schedules', () => {
  test('five-field expressions only, parsed by croner', () => {
    expect(() => parseCron('* * * *')).toThrow('five fields')
    expect(() => parseCron('0 * * * * *')).toThrow('five fields')
    expect(() => parseCron('61 * * * *')).toThrow()
    expect(() => parseCron('nonsense here and there x')).toThrow()
    const from = new Date('2030-01-04T16:59:00Z') // a Friday
    expect(nextCronRun('*/15 9-17 * * 1-5', from).toISOString()).toBe('2030-01-04T17:00:00.000Z')
    expect(nextCronRun('*/15 9-17 * * 1-5', new Date('2030-01-04T17:45:00Z')).toISOString()).toBe('2030-01-07T09:00:00.000Z')
    expect(nextCronRun('0 0 1 * *', new Date('2030-01-01T00:00:00Z')).toISOString()).toBe('2030-02-01T00:00:00.000Z')
  })

  test('each tick fires once across instances; missed ticks are not caught up', async () => {
    const q = freshQueue('cron')
    const a = worker()
    const b = worker()
    const ticks: string[] = []
    for (const w of [a, b]) {
      w.define(q, { handler: async ({ job }) => void ticks.push(`${(job.payload as { tag: string }).tag}@${job.runAt.toISOString()}`) })
      w.schedule({ name: q, cron: '*/5 * * * *', queue: q, payload: { tag: 'five' } })
    }
    t.clock.set(Date.UTC(2031, 5, 1, 12, 0, 30))
    // Both instances register the schedule (as every start-up does) and look for due ticks: none yet.
    await Promise.all([a.runDueJobs(), b.runDueJobs()])
    expect(ticks).toEqual([])
    t.clock.set(Date.UTC(2031, 5, 1, 12, 5, 0))
    await Promise.all([a.runDueJobs(), b.runDueJobs(), a.runDueJobs(), b.runDueJobs()])
    expect(ticks).toEqual(['five@2031-06-01T12:05:00.000Z'])
    t.clock.set(Date.UTC(2031, 5, 1, 12, 9, 59))
    await Promise.all([a.runDueJobs(), b.runDueJobs()])
    expect(ticks).toHaveLength(1)
    t.clock.set(Date.UTC(2031, 5, 1, 12, 10, 1))
    await Promise.all([b.runDueJobs(), a.runDueJobs()])
    expect(ticks).toEqual(['five@2031-06-01T12:05:00.000Z', 'five@2031-06-01T12:10:00.000Z'])
    // Down for three hours: one run for the missed stretch, then on schedule again.
    t.clock.set(Date.UTC(2031, 5, 1, 15, 12, 0))
    await Promise.all([a.runDueJobs(), b.runDueJobs()])
    expect(ticks).toHaveLength(3)
    const [row] = await t.kernel.db.query<{ next_run_at: Date }>('select next_run_at from job_schedules where name = $1', [q])
    expect(new Date(row.next_run_at).toISOString()).toBe('2031-06-01T15:15:00.000Z')
  })

  test('changing the expression of a schedule moves its next tick', async () => {
    const q = freshQueue('cron')
    const w = worker()
    w.define(q, { handler: async () => {} })
    t.clock.set(Date.UTC(2032, 0, 1, 10, 0, 0))
    await w.upsertSchedule(t.kernel.db.db, { name: q, cron: '0 12 * * *', queue: q })
    await w.upsertSchedule(t.kernel.db.db, { name: q, cron: '0 12 * * *', queue: q })
    let [row] = await t.kernel.db.query<{ next_run_at: Date }>('select next_run_at from job_schedules where name = $1', [q])
    expect(new Date(row.next_run_at).toISOString()).toBe('2032-01-01T12:00:00.000Z')
    await w.upsertSchedule(t.kernel.db.db, { name: q, cron: '30 10 * * *', queue: q })
    ;[row] = await t.kernel.db.query<{ next_run_at: Date }>('select next_run_at from job_schedules where name = $1', [q])
    expect(new Date(row.next_run_at).toISOString()).toBe('2032-01-01T10:30:00.000Z')
    await w.removeSchedule(t.kernel.db.db, q)
    expect(await t.kernel.db.query('select 1 from job_schedules where name = $1', [q])).toHaveLength(0)
  })
})

describe('outbox relay', () => {
  async function spaceId() {
    const user = await t.register()
    const space = await t.createSpace(user.token)
    const [row] = await t.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [space.slug])
    return row.id
  }

  test('committed events become jobs in the transaction that marks them handled', async () => {
    const sid = await spaceId()
    const q = freshQueue('relay')
    const w = worker()
    const got: string[] = []
    w.define(q, { handler: async ({ job }) => void got.push(String((job.payload as { event: number }).event)) })
    w.onOutbox('test', async (tx, events) => {
      await w.enqueueMany(
        tx,
        events.filter((e) => e.spaceId === sid).map((e) => ({ queue: q, payload: { event: e.id } })),
      )
    })
    // The Story's uuid is a real one: the change feed records published and unpublished Stories in the same transaction.
    const uuid = crypto.randomUUID()
    await transact(t.kernel, async (_tx, emit) => {
      emit({ type: 'story.published', spaceId: sid, payload: { story: { uuid, full_path: 'a' } } as never })
      emit({ type: 'story.unpublished', spaceId: sid, payload: { story: { uuid, full_path: 'a' } } as never })
    })
    const ids = (await t.kernel.db.query<{ id: number }>('select id from events where space_id = $1 order by id', [sid])).map((r) =>
      String(r.id),
    )
    expect(ids).toHaveLength(3) // space.created, then the two above
    await w.runDueJobs()
    expect(got.sort()).toEqual([...ids].sort())
    const unhandled = await t.kernel.db.query('select id from events where handled_at is null')
    expect(unhandled).toHaveLength(0)
  })

  test('a consumer that fails leaves its events unhandled, to be relayed again', async () => {
    const sid = await spaceId()
    const q = freshQueue('relay')
    const w = worker()
    let fail = true
    let runs = 0
    w.define(q, { handler: async () => void runs++ })
    w.onOutbox('flaky', async (tx, events) => {
      await w.enqueueMany(
        tx,
        events.filter((e) => e.spaceId === sid).map((e) => ({ queue: q, payload: { event: e.id } })),
      )
      if (fail) throw new Error('consumer down')
    })
    await transact(t.kernel, async (_tx, emit) => emit({ type: 'story.deleted', spaceId: sid, payload: {} as never }))
    await expect(w.relayBatch()).rejects.toThrow('consumer down')
    expect(await t.kernel.db.query('select id from events where handled_at is null and space_id = $1', [sid])).toHaveLength(2)
    expect(await t.kernel.db.query('select id from jobs where queue = $1', [q])).toHaveLength(0)
    fail = false
    await w.runDueJobs()
    expect(runs).toBe(2)
    expect(await t.kernel.db.query('select id from events where handled_at is null')).toHaveLength(0)
  })

  test('a rolled-back change writes no event and so sends nothing', async () => {
    const sid = await spaceId()
    const w = worker()
    const seen: number[] = []
    w.onOutbox('spy', async (_tx, events) => void seen.push(...events.filter((e) => e.spaceId === sid).map((e) => e.id)))
    await w.runDueJobs()
    seen.length = 0
    await expect(
      transact(t.kernel, async (_tx, emit) => {
        emit({ type: 'story.published', spaceId: sid, payload: {} as never })
        throw new Error('veto')
      }),
    ).rejects.toThrow('veto')
    await w.runDueJobs()
    expect(seen).toEqual([])
  })
})
