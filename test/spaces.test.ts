import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { DomainEvent } from '../src/kernel/events'
import { type TestApp, testApp } from './helpers/app'

// bunfig's `[test] timeout` is not honoured by `bun test`; a fresh testApp() can take longer than the 5 s default.
setDefaultTimeout(60_000)

let t: TestApp
let slugCounter = 0
const freshSlug = (prefix = 's') => `${prefix}-${++slugCounter}-${Math.random().toString(36).slice(2, 7)}`

beforeAll(async () => {
  t = await testApp()
})

afterAll(async () => {
  await t?.close()
})

/** A user (own tenant) with one Space where they are admin. */
async function owner() {
  const user = await t.register()
  const space = await t.createSpace(user.token)
  return { user, space, token: user.token }
}

async function eventTypesOf(slug: string): Promise<string[]> {
  const rows = await t.kernel.db.query<{ type: string }>(
    `select type from events where payload->'space'->>'slug' = $1 order by id`,
    [slug],
  )
  return rows.map((r) => r.type)
}

describe('creating a Space', () => {
  test('creating a Space answers 201 with defaults en / [en] and the creator as admin', async () => {
    const { token } = await t.register()
    const slug = freshSlug()
    const res = await t.request('POST', '/v1/spaces', { token, body: { slug, name: 'My Space' } })
    expect(res.status).toBe(201)
    expect(res.body.data).toMatchObject({
      slug,
      name: 'My Space',
      default_lang: 'en',
      locales: ['en'],
      role: 'admin',
      archived: false,
    })
    const got = await t.request('GET', `/v1/spaces/${slug}`, { token })
    expect(got.status).toBe(200)
    expect(got.body.data.role).toBe('admin')
  })

  test('locale tags are canonicalised and the default language is put into the locales', async () => {
    const { token } = await t.register()
    const res = await t.request('POST', '/v1/spaces', {
      token,
      body: { slug: freshSlug(), name: 'Locales', default_lang: 'de-at', locales: ['en', 'de-at', 'zh-hant-tw', 'EN'] },
    })
    expect(res.status).toBe(201)
    expect(res.body.data.default_lang).toBe('de-AT')
    expect(res.body.data.locales).toContain('de-AT')
    expect(res.body.data.locales).toContain('en')
    expect(res.body.data.locales).toContain('zh-Hant-TW')
    // Duplicates after canonicalisation are collapsed.
    expect(res.body.data.locales.filter((l: string) => l === 'en').length).toBe(1)

    const onlyDefault = await t.request('POST', '/v1/spaces', {
      token,
      body: { slug: freshSlug(), name: 'Default only', default_lang: 'fr', locales: ['en'] },
    })
    expect(onlyDefault.status).toBe(201)
    expect(onlyDefault.body.data.default_lang).toBe('fr')
    expect(onlyDefault.body.data.locales).toContain('fr')
    expect(onlyDefault.body.data.locales).toContain('en')
  })

  test('an invalid locale tag answers 422 and creates nothing', async () => {
    const { token } = await t.register()
    for (const locales of [['en', 'en_US'], ['not a tag'], ['q'], ['en', '123']]) {
      const slug = freshSlug()
      const res = await t.request('POST', '/v1/spaces', { token, body: { slug, name: 'Bad', locales } })
      expect(res.status).toBe(422)
      expect(res.body.error).toBe('validation_failed')
      expect(Object.keys(res.body.errors).length).toBeGreaterThan(0)
      for (const v of Object.values(res.body.errors)) expect(Array.isArray(v)).toBe(true)
      expect((await t.request('GET', `/v1/spaces/${slug}`, { token })).status).toBe(404)
    }
    const badDefault = await t.request('POST', '/v1/spaces', {
      token,
      body: { slug: freshSlug(), name: 'Bad', default_lang: 'xx_YY' },
    })
    expect(badDefault.status).toBe(422)
    expect(Array.isArray(badDefault.body.errors.default_lang)).toBe(true)
    const empty = await t.request('POST', '/v1/spaces', { token, body: { slug: freshSlug(), name: 'Bad', locales: [] } })
    expect(empty.status).toBe(422)
  })

  test('an invalid slug answers 422 validation_failed on slug', async () => {
    const { token } = await t.register()
    for (const slug of ['1abc', 'Abc', 'a_b', '', 'a b', 'a'.repeat(65), '-abc', 'abc/def', 'äbc']) {
      const res = await t.request('POST', '/v1/spaces', { token, body: { slug, name: 'Bad slug' } })
      expect(res.status).toBe(422)
      expect(res.body.error).toBe('validation_failed')
      expect(Array.isArray(res.body.errors.slug)).toBe(true)
    }
  })

  test('a slug of exactly 64 characters is accepted', async () => {
    const { token } = await t.register()
    const slug = `z${Math.random().toString(36).slice(2, 8).replace(/[^a-z0-9]/g, 'x')}`.padEnd(64, '0')
    const res = await t.request('POST', '/v1/spaces', { token, body: { slug, name: 'Long' } })
    expect(res.status).toBe(201)
    expect(res.body.data.slug).toBe(slug)
  })

  test('a missing name answers 422', async () => {
    const { token } = await t.register()
    const res = await t.request('POST', '/v1/spaces', { token, body: { slug: freshSlug() } })
    expect(res.status).toBe(422)
    expect(Array.isArray(res.body.errors.name)).toBe(true)
  })

  test('a slug that is taken answers 409, in the same tenant and in another tenant', async () => {
    const a = await owner()
    const same = await t.request('POST', '/v1/spaces', { token: a.token, body: { slug: a.space.slug, name: 'Again' } })
    expect(same.status).toBe(409)
    expect(same.body).toEqual({ error: expect.any(String), message: expect.any(String) })

    const b = await t.register()
    const other = await t.request('POST', '/v1/spaces', { token: b.token, body: { slug: a.space.slug, name: 'Mine now' } })
    expect(other.status).toBe(409)
    // The original is untouched.
    const got = await t.request('GET', `/v1/spaces/${a.space.slug}`, { token: a.token })
    expect(got.body.data.name).toBe(a.space.name)
  })

  test('creating a Space without a token answers 401', async () => {
    const res = await t.request('POST', '/v1/spaces', { body: { slug: freshSlug(), name: 'Anon' } })
    expect(res.status).toBe(401)
  })

  test('an anonymous create with an invalid body answers 401, not 422', async () => {
    const res = await t.request('POST', '/v1/spaces', { body: { slug: 'Not Valid' } })
    expect(res.status).toBe(401)
  })

  test('SQL and markup in a Space name are stored and returned verbatim', async () => {
    const { token } = await t.register()
    const name = `<img src=x onerror=alert(1)> '; DROP TABLE spaces;--`
    const space = await t.createSpace(token, { name })
    expect(space.name).toBe(name)
    const got = await t.request('GET', `/v1/spaces/${space.slug}`, { token })
    expect(got.body.data.name).toBe(name)
  })
})

