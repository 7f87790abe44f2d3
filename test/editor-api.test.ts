import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

// What the Story editor lives on: blueprint field labels and help per locale, blocks whitelists that name real
// blueprints, a blueprint's usage before deleting it, and the version history per locale with authors' names.

let t: TestApp
let space: string
let editor: string
let editorName: string
let viewer: string

const bp = (body: Record<string, unknown>) => t.request('POST', `/v1/spaces/${space}/components`, { token: editor, body })
const put = (name: string, body: Record<string, unknown>) => t.request('PUT', `/v1/spaces/${space}/components/${name}`, { token: editor, body })

beforeAll(async () => {
  t = await testApp()
  const o = await t.register()
  space = (await t.createSpace(o.token, { default_lang: 'en', locales: ['en', 'de'] })).slug
  // The editor is a member (a user token), so the versions they save carry their name.
  editor = await t.member(o.tenant.id, space, 'editor')
  const me = await t.request('GET', '/v1/auth/me', { token: editor })
  editorName = me.body.data.user?.name ?? me.body.data.name
  expect(editorName).toMatch(/^User /)
  viewer = (await t.spaceToken(o.token, space, 'viewer')).token
  expect((await bp({ name: 'text', is_root: false, schema: { body: { type: 'textarea' } } })).status).toBe(201)
})

afterAll(async () => {
  await t?.close()
})

describe('field labels and help per locale', () => {
  test('are accepted, kept and returned', async () => {
    const schema = {
      headline: { type: 'text', label: { en: 'Headline', de: 'Überschrift' }, help: { en: 'Shown on top, at most 60 characters.', de: 'Steht oben.' } },
      body: { type: 'textarea' },
    }
    const r = await bp({ name: 'hero', schema })
    expect(r.status).toBe(201)
    expect(r.body.data.schema.headline.label).toEqual({ en: 'Headline', de: 'Überschrift' })
    const got = await t.request('GET', `/v1/spaces/${space}/components/hero`, { token: viewer })
    expect(got.body.data.schema.headline.help.de).toBe('Steht oben.')
  })

  test.each([
    ['a label that is a string, not a map', { type: 'text', label: 'Headline' }, 'schema/f/label'],
    ['an empty label', { type: 'text', label: { en: '' } }, 'schema/f/label/en'],
    ['a label over 120 characters', { type: 'text', label: { en: 'x'.repeat(121) } }, 'schema/f/label/en'],
    ['a key that is no locale code', { type: 'text', label: { 'not a locale': 'x' } }, 'schema/f/label/not a locale'],
    ['a help text that is a number', { type: 'text', help: { en: 5 } }, 'schema/f/help/en'],
    ['a help text over 1000 characters', { type: 'text', help: { en: 'x'.repeat(1001) } }, 'schema/f/help/en'],
  ])('%s is refused with 422 at its key', async (_what, def, key) => {
    const r = await bp({ name: `bad-${crypto.randomUUID().slice(0, 6)}`, schema: { f: def } })
    expect(r.status).toBe(422)
    expect(r.body.error).toBe('validation_failed')
    expect(r.body.errors[key]).toBeDefined()
  })
})

describe('blocks whitelists ("Allowed components")', () => {
  test('an unknown blueprint name is refused with 422 naming the field, on create and on update', async () => {
    const r = await bp({ name: 'section', schema: { body: { type: 'blocks', component_whitelist: ['text', 'txet'] } } })
    expect(r.status).toBe(422)
    expect(r.body.errors['schema/body/component_whitelist'][0]).toContain('"txet"')
    expect(r.body.errors['schema/body/component_whitelist'][0]).not.toContain('"text"')
    expect((await bp({ name: 'section', schema: { body: { type: 'blocks', component_whitelist: ['text'] } } })).status).toBe(201)
    const u = await put('section', { schema: { body: { type: 'blocks', component_whitelist: ['nope'] } } })
    expect(u.status).toBe(422)
    expect(u.body.errors['schema/body/component_whitelist']).toBeDefined()
  })

  test('a blueprint may allow itself (nesting), on create and on update', async () => {
    expect((await bp({ name: 'list', schema: { items: { type: 'blocks', component_whitelist: ['list', 'text'] } } })).status).toBe(201)
    expect((await put('list', { schema: { items: { type: 'blocks', component_whitelist: ['list'] } } })).status).toBe(200)
  })
})

