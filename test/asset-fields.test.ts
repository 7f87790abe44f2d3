import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type TestApp, testApp } from './helpers/app'
import { photo, pngOf } from './helpers/images'

// Asset fields of Story content are stored as references ({uuid, ...}) and resolved on every read surface: the CDN
// read (cached and fast path included), previews and GraphQL.

setDefaultTimeout(60_000)

let t: TestApp
let owner: string
let space: string
let image: { uuid: string; url: string }
let pdf: { uuid: string; url: string }
const gone = '0b0e5c2a-3f4e-4a8b-9c1d-2e3f4a5b6c7d'

async function upload(bytes: Uint8Array | string, name: string, type: string, fields: Record<string, string> = {}) {
  const fd = new FormData()
  for (const [k, v] of Object.entries(fields)) fd.append(k, v)
  fd.append('file', new Blob([bytes as BlobPart], { type }), name)
  const r = await t.request('POST', `/v1/spaces/${space}/assets`, { token: owner, raw: fd })
  if (r.status !== 201) throw new Error(`upload: ${r.status} ${r.text}`)
  return r.body.data as { uuid: string; url: string }
}

async function publish(slug: string, blocks: unknown[], translations: Record<string, unknown[]> = {}) {
  const created = await t.request('POST', `/v1/spaces/${space}/stories`, { token: owner, body: { name: slug, slug, content: { type: 'doc', blocks } } })
  if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`)
  const uuid = created.body.data.uuid
  for (const [lang, b] of Object.entries(translations)) {
    const r = await t.request('PUT', `/v1/spaces/${space}/stories/${uuid}`, { token: owner, body: { lang, name: slug, content: { type: 'doc', blocks: b } } })
    if (r.status !== 200) throw new Error(`translate: ${r.status} ${r.text}`)
  }
  expect((await t.request('POST', `/v1/spaces/${space}/stories/${uuid}/publish`, { token: owner })).status).toBe(200)
  return uuid as string
}

const read = async (path: string, headers: Record<string, string> = {}) => {
  const r = await t.request('GET', `/v1/cdn/${space}/stories/${path}`, { headers })
  expect(r.status).toBe(200)
  return r.body.data.content.blocks as any[]
}

beforeAll(async () => {
  t = await testApp({ publicUrl: 'https://cms.example.com' })
  owner = (await t.register()).token
  space = (await t.createSpace(owner, { locales: ['en', 'de'] })).slug
  for (const c of [
    { name: 'hero', schema: { title: { type: 'text' }, image: { type: 'asset' }, items: { type: 'blocks' } } },
    { name: 'figure', is_root: false, schema: { file: { type: 'asset' }, link: { type: 'link' } } },
  ]) {
    const r = await t.request('POST', `/v1/spaces/${space}/components`, { token: owner, body: c })
    if (r.status !== 201) throw new Error(`component: ${r.status} ${r.text}`)
  }
  image = await upload(pngOf(photo(300, 200)), 'beach.png', 'image/png', { alt: JSON.stringify({ en: 'A beach', de: 'Ein Strand' }) })
  const pdfBytes = new Uint8Array(2048)
  pdfBytes.set(new TextEncoder().encode('%PDF-1.7\n'))
  pdf = await upload(pdfBytes, 'menu.pdf', 'application/pdf')
  await publish(
    'home',
    [
      {
        component: 'hero',
        _uid: 'h1',
        title: 'Hi',
        image: { uuid: image.uuid, focus: '10x20' },
        items: [
          { component: 'figure', _uid: 'f1', file: { uuid: pdf.uuid }, link: { story_uuid: image.uuid } },
          { component: 'figure', _uid: 'f2', file: { uuid: gone, alt: 'Our menu' } },
        ],
      },
    ],
    { de: [{ component: 'hero', _uid: 'h1', title: 'Hallo', image: { uuid: image.uuid } }] },
  )
  await publish('plain', [{ component: 'hero', _uid: 'p1', title: 'No assets here' }])
})

afterAll(() => t?.close())

describe('asset fields in Story reads', () => {
  test('the CDN read resolves a reference to url, transform url, alt in the served locale, size and type, keeping what was stored', async () => {
    for (let i = 0; i < 3; i++) {
      // The first read renders, the next come from the cache (the third from the fast path's memo).
      const [hero] = await read('home')
      expect(hero.image).toEqual({
        uuid: image.uuid,
        focus: '10x20',
        url: `https://cms.example.com/v1/cdn/${space}/assets/${image.uuid}`,
        transform_url: `https://cms.example.com/v1/cdn/${space}/assets/${image.uuid}.webp`,
        alt: 'A beach',
        width: 300,
        height: 200,
        mime: 'image/png',
        filename: 'beach.png',
        // The focus stored in the field wins; the asset has no crop.
        crop: null,
      })
      // Nested blocks too; a file that is not an image has no transform url; a link is left alone.
      expect(hero.items[0].file).toMatchObject({ uuid: pdf.uuid, url: `https://cms.example.com/v1/cdn/${space}/assets/${pdf.uuid}`, transform_url: null, mime: 'application/pdf', width: null, height: null, alt: null })
      expect(hero.items[0].link).toEqual({ story_uuid: image.uuid })
      // An asset that does not exist: every resolved field null, `missing: true`; an alt stored in the field stays.
      expect(hero.items[1].file).toEqual({ uuid: gone, url: null, transform_url: null, alt: 'Our menu', width: null, height: null, mime: null, filename: null, focus: null, crop: null, missing: true })
    }
    const [de] = await read('home?lang=de')
    expect(de.title).toBe('Hallo')
    expect(de.image.alt).toBe('Ein Strand')
    // The URLs it hands out serve the file and its variant.
    const original = await t.app.handle(new Request(`http://localhost/v1/cdn/${space}/assets/${image.uuid}`))
    expect(original.status).toBe(200)
    const variant = await t.app.handle(new Request(`http://localhost/v1/cdn/${space}/assets/${image.uuid}.webp?w=64`))
    expect(variant.status).toBe(200)
    expect(variant.headers.get('content-type')).toBe('image/webp')
  })

  test('a Story without asset fields reads as stored', async () => {
    const [p] = await read('plain')
    expect(p).toEqual({ component: 'hero', _uid: 'p1', title: 'No assets here' })
  })

  test('alt text changes and deletions reach cached reads at once', async () => {
    expect((await read('home'))[0].image.alt).toBe('A beach')
    const patched = await t.request('PATCH', `/v1/spaces/${space}/assets/${image.uuid}`, { token: owner, body: { alt: { en: 'A sunny beach' } } })
    expect(patched.status).toBe(200)
    expect((await read('home'))[0].image.alt).toBe('A sunny beach')
    expect((await read('home?lang=de'))[0].image.alt).toBe('Ein Strand')
    expect((await t.request('DELETE', `/v1/spaces/${space}/assets/${pdf.uuid}`, { token: owner })).status).toBe(204)
    const [hero] = await read('home')
    expect(hero.items[0].file).toEqual({ uuid: pdf.uuid, url: null, transform_url: null, alt: null, width: null, height: null, mime: null, filename: null, focus: null, crop: null, missing: true })
    expect(hero.image.alt).toBe('A sunny beach')
  })

  test('the asset’s focal point and crop reach cached reads at once; a focus stored in the field wins', async () => {
    expect((await read('home?lang=de'))[0].image).toMatchObject({ focus: null, crop: null })
    const body = { focus: { x: 0.8, y: 0.25 }, crop: { x: 0.1, y: 0, width: 0.9, height: 1 } }
    expect((await t.request('PATCH', `/v1/spaces/${space}/assets/${image.uuid}`, { token: owner, body })).status).toBe(200)
    expect((await read('home?lang=de'))[0].image).toMatchObject(body)
    expect((await read('home'))[0].image).toMatchObject({ focus: '10x20', crop: body.crop })
  })

  test('previews and GraphQL resolve them the same way', async () => {
    const viewer = (await t.spaceToken(owner, space, 'viewer')).token
    const preview = await t.request('GET', `/v1/cdn/${space}/stories/home?version=draft`, { token: viewer })
    expect(preview.status).toBe(200)
    expect(preview.body.data.content.blocks[0].image).toMatchObject({ uuid: image.uuid, url: `https://cms.example.com/v1/cdn/${space}/assets/${image.uuid}`, width: 300, mime: 'image/png' })
    const gql = await t.request('POST', '/v1/graphql', {
      body: { query: `{ story(space: "${space}", path: "home", lang: "de") { content } }` },
    })
    expect(gql.status).toBe(200)
    expect(gql.body.errors).toBeUndefined()
    expect(gql.body.data.story.content.blocks[0].image).toMatchObject({ uuid: image.uuid, alt: 'Ein Strand', height: 200, transform_url: `https://cms.example.com/v1/cdn/${space}/assets/${image.uuid}.webp` })
  })
})