describe('listing and reading Spaces', () => {
  test("GET /spaces lists only the caller's tenant's Spaces, each with the caller's role", async () => {
    const a = await t.register()
    const b = await t.register()
    const a1 = await t.createSpace(a.token)
    const a2 = await t.createSpace(a.token)
    const b1 = await t.createSpace(b.token)
    const res = await t.request('GET', '/v1/spaces', { token: a.token })
    expect(res.status).toBe(200)
    const slugs = res.body.data.map((s: { slug: string }) => s.slug).sort()
    expect(slugs).toEqual([a1.slug, a2.slug].sort())
    expect(slugs).not.toContain(b1.slug)
    for (const s of res.body.data) {
      expect(s.role).toBe('admin')
      expect(Array.isArray(s.locales)).toBe(true)
    }
    const resB = await t.request('GET', '/v1/spaces', { token: b.token })
    expect(resB.body.data.map((s: { slug: string }) => s.slug)).toEqual([b1.slug])
  })

  test('a new user with no Spaces gets an empty list', async () => {
    const u = await t.register()
    const res = await t.request('GET', '/v1/spaces', { token: u.token })
    expect(res.status).toBe(200)
    expect(res.body.data).toEqual([])
  })

  test('GET /spaces without a token answers 401', async () => {
    const res = await t.request('GET', '/v1/spaces')
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/)
  })

  test('a Space-scoped token gets 403 on GET /spaces and POST /spaces', async () => {
    const { token, space } = await owner()
    for (const role of ['viewer', 'editor', 'admin'] as const) {
      const st = await t.spaceToken(token, space.slug, role)
      const list = await t.request('GET', '/v1/spaces', { token: st.token })
      expect(list.status).toBe(403)
      expect(list.body.error).toBe('user_required')
      const create = await t.request('POST', '/v1/spaces', { token: st.token, body: { slug: freshSlug(), name: 'Nope' } })
      expect({ status: create.status, error: create.body.error }).toEqual({ status: 403, error: 'user_required' })
    }
  })

  test('GET /spaces/{space} answers the Space with locales and role', async () => {
    const { token, space } = await owner()
    const res = await t.request('GET', `/v1/spaces/${space.slug}`, { token })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ slug: space.slug, name: space.name, default_lang: 'en', locales: ['en'], role: 'admin' })
    expect(Number.isNaN(Date.parse(res.body.data.created_at))).toBe(false)
  })

  test('an unknown Space answers 404', async () => {
    const { token } = await t.register()
    for (const [method, path] of [
      ['GET', '/v1/spaces/does-not-exist'],
      ['PATCH', '/v1/spaces/does-not-exist'],
      ['POST', '/v1/spaces/does-not-exist/archive'],
      ['GET', '/v1/spaces/does-not-exist/tokens'],
    ] as const) {
      const res = await t.request(method, path, { token, body: method === 'PATCH' ? { name: 'x' } : undefined })
      expect(res.status).toBe(404)
      expect(res.body.error).toBe('not_found')
    }
  })

  test("another tenant's Space answers 404 on GET, PATCH, archive and tokens, exactly like an unknown one", async () => {
    const a = await owner()
    const b = await t.register()
    const base = `/v1/spaces/${a.space.slug}`
    const unknown = await t.request('GET', '/v1/spaces/no-such-space-here', { token: b.token })
    const calls: [string, string, unknown][] = [
      ['GET', base, undefined],
      ['PATCH', base, { name: 'Hijacked' }],
      ['POST', `${base}/archive`, undefined],
      ['GET', `${base}/tokens`, undefined],
      ['POST', `${base}/tokens`, { name: 'steal', role: 'admin' }],
    ]
    for (const [method, path, body] of calls) {
      const res = await t.request(method, path, { token: b.token, body })
      expect(res.status).toBe(404)
      expect(res.body.error).toBe(unknown.body.error)
    }
    const aToken = await t.spaceToken(a.token, a.space.slug, 'viewer')
    const del = await t.request('DELETE', `${base}/tokens/${aToken.id}`, { token: b.token })
    expect(del.status).toBe(404)

    // Nothing changed: the name, the archive state, and A's token still works.
    const got = await t.request('GET', base, { token: a.token })
    expect(got.body.data.name).toBe(a.space.name)
    expect(got.body.data.archived).toBe(false)
    expect((await t.request('GET', base, { token: aToken.token })).status).toBe(200)
    const tokens = await t.request('GET', `${base}/tokens`, { token: a.token })
    expect(tokens.body.data.map((x: { name: string }) => x.name)).not.toContain('steal')
  })

  test("another tenant's Space-scoped token answers 404 on this tenant's Space", async () => {
    const a = await owner()
    const b = await owner()
    const bAdmin = await t.spaceToken(b.token, b.space.slug, 'admin')
    const res = await t.request('GET', `/v1/spaces/${a.space.slug}`, { token: bAdmin.token })
    expect(res.status).toBe(404)
  })
})