describe('a blueprint’s usage before deleting it', () => {
  test('counts the Stories using it and names the whitelists that allow it; 404 for an unknown one', async () => {
    await bp({ name: 'card', schema: { title: { type: 'text' } } })
    await bp({ name: 'deck', schema: { cards: { type: 'blocks', component_whitelist: ['card'] } } })
    const zero = await t.request('GET', `/v1/spaces/${space}/components/card/usage`, { token: viewer })
    expect(zero.status).toBe(200)
    expect(zero.body.data).toEqual({ stories: 0, allowed_in: ['deck'] })
    for (const i of [1, 2]) {
      const r = await t.request('POST', `/v1/spaces/${space}/stories`, {
        token: editor,
        body: { name: `Deck ${i}`, slug: `deck-${i}`, content: { type: 'doc', blocks: [{ component: 'deck', _uid: 'd', cards: [{ component: 'card', _uid: 'c', title: 'x' }] }] } },
      })
      expect(r.status).toBe(201)
    }
    const two = await t.request('GET', `/v1/spaces/${space}/components/card/usage`, { token: viewer })
    expect(two.body.data.stories).toBe(2)
    const del = await t.request('DELETE', `/v1/spaces/${space}/components/card`, { token: editor })
    expect(del.status).toBe(409)
    expect((await t.request('GET', `/v1/spaces/${space}/components/nothing/usage`, { token: viewer })).status).toBe(404)
  })
})

describe('the version history', () => {
  let uuid: string
  beforeAll(async () => {
    const r = await t.request('POST', `/v1/spaces/${space}/stories`, { token: editor, body: { name: 'Page', slug: 'page' } })
    uuid = r.body.data.uuid
    for (const body of [{ lang: 'de', name: 'Seite', content: { type: 'doc', blocks: [] } }, { name: 'Page 2' }]) {
      const u = await t.request('PUT', `/v1/spaces/${space}/stories/${uuid}`, { token: editor, body })
      if (u.status !== 200) throw new Error(`save: ${u.status} ${u.text}`)
    }
  })

  test('lists one locale with lang, with the author’s name', async () => {
    const all = await t.request('GET', `/v1/spaces/${space}/stories/${uuid}/versions`, { token: viewer })
    expect(all.body.data.map((v: { lang: string }) => v.lang)).toEqual(['en', 'de', 'en'])
    const de = await t.request('GET', `/v1/spaces/${space}/stories/${uuid}/versions?lang=de`, { token: viewer })
    expect(de.status).toBe(200)
    expect(de.body.data.map((v: { version_no: number }) => v.version_no)).toEqual([2])
    expect(de.body.meta.total).toBe(1)
    expect(de.body.data[0].author).toEqual({ user_id: expect.any(Number), name: editorName })
    const one = await t.request('GET', `/v1/spaces/${space}/stories/${uuid}/versions/2`, { token: viewer })
    expect(one.body.data.author.name).toBe(editorName)
    expect((await t.request('GET', `/v1/spaces/${space}/stories/${uuid}/versions?lang=%2F%2F`, { token: viewer })).status).toBe(422)
  })

  test('restoring a version of another locale than the one shown is refused, naming lang; the same locale restores', async () => {
    const r = await t.request('POST', `/v1/spaces/${space}/stories/${uuid}/versions/2/restore?lang=en`, { token: editor })
    expect(r.status).toBe(422)
    expect(r.body.errors.lang[0]).toContain('de')
    const story = await t.request('GET', `/v1/spaces/${space}/stories/${uuid}`, { token: viewer })
    expect(story.body.data.version_no).toBe(3)
    const ok = await t.request('POST', `/v1/spaces/${space}/stories/${uuid}/versions/2/restore?lang=de`, { token: editor })
    expect(ok.status).toBe(200)
    expect(ok.body.data).toMatchObject({ lang: 'de', name: 'Seite', version_no: 4 })
  })
})
