import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(120_000)

// Scheduled publish and unpublish: a plan per Story and action, a durable job at its time (the kernel's queue).

let t: TestApp
let owner: string
let space: string
let editor: string
let viewer: string
let n = 0

const MIN = 60_000
const at = (ms: number) => new Date(t.clock.ms() + ms).toISOString()
const schedule = (uuid: string, action: string, body: unknown, token = editor) =>
  t.request('PUT', `/v1/spaces/${space}/stories/${uuid}/schedules/${action}`, { token, body })
const cancel = (uuid: string, action: string, token = editor) => t.request('DELETE', `/v1/spaces/${space}/stories/${uuid}/schedules/${action}`, { token })
const storyOf = async (uuid: string) => (await t.request('GET', `/v1/spaces/${space}/stories/${uuid}`, { token: viewer })).body.data

async function story(extra: Record<string, unknown> = {}) {
  n++
  const r = await t.request('POST', `/v1/spaces/${space}/stories`, { token: editor, body: { name: `S${n}`, slug: `s-${n}`, ...extra } })
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`)
  return r.body.data as { uuid: string }
}

/** story.published events of one Story written to the outbox: what webhooks, search and caches follow. */
async function publishedEvents(uuid: string): Promise<number> {
  const rows = await t.kernel.db.query<{ n: number | string }>(
    "select count(*) as n from events where type = 'story.published' and payload->'story'->>'uuid' = $1",
    [uuid],
  )
  return Number(rows[0]?.n ?? 0)
}

beforeAll(async () => {
  t = await testApp()
  const o = await t.register()
  owner = o.token
  space = (await t.createSpace(owner)).slug
  editor = await t.member(o.tenant.id, space, 'editor')
  viewer = (await t.spaceToken(owner, space, 'viewer')).token
})

afterAll(async () => {
  await t?.close()
})

describe('planning', () => {
  test('a publish is planned, listed on the Story and in the Space, with who planned it', async () => {
    const s = await story()
    const when = at(10 * MIN)
    const r = await schedule(s.uuid, 'publish', { at: when })
    expect(r.status).toBe(200)
    expect(r.body.data).toMatchObject({ story_uuid: s.uuid, action: 'publish', at: when, error: null })
    expect(r.body.data.created_by.name).toMatch(/^User /)
    const one = await t.request('GET', `/v1/spaces/${space}/stories/${s.uuid}/schedules`, { token: viewer })
    expect(one.status).toBe(200)
    expect(one.body.data).toHaveLength(1)
    const all = await t.request('GET', `/v1/spaces/${space}/stories/schedules`, { token: viewer })
    expect(all.status).toBe(200)
    expect(all.body.data.map((x: { story_uuid: string }) => x.story_uuid)).toContain(s.uuid)
    expect(all.body.meta.total).toBeGreaterThanOrEqual(1)
    await cancel(s.uuid, 'publish')
  })

  test.each([
    [{ at: 'tomorrow' }, 'at'],
    [{ at: '2020-01-01T00:00:00Z' }, 'at'],
    [{ at: '2026-02-30T10:00:00Z' }, 'at'],
    [{}, 'at'],
  ])('a bad time %p answers 422 naming the field', async (body, field) => {
    const s = await story()
    const r = await schedule(s.uuid, 'publish', body)
    expect(r.status).toBe(422)
    expect(r.body.error).toBe('validation_failed')
    expect(r.body.errors[field]).toBeDefined()
  })

  test('an unknown action or Story is 404 (no such resource), a viewer 403', async () => {
    const s = await story()
    expect((await schedule(s.uuid, 'delete', { at: at(MIN) })).status).toBe(404)
    expect((await schedule(crypto.randomUUID(), 'publish', { at: at(MIN) })).status).toBe(404)
    expect((await schedule(s.uuid, 'publish', { at: at(MIN) }, viewer)).status).toBe(403)
    expect((await cancel(s.uuid, 'publish')).status).toBe(404)
  })

  test('folders (422) and archived Stories (409) cannot be scheduled', async () => {
    const folder = await story({ is_folder: true })
    expect((await schedule(folder.uuid, 'publish', { at: at(MIN) })).status).toBe(422)
    const s = await story()
    await t.request('POST', `/v1/spaces/${space}/stories/${s.uuid}/archive`, { token: editor })
    const r = await schedule(s.uuid, 'publish', { at: at(MIN) })
    expect(r.status).toBe(409)
    expect(r.body.error).toBe('story_archived')
  })

  test('another Space cannot see or plan a Story (404)', async () => {
    const s = await story()
    const stranger = await t.register()
    const other = (await t.createSpace(stranger.token)).slug
    const r = await t.request('PUT', `/v1/spaces/${other}/stories/${s.uuid}/schedules/publish`, { token: stranger.token, body: { at: at(MIN) } })
    expect(r.status).toBe(404)
    const list = await t.request('GET', `/v1/spaces/${space}/stories/schedules`, { token: stranger.token })
    expect(list.status).toBe(404)
  })
})

describe('the time comes', () => {
  test('a planned publish publishes at its minute, once, and the plan is gone', async () => {
    const s = await story()
    await schedule(s.uuid, 'publish', { at: at(5 * MIN) })
    t.clock.advance(4 * MIN)
    await t.kernel.jobs.runDueJobs()
    expect((await storyOf(s.uuid)).status).toBe('draft')
    t.clock.advance(MIN)
    await t.kernel.jobs.runDueJobs()
    expect((await storyOf(s.uuid)).status).toBe('published')
    expect(await publishedEvents(s.uuid)).toBe(1)
    const left = await t.request('GET', `/v1/spaces/${space}/stories/${s.uuid}/schedules`, { token: viewer })
    expect(left.body.data).toEqual([])
  })

  test('a planned unpublish withdraws the Story', async () => {
    const s = await story()
    await t.request('POST', `/v1/spaces/${space}/stories/${s.uuid}/publish`, { token: editor })
    await schedule(s.uuid, 'unpublish', { at: at(2 * MIN) })
    t.clock.advance(2 * MIN)
    await t.kernel.jobs.runDueJobs()
    expect((await storyOf(s.uuid)).status).toBe('draft')
  })

  test('a cancelled plan does nothing', async () => {
    const s = await story()
    await schedule(s.uuid, 'publish', { at: at(MIN) })
    expect((await cancel(s.uuid, 'publish')).status).toBe(204)
    t.clock.advance(2 * MIN)
    await t.kernel.jobs.runDueJobs()
    expect((await storyOf(s.uuid)).status).toBe('draft')
    expect((await cancel(s.uuid, 'publish')).status).toBe(404)
  })

  test('planning again moves the time: the first time does nothing', async () => {
    const s = await story()
    await schedule(s.uuid, 'publish', { at: at(2 * MIN) })
    await schedule(s.uuid, 'publish', { at: at(10 * MIN) })
    t.clock.advance(3 * MIN)
    await t.kernel.jobs.runDueJobs()
    expect((await storyOf(s.uuid)).status).toBe('draft')
    t.clock.advance(7 * MIN)
    await t.kernel.jobs.runDueJobs()
    expect((await storyOf(s.uuid)).status).toBe('published')
  })

  test('a refused action (the Story was archived meanwhile) stays listed with the reason until cancelled', async () => {
    const s = await story()
    await schedule(s.uuid, 'publish', { at: at(MIN) })
    await t.request('POST', `/v1/spaces/${space}/stories/${s.uuid}/archive`, { token: editor })
    t.clock.advance(MIN)
    await t.kernel.jobs.runDueJobs()
    const r = await t.request('GET', `/v1/spaces/${space}/stories/${s.uuid}/schedules`, { token: viewer })
    expect(r.body.data).toHaveLength(1)
    expect(r.body.data[0].error).toContain('archived')
    expect((await cancel(s.uuid, 'publish')).status).toBe(204)
  })

  test('deleting the Story drops its plans', async () => {
    const s = await story()
    await schedule(s.uuid, 'publish', { at: at(MIN) })
    expect((await t.request('DELETE', `/v1/spaces/${space}/stories/${s.uuid}`, { token: editor })).status).toBe(204)
    t.clock.advance(MIN)
    await t.kernel.jobs.runDueJobs()
    const all = await t.request('GET', `/v1/spaces/${space}/stories/schedules`, { token: viewer })
    expect(all.body.data.map((x: { story_uuid: string }) => x.story_uuid)).not.toContain(s.uuid)
  })
})

describe('across restarts and instances', () => {
  test('planned on one runtime, which stops; another runtime on the same database publishes it', async () => {
    const s = await story()
    const first = await t.instance()
    const res = await first.runtime.handle(
      new Request(`http://localhost/v1/spaces/${space}/stories/${s.uuid}/schedules/publish`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${editor}`, 'Content-Type': 'application/json', 'X-Forwarded-For': '10.9.9.9' },
        body: JSON.stringify({ at: at(3 * MIN) }),
      }),
    )
    expect(res.status).toBe(200)
    await first.close()
    const second = await t.instance()
    try {
      t.clock.advance(3 * MIN)
      await second.kernel.jobs.runDueJobs()
      expect((await storyOf(s.uuid)).status).toBe('published')
      expect(await publishedEvents(s.uuid)).toBe(1)
    } finally {
      await second.close()
    }
  })

  test('two runtimes on one database, both running due jobs at once, publish once', async () => {
    const stories = [await story(), await story(), await story()]
    for (const s of stories) await schedule(s.uuid, 'publish', { at: at(MIN) })
    const other = await t.instance()
    try {
      t.clock.advance(MIN)
      await Promise.all([t.kernel.jobs.runDueJobs(), other.kernel.jobs.runDueJobs()])
      for (const s of stories) {
        expect((await storyOf(s.uuid)).status).toBe('published')
        expect(await publishedEvents(s.uuid)).toBe(1)
      }
    } finally {
      await other.close()
    }
  })
})
