// bun scripts/bench/presence-cpu.ts [--sessions=1000] [--beats=200]
//
// CPU per presence heartbeat, in this process, with no competing client: a test app on a fresh embedded database
// (TEST_DATABASE_URL: a Postgres server), one Story holding --sessions active sessions (rows written directly), then
// --beats heartbeats in a row through app.handle — each moving its session to another block (a presence change: a
// roster update and a live event) — and as many that change nothing. Prints the process CPU time (user + system,
// PGlite included) and the wall time per heartbeat. On a loaded machine CPU time is the steadier figure; compare
// builds back-to-back (A/B) rather than against a figure taken at another time.
import { parseArgs } from 'node:util'
import { testApp } from '../../test/helpers/app'

const { values: args } = parseArgs({ options: { sessions: { type: 'string', default: '1000' }, beats: { type: 'string', default: '200' } } })
const SESSIONS = Number(args.sessions)
const BEATS = Number(args.beats)

const t = await testApp()
try {
  const owner = await t.register({ name: 'Bench' })
  const space = (await t.createSpace(owner.token)).slug
  await t.request('POST', `/v1/spaces/${space}/components`, { token: owner.token, body: { name: 'hero', is_root: true, schema: { headline: { type: 'text' } } } })
  const blocks = Array.from({ length: 20 }, (_, i) => ({ component: 'hero', _uid: `b${i}`, headline: `Block ${i}` }))
  const story = (await t.request('POST', `/v1/spaces/${space}/stories`, { token: owner.token, body: { name: 'P', slug: 'p', content: { type: 'doc', blocks } } })).body.data
  const userId = (await t.request('GET', '/v1/auth/me', { token: owner.token })).body.data.id
  const spaceId = story.space_id ?? (await t.kernel.db.query<{ space_id: number }>('select space_id from stories where id = $1', [story.id]))[0].space_id
  const ids = Array.from({ length: SESSIONS }, () => crypto.randomUUID())
  await t.kernel.db.query(
    `insert into presence_sessions (story_id, session_id, space_id, user_id, block_path, selection, last_seen)
     select $1, s::uuid, $2, $3, 'blocks/0', '{"anchor":0,"head":1}'::jsonb, $4::timestamptz from unnest($5::text[]) s`,
    [story.id, spaceId, userId, t.kernel.clock.now().toISOString(), ids],
  )
  const path = `/v1/spaces/${space}/stories/${story.uuid}/presence`
  let size = 0
  const run = async (label: string, blockOf: (i: number) => string) => {
    const walls: number[] = []
    const c0 = process.cpuUsage()
    for (let i = 0; i < BEATS; i++) {
      const w = performance.now()
      // Straight to the app, the answer read as text and not parsed: the client's work stays out of the figure.
      const body = JSON.stringify({ session_id: ids[i % SESSIONS], block_path: blockOf(i), selection: { anchor: 0, head: 1 } })
      const headers = { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json', 'x-forwarded-for': '10.0.0.1' }
      const r = await t.app.handle(new Request(`http://localhost${path}`, { method: 'POST', headers, body }))
      const text = await r.text()
      walls.push(performance.now() - w)
      if (r.status !== 200) throw new Error(`heartbeat: ${r.status} ${text}`)
      size = text.length
    }
    const c = process.cpuUsage(c0)
    walls.sort((a, b) => a - b)
    console.log(
      `${label}: CPU ${((c.user + c.system) / BEATS / 1000).toFixed(2)} ms per heartbeat, wall p50 ${walls[Math.floor(BEATS / 2)].toFixed(2)} ms, ` +
        `p99 ${walls[Math.floor(BEATS * 0.99)].toFixed(2)} ms (answer ${Math.round(size / 1024)} KB)`,
    )
  }
  await run('warm-up', (i) => `blocks/${1 + (i % 19)}`)
  await run(`${SESSIONS} sessions, every beat moves`, (i) => `blocks/${1 + ((i + 7) % 19)}`)
  await run(`${SESSIONS} sessions, no beat changes`, (i) => `blocks/${1 + ((i + 7) % 19)}`)
} finally {
  await t.close()
}
process.exit(0)