describe('updating a Space', () => {
  test('an admin can rename a Space', async () => {
    const { token, space } = await owner()
    const res = await t.request('PATCH', `/v1/spaces/${space.slug}`, { token, body: { name: 'Renamed' } })
    expect(res.status).toBe(200)
    expect(res.body.data.name).toBe('Renamed')
    expect(res.body.data.slug).toBe(space.slug)
    const got = await t.request('GET', `/v1/spaces/${space.slug}`, { token })
    expect(got.body.data.name).toBe('Renamed')
  })

  test('the default language can be changed to one of the locales, given in any case', async () => {
    const { token } = await t.register()
    const space = await t.createSpace(token, { locales: ['en', 'de-AT'] })
    const res = await t.request('PATCH', `/v1/spaces/${space.slug}`, { token, body: { default_lang: 'de-at' } })
    expect(res.status).toBe(200)
    expect(res.body.data.default_lang).toBe('de-AT')
  })

  test('a default language that is not one of the locales answers 422 and changes nothing', async () => {
    const { token, space } = await owner()
    const res = await t.request('PATCH', `/v1/spaces/${space.slug}`, { token, body: { default_lang: 'fr', name: 'Not applied' } })
    expect(res.status).toBe(422)
    expect(res.body.error).toBe('validation_failed')
    expect(Array.isArray(res.body.errors.default_lang)).toBe(true)
    const bad = await t.request('PATCH', `/v1/spaces/${space.slug}`, { token, body: { default_lang: 'en_US' } })
    expect(bad.status).toBe(422)
    const got = await t.request('GET', `/v1/spaces/${space.slug}`, { token })
    expect(got.body.data.default_lang).toBe('en')
    expect(got.body.data.name).toBe(space.name)
  })

  test('an empty name answers 422', async () => {
    const { token, space } = await owner()
    const res = await t.request('PATCH', `/v1/spaces/${space.slug}`, { token, body: { name: '' } })
    expect(res.status).toBe(422)
    expect(Array.isArray(res.body.errors.name)).toBe(true)
  })
})

