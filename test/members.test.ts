import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type TestApp, testApp } from './helpers/app'
import { startReceiver } from './helpers/receiver'

setDefaultTimeout(60_000)

let t: TestApp
beforeAll(async () => {
  // Webhook receivers listen on 127.0.0.1.
  t = await testApp({ outboundAllowPrivate: true })
})
afterAll(() => t.close())

/** An admin with a Space, plus members of each role; their ids come from whoami. */
async function team() {
  const owner = await t.register()
  const space = await t.createSpace(owner.token)
  const tokens = {
    admin: owner.token,
    editor: await t.member(owner.tenant.id, space.slug, 'editor'),
    viewer: await t.member(owner.tenant.id, space.slug, 'viewer'),
  }
  const idOf = async (token: string) => (await t.request('GET', '/v1/whoami', { token })).body.data.user.id as number
  return {
    space: space.slug,
    tenantId: owner.tenant.id,
    tokens,
    ids: { admin: owner.user.id, editor: await idOf(tokens.editor), viewer: await idOf(tokens.viewer) },
  }
}

describe('members', () => {
  test('an admin lists the members with their roles, oldest first, paged; editors and viewers may not (e-mail addresses)', async () => {
    const s = await team()
    for (const role of ['viewer', 'editor'] as const) {
      const refused = await t.request('GET', `/v1/spaces/${s.space}/members`, { token: s.tokens[role] })
      expect(refused.status).toBe(403)
      expect(refused.text).not.toContain('@example.com')
    }
    const res = await t.request('GET', `/v1/spaces/${s.space}/members`, { token: s.tokens.admin })
    expect(res.status).toBe(200)
    expect(res.body.meta).toEqual({ total: 3, page: 1, per_page: 50 })
    expect(res.body.data.map((m: any) => [m.user.id, m.role])).toEqual([
      [s.ids.admin, 'admin'],
      [s.ids.editor, 'editor'],
      [s.ids.viewer, 'viewer'],
    ])
    expect(Object.keys(res.body.data[0]).sort()).toEqual(['joined_at', 'role', 'user'])
    const page2 = await t.request('GET', `/v1/spaces/${s.space}/members?per_page=2&page=2`, { token: s.tokens.admin })
    expect(page2.body.data.map((m: any) => m.user.id)).toEqual([s.ids.viewer])
    expect((await t.request('GET', `/v1/spaces/${s.space}/members?per_page=101`, { token: s.tokens.admin })).status).toBe(422)
  })

  test('a stranger, even of the same Tenant, gets 404 for the Space', async () => {
    const s = await team()
    const stranger = await t.register()
    expect((await t.request('GET', `/v1/spaces/${s.space}/members`, { token: stranger.token })).status).toBe(404)
  })

  test('an admin changes a role; editors and viewers may not (403); bad input is 422 or 404', async () => {
    const s = await team()
    const url = `/v1/spaces/${s.space}/members/${s.ids.viewer}`
    expect((await t.request('PATCH', url, { token: s.tokens.editor, body: { role: 'editor' } })).status).toBe(403)
    const ok = await t.request('PATCH', url, { token: s.tokens.admin, body: { role: 'editor' } })
    expect(ok.status).toBe(200)
    expect(ok.body.data.role).toBe('editor')
    // The guard reads the new role at once: the former viewer may now write as an editor would.
    const roles = await t.request('GET', `/v1/spaces/${s.space}/members`, { token: s.tokens.admin })
    expect(roles.body.data.find((m: any) => m.user.id === s.ids.viewer).role).toBe('editor')
    expect((await t.request('GET', `/v1/spaces/${s.space}`, { token: s.tokens.viewer })).body.data.role).toBe('editor')
    expect((await t.request('PATCH', url, { token: s.tokens.admin, body: { role: 'owner' } })).status).toBe(422)
    expect((await t.request('PATCH', url, { token: s.tokens.admin, body: { role: 'admin', extra: 1 } })).status).toBe(422)
    expect((await t.request('PATCH', `/v1/spaces/${s.space}/members/999999`, { token: s.tokens.admin, body: { role: 'viewer' } })).status).toBe(404)
    expect((await t.request('PATCH', `/v1/spaces/${s.space}/members/1e3`, { token: s.tokens.admin, body: { role: 'viewer' } })).status).toBe(404)
  })

  test('the last admin can be neither demoted nor removed (409 last_admin)', async () => {
    const s = await team()
    const self = `/v1/spaces/${s.space}/members/${s.ids.admin}`
    const demote = await t.request('PATCH', self, { token: s.tokens.admin, body: { role: 'editor' } })
    expect(demote.status).toBe(409)
    expect(demote.body.error).toBe('last_admin')
    const leave = await t.request('DELETE', `/v1/spaces/${s.space}/members/me`, { token: s.tokens.admin })
    expect(leave.status).toBe(409)
    expect(leave.body.error).toBe('last_admin')
  })

  test('two admins demoting each other at once leave exactly one admin', async () => {
    for (let round = 0; round < 3; round++) {
      const s = await team()
      const second = await t.member(s.tenantId, s.space, 'admin')
      const secondId = (await t.request('GET', '/v1/whoami', { token: second })).body.data.user.id
      const [a, b] = await Promise.all([
        t.request('PATCH', `/v1/spaces/${s.space}/members/${secondId}`, { token: s.tokens.admin, body: { role: 'viewer' } }),
        t.request('PATCH', `/v1/spaces/${s.space}/members/${s.ids.admin}`, { token: second, body: { role: 'viewer' } }),
      ])
      expect([a.status, b.status].sort()).toEqual([200, expect.any(Number)].sort() as never)
      const statuses = [a.status, b.status].sort()
      // One wins; the loser is refused, either as the last admin or because it is no longer admin at all (403).
      expect(statuses[0]).toBe(200)
      expect([403, 409]).toContain(statuses[1])
      // The members list needs admin: ask the one who stayed admin (whose own demotion of the other went through).
      const survivor = a.status === 200 ? s.tokens.admin : second
      const list = await t.request('GET', `/v1/spaces/${s.space}/members`, { token: survivor })
      expect(list.body.data.filter((m: any) => m.role === 'admin')).toHaveLength(1)
    }
  })

  test('a removed member loses access at once, here and on another instance', async () => {
    const s = await team()
    const other = await t.instance()
    try {
      expect((await other.get(`/v1/spaces/${s.space}`, { authorization: `Bearer ${s.tokens.editor}` })).status).toBe(200)
      const del = await t.request('DELETE', `/v1/spaces/${s.space}/members/${s.ids.editor}`, { token: s.tokens.admin })
      expect(del.status).toBe(204)
      expect((await t.request('GET', `/v1/spaces/${s.space}`, { token: s.tokens.editor })).status).toBe(404)
      expect((await other.get(`/v1/spaces/${s.space}`, { authorization: `Bearer ${s.tokens.editor}` })).status).toBe(404)
      expect((await t.request('DELETE', `/v1/spaces/${s.space}/members/${s.ids.editor}`, { token: s.tokens.admin })).status).toBe(404)
    } finally {
      await other.close()
    }
  })

  test('a member leaves with `me`; removing someone else needs admin', async () => {
    const s = await team()
    expect((await t.request('DELETE', `/v1/spaces/${s.space}/members/${s.ids.viewer}`, { token: s.tokens.editor })).status).toBe(403)
    expect((await t.request('DELETE', `/v1/spaces/${s.space}/members/me`, { token: s.tokens.viewer })).status).toBe(204)
    expect((await t.request('GET', `/v1/spaces/${s.space}`, { token: s.tokens.viewer })).status).toBe(404)
    const space = await t.spaceToken(s.tokens.admin, s.space, 'admin')
    const asToken = await t.request('DELETE', `/v1/spaces/${s.space}/members/me`, { token: space.token })
    expect(asToken.status).toBe(403)
    expect(asToken.body.error).toBe('user_required')
  })

  test('role changes and removals reach webhooks with the member and who did it', async () => {
    const s = await team()
    const r = startReceiver()
    try {
      const res = await t.request('POST', `/v1/spaces/${s.space}/webhooks`, {
        token: s.tokens.admin,
        body: { label: 'team', url: `${r.url}/in`, events: ['member.added', 'member.removed', 'member.role_changed'] },
      })
      expect(res.status).toBe(201)
      await t.request('PATCH', `/v1/spaces/${s.space}/members/${s.ids.viewer}`, { token: s.tokens.admin, body: { role: 'editor' } })
      await t.request('DELETE', `/v1/spaces/${s.space}/members/${s.ids.editor}`, { token: s.tokens.admin })
      // The outbox relay and the deliveries are jobs: run what is due (the test app's clock does not move by itself).
      await t.kernel.jobs.runDueJobs()
      await t.kernel.jobs.runDueJobs()
      const got = await r.waitFor(2, 30_000)
      const byEvent = Object.fromEntries(got.map((g) => [g.json.event, g.json]))
      expect(byEvent['member.role_changed']).toMatchObject({
        space: { slug: s.space },
        member: { user_id: s.ids.viewer, role: 'editor' },
        previous_role: 'viewer',
        by: { user_id: s.ids.admin },
      })
      expect(byEvent['member.removed']).toMatchObject({ member: { user_id: s.ids.editor, role: 'editor' }, by: { user_id: s.ids.admin } })
    } finally {
      await r.stop()
    }
  })
})

