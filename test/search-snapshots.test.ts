// Search snapshots (SEARCH_MEMORY_MB): a Space's compacted indexes kept in Postgres, so that a cold Space is loaded
// instead of rebuilt from its Stories, then caught up on the public changes made since (the change feed). Two
// instances on one database: a Space evicted on the first while the second publishes and unpublishes in it answers
// the new content from its snapshot plus the catch-up. A public change queues the Space's `search.snapshot` job,
// which writes the snapshot of a Space no instance holds. Reconcile reads every resident Space's content version in
// one query and compares only the Spaces whose version moved.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { searchModule } from '../src/modules/search'
import { type TestApp, testApp } from './helpers/app'
import { secondInstance } from './helpers/instance'

setDefaultTimeout(120_000)

let a: TestApp
let owner: string
const spaces: { slug: string; id: number; editor: string; uuids: Record<string, string> }[] = []
let b: Awaited<ReturnType<typeof secondInstance>>

const doc = (headline: string, body: string) => ({ type: 'doc', blocks: [{ component: 'article', _uid: 'b1', headline, body }] })

/** A second instance on the same database, without a budget (it builds every index, as an embedded install does). */
const otherInstance = () => secondInstance(a, { searchMemoryBytes: null }, '10.251.0.2')

const registry = () => a.state(searchModule).registry
const search = async (slug: string, q: string) => {
  const r = await a.request('GET', `/v1/cdn/${slug}/search?q=${encodeURIComponent(q)}`)
  expect(r.status).toBe(200)
  return (r.body.data as { slug: string }[]).map((h) => h.slug).sort()
}
const snapshotRow = async (spaceId: number) =>
  (await a.kernel.db.query<{ cv: string; documents: number; format: number }>('select cv, documents, format from search_snapshots where space_id = $1', [spaceId]))[0]

async function until<T>(what: string, f: () => Promise<T | undefined | null | false>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await f()
    if (v) return v
    await Bun.sleep(25)
  }
  throw new Error(`timed out waiting for ${what}`)
}

async function addStory(space: (typeof spaces)[number], word: string, request = a.request.bind(a)) {
  const s = await request('POST', `/v1/spaces/${space.slug}/stories`, { token: space.editor, body: { slug: word, name: word, content: doc(`About the ${word}`, `Notes on the ${word}.`) } })
  if (s.status !== 201) throw new Error(`story: ${s.status} ${s.text}`)
  const p = await request('POST', `/v1/spaces/${space.slug}/stories/${s.body.data.uuid}/publish`, { token: space.editor })
  if (p.status !== 200) throw new Error(`publish: ${p.status} ${p.text}`)
  space.uuids[word] = s.body.data.uuid
}

beforeAll(async () => {
  // A budget of one byte: every Space loaded evicts every other. Snapshots from 3 Stories on.
  a = await testApp({ searchMemoryBytes: 1, searchSnapshotMinStories: 3 })
  owner = (await a.register()).token
  for (const words of [['aardvark', 'badger', 'cheetah', 'dingo'], ['bumblebee'], ['eland', 'ferret', 'gazelle']]) {
    const slug = (await a.createSpace(owner, { default_lang: 'en' })).slug
    const editor = (await a.spaceToken(owner, slug, 'editor')).token
    const c = await a.request('POST', `/v1/spaces/${slug}/components`, { token: editor, body: { name: 'article', schema: { headline: { type: 'text' }, body: { type: 'textarea' } } } })
    if (c.status !== 201) throw new Error(`component: ${c.status} ${c.text}`)
    const [row] = await a.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [slug])
    const space = { slug, id: row.id, editor, uuids: {} }
    spaces.push(space)
    for (const w of words) await addStory(space, w)
  }
  b = await otherInstance()
})

afterAll(async () => {
  await b?.runtime.close()
  await a?.close()
})