describe('Space-scoped tokens', () => {
  test('an admin creates a token (201) and its secret is shown only once', async () => {
    const { token, space } = await owner()
    const res = await t.request('POST', `/v1/spaces/${space.slug}/tokens`, { token, body: { name: 'CI deploy', role: 'editor' } })
    expect(res.status).toBe(201)
    const created = res.body.data
    expect(created).toMatchObject({ name: 'CI deploy', role: 'editor' })
    expect(typeof created.id).toBe('string')
    expect(typeof created.token).toBe('string')
    expect(created.token.startsWith(`${created.id}.`)).toBe(true)

    const list = await t.request('GET', `/v1/spaces/${space.slug}/tokens`, { token })
    expect(list.status).toBe(200)
    const item = list.body.data.find((x: { id: string }) => x.id === created.id)
    expect(item).toMatchObject({ id: created.id, name: 'CI deploy', role: 'editor' })
    for (const x of list.body.data) {
      expect(x.token).toBeUndefined()
      expect(Object.keys(x).some((k) => /secret|hash/i.test(k))).toBe(false)
    }
    const secret = created.token.split('.')[1]
    expect(list.text).not.toContain(secret)
    // The stored form is not the secret either.
    const rows = await t.kernel.db.query<Record<string, unknown>>('select * from api_tokens where id = $1', [created.id])
    expect(JSON.stringify(rows)).not.toContain(secret)
  })

  test('an invalid role or a missing name answers 422', async () => {
    const { token, space } = await owner()
    const badRole = await t.request('POST', `/v1/spaces/${space.slug}/tokens`, { token, body: { name: 'x', role: 'owner' } })
    expect(badRole.status).toBe(422)
    expect(Array.isArray(badRole.body.errors.role)).toBe(true)
    const noName = await t.request('POST', `/v1/spaces/${space.slug}/tokens`, { token, body: { role: 'viewer' } })
    expect(noName.status).toBe(422)
    expect(Array.isArray(noName.body.errors.name)).toBe(true)
  })

  test('deleting a token answers 204, it disappears from the list and stops working with 401', async () => {
    const { token, space } = await owner()
    const st = await t.spaceToken(token, space.slug, 'viewer')
    expect((await t.request('GET', `/v1/spaces/${space.slug}`, { token: st.token })).status).toBe(200)
    const del = await t.request('DELETE', `/v1/spaces/${space.slug}/tokens/${st.id}`, { token })
    expect(del.status).toBe(204)
    expect(del.text).toBe('')
    const after = await t.request('GET', `/v1/spaces/${space.slug}`, { token: st.token })
    expect(after.status).toBe(401)
    expect((await t.request('GET', '/v1/auth/me', { token: st.token })).status).toBe(401)
    const list = await t.request('GET', `/v1/spaces/${space.slug}/tokens`, { token })
    expect(list.body.data.map((x: { id: string }) => x.id)).not.toContain(st.id)
    const again = await t.request('DELETE', `/v1/spaces/${space.slug}/tokens/${st.id}`, { token })
    expect(again.status).toBe(404)
  })

  test("a token id of another Space cannot be deleted through this Space's path", async () => {
    const { token } = await t.register()
    const s1 = await t.createSpace(token)
    const s2 = await t.createSpace(token)
    const st = await t.spaceToken(token, s2.slug, 'viewer')
    const res = await t.request('DELETE', `/v1/spaces/${s1.slug}/tokens/${st.id}`, { token })
    expect(res.status).toBe(404)
    expect((await t.request('GET', `/v1/spaces/${s2.slug}`, { token: st.token })).status).toBe(200)
  })

  test("a user's own login token cannot be deleted through the Space tokens route", async () => {
    const { token, space } = await owner()
    const userTokenId = token.split('.')[0]
    const res = await t.request('DELETE', `/v1/spaces/${space.slug}/tokens/${userTokenId}`, { token })
    expect(res.status).toBe(404)
    expect((await t.request('GET', '/v1/auth/me', { token })).status).toBe(200)
  })

  test('a viewer token can read its Space but cannot PATCH, archive or manage tokens (403)', async () => {
    const { token, space } = await owner()
    const viewer = await t.spaceToken(token, space.slug, 'viewer')
    const base = `/v1/spaces/${space.slug}`
    const got = await t.request('GET', base, { token: viewer.token })
    expect(got.status).toBe(200)
    expect(got.body.data.role).toBe('viewer')
    expect((await t.request('PATCH', base, { token: viewer.token, body: { name: 'Viewer was here' } })).status).toBe(403)
    expect((await t.request('POST', `${base}/archive`, { token: viewer.token })).status).toBe(403)
    expect((await t.request('POST', `${base}/tokens`, { token: viewer.token, body: { name: 'x', role: 'admin' } })).status).toBe(403)
    expect((await t.request('GET', `${base}/tokens`, { token: viewer.token })).status).toBe(403)
    expect((await t.request('DELETE', `${base}/tokens/${viewer.id}`, { token: viewer.token })).status).toBe(403)
    const after = await t.request('GET', base, { token })
    expect(after.body.data.name).toBe(space.name)
    expect(after.body.data.archived).toBe(false)
  })

  test('a viewer cannot archive a Space', async () => {
    const { token, space } = await owner()
    const viewer = await t.spaceToken(token, space.slug, 'viewer')
    const res = await t.request('POST', `/v1/spaces/${space.slug}/archive`, { token: viewer.token })
    expect(res.status).toBe(403)
    expect(res.body.error).toBe('forbidden')
    expect(await eventTypesOf(space.slug)).toEqual(['space.created'])
  })

  test('an editor token can read its Space but gets 403 on admin routes', async () => {
    const { token, space } = await owner()
    const editor = await t.spaceToken(token, space.slug, 'editor')
    const base = `/v1/spaces/${space.slug}`
    expect((await t.request('GET', base, { token: editor.token })).status).toBe(200)
    expect((await t.request('PATCH', base, { token: editor.token, body: { name: 'Editor was here' } })).status).toBe(403)
    expect((await t.request('POST', `${base}/archive`, { token: editor.token })).status).toBe(403)
    expect((await t.request('POST', `${base}/tokens`, { token: editor.token, body: { name: 'x', role: 'viewer' } })).status).toBe(403)
    expect((await t.request('GET', `${base}/tokens`, { token: editor.token })).status).toBe(403)
  })

  test('an admin Space token can manage its own Space', async () => {
    const { token, space } = await owner()
    const admin = await t.spaceToken(token, space.slug, 'admin')
    const res = await t.request('PATCH', `/v1/spaces/${space.slug}`, { token: admin.token, body: { name: 'By admin token' } })
    expect(res.status).toBe(200)
    expect(res.body.data.name).toBe('By admin token')
  })

  test('a Space token of Space A answers 404 on Space B of the same tenant', async () => {
    const { token } = await t.register()
    const a = await t.createSpace(token)
    const b = await t.createSpace(token)
    for (const role of ['viewer', 'admin'] as const) {
      const st = await t.spaceToken(token, a.slug, role)
      expect((await t.request('GET', `/v1/spaces/${b.slug}`, { token: st.token })).status).toBe(404)
      expect((await t.request('PATCH', `/v1/spaces/${b.slug}`, { token: st.token, body: { name: 'x' } })).status).toBe(404)
      expect((await t.request('POST', `/v1/spaces/${b.slug}/archive`, { token: st.token })).status).toBe(404)
      expect((await t.request('GET', `/v1/spaces/${b.slug}/tokens`, { token: st.token })).status).toBe(404)
    }
  })
})

