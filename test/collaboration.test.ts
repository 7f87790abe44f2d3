import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { presenceSessions } from '../src/modules/collaboration/tables'
import { createRuntime } from '../src/app'
import { createKernel } from '../src/kernel/kernel'
import { prunePresence } from '../src/modules/collaboration/service'
import { type TestApp, testApp } from './helpers/app'

// The suite's budget (bun test --timeout 60000), not less: the setup registers five users (an argon2 hash each) on a
// fresh database, which took over 30 s with two suites running side by side on a loaded machine.
setDefaultTimeout(60_000)

let t: TestApp
let space: string
let other: string
let admin: string
let editor: string
let editor2: string
let viewer: string
let spaceToken: string
let story: { uuid: string; id: number }
let otherStory: string
let tenantId: number

/** Live streams one principal may hold at once here (LIVE_STREAMS_PER_PRINCIPAL), and their lifetime. */
const STREAM_CAP = 3
const STREAM_SECONDS = 600

const hero = (uid: string, headline: string) => ({ component: 'hero', _uid: uid, headline })
const doc = (...blocks: unknown[]) => ({ type: 'doc', blocks })
const sid = () => crypto.randomUUID()

/** A second person in the owner's tenant with a role in the Space (there is no invitation API yet, so: the database). */
const member = (ownerTenant: number, role: 'viewer' | 'editor' | 'admin') => t.member(ownerTenant, space, role)

beforeAll(async () => {
  t = await testApp({ liveStreamsPerPrincipal: STREAM_CAP, liveStreamMaxSeconds: STREAM_SECONDS })
  const owner = await t.register({ name: 'Ada Admin' })
  tenantId = owner.tenant.id
  admin = owner.token
  space = (await t.createSpace(admin)).slug
  other = (await t.createSpace(admin)).slug
  for (const s of [space, other]) {
    const c = await t.request('POST', `/v1/spaces/${s}/components`, { token: admin, body: { name: 'hero', is_root: true, schema: { headline: { type: 'text' } } } })
    expect(c.status).toBe(201)
  }
  const r = await t.request('POST', `/v1/spaces/${space}/stories`, {
    token: admin,
    body: { name: 'Home', slug: 'home', content: doc(hero('a', 'A'), hero('b', 'B'), hero('c', 'C')) },
  })
  expect(r.status).toBe(201)
  story = { uuid: r.body.data.uuid, id: r.body.data.id }
  otherStory = (await t.request('POST', `/v1/spaces/${other}/stories`, { token: admin, body: { name: 'X', slug: 'x', content: doc(hero('x', 'X')) } })).body.data.uuid
  editor = await member(owner.tenant.id, 'editor')
  editor2 = await member(owner.tenant.id, 'editor')
  viewer = await member(owner.tenant.id, 'viewer')
  spaceToken = (await t.spaceToken(admin, space, 'admin')).token
})

afterAll(async () => {
  await t?.close()
})

const base = () => `/v1/spaces/${space}/stories/${story.uuid}`
const beat = (token: string, session_id: string, block_path = 'blocks/0', selection = { anchor: 0, head: 3 }) =>
  t.request('POST', `${base()}/presence`, { token, body: { session_id, block_path, selection } })