describe('roles', () => {
  test('the roles table lists what each role adds, read from the route guards', async () => {
    const s = await team()
    const res = await t.request('GET', `/v1/spaces/${s.space}/roles`, { token: s.tokens.viewer })
    expect(res.status).toBe(200)
    expect(res.body.data.map((r: any) => [r.role, r.includes])).toEqual([
      ['viewer', null],
      ['editor', 'viewer'],
      ['admin', 'editor'],
    ])
    const ops = (role: string) => res.body.data.find((r: any) => r.role === role).operations.map((o: any) => `${o.method} ${o.path}`)
    expect(ops('admin')).toContain('GET /v1/spaces/{space}/members')
    expect(ops('admin')).toContain('PATCH /v1/spaces/{space}/members/{userId}')
    expect(ops('admin')).toContain('POST /v1/spaces/{space}/webhooks')
    expect(ops('editor')).toContain('POST /v1/spaces/{space}/stories')
    expect(ops('viewer')).not.toContain('POST /v1/spaces/{space}/stories')
    // Every Space route appears under exactly one role.
    const all = res.body.data.flatMap((r: any) => r.operations.map((o: any) => `${o.method} ${o.path}`))
    expect(new Set(all).size).toBe(all.length)
  })

  /** Every route that reads or answers a person's data: people's e-mail addresses, what they wrote, what they bought. */
  const PERSONAL = [
    'GET /v1/spaces/{space}/members',
    'GET /v1/spaces/{space}/subscribers',
    'GET /v1/spaces/{space}/subscribers.csv',
    'GET /v1/spaces/{space}/subscribers/{id}',
    'GET /v1/spaces/{space}/forms/{uuid}/submissions',
    'GET /v1/spaces/{space}/forms/{uuid}/submissions.csv',
    'POST /v1/spaces/{space}/forms/{uuid}/submissions/{submissionUuid}/spam',
    'GET /v1/spaces/{space}/events/{id}/registrations',
    'GET /v1/spaces/{space}/events/{id}/registrations.csv',
    'POST /v1/spaces/{space}/events/{id}/registrations/{registrationId}/cancel',
    'GET /v1/spaces/{space}/orders',
    'GET /v1/spaces/{space}/orders/{id}',
    'PATCH /v1/spaces/{space}/orders/{id}',
  ]

  test('personal data needs admin: viewers and editors (people and Space tokens) get 403; the roles table says so', async () => {
    const s = await team()
    const res = await t.request('GET', `/v1/spaces/${s.space}/roles`, { token: s.tokens.viewer })
    const ops = (role: string) => res.body.data.find((r: any) => r.role === role).operations.map((o: any) => `${o.method} ${o.path}`)
    for (const op of PERSONAL) {
      expect(ops('admin')).toContain(op)
      expect([...ops('viewer'), ...ops('editor')]).not.toContain(op)
    }
    // Content reads stay viewer: what a site build's viewer token needs.
    for (const op of ['GET /v1/spaces/{space}/stories', 'GET /v1/spaces/{space}/forms', 'GET /v1/spaces/{space}/events', 'GET /v1/spaces/{space}/products', 'GET /v1/spaces/{space}/assets']) {
      expect(ops('viewer')).toContain(op)
    }

    const id = crypto.randomUUID()
    const url = (op: string) =>
      op
        .split(' ')[1]
        .replace('{space}', s.space)
        .replace('subscribers/{id}', 'subscribers/1')
        .replace(/\{(uuid|id|submissionUuid|registrationId)\}/g, id)
    const bodyOf = (op: string) => (op.startsWith('PATCH') ? { status: 'paid' } : undefined)
    const callers = {
      'viewer user': s.tokens.viewer,
      'editor user': s.tokens.editor,
      'viewer token': (await t.spaceToken(s.tokens.admin, s.space, 'viewer')).token,
      'editor token': (await t.spaceToken(s.tokens.admin, s.space, 'editor')).token,
    }
    for (const op of PERSONAL) {
      const method = op.split(' ')[0]
      for (const [who, token] of Object.entries(callers)) {
        const r = await t.request(method, url(op), { token, body: bodyOf(op) })
        if (r.status !== 403) throw new Error(`${who} on ${op}: ${r.status}`)
        expect(r.body.error).toBe('forbidden')
      }
      // An admin passes the guard (the made-up ids are then unknown: 404, or an empty list).
      const admin = await t.request(method, url(op), { token: s.tokens.admin, body: bodyOf(op) })
      expect([200, 404]).toContain(admin.status)
    }
  })
})