describe('Space tokens outlive neither their creator’s access nor their expiry', () => {
  /** The owner's Space with a second admin (of the same Tenant) who mints tokens. */
  async function twoAdmins() {
    const o = await owner()
    const second = await t.member(o.user.tenant.id, o.space.slug, 'admin')
    const secondId = (await t.request('GET', '/v1/whoami', { token: second })).body.data.user.id as number
    return { ...o, second, secondId }
  }
  const listIds = async (token: string, slug: string) =>
    ((await t.request('GET', `/v1/spaces/${slug}/tokens`, { token })).body.data as { id: string }[]).map((x) => x.id)

  test('a removed admin’s tokens answer 401 at once, here and on another instance, and leave the list', async () => {
    const { token, space, second, secondId } = await twoAdmins()
    const minted = await t.spaceToken(second, space.slug, 'admin')
    const viewerToken = await t.spaceToken(second, space.slug, 'viewer')
    // A token minted by a token carries the same creator.
    const grandchild = (await t.request('POST', `/v1/spaces/${space.slug}/tokens`, { token: minted.token, body: { name: 'child', role: 'editor' } })).body.data
    const ownersToken = await t.spaceToken(token, space.slug, 'viewer')
    expect((await t.request('GET', `/v1/spaces/${space.slug}/tokens`, { token: minted.token })).status).toBe(200)

    expect((await t.request('DELETE', `/v1/spaces/${space.slug}/members/${secondId}`, { token })).status).toBe(204)
    const other = await t.instance()
    try {
      for (const st of [minted.token, viewerToken.token, grandchild.token]) {
        const r = await t.request('GET', `/v1/spaces/${space.slug}/tokens`, { token: st })
        expect(r.status).toBe(401)
        expect(r.body.error).toBe('unauthorized')
        expect((await t.request('GET', `/v1/spaces/${space.slug}`, { token: st })).status).toBe(401)
        expect((await other.get(`/v1/spaces/${space.slug}`, { authorization: `Bearer ${st}` })).status).toBe(401)
      }
    } finally {
      await other.close()
    }
    // The owner's own token is untouched; the list holds what still works.
    expect((await t.request('GET', `/v1/spaces/${space.slug}`, { token: ownersToken.token })).status).toBe(200)
    const ids = await listIds(token, space.slug)
    expect(ids).toContain(ownersToken.id)
    for (const id of [minted.id, viewerToken.id, grandchild.id]) expect(ids).not.toContain(id)
    const [event] = await t.kernel.db.query<{ payload: { token_ids: string[]; reason: string } }>(
      "select payload from events where type = 'space_token.revoked' and payload->>'reason' = 'member_removed' and payload->'token_ids' ? $1",
      [minted.id],
    )
    expect(event!.payload.token_ids.sort()).toEqual([minted.id, viewerToken.id, grandchild.id].sort())
  })

  test('leaving with `me` revokes one’s tokens too; a demotion revokes those above the new role and keeps the rest', async () => {
    const { token, space, second, secondId } = await twoAdmins()
    const admin = await t.spaceToken(second, space.slug, 'admin')
    const editor = await t.spaceToken(second, space.slug, 'editor')
    const viewer = await t.spaceToken(second, space.slug, 'viewer')
    const demote = await t.request('PATCH', `/v1/spaces/${space.slug}/members/${secondId}`, { token, body: { role: 'editor' } })
    expect(demote.status).toBe(200)
    expect((await t.request('GET', `/v1/spaces/${space.slug}`, { token: admin.token })).status).toBe(401)
    expect((await t.request('GET', `/v1/spaces/${space.slug}`, { token: editor.token })).status).toBe(200)
    expect((await t.request('GET', `/v1/spaces/${space.slug}`, { token: viewer.token })).status).toBe(200)
    // Promoted again: a revoked token stays revoked.
    await t.request('PATCH', `/v1/spaces/${space.slug}/members/${secondId}`, { token, body: { role: 'admin' } })
    expect((await t.request('GET', `/v1/spaces/${space.slug}`, { token: admin.token })).status).toBe(401)
    expect((await t.request('DELETE', `/v1/spaces/${space.slug}/members/me`, { token: second })).status).toBe(204)
    for (const st of [editor, viewer]) expect((await t.request('GET', `/v1/spaces/${space.slug}`, { token: st.token })).status).toBe(401)
  })

  test('expires_at is set at creation, answered in the list, and honoured on the kernel clock', async () => {
    const { token, space } = await owner()
    const at = new Date(t.clock.ms() + 3_600_000)
    at.setUTCMilliseconds(0)
    const res = await t.request('POST', `/v1/spaces/${space.slug}/tokens`, { token, body: { name: 'build', role: 'viewer', expires_at: at.toISOString() } })
    expect(res.status).toBe(201)
    expect(res.body.data.expires_at).toBe(at.toISOString())
    const forever = await t.request('POST', `/v1/spaces/${space.slug}/tokens`, { token, body: { name: 'forever', role: 'viewer', expires_at: null } })
    expect(forever.body.data.expires_at).toBeNull()
    const list = (await t.request('GET', `/v1/spaces/${space.slug}/tokens`, { token })).body.data as any[]
    expect(list.find((x) => x.id === res.body.data.id).expires_at).toBe(at.toISOString())
    expect(list.find((x) => x.id === forever.body.data.id).expires_at).toBeNull()

    expect((await t.request('GET', `/v1/spaces/${space.slug}`, { token: res.body.data.token })).status).toBe(200)
    t.clock.advance(3_600_000)
    try {
      const expired = await t.request('GET', `/v1/spaces/${space.slug}`, { token: res.body.data.token })
      expect(expired.status).toBe(401)
      expect(expired.body.error).toBe('unauthorized')
      expect((await t.request('GET', `/v1/cdn/${space.slug}/stories/x?version=draft`, { token: res.body.data.token })).status).toBe(401)
      expect((await t.request('GET', `/v1/spaces/${space.slug}`, { token: forever.body.data.token })).status).toBe(200)
      // Still listed, with the date that explains the 401.
      expect(await listIds(token, space.slug)).toContain(res.body.data.id)
    } finally {
      t.clock.advance(-3_600_000)
    }
  })

  test('expires_at must be a real date-time in the future', async () => {
    const { token, space } = await owner()
    const bad = [
      new Date(t.clock.ms() - 1000).toISOString(),
      '2099-02-30T10:00:00Z',
      '2099-01-01T24:00:00Z',
      '2099-01-01T10:00:00',
      '2099-01-01',
      'tomorrow',
      '',
      42,
    ]
    for (const expires_at of bad) {
      const r = await t.request('POST', `/v1/spaces/${space.slug}/tokens`, { token, body: { name: 'x', role: 'viewer', expires_at } })
      if (r.status !== 422) throw new Error(`${JSON.stringify(expires_at)}: ${r.status}`)
      expect(Object.keys(r.body.errors)).toEqual(['expires_at'])
    }
    const offset = await t.request('POST', `/v1/spaces/${space.slug}/tokens`, { token, body: { name: 'x', role: 'viewer', expires_at: '2099-06-01T18:00:00+02:00' } })
    expect(offset.status).toBe(201)
    expect(offset.body.data.expires_at).toBe('2099-06-01T16:00:00.000Z')
  })

  test('last_used_at is answered in the list and written at most once a minute per token', async () => {
    const { token, space } = await owner()
    const st = await t.spaceToken(token, space.slug, 'viewer')
    const lastUsed = async () => ((await t.request('GET', `/v1/spaces/${space.slug}/tokens`, { token })).body.data as any[]).find((x) => x.id === st.id).last_used_at
    expect(await lastUsed()).toBeNull()
    const first = t.clock.now().toISOString()
    expect((await t.request('GET', `/v1/spaces/${space.slug}`, { token: st.token })).status).toBe(200)
    expect(await lastUsed()).toBe(first)
    // Within the minute: no write, whatever the traffic.
    t.clock.advance(30_000)
    for (let i = 0; i < 5; i++) await t.request('GET', `/v1/spaces/${space.slug}`, { token: st.token })
    expect(await lastUsed()).toBe(first)
    // A minute after the last write: the next use is recorded (also a draft read, which is not a management route).
    t.clock.advance(30_000)
    const second = t.clock.now().toISOString()
    await t.request('GET', `/v1/cdn/${space.slug}/stories/nothing?version=draft`, { token: st.token })
    expect(await lastUsed()).toBe(second)
  })
})