describe('presence', () => {
  test('each field is validated', async () => {
    for (const body of [
      { session_id: 'not-a-uuid', block_path: 'blocks/0', selection: { anchor: 0, head: 0 } },
      { session_id: '6f1c1d2e-1111-1111-8111-111111111111', block_path: 'blocks/0', selection: { anchor: 0, head: 0 } }, // v1, not v4
      { session_id: sid(), block_path: 'content/0', selection: { anchor: 0, head: 0 } },
      { session_id: sid(), block_path: `blocks/0/${'x'.repeat(260)}`, selection: { anchor: 0, head: 0 } },
      { session_id: sid(), block_path: 'blocks/0', selection: { anchor: -1, head: 0 } },
      { session_id: sid(), block_path: 'blocks/0', selection: { anchor: 0, head: 1.5 } },
      { session_id: sid(), block_path: 'blocks/0' },
    ]) {
      const r = await t.request('POST', `${base()}/presence`, { token: editor, body })
      expect({ body, status: r.status, error: r.body.error }).toEqual({ body, status: 422, error: 'validation_failed' })
    }
  })

  test('a heartbeat answers the other active sessions; a session belongs to its creator; the 30 s window; pruning after 5 min', async () => {
    const mine = sid()
    const theirs = sid()
    expect((await beat(viewer, theirs, 'blocks/2')).status).toBe(200) // viewers are present too
    const r = await beat(editor, mine, 'blocks/1/headline', { anchor: 2, head: 5 })
    expect(r.status).toBe(200)
    expect(r.body.data.session_id).toBe(mine)
    expect(r.body.data.active.map((s: { session_id: string }) => s.session_id)).toEqual([theirs])
    expect(r.body.data.active[0]).toMatchObject({ block_path: 'blocks/2', selection: { anchor: 0, head: 3 } })
    expect(typeof r.body.data.active[0].user_name).toBe('string')

    const taken = await beat(viewer, mine)
    expect({ status: taken.status, error: taken.body.error }).toEqual({ status: 409, error: 'session_taken' })

    const list = await t.request('GET', `${base()}/presence`, { token: viewer })
    expect(list.status).toBe(200)
    const ids = list.body.data.map((s: { session_id: string }) => s.session_id).sort()
    expect(ids).toEqual([mine, theirs].sort())
    expect(Object.keys(list.body.data[0]).sort()).toEqual(['block_path', 'last_seen', 'selection', 'session_id', 'user_id', 'user_name'])

    t.clock.advance(20_000)
    expect((await beat(editor, mine)).status).toBe(200)
    t.clock.advance(15_000) // theirs: 35 s silent; mine: 15 s
    const later = await t.request('GET', `${base()}/presence`, { token: viewer })
    expect(later.body.data.map((s: { session_id: string }) => s.session_id)).toEqual([mine])

    const count = async () => (await t.kernel.db.db.select().from(presenceSessions).where(eq(presenceSessions.storyId, story.id))).length
    expect(await count()).toBe(2) // silent, not yet pruned
    t.clock.advance(5 * 60_000 - 30_000) // theirs: 5 min 5 s silent; mine: 4 min 45 s
    await prunePresence(t.kernel)
    expect(await count()).toBe(1)
    t.clock.advance(30_000)
    await prunePresence(t.kernel)
    expect(await count()).toBe(0)
  })

  test('another instance’s roster: joins, moves and leaves arrive through the event bus; beats that changed nothing, at its next read', async () => {
    const second = await createKernel(t.config, { clock: t.clock, database: t.kernel.db, migrate: false })
    const peer = createRuntime(second)
    await peer.start()
    type View = { session_id: string; block_path: string; selection: { anchor: number; head: number }; user_name: string }
    const onPeer = async () => {
      const res = await peer.handle(new Request(`http://localhost${base()}/presence`, { headers: { Authorization: `Bearer ${viewer}`, 'X-Forwarded-For': '10.7.0.1' } }))
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toStartWith('application/json')
      return ((await res.json()) as { data: View[] }).data
    }
    /** Delivery between instances is checked, not its speed: poll the peer within a generous bound. */
    const until = async (ok: (v: View[]) => boolean) => {
      const deadline = Date.now() + 30_000
      let seen = await onPeer()
      while (!ok(seen) && Date.now() < deadline) {
        await Bun.sleep(50)
        seen = await onPeer()
      }
      return seen
    }
    try {
      const mine = sid()
      expect((await beat(editor, mine, 'blocks/1', { anchor: 1, head: 2 })).status).toBe(200)
      let seen = await until((v) => v.some((x) => x.session_id === mine))
      expect(seen.find((x) => x.session_id === mine)).toMatchObject({ block_path: 'blocks/1', selection: { anchor: 1, head: 2 } })
      expect(seen.find((x) => x.session_id === mine)!.user_name).not.toBe('')
      // A move: the peer's roster takes it from presence.changed.
      expect((await beat(editor, mine, 'blocks/2', { anchor: 3, head: 4 })).status).toBe(200)
      seen = await until((v) => v.find((x) => x.session_id === mine)?.block_path === 'blocks/2')
      expect(seen.find((x) => x.session_id === mine)).toMatchObject({ block_path: 'blocks/2', selection: { anchor: 3, head: 4 } })
      // Same block, new selection: no event; the peer reads its roster again once it is older than its refresh time.
      expect((await beat(editor, mine, 'blocks/2', { anchor: 7, head: 9 })).status).toBe(200)
      t.clock.advance(5_000)
      seen = await until((v) => v.find((x) => x.session_id === mine)?.selection.anchor === 7)
      expect(seen.find((x) => x.session_id === mine)!.selection).toEqual({ anchor: 7, head: 9 })
      // A heartbeat on the peer answers the session of the first instance.
      const theirs = sid()
      const r = await peer.handle(
        new Request(`http://localhost${base()}/presence`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${editor2}`, 'Content-Type': 'application/json', 'X-Forwarded-For': '10.7.0.2' },
          body: JSON.stringify({ session_id: theirs, block_path: 'blocks/0', selection: { anchor: 0, head: 0 } }),
        }),
      )
      expect(r.status).toBe(200)
      const answer = (await r.json()) as { data: { session_id: string; active: View[] } }
      expect(answer.data.session_id).toBe(theirs)
      expect(answer.data.active.map((x) => x.session_id)).toContain(mine)
      expect(answer.data.active.map((x) => x.session_id)).not.toContain(theirs)
      // Leaves (which also leaves the Story's presence empty for the tests after this one).
      expect((await t.request('DELETE', `${base()}/presence/${mine}`, { token: editor })).status).toBe(204)
      expect((await t.request('DELETE', `${base()}/presence/${theirs}`, { token: editor2 })).status).toBe(204)
      seen = await until((v) => !v.some((x) => x.session_id === mine || x.session_id === theirs))
      expect(seen.map((x) => x.session_id)).not.toContain(mine)
    } finally {
      await peer.close()
    }
  })

  test('DELETE ends the caller’s own session; someone else’s is 404', async () => {
    const mine = sid()
    expect((await beat(editor, mine)).status).toBe(200)
    expect((await t.request('DELETE', `${base()}/presence/${mine}`, { token: viewer })).status).toBe(404)
    expect((await t.request('DELETE', `${base()}/presence/${mine}`, { token: editor })).status).toBe(204)
    expect((await t.request('DELETE', `${base()}/presence/${mine}`, { token: editor })).status).toBe(404)
    expect((await t.request('GET', `${base()}/presence`, { token: editor })).body.data).toEqual([])
  })

  test('a Space token reads but acts for no person: 403 user_required', async () => {
    const r = await beat(spaceToken, sid())
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 403, error: 'user_required' })
    expect((await t.request('GET', `${base()}/presence`, { token: spaceToken })).status).toBe(200)
  })

  test('another Space’s Story, or a Story of this Space under another Space: 404', async () => {
    expect((await t.request('GET', `/v1/spaces/${other}/stories/${story.uuid}/presence`, { token: admin })).status).toBe(404)
    expect((await t.request('GET', `/v1/spaces/${space}/stories/${otherStory}/presence`, { token: admin })).status).toBe(404)
    const stranger = (await t.register()).token
    expect((await t.request('GET', `${base()}/presence`, { token: stranger })).status).toBe(404)
  })
})

describe('comments', () => {
  const post = (token: string, body: Record<string, unknown>) => t.request('POST', `${base()}/comments`, { token, body })
  const list = async (q = '') => (await t.request('GET', `${base()}/comments${q}`, { token: viewer })).body.data as any[]

  test('anchoring follows the block across a reorder, and an orphan keeps its last path', async () => {
    const c = await post(editor, { block_path: 'blocks/1/headline', body: '<b>not html</b> & verbatim', parent_id: null })
    expect(c.status).toBe(201)
    expect(c.body.data).toMatchObject({ block_path: 'blocks/1/headline', block_uid: 'b', body: '<b>not html</b> & verbatim', parent_id: null, resolved: false, edited: false, orphaned: false, deleted: false })
    expect(c.body.data.author.name).toBeString()
    expect((await post(editor, { block_path: 'blocks/7', body: 'x' })).status).toBe(422)
    expect((await post(editor, { block_path: 'blocks/0/headline/2', body: 'x' })).status).toBe(422)

    const put = await t.request('PUT', base(), { token: admin, body: { content: doc(hero('c', 'C'), hero('a', 'A'), hero('b', 'B')) } })
    expect(put.status).toBe(200)
    let found = (await list()).find((x) => x.id === c.body.data.id)
    expect(found).toMatchObject({ block_path: 'blocks/2/headline', orphaned: false })

    await t.request('PUT', base(), { token: admin, body: { content: doc(hero('c', 'C'), hero('a', 'A')) } })
    found = (await list()).find((x) => x.id === c.body.data.id)
    expect(found).toMatchObject({ block_path: 'blocks/1/headline', orphaned: true, block_uid: 'b' })
    await t.request('PUT', base(), { token: admin, body: { content: doc(hero('a', 'A'), hero('b', 'B'), hero('c', 'C')) } })
  })

  test('threads are one level; replies inherit the root’s anchor', async () => {
    const root = (await post(editor, { block_path: 'blocks/2', body: 'root' })).body.data
    const reply = await post(editor2, { block_path: 'blocks/0', body: 'reply', parent_id: root.id })
    expect(reply.status).toBe(201)
    expect(reply.body.data).toMatchObject({ parent_id: root.id, block_uid: 'c', block_path: 'blocks/2' })
    const deeper = await post(editor, { block_path: 'blocks/0', body: 'deeper', parent_id: reply.body.data.id })
    expect({ status: deeper.status, field: Object.keys(deeper.body.errors ?? {}) }).toEqual({ status: 422, field: ['parent_id'] })
    expect((await post(editor, { block_path: 'blocks/0', body: 'x', parent_id: 999999 })).status).toBe(422)
    expect((await post(editor, { block_path: 'blocks/0', body: '' })).status).toBe(422)
    expect((await post(editor, { block_path: 'blocks/0', body: 'x'.repeat(10_001) })).status).toBe(422)
    expect((await post(editor, { block_path: 'blocks/0', body: 'x', extra: 1 })).status).toBe(422)
  })

  test('a reply may leave out block_path (it takes the root’s anchor); a root comment may not', async () => {
    const root = (await post(editor, { block_path: 'blocks/1', body: 'root' })).body.data
    const reply = await post(editor2, { body: 'reply without a path', parent_id: root.id })
    expect(reply.status).toBe(201)
    expect(reply.body.data).toMatchObject({ parent_id: root.id, block_uid: root.block_uid, block_path: root.block_path })
    for (const body of [{ body: 'no anchor' }, { body: 'no anchor', parent_id: null }]) {
      const r = await post(editor, body)
      expect({ status: r.status, error: r.body.error, fields: Object.keys(r.body.errors ?? {}) }).toEqual({ status: 422, error: 'validation_failed', fields: ['block_path'] })
    }
  })

  test('every Space token (viewer, editor, admin) on a user-only route answers 403 user_required', async () => {
    const root = (await post(editor, { block_path: 'blocks/0', body: 'for the tokens' })).body.data
    for (const role of ['viewer', 'editor', 'admin'] as const) {
      const tok = (await t.spaceToken(admin, space, role)).token
      const calls = [
        await post(tok, { block_path: 'blocks/0', body: 'x' }),
        await t.request('PATCH', `${base()}/comments/${root.id}`, { token: tok, body: { body: 'x' } }),
        await t.request('DELETE', `${base()}/comments/${root.id}`, { token: tok }),
        await t.request('POST', `${base()}/comments/${root.id}/resolve`, { token: tok }),
        await t.request('POST', `${base()}/presence`, { token: tok, body: { session_id: sid(), block_path: 'blocks/0', selection: { anchor: 0, head: 0 } } }),
        await t.request('DELETE', `${base()}/presence/${sid()}`, { token: tok }),
      ]
      for (const r of calls) expect({ role, status: r.status, error: r.body?.error }).toEqual({ role, status: 403, error: 'user_required' })
    }
    // A Space token of another Space still learns nothing: 404.
    const elsewhere = (await t.spaceToken(admin, other, 'admin')).token
    expect((await post(elsewhere, { block_path: 'blocks/0', body: 'x' })).status).toBe(404)
  })

  test('roles: viewer reads; editor edits and deletes own; admin any; Space tokens read only', async () => {
    const mine = (await post(editor, { block_path: 'blocks/0', body: 'mine' })).body.data
    expect((await post(viewer, { block_path: 'blocks/0', body: 'x' })).status).toBe(403)
    const tok = await post(spaceToken, { block_path: 'blocks/0', body: 'x' })
    expect({ status: tok.status, error: tok.body.error }).toEqual({ status: 403, error: 'user_required' })
    expect((await t.request('GET', `${base()}/comments`, { token: spaceToken })).status).toBe(200)

    const patch = (token: string, id: number, body: string) => t.request('PATCH', `${base()}/comments/${id}`, { token, body: { body } })
    expect((await patch(editor2, mine.id, 'hijack')).status).toBe(403)
    expect((await patch(viewer, mine.id, 'hijack')).status).toBe(403)
    const own = await patch(editor, mine.id, 'edited')
    expect(own.status).toBe(200)
    expect(own.body.data).toMatchObject({ body: 'edited', edited: true })
    expect((await patch(admin, mine.id, 'by admin')).body.data.body).toBe('by admin')

    expect((await t.request('DELETE', `${base()}/comments/${mine.id}`, { token: editor2 })).status).toBe(403)
    expect((await t.request('DELETE', `${base()}/comments/${mine.id}`, { token: editor })).status).toBe(204)
    expect((await t.request('DELETE', `${base()}/comments/${mine.id}`, { token: editor })).status).toBe(404)
    const theirs = (await post(editor2, { block_path: 'blocks/0', body: 'theirs' })).body.data
    expect((await t.request('DELETE', `${base()}/comments/${theirs.id}`, { token: admin })).status).toBe(204)
  })

  test('resolve toggles a root thread; replies 422; editors resolve their own threads, admins any; include_resolved', async () => {
    const root = (await post(editor, { block_path: 'blocks/1', body: 'to resolve' })).body.data
    const reply = (await post(editor2, { block_path: 'blocks/1', body: 'a reply', parent_id: root.id })).body.data
    const resolve = (token: string, id: number) => t.request('POST', `${base()}/comments/${id}/resolve`, { token })
    expect((await resolve(editor, reply.id)).status).toBe(422)
    expect((await resolve(editor2, root.id)).status).toBe(403)
    expect((await resolve(viewer, root.id)).status).toBe(403)
    expect((await resolve(editor, root.id)).body.data.resolved).toBe(true)
    const hidden = await list()
    expect(hidden.some((c) => c.id === root.id || c.id === reply.id)).toBe(false)
    const all = await list('?include_resolved=1')
    expect(all.filter((c) => c.id === root.id || c.id === reply.id).length).toBe(2)
    expect(all.map((c) => c.id)).toEqual([...all.map((c) => c.id)].sort((a, b) => a - b)) // oldest first
    expect((await resolve(admin, root.id)).body.data.resolved).toBe(false)
    expect((await list()).some((c) => c.id === root.id)).toBe(true)
    expect((await t.request('GET', `${base()}/comments?include_resolved=yes`, { token: viewer })).status).toBe(422)
  })

  test('deleting a root with replies keeps the thread; the last reply takes a deleted root with it', async () => {
    const root = (await post(editor, { block_path: 'blocks/0', body: 'root' })).body.data
    const reply = (await post(editor2, { block_path: 'blocks/0', body: 'reply', parent_id: root.id })).body.data
    expect((await t.request('DELETE', `${base()}/comments/${root.id}`, { token: editor })).status).toBe(204)
    const kept = (await list()).find((c) => c.id === root.id)
    expect(kept).toMatchObject({ body: null, deleted: true })
    expect((await t.request('PATCH', `${base()}/comments/${root.id}`, { token: admin, body: { body: 'x' } })).status).toBe(404)
    expect((await t.request('DELETE', `${base()}/comments/${reply.id}`, { token: editor2 })).status).toBe(204)
    expect((await list()).some((c) => c.id === root.id || c.id === reply.id)).toBe(false)
  })

  test('cross-Space and cross-Story ids: 404', async () => {
    const c = (await post(editor, { block_path: 'blocks/0', body: 'here' })).body.data
    const o = await t.request('POST', `/v1/spaces/${other}/stories/${otherStory}/comments`, { token: admin, body: { block_path: 'blocks/0', body: 'there' } })
    expect(o.status).toBe(201)
    expect((await t.request('PATCH', `${base()}/comments/${o.body.data.id}`, { token: admin, body: { body: 'x' } })).status).toBe(404)
    expect((await t.request('PATCH', `/v1/spaces/${other}/stories/${otherStory}/comments/${c.id}`, { token: admin, body: { body: 'x' } })).status).toBe(404)
    expect((await t.request('GET', `/v1/spaces/${other}/stories/${story.uuid}/comments`, { token: admin })).status).toBe(404)
    expect((await t.request('GET', `${base()}/comments`, { token: (await t.register()).token })).status).toBe(404)
  })
})

describe('live stream', () => {
  /** Reads SSE events from a streaming response until `until` is seen or the (generous) bound runs out. */
  async function collect(res: Response, until: (events: { event: string; data: any }[]) => boolean, ms = 30_000) {
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    const events: { event: string; data: any }[] = []
    let buf = ''
    const deadline = Date.now() + ms
    while (Date.now() < deadline && !until(events)) {
      const chunk = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => null)])
      if (!chunk || chunk.done) break
      buf += decoder.decode(chunk.value, { stream: true })
      let i: number
      while ((i = buf.indexOf('\n\n')) !== -1) {
        const block = buf.slice(0, i)
        buf = buf.slice(i + 2)
        const ev = /^event: (.*)$/m.exec(block)?.[1]
        const data = /^data: (.*)$/m.exec(block)?.[1]
        if (ev && data) events.push({ event: ev, data: JSON.parse(data) })
      }
    }
    await reader.cancel().catch(() => {})
    return events
  }

  test('a second client sees presence, comment and story events, also from another instance', async () => {
    const second = await createKernel(t.config, { clock: t.clock, database: t.kernel.db, migrate: false })
    const peer = createRuntime(second)
    await peer.start()
    const server = peer.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 20, idleTimeout: 30 })
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}${base()}/live`, { headers: { Authorization: `Bearer ${viewer}` } })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toStartWith('text/event-stream')
      const pending = collect(res, (ev) => ['presence', 'comment', 'story'].every((k) => ev.some((e) => e.event === k)))
      await Bun.sleep(50)
      // Changes made through the first instance (t): they reach the second one's listeners through the event bus.
      await beat(editor, sid(), 'blocks/2')
      await t.request('POST', `${base()}/comments`, { token: editor, body: { block_path: 'blocks/0', body: 'live' } })
      await t.request('PUT', base(), { token: admin, body: { name: 'Home' } })
      // Delivery is checked, not its speed: on a loaded machine the three writes alone can take seconds.
      const events = await pending
      expect(events.find((e) => e.event === 'presence')?.data).toMatchObject({ story_uuid: story.uuid, block_path: 'blocks/2', left: false })
      expect(events.find((e) => e.event === 'comment')?.data).toMatchObject({ story_uuid: story.uuid, action: 'created' })
      expect(events.find((e) => e.event === 'story')?.data).toMatchObject({ story_uuid: story.uuid })
      const denied = await fetch(`http://127.0.0.1:${server.port}/v1/spaces/${space}/stories/${otherStory}/live`, { headers: { Authorization: `Bearer ${viewer}` } })
      expect(denied.status).toBe(404)
    } finally {
      server.stop(true)
      await peer.close()
    }
  })
})

describe('live streams end with the access they were opened with, and are bounded', () => {
  type Sse = { event: string; data: any }
  /**
   * Reads a stream until it ends (or the generous bound runs out): its events and whether the server ended it.
   * Delivery is checked, not its speed.
   */
  async function untilEnd(res: Response, ms = 30_000): Promise<{ events: Sse[]; ended: boolean }> {
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    const events: Sse[] = []
    let buf = ''
    const deadline = Date.now() + ms
    let ended = false
    while (Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => null)])
      if (!chunk) break
      if (chunk.done) {
        ended = true
        break
      }
      buf += decoder.decode(chunk.value, { stream: true })
      let i: number
      while ((i = buf.indexOf('\n\n')) !== -1) {
        const block = buf.slice(0, i)
        buf = buf.slice(i + 2)
        const ev = /^event: (.*)$/m.exec(block)?.[1]
        const data = /^data: (.*)$/m.exec(block)?.[1]
        if (ev && data) events.push({ event: ev, data: JSON.parse(data) })
      }
    }
    if (!ended) await reader.cancel().catch(() => {})
    return { events, ended }
  }
  const live = (token: string, handle: (r: Request) => Response | Promise<Response> = (r) => t.app.handle(r)) =>
    handle(new Request(`http://localhost${base()}/live`, { headers: { Authorization: `Bearer ${token}`, 'X-Forwarded-For': '10.9.9.9' } }))
  const expectEnded = (r: { events: Sse[]; ended: boolean }, reason: string) => {
    expect(r.ended).toBe(true)
    expect(r.events.at(-1)).toEqual({ event: 'closing', data: { reason, retry_ms: 3000 } })
  }
  const userIdOf = async (token: string) => (await t.request('GET', '/v1/whoami', { token })).body.data.user.id as number

  test('a removed member’s open streams end, on this instance and on another', async () => {
    const gone = await member(tenantId, 'viewer')
    const goneId = await userIdOf(gone)
    const other = await t.instance()
    try {
      const here = await live(gone)
      const there = await live(gone, (r) => other.runtime.handle(r))
      expect([here.status, there.status]).toEqual([200, 200])
      const ends = [untilEnd(here), untilEnd(there)]
      expect((await t.request('DELETE', `/v1/spaces/${space}/members/${goneId}`, { token: admin })).status).toBe(204)
      for (const r of await Promise.all(ends)) expectEnded(r, 'access_ended')
      expect((await live(gone)).status).toBe(404)
    } finally {
      await other.close()
    }
  })

  test('a revoked Space token’s stream ends, also one revoked with its creator’s removal; a signed-out session’s stream ends', async () => {
    const revoked = await t.spaceToken(admin, space, 'viewer')
    const res = await live(revoked.token)
    expect(res.status).toBe(200)
    const end = untilEnd(res)
    expect((await t.request('DELETE', `/v1/spaces/${space}/tokens/${revoked.id}`, { token: admin })).status).toBe(204)
    expectEnded(await end, 'access_ended')

    const minter = await member(tenantId, 'admin')
    const minted = await t.spaceToken(minter, space, 'viewer')
    const mintedEnd = untilEnd(await live(minted.token))
    expect((await t.request('DELETE', `/v1/spaces/${space}/members/${await userIdOf(minter)}`, { token: admin })).status).toBe(204)
    expectEnded(await mintedEnd, 'access_ended')

    const leaving = await member(tenantId, 'viewer')
    const sessionEnd = untilEnd(await live(leaving))
    expect((await t.request('POST', '/v1/auth/logout', { token: leaving })).status).toBe(204)
    expectEnded(await sessionEnd, 'access_ended')
  })

  test('one principal holds at most LIVE_STREAMS_PER_PRINCIPAL streams: one more is 429 rate_limited; a closed one frees its place', async () => {
    const person = await member(tenantId, 'viewer')
    // Another session of the same person counts against the same cap.
    const email = (await t.request('GET', '/v1/whoami', { token: person })).body.data.user.email
    const second = (await t.request('POST', '/v1/auth/login', { body: { email, password: 'correct horse battery staple' } })).body.data.token
    const open = [await live(person), await live(second), await live(person)]
    expect(open.map((r) => r.status)).toEqual([200, 200, 200])
    const refused = await live(second)
    expect(refused.status).toBe(429)
    const body = await refused.json()
    expect(body.error).toBe('rate_limited')
    expect(typeof body.message).toBe('string')
    expect(refused.headers.get('retry-after')).toBe('3')
    expect(refused.headers.get('ratelimit-limit')).toBe(String(STREAM_CAP))
    expect(refused.headers.get('ratelimit-remaining')).toBe('0')
    // Another principal is not affected.
    const token = await t.spaceToken(admin, space, 'viewer')
    const others = await live(token.token)
    expect(others.status).toBe(200)
    await others.body!.cancel()
    // The client leaves one: its place is free.
    await open[0].body!.cancel()
    const again = await live(second)
    expect(again.status).toBe(200)
    for (const r of [again, open[1], open[2]]) await r.body!.cancel()
  })

  test('a stream ends after LIVE_STREAM_MAX_SECONDS on the kernel clock, or when its token expires; the client reconnects', async () => {
    const res = await live(viewer)
    expect(res.status).toBe(200)
    const end = untilEnd(res)
    t.clock.advance(STREAM_SECONDS * 1000)
    expectEnded(await end, 'lifetime')
    const reconnected = await live(viewer)
    expect(reconnected.status).toBe(200)
    await reconnected.body!.cancel()

    const expiresAt = new Date(t.clock.ms() + 120_000).toISOString()
    const short = (await t.request('POST', `/v1/spaces/${space}/tokens`, { token: admin, body: { name: 'short', role: 'viewer', expires_at: expiresAt } })).body.data
    const shortEnd = untilEnd(await live(short.token))
    t.clock.advance(120_000)
    expectEnded(await shortEnd, 'lifetime')
    expect((await live(short.token)).status).toBe(401)
  })
})