test('a Space built from its rows gets a snapshot; evicted, it is loaded from it and caught up on changes made elsewhere', async () => {
  const [big, small] = spaces
  const loads0 = { ...registry().loads }
  expect(await search(big.slug, 'badger')).toEqual(['badger'])
  expect(registry().loads.rows).toBe(loads0.rows + 1)
  // Written in the background after the build.
  const row = await until('the snapshot', () => snapshotRow(big.id))
  expect(row.documents).toBe(4)
  // A Space below SEARCH_SNAPSHOT_MIN_STORIES gets none.
  expect(await search(small.slug, 'bumblebee')).toEqual(['bumblebee'])
  expect(registry().readyIndex(big.id, 'en')).toBeUndefined()
  await Bun.sleep(100)
  expect(await snapshotRow(small.id)).toBeUndefined()

  // The other instance publishes a new Story, unpublishes one and moves one while this one holds no index of the Space.
  const request = (method: string, path: string, o: { token: string; body?: unknown }) => b.request(method, path, o.token, o.body)
  await addStory(big, 'echidna', request as never)
  expect((await b.request('POST', `/v1/spaces/${big.slug}/stories/${big.uuids.cheetah}/unpublish`, big.editor)).status).toBe(200)
  const moved = await b.request('PUT', `/v1/spaces/${big.slug}/stories/${big.uuids.dingo}`, big.editor, { slug: 'dingo-renamed' })
  expect(moved.status).toBe(200)
  expect((await b.request('POST', `/v1/spaces/${big.slug}/stories/${big.uuids.dingo}/publish`, big.editor)).status).toBe(200)

  // The next search here loads the snapshot and re-reads the changed Stories.
  expect(await search(big.slug, 'echidna')).toEqual(['echidna'])
  expect(registry().loads.snapshot).toBe(loads0.snapshot + 1)
  expect(registry().loads.rows).toBe(loads0.rows + 2)
  expect(await search(big.slug, 'cheetah')).toEqual([])
  expect(await search(big.slug, 'aardvark')).toEqual(['aardvark'])
  const dingo = await a.request('GET', `/v1/cdn/${big.slug}/search?q=dingo`)
  expect(dingo.body.data.map((h: { full_path: string }) => h.full_path)).toEqual(['/dingo-renamed'])
})

test('reconcile compares only Spaces whose content version moved, and repairs what an instance missed', async () => {
  const [big] = spaces
  const r = registry()
  expect(await search(big.slug, 'badger')).toEqual(['badger'])
  // Loaded from a snapshot: checked once against the rows.
  await r.reconcile()
  expect(await r.reconcile()).toBe(0)
  // A change this instance never hears of (written straight into the database, as if its NOTIFY was lost): the
  // content version moves with it, so the next reconcile compares and repairs.
  await a.kernel.db.query(
    `update story_published set version_no = version_no + 100 where story_id = (select id from stories where uuid = $1)`,
    [big.uuids.badger],
  )
  expect(await r.reconcile()).toBe(0)
  await a.kernel.db.query(`update story_content_versions set seq = seq + 1 where space_id = $1`, [big.id])
  expect(await r.reconcile()).toBe(1)
})

test('a public change queues the Space\'s snapshot job, which writes a Space no instance holds', async () => {
  const third = spaces[2]
  expect(await snapshotRow(third.id)).toBeUndefined()
  expect(registry().readyIndex(third.id, 'en')).toBeUndefined()
  await addStory(third, 'hedgehog')
  const [job] = await a.kernel.db.query<{ queue: string; dedupe_key: string }>(
    `select queue, dedupe_key from jobs where queue = 'search.snapshot' and dedupe_key = $1 and status = 'pending'`,
    [String(third.id)],
  )
  expect(job).toBeDefined()
  a.clock.advance(61_000)
  await a.kernel.jobs.runDueJobs()
  const row = await snapshotRow(third.id)
  expect(row.documents).toBe(4)
  // Still not resident: the job built it off to the side.
  expect(registry().readyIndex(third.id, 'en')).toBeUndefined()
  const before = registry().loads.snapshot
  expect(await search(third.slug, 'hedgehog')).toEqual(['hedgehog'])
  expect(registry().loads.snapshot).toBe(before + 1)
})

test('a damaged snapshot is ignored: the Space is built from its rows', async () => {
  const third = spaces[2]
  expect(await search(spaces[1].slug, 'bumblebee')).toEqual(['bumblebee'])
  await a.kernel.db.query(`update search_snapshots set data = '\\x0102'::bytea where space_id = $1`, [third.id])
  const rows = registry().loads.rows
  expect(await search(third.slug, 'gazelle')).toEqual(['gazelle'])
  expect(registry().loads.rows).toBe(rows + 1)
})