describe('archiving and events', () => {
  test('creating a Space emits space.created and writes it to the events outbox', async () => {
    const { token } = await t.register()
    const received: DomainEvent<any>[] = []
    const off = t.kernel.bus.subscribe('space.created', (e) => {
      received.push(e)
    })
    try {
      const slug = freshSlug()
      const res = await t.request('POST', '/v1/spaces', { token, body: { slug, name: 'Evented' } })
      expect(res.status).toBe(201)
      await t.kernel.bus.idle()
      const mine = received.filter((e) => (e.payload.space as { slug: string }).slug === slug)
      expect(mine.length).toBe(1)
      expect(mine[0].type).toBe('space.created')
      expect(typeof mine[0].spaceId).toBe('number')
      expect(await eventTypesOf(slug)).toEqual(['space.created'])
    } finally {
      off()
    }
  })

  test('a failed create (duplicate slug) emits nothing', async () => {
    const { token, space } = await owner()
    const received: DomainEvent<any>[] = []
    const off = t.kernel.bus.subscribe('space.created', (e) => {
      received.push(e)
    })
    try {
      const res = await t.request('POST', '/v1/spaces', { token, body: { slug: space.slug, name: 'Dup' } })
      expect(res.status).toBe(409)
      await t.kernel.bus.idle()
      expect(received.length).toBe(0)
      expect(await eventTypesOf(space.slug)).toEqual(['space.created'])
    } finally {
      off()
    }
  })

  test('an admin archives a Space: 200, archived, space.archived emitted once and stored in the outbox', async () => {
    const { token, space } = await owner()
    const received: DomainEvent<any>[] = []
    const off = t.kernel.bus.subscribe('space.archived', (e) => {
      received.push(e)
    })
    try {
      const res = await t.request('POST', `/v1/spaces/${space.slug}/archive`, { token })
      expect(res.status).toBe(200)
      expect(res.body.data.archived).toBe(true)
      expect(Number.isNaN(Date.parse(res.body.data.archived_at))).toBe(false)
      await t.kernel.bus.idle()
      const mine = received.filter((e) => (e.payload.space as { slug: string }).slug === space.slug)
      expect(mine.length).toBe(1)
      expect(mine[0].type).toBe('space.archived')
      expect(await eventTypesOf(space.slug)).toEqual(['space.created', 'space.archived'])

      // Archiving again changes nothing and emits nothing more.
      const again = await t.request('POST', `/v1/spaces/${space.slug}/archive`, { token })
      expect(again.status).toBe(200)
      expect(again.body.data.archived).toBe(true)
      await t.kernel.bus.idle()
      expect(received.filter((e) => (e.payload.space as { slug: string }).slug === space.slug).length).toBe(1)
      expect(await eventTypesOf(space.slug)).toEqual(['space.created', 'space.archived'])

      const got = await t.request('GET', `/v1/spaces/${space.slug}`, { token })
      expect(got.body.data.archived).toBe(true)
    } finally {
      off()
    }
  })
})
