/**
 * Preview tokens (docs/in-page-editing.md): minted by an editor, read-only, one Space, one hour. They read drafts and
 * answer the bridge's check; every write and every management read answers them 401, another Space 404.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

let t: TestApp
let owner: string
let space: string
let other: string
let viewer: string
let editorToken: string
let storyUuid: string

const doc = (...blocks: Record<string, unknown>[]) => ({ type: 'doc', blocks })

async function mint(s = space, token = owner, body: unknown = {}) {
  return t.request('POST', `/v1/spaces/${s}/preview-tokens`, { token, body })
}
async function mintOk(s = space, body: unknown = {}) {
  const r = await mint(s, owner, body)
  if (r.status !== 201) throw new Error(`mint: ${r.status} ${r.text}`)
  return r.body.data as { token: string; expires_at: string; space: string; url: string | null }
}

beforeAll(async () => {
  t = await testApp()
  owner = (await t.register()).token
  space = (await t.createSpace(owner, { default_lang: 'en' })).slug
  other = (await t.createSpace(owner, { default_lang: 'en' })).slug
  viewer = (await t.spaceToken(owner, space, 'viewer')).token
  editorToken = (await t.spaceToken(owner, space, 'editor')).token
  for (const s of [space, other]) {
    const c = await t.request('POST', `/v1/spaces/${s}/components`, { token: owner, body: { name: 'hero', schema: { headline: { type: 'text' } } } })
    if (c.status !== 201) throw new Error(`component: ${c.status} ${c.text}`)
  }
  const r = await t.request('POST', `/v1/spaces/${space}/stories`, {
    token: owner,
    body: { name: 'Hello', slug: 'hello', content: doc({ component: 'hero', _uid: 'h1', headline: 'Published headline' }) },
  })
  if (r.status !== 201) throw new Error(`story: ${r.status} ${r.text}`)
  storyUuid = r.body.data.uuid
  expect((await t.request('POST', `/v1/spaces/${space}/stories/${storyUuid}/publish`, { token: owner })).status).toBe(200)
  const put = await t.request('PUT', `/v1/spaces/${space}/stories/${storyUuid}`, {
    token: owner,
    body: { content: doc({ component: 'hero', _uid: 'h1', headline: 'Draft headline' }), expected_version_no: r.body.data.version_no },
  })
  if (put.status !== 200) throw new Error(`put: ${put.status} ${put.text}`)
  const o = await t.request('POST', `/v1/spaces/${other}/stories`, {
    token: owner,
    body: { name: 'Other', slug: 'hello', content: doc({ component: 'hero', _uid: 'o1', headline: 'Other Space' }) },
  })
  if (o.status !== 201) throw new Error(`other story: ${o.status} ${o.text}`)
})

afterAll(async () => {
  await t?.close()
})

describe('minting', () => {
  test('an editor mints a one-hour token, shown once; without a preview URL there is no page to open', async () => {
    const r = await mint(space, editorToken)
    expect(r.status).toBe(201)
    expect(r.headers.get('cache-control')).toBe('no-store')
    expect(r.body.data.token).toMatch(/^p_[\w-]{12}\.[\w-]{43}$/)
    expect(r.body.data.space).toBe(space)
    expect(r.body.data.url).toBeNull()
    expect(Date.parse(r.body.data.expires_at) - t.clock.ms()).toBe(60 * 60 * 1000)
    // Stored hashed: the secret half is nowhere in the table.
    const rows = await t.kernel.db.query<{ secret_hash: string }>('select secret_hash from preview_tokens where id = $1', [r.body.data.token.split('.')[0]])
    expect(rows.length).toBe(1)
    expect(rows[0].secret_hash).not.toContain(r.body.data.token.split('.')[1])
  })

  test('a viewer cannot mint (403); another Space, or none of the caller’s, is 404; no token is 401', async () => {
    expect((await mint(space, viewer)).status).toBe(403)
    expect((await mint('no-such-space')).status).toBe(404)
    expect((await mint(other, viewer)).status).toBe(404)
    expect((await t.request('POST', `/v1/spaces/${space}/preview-tokens`, { body: {} })).status).toBe(401)
  })

  test('a bad path is 422 naming it; an unknown field is 422', async () => {
    const bad = await mint(space, owner, { path: 'no-slash' })
    expect(bad.status).toBe(422)
    expect(Object.keys(bad.body.errors)).toContain('path')
    expect((await mint(space, owner, { nope: 1 })).status).toBe(422)
  })

  test('with the Space preview URL set, `url` is that site + the Story path + the token in the fragment', async () => {
    const set = await t.request('PATCH', `/v1/spaces/${space}`, { token: owner, body: { preview_url: 'https://site.example/preview/?ref=cms' } })
    expect(set.status).toBe(200)
    expect(set.body.data.preview_url).toBe('https://site.example/preview/?ref=cms')
    const m = await mintOk(space, { path: '/blog/hello world' })
    const url = new URL(m.url!)
    expect(url.origin).toBe('https://site.example')
    expect(url.pathname).toBe('/preview/blog/hello%20world')
    expect(url.search).toBe('?ref=cms')
    const fragment = new URLSearchParams(url.hash.slice(1))
    expect(fragment.get('service-preview')).toBe(m.token)
    expect(fragment.get('space')).toBe(space)
    // The setting is read back with the Space, and can be removed.
    expect((await t.request('GET', `/v1/spaces/${space}`, { token: viewer })).body.data.preview_url).toBe('https://site.example/preview/?ref=cms')
    expect((await t.request('PATCH', `/v1/spaces/${space}`, { token: owner, body: { preview_url: null } })).body.data.preview_url).toBeNull()
  })

  test('the preview URL must be an absolute http(s) URL without credentials or fragment; only admins set it', async () => {
    for (const bad of ['javascript:alert(1)', 'ftp://site.example/', '/relative', 'https://user:pw@site.example/', 'https://site.example/#x', '']) {
      const r = await t.request('PATCH', `/v1/spaces/${space}`, { token: owner, body: { preview_url: bad } })
      expect(r.status).toBe(422)
      expect(Object.keys(r.body.errors)).toEqual(['preview_url'])
    }
    expect((await t.request('PATCH', `/v1/spaces/${space}`, { token: editorToken, body: { preview_url: 'https://site.example/' } })).status).toBe(403)
  })

  test('minting is rate limited per IP', async () => {
    let limited = 0
    for (let i = 0; i < 35; i++) {
      const r = await t.request('POST', `/v1/spaces/${space}/preview-tokens`, { token: owner, body: {}, ip: '10.99.0.1' })
      if (r.status === 429) limited++
      else expect(r.status).toBe(201)
    }
    expect(limited).toBe(5)
  })
})

describe('what a preview token reads', () => {
  test('it reads the draft of its Space through the CDN, privately', async () => {
    const { token } = await mintOk()
    const r = await t.request('GET', `/v1/cdn/${space}/stories/hello?version=draft`, { token })
    expect(r.status).toBe(200)
    expect(r.body.data.content.blocks[0].headline).toBe('Draft headline')
    expect(r.headers.get('cache-control')).toBe('private, no-store')
    // The published read stays the published one.
    expect((await t.request('GET', `/v1/cdn/${space}/stories/hello`)).body.data.content.blocks[0].headline).toBe('Published headline')
  })

  test('the bridge check answers its Space, expiry and the admin URL', async () => {
    const m = await mintOk()
    const r = await t.request('GET', `/v1/cdn/${space}/preview`, { token: m.token })
    expect(r.status).toBe(200)
    expect(r.body.data).toEqual({ space, expires_at: m.expires_at, admin_url: `http://localhost/admin/spaces/${space}` })
    expect(r.headers.get('cache-control')).toBe('private, no-store')
    expect(r.headers.get('access-control-allow-origin')).toBeNull()
    const cors = await t.request('GET', `/v1/cdn/${space}/preview`, { token: m.token, headers: { Origin: 'https://site.example' } })
    expect(cors.status).toBe(200)
    expect(cors.headers.get('access-control-allow-origin')).toBeTruthy()
  })

  test('another Space answers 404 for both the draft and the check', async () => {
    const { token } = await mintOk()
    expect((await t.request('GET', `/v1/cdn/${other}/stories/hello?version=draft`, { token })).status).toBe(404)
    expect((await t.request('GET', `/v1/cdn/${other}/preview`, { token })).status).toBe(404)
  })

  test('it is read-only: every write and every management route answers 401', async () => {
    const { token } = await mintOk()
    const writes: [string, string, unknown?][] = [
      ['PUT', `/v1/spaces/${space}/stories/${storyUuid}`, { content: doc(), expected_version_no: 1 }],
      ['POST', `/v1/spaces/${space}/stories`, { name: 'x', slug: 'x', content: doc() }],
      ['POST', `/v1/spaces/${space}/stories/${storyUuid}/publish`],
      ['DELETE', `/v1/spaces/${space}/stories/${storyUuid}`],
      ['PATCH', `/v1/spaces/${space}`, { name: 'Taken over' }],
      ['POST', `/v1/spaces/${space}/preview-tokens`, {}],
      ['POST', `/v1/spaces/${space}/tokens`, { name: 'x', role: 'admin' }],
      ['GET', `/v1/spaces/${space}/stories/${storyUuid}`],
      ['GET', `/v1/spaces/${space}/stories`],
      ['GET', `/v1/spaces`],
      ['GET', `/v1/auth/me`],
    ]
    for (const [method, path, body] of writes) {
      const r = await t.request(method, path, { token, body })
      expect([method, path, r.status]).toEqual([method, path, 401])
    }
    // Nothing changed.
    const story = await t.request('GET', `/v1/spaces/${space}/stories/${storyUuid}`, { token: viewer })
    expect(story.body.data.content.blocks[0].headline).toBe('Draft headline')
  })

  test('expiry follows the kernel clock: after one hour both the draft and the check answer 401', async () => {
    const { token } = await mintOk()
    t.clock.advance(60 * 60 * 1000 - 1000)
    expect((await t.request('GET', `/v1/cdn/${space}/preview`, { token })).status).toBe(200)
    expect((await t.request('GET', `/v1/cdn/${space}/stories/hello?version=draft`, { token })).status).toBe(200)
    t.clock.advance(1000)
    expect((await t.request('GET', `/v1/cdn/${space}/preview`, { token })).status).toBe(401)
    const draft = await t.request('GET', `/v1/cdn/${space}/stories/hello?version=draft`, { token })
    expect(draft.status).toBe(401)
    expect(draft.body.error).toBe('unauthorized')
  })

  test('a wrong secret, a malformed or missing token, or another kind of token is 401 at the check', async () => {
    const { token } = await mintOk()
    const [id] = token.split('.')
    for (const bad of [`${id}.${'A'.repeat(43)}`, 'p_short.x', 'garbage', viewer]) {
      expect((await t.request('GET', `/v1/cdn/${space}/preview`, { token: bad })).status).toBe(401)
    }
    expect((await t.request('GET', `/v1/cdn/${space}/preview`)).status).toBe(401)
    expect((await t.request('GET', `/v1/cdn/${space}/stories/hello?version=draft`, { token: `${id}.${'A'.repeat(43)}` })).status).toBe(401)
    // User and Space tokens still read drafts as before.
    expect((await t.request('GET', `/v1/cdn/${space}/stories/hello?version=draft`, { token: viewer })).status).toBe(200)
  })

  test('an unknown Space is 404 at the check', async () => {
    const { token } = await mintOk()
    expect((await t.request('GET', `/v1/cdn/no-such-space/preview`, { token })).status).toBe(404)
  })
})

describe('draft snapshots (the visual editor)', () => {
  const snap = (headline: string, uid = 'h1') => doc({ component: 'hero', _uid: uid, headline })
  const put = (tokenId: string, body: unknown, token = owner, s = space) => t.request('PUT', `/v1/spaces/${s}/preview-tokens/${tokenId}/draft`, { token, body })
  const versionsOf = async () => (await t.request('GET', `/v1/spaces/${space}/stories/${storyUuid}/versions`, { token: owner })).body

  test('the draft read with that very token answers the unsaved content; no other reader sees it, no version is made', async () => {
    t.clock.advance(61_000) // a fresh minting window
    const before = await versionsOf()
    const story = (await t.request('GET', `/v1/spaces/${space}/stories/${storyUuid}`, { token: owner })).body.data
    const m = await mintOk()
    const [id] = m.token.split('.')
    const r = await put(id, { story_uuid: storyUuid, lang: 'en', name: 'Typing', content: snap('Typed, not saved') })
    expect(r.status).toBe(200)
    expect(r.headers.get('cache-control')).toBe('no-store')
    expect(r.body.data).toEqual({ story_uuid: storyUuid, lang: 'en', bytes: expect.any(Number), expires_at: m.expires_at })
    const read = await t.request('GET', `/v1/cdn/${space}/stories/hello?version=draft`, { token: m.token })
    expect(read.status).toBe(200)
    expect(read.body.data.content.blocks[0].headline).toBe('Typed, not saved')
    expect(read.body.data.name).toBe('Typing')
    expect(read.headers.get('cache-control')).toBe('private, no-store')
    // Writing again replaces it.
    expect((await put(id, { story_uuid: storyUuid, lang: 'en', content: snap('Typed again') })).status).toBe(200)
    expect((await t.request('GET', `/v1/cdn/${space}/stories/hello?version=draft`, { token: m.token })).body.data.content.blocks[0].headline).toBe('Typed again')
    // Another preview token, a viewer's draft read, the public read and the management read: the saved state.
    const other = await mintOk()
    expect((await t.request('GET', `/v1/cdn/${space}/stories/hello?version=draft`, { token: other.token })).body.data.content.blocks[0].headline).toBe('Draft headline')
    expect((await t.request('GET', `/v1/cdn/${space}/stories/hello?version=draft`, { token: viewer })).body.data.content.blocks[0].headline).toBe('Draft headline')
    expect((await t.request('GET', `/v1/cdn/${space}/stories/hello`)).body.data.content.blocks[0].headline).toBe('Published headline')
    const after = (await t.request('GET', `/v1/spaces/${space}/stories/${storyUuid}`, { token: owner })).body.data
    expect(after.version_no).toBe(story.version_no)
    expect(after.content).toEqual(story.content)
    expect(await versionsOf()).toEqual(before)
  })

  test("another Space's token, an unknown one, and an expired one are 404; a viewer 403; a preview token 401", async () => {
    t.clock.advance(61_000)
    const m = await mintOk()
    const [id] = m.token.split('.')
    const body = { story_uuid: storyUuid, lang: 'en', content: snap('x') }
    // Minted in this Space, written through another Space's URL.
    expect((await put(id, body, owner, other)).status).toBe(404)
    const foreign = (await mintOk(other)).token.split('.')[0]
    expect((await put(foreign, body)).status).toBe(404)
    expect((await put('p_AAAAAAAAAAAA', body)).status).toBe(404)
    expect((await put(id, body, viewer)).status).toBe(403)
    expect((await put(id, body, m.token)).status).toBe(401)
    expect((await put(id, body, '')).status).toBe(401)
    t.clock.advance(60 * 60 * 1000)
    expect((await put(id, body)).status).toBe(404)
    // The snapshot of an expired token answers nothing (the token itself answers 401).
    expect((await t.request('GET', `/v1/cdn/${space}/stories/hello?version=draft`, { token: m.token })).status).toBe(401)
  })

  test('the content must be a document of blocks, bounded in size and count', async () => {
    t.clock.advance(61_000)
    const m = await mintOk()
    const [id] = m.token.split('.')
    const bad = async (content: unknown, field: string) => {
      const r = await put(id, { story_uuid: storyUuid, lang: 'en', content })
      expect([r.status, Object.keys(r.body.errors ?? {})]).toEqual([422, [field]])
    }
    await bad('text', 'content')
    await bad({ type: 'doc' }, 'content/blocks')
    await bad({ type: 'doc', blocks: [1] }, 'content/blocks/0')
    await bad(doc({ component: 'hero' }), 'content/blocks/0/_uid')
    await bad(doc({ _uid: 'a', component: 'No Such' }), 'content/blocks/0/component')
    let nested: Record<string, unknown> = { component: 'hero', _uid: 'leaf' }
    for (let i = 0; i < 9; i++) nested = { component: 'hero', _uid: `n${i}`, body: [nested] }
    expect((await put(id, { story_uuid: storyUuid, lang: 'en', content: doc(nested) })).status).toBe(422)
    expect((await put(id, { story_uuid: 'nope', lang: 'en', content: snap('x') })).status).toBe(422)
    expect((await put(id, { story_uuid: storyUuid, lang: '<script>', content: snap('x') })).status).toBe(422)
    const big = await put(id, { story_uuid: storyUuid, lang: 'en', content: snap('x'.repeat(600 * 1024)) })
    expect([413, 422]).toContain(big.status)
    // At most 20 Stories and locales per token; rewriting one of them stays allowed.
    const uuids = Array.from({ length: 20 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)
    for (const u of uuids) expect((await put(id, { story_uuid: u, lang: 'en', content: snap('x') })).status).toBe(200)
    expect((await put(id, { story_uuid: storyUuid, lang: 'en', content: snap('x') })).status).toBe(409)
    expect((await put(id, { story_uuid: uuids[3], lang: 'en', content: snap('y') })).status).toBe(200)
  })
})