test('SEARCH_SNAPSHOT_MIN_STORIES defaults to 50 and 0 turns snapshots off', async () => {
  const { loadConfig } = await import('../src/config')
  expect(loadConfig({}).searchSnapshotMinStories).toBe(50)
  expect(loadConfig({ SEARCH_SNAPSHOT_MIN_STORIES: '0' }).searchSnapshotMinStories).toBe(0)
  expect(() => loadConfig({ SEARCH_SNAPSHOT_MIN_STORIES: '-1' })).toThrow()
})

test('a cold load makes room before it decodes a snapshot or while it builds from rows: the old indexes go first', async () => {
  const [big, small] = spaces
  const r = registry() as unknown as { refresh: (...args: unknown[]) => Promise<void> }
  // The big Space's snapshot, then a change after it: its next load decodes the snapshot and catches up (refresh).
  expect(await registry().writeSnapshotOf(big.id)).toBeGreaterThan(0)
  await addStory(big, 'fennec')
  expect(await search(small.slug, 'bumblebee')).toEqual(['bumblebee'])
  expect(registry().readyIndex(big.id, 'en')).toBeUndefined()
  const seen: string[] = []
  const refresh = r.refresh
  r.refresh = function (this: unknown, ...args: unknown[]) {
    // The snapshot is decoded and not yet swapped in: the Space resident before it is gone already.
    seen.push(`refresh: small ${registry().readyIndex(small.id, 'en') === undefined ? 'gone' : 'resident'}`)
    return refresh.apply(this, args)
  }
  const { SearchIndex } = await import('../src/modules/search/engine')
  const compact = SearchIndex.prototype.compactInSlices
  SearchIndex.prototype.compactInSlices = function (this: InstanceType<typeof SearchIndex>, pause) {
    // The small Space's first page is read, its index not yet compacted: the big Space is gone already.
    seen.push(`compact: big ${registry().readyIndex(big.id, 'en') === undefined ? 'gone' : 'resident'}`)
    return compact.call(this, pause)
  }
  try {
    const loads0 = { ...registry().loads }
    expect(await search(big.slug, 'fennec')).toEqual(['fennec'])
    expect(registry().loads.snapshot).toBe(loads0.snapshot + 1)
    expect(seen[0]).toBe('refresh: small gone')
    seen.length = 0
    expect(await search(small.slug, 'bumblebee')).toEqual(['bumblebee'])
    expect(registry().loads.rows).toBe(loads0.rows + 1)
    expect(seen[0]).toBe('compact: big gone')
  } finally {
    r.refresh = refresh
    SearchIndex.prototype.compactInSlices = compact
  }
  expect(registry().memory().bytes).toBeGreaterThan(0)
})

test('a snapshot is read in pieces on Postgres, and a snapshot rewritten between two pieces is not used', async () => {
  const { readSnapshot } = await import('../src/modules/search/snapshots-store')
  const [big] = spaces
  await registry().writeSnapshotOf(big.id)
  const whole = await readSnapshot(a.kernel, big.id, 1 << 30)
  expect(whole).not.toBeNull()
  expect(whole!.data.length).toBeGreaterThan(100)
  // Pieces of 7 bytes (Postgres; PGlite reads it in one query whatever the size) give the same bytes.
  const pieces = await readSnapshot(a.kernel, big.id, 7)
  expect(pieces?.cv).toBe(whole!.cv)
  expect(Buffer.from(pieces!.data).equals(Buffer.from(whole!.data))).toBe(true)
  if (a.kernel.db.driver !== 'postgres') return
  // Another instance writes a newer snapshot while this one reads: the read answers none (the Space is built from rows).
  let queries = 0
  const db = a.kernel.db
  const racing = {
    db: {
      ...db,
      driver: db.driver,
      db: db.db,
      query: async <T,>(text: string, params?: unknown[]) => {
        if (++queries === 2) await db.query('update search_snapshots set cv = cv + 1 where space_id = $1', [big.id])
        return db.query<T>(text, params)
      },
    },
  }
  expect(await readSnapshot(racing as never, big.id, 7)).toBeNull()
  await db.query('update search_snapshots set cv = cv - 1 where space_id = $1', [big.id])
})
