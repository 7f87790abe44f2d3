import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf, type Tx } from '../../src/kernel/db'
import { failed, GroupCommit, inSavepoint } from '../../src/kernel/group-commit'
import { freshDatabase, type TestDatabase } from '../helpers/db'

setDefaultTimeout(30_000)

let tdb: TestDatabase

beforeAll(async () => {
  tdb = await freshDatabase()
  await tdb.database.db.execute(sql`create table gc_items (id serial primary key, name text not null unique, n int not null check (n >= 0))`)
  await tdb.database.db.execute(sql`create table gc_batches (id serial primary key, txid bigint not null, size int not null)`)
})

afterAll(async () => {
  await tdb?.drop()
})

function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

async function count(table: 'gc_items' | 'gc_batches', where = sql`true`) {
  const [r] = rowsOf<{ c: number | string }>(await tdb.database.db.execute(sql`select count(*) as c from ${sql.raw(table)} where ${where}`))
  return Number(r.c)
}

/** One insert per item in its own savepoint; the batch's transaction id and size are recorded. */
async function insertEach(tx: Tx, items: { name: string; n: number }[]) {
  await tx.execute(sql`insert into gc_batches (txid, size) values (txid_current(), ${items.length})`)
  const out = []
  for (const item of items) {
    out.push(
      await inSavepoint(tx, async (sp) => {
        const [r] = rowsOf<{ id: number }>(await sp.execute(sql`insert into gc_items (name, n) values (${item.name}, ${item.n}) returning id`))
        return Number(r.id)
      }),
    )
  }
  return out
}

describe('kernel group commit', () => {
  test('an idle item starts at once; items arriving while a batch commits share the next transaction', async () => {
    const gate = deferred()
    const started = deferred()
    let first = true
    const gc = new GroupCommit<{ name: string; n: number }, number>({
      db: tdb.database,
      maxBatch: 50,
      async batch(tx, items) {
        if (first) {
          first = false
          started.resolve()
          await gate.promise
        }
        return insertEach(tx, items)
      },
    })
    const lone = gc.submit({ name: 'a0', n: 1 })
    await started.promise // the first item's batch runs without waiting for anything else
    const more = Array.from({ length: 120 }, (_, i) => gc.submit({ name: `a${i + 1}`, n: 1 }))
    expect(gc.pending).toBe(120)
    gate.resolve()
    const ids = await Promise.all([lone, ...more])
    expect(new Set(ids).size).toBe(121)
    // 1 + 50 + 50 + 20: bounded batches, one transaction each.
    const [b] = rowsOf<{ sizes: number[]; txids: number | string }>(
      await tdb.database.db.execute(sql`select array_agg(size order by id) as sizes, count(distinct txid) as txids from gc_batches`),
    )
    expect(b.sizes.map(Number)).toEqual([1, 50, 50, 20])
    expect(Number(b.txids)).toBe(4)
  })

  test('items submitted in the same tick share one batch', async () => {
    await tdb.database.db.execute(sql`delete from gc_batches`)
    const gc = new GroupCommit<{ name: string; n: number }, number>({ db: tdb.database, batch: insertEach })
    const ids = await Promise.all(Array.from({ length: 30 }, (_, i) => gc.submit({ name: `b${i}`, n: 2 })))
    expect(ids.length).toBe(30)
    expect(await count('gc_batches')).toBe(1)
  })

  test('one item failing (savepoint or failed()) fails alone; the others commit', async () => {
    const gc = new GroupCommit<{ name: string; n: number }, number>({
      db: tdb.database,
      async batch(tx, items) {
        const out = await insertEach(tx, items.filter((i) => i.name !== 'reject-me'))
        return items.map((i) => (i.name === 'reject-me' ? failed(new Error('refused by the batch')) : out.shift()!))
      },
    })
    const results = await Promise.allSettled([
      gc.submit({ name: 'c1', n: 1 }),
      gc.submit({ name: 'c2', n: -1 }), // check constraint: its savepoint rolls back
      gc.submit({ name: 'c1', n: 1 }), // unique violation
      gc.submit({ name: 'reject-me', n: 1 }),
      gc.submit({ name: 'c3', n: 1 }),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled'])
    expect(((results[3] as PromiseRejectedResult).reason as Error).message).toBe('refused by the batch')
    expect(await count('gc_items', sql`name in ('c1', 'c2', 'c3', 'reject-me')`)).toBe(2)
  })

  test('a batch that throws as a whole is written again item by item', async () => {
    const sizes: number[] = []
    const gc = new GroupCommit<{ name: string; n: number }, number>({
      db: tdb.database,
      async batch(tx, items) {
        sizes.push(items.length)
        // No savepoints: one bad row aborts the whole transaction.
        const out = []
        for (const i of items) {
          const [r] = rowsOf<{ id: number }>(await tx.execute(sql`insert into gc_items (name, n) values (${i.name}, ${i.n}) returning id`))
          out.push(Number(r.id))
        }
        return out
      },
    })
    const results = await Promise.allSettled(['d1', 'd2', 'd3'].map((name, k) => gc.submit({ name, n: k === 1 ? -5 : 1 })))
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(sizes).toEqual([3, 1, 1, 1])
    expect(await count('gc_items', sql`name in ('d1', 'd2', 'd3')`)).toBe(2)
    // And the writer keeps working afterwards.
    expect(await gc.submit({ name: 'd4', n: 1 })).toBeGreaterThan(0)
  })

  test('a batch function answering the wrong number of results rejects its items, not the process', async () => {
    const gc = new GroupCommit<number, number>({ db: tdb.database, batch: async () => [] })
    await expect(gc.submit(1)).rejects.toThrow(/0 results for 1 items/)
  })

  test('a custom transaction opener hands its context to the batch', async () => {
    const seen: string[] = []
    const gc = new GroupCommit<string, string, { tx: Tx; tag: string }>({
      transaction: (fn) => tdb.database.db.transaction((tx) => fn({ tx, tag: 'ctx' })),
      async batch(ctx, items) {
        seen.push(ctx.tag)
        return items.map((i) => i.toUpperCase())
      },
    })
    expect(await Promise.all([gc.submit('x'), gc.submit('y')])).toEqual(['X', 'Y'])
    expect(seen).toEqual(['ctx'])
  })
})
