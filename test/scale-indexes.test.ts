// Migration 0026: the indexes the hot queries of a many-tenant database need — a Space's published Stories by id (the
// search build and reconcile page by it) and by status and publish date. Both are created IF NOT EXISTS, so an operator
// who built them beforehand with CREATE INDEX CONCURRENTLY (docs/operations.md "Many tenants") upgrades without a
// write-blocking build: the migration's statements then do nothing.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { migrations } from '../db/migrations'
import { freshDatabase, type TestDatabase } from './helpers/db'

setDefaultTimeout(300_000)

let db: TestDatabase
beforeAll(async () => {
  db = await freshDatabase()
})
afterAll(async () => {
  await db?.drop()
})

const statementsOf = (tag: string) =>
  migrations
    .find((m) => m.tag === tag)!
    .sql.split('--> statement-breakpoint')
    .map((s) => s.trim())
    .filter(Boolean)

test('after the migrations the stories table has both hot indexes, the first one partial on published rows', async () => {
  const rows = await db.database.query<{ indexname: string; indexdef: string }>(
    `select indexname, indexdef from pg_indexes where tablename = 'stories' and indexname in ('stories_space_published_id_idx', 'stories_space_status_published_at_idx') order by indexname`,
  )
  expect(rows.map((r) => r.indexname)).toEqual(['stories_space_published_id_idx', 'stories_space_status_published_at_idx'])
  expect(rows[0].indexdef).toContain('(space_id, id)')
  expect(rows[0].indexdef).toMatch(/WHERE \(?status = 'published'/)
  expect(rows[1].indexdef).toContain('(space_id, status, published_at)')
})

test('indexes built beforehand (as CREATE INDEX CONCURRENTLY would) make the migration a no-op', async () => {
  const [{ n: before }] = await db.database.query<{ n: number }>(`select count(*)::int as n from pg_indexes where tablename = 'stories'`)
  for (const s of statementsOf('0026_scale_hot_indexes')) {
    expect(s).toContain('IF NOT EXISTS')
    await db.database.query(s)
  }
  const [{ n: after }] = await db.database.query<{ n: number }>(`select count(*)::int as n from pg_indexes where tablename = 'stories'`)
  expect(after).toBe(before)
})