describe('whoami', () => {
  test('a user token: user, Tenant, token and the Spaces with roles', async () => {
    const s = await team()
    const res = await t.request('GET', '/v1/whoami', { token: s.tokens.admin })
    expect(res.status).toBe(200)
    expect(res.body.data.user.id).toBe(s.ids.admin)
    expect(res.body.data.tenant.id).toBe(s.tenantId)
    expect(res.body.data.token.type).toBe('user')
    expect(typeof res.body.data.token.expires_at).toBe('string')
    expect(res.body.data.spaces).toContainEqual({ slug: s.space, name: expect.any(String), role: 'admin' })
    const viewer = await t.request('GET', '/v1/whoami', { token: s.tokens.viewer })
    expect(viewer.body.data.spaces).toEqual([{ slug: s.space, name: expect.any(String), role: 'viewer' }])
  })

  test('a Space-scoped token: no user, its Space and role', async () => {
    const s = await team()
    const tok = await t.spaceToken(s.tokens.admin, s.space, 'editor')
    const res = await t.request('GET', '/v1/whoami', { token: tok.token })
    expect(res.status).toBe(200)
    expect(res.body.data.user).toBeNull()
    expect(res.body.data.token).toEqual({ type: 'space', space: s.space, role: 'editor', expires_at: null })
    expect(res.body.data.spaces).toEqual([{ slug: s.space, name: expect.any(String), role: 'editor' }])
  })

  test('no token is 401', async () => {
    const res = await t.request('GET', '/v1/whoami')
    expect(res.status).toBe(401)
    expect(res.body.error).toBe('unauthorized')
  })
})
