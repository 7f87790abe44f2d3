/**
 * Galleries (issue 30): management CRUD (viewer+ reads, editor+ writes, paging with meta.total), the checks of a
 * gallery (assets of the same Space, images only, ≤ 500 items, locale maps), the events and their webhook bodies, and
 * the public read by slug: locale fallback chain, alt falling back to the asset's, transform URLs for the allowed
 * widths in webp and avif, ETag / 304 / Vary / Cache-Control, a deleted asset leaving the answer, GraphQL.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type TestApp, testApp } from './helpers/app'
import { photo, pngOf } from './helpers/images'
import { type Receiver, startReceiver } from './helpers/receiver'

setDefaultTimeout(60_000)

let t: TestApp
let owner: string
let ownerTenant: number
let space: string
let other: string
let hooks: Receiver
let beach: { uuid: string; url: string }
let forest: { uuid: string; url: string }
let tiny: { uuid: string; url: string }
let pdf: { uuid: string; url: string }
let foreign: { uuid: string; url: string }

async function upload(s: string, bytes: Uint8Array | string, name: string, type: string, fields: Record<string, string> = {}) {
  const fd = new FormData()
  for (const [k, v] of Object.entries(fields)) fd.append(k, v)
  fd.append('file', new Blob([bytes as BlobPart], { type }), name)
  const r = await t.request('POST', `/v1/spaces/${s}/assets`, { token: owner, raw: fd })
  if (r.status !== 201) throw new Error(`upload: ${r.status} ${r.text}`)
  return r.body.data as { uuid: string; url: string }
}

const base = () => `/v1/spaces/${space}/galleries`
const create = (body: Record<string, unknown>, token = owner, s = space) => t.request('POST', `/v1/spaces/${s}/galleries`, { token, body })

beforeAll(async () => {
  t = await testApp({ publicUrl: 'https://cms.example.com', outboundAllowPrivate: true, imageWidths: [64, 128, 256, 640, 1080] })
  const u = await t.register()
  owner = u.token
  ownerTenant = u.tenant.id
  space = (await t.createSpace(owner, { locales: ['en', 'de', 'de-AT'] })).slug
  other = (await t.createSpace(owner)).slug
  beach = await upload(space, pngOf(photo(300, 200)), 'beach.png', 'image/png', { alt: JSON.stringify({ en: 'A beach', de: 'Ein Strand' }) })
  forest = await upload(space, pngOf(photo(700, 400, 2)), 'forest.png', 'image/png')
  tiny = await upload(space, pngOf(photo(40, 30, 3)), 'tiny.png', 'image/png')
  const pdfBytes = new Uint8Array(2048)
  pdfBytes.set(new TextEncoder().encode('%PDF-1.7\n'))
  pdf = await upload(space, pdfBytes, 'menu.pdf', 'application/pdf')
  foreign = await upload(other, pngOf(photo(50, 50, 4)), 'elsewhere.png', 'image/png')
  hooks = startReceiver()
})

afterAll(async () => {
  await hooks?.stop()
  await t?.close()
})

describe('galleries: management', () => {
  test('create, read, list with paging, replace and delete', async () => {
    const c = await create({ slug: 'summer', title: { en: 'Summer', de: 'Sommer' }, items: [{ asset_uuid: beach.uuid, caption: { en: 'Sand' } }, { asset_uuid: forest.uuid.toUpperCase() }] })
    expect(c.status).toBe(201)
    const g = c.body.data
    expect(g).toMatchObject({ slug: 'summer', title: { en: 'Summer', de: 'Sommer' }, items: [{ asset_uuid: beach.uuid, caption: { en: 'Sand' }, alt: {} }, { asset_uuid: forest.uuid, caption: {}, alt: {} }] })
    expect(g.id).toMatch(/^[0-9a-f-]{36}$/)
    expect((await t.request('GET', `${base()}/${g.id}`, { token: owner })).body.data).toEqual(g)

    for (let i = 0; i < 3; i++) expect((await create({ slug: `page-${i}`, title: {}, items: [] })).status).toBe(201)
    const p1 = await t.request('GET', `${base()}?per_page=2`, { token: owner })
    expect(p1.status).toBe(200)
    expect(p1.body.meta).toEqual({ total: 4, page: 1, per_page: 2 })
    expect(p1.body.data).toHaveLength(2)
    const p2 = await t.request('GET', `${base()}?per_page=2&page=2`, { token: owner })
    expect(p2.body.data.map((x: any) => x.slug)).toContain('summer')
    expect((await t.request('GET', `${base()}?per_page=101`, { token: owner })).status).toBe(422)

    const put = await t.request('PUT', `${base()}/${g.id}`, { token: owner, body: { slug: 'summer-2', title: { en: 'Summer!' }, items: [{ asset_uuid: forest.uuid }] } })
    expect(put.status).toBe(200)
    expect(put.body.data).toMatchObject({ id: g.id, slug: 'summer-2', title: { en: 'Summer!' }, items: [{ asset_uuid: forest.uuid }] })
    expect((await t.request('DELETE', `${base()}/${g.id}`, { token: owner })).status).toBe(204)
    expect((await t.request('GET', `${base()}/${g.id}`, { token: owner })).status).toBe(404)
    expect((await t.request('DELETE', `${base()}/${g.id}`, { token: owner })).status).toBe(404)
  })

  test('a slug is unique in its Space: 409 slug_taken; another Space may use it', async () => {
    expect((await create({ slug: 'dup', title: {}, items: [] })).status).toBe(201)
    const again = await create({ slug: 'dup', title: {}, items: [] })
    expect(again.status).toBe(409)
    expect(again.body.error).toBe('slug_taken')
    expect((await create({ slug: 'dup', title: {}, items: [] }, owner, other)).status).toBe(201)
  })

  test('assets of another Space, unknown assets and non-images are refused naming the item index', async () => {
    const r = await create({
      slug: 'bad-items',
      title: {},
      items: [{ asset_uuid: beach.uuid }, { asset_uuid: foreign.uuid }, { asset_uuid: '0b0e5c2a-3f4e-4a8b-9c1d-2e3f4a5b6c7d' }, { asset_uuid: pdf.uuid }],
    })
    expect(r.status).toBe(422)
    expect(r.body.error).toBe('validation_failed')
    expect(Object.keys(r.body.errors).sort()).toEqual(['items/1/asset_uuid', 'items/2/asset_uuid', 'items/3/asset_uuid'])
    expect(r.body.errors['items/1/asset_uuid'][0]).toContain('not an asset of this Space')
    expect(r.body.errors['items/3/asset_uuid'][0]).toContain('not an image')
  })

  test('500 items are accepted, 501 are refused', async () => {
    const items = (n: number) => Array.from({ length: n }, () => ({ asset_uuid: beach.uuid }))
    const ok = await create({ slug: 'five-hundred', title: {}, items: items(500) })
    expect(ok.status).toBe(201)
    expect(ok.body.data.items).toHaveLength(500)
    const tooMany = await create({ slug: 'five-hundred-one', title: {}, items: items(501) })
    expect(tooMany.status).toBe(422)
    expect(tooMany.body.error).toBe('validation_failed')
  })

  test('bad bodies: locales the Space lacks, bad slugs, unknown fields, a bad uuid', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ slug: 'x', title: { fr: 'Été' }, items: [] }, 'title/fr'],
      [{ slug: 'x', title: {}, items: [{ asset_uuid: beach.uuid, caption: { xx_bad: 'y' } }] }, 'items/0/caption/xx_bad'],
      [{ slug: 'x', title: {}, items: [{ asset_uuid: beach.uuid, alt: { it: 'y' } }] }, 'items/0/alt/it'],
    ]
    for (const [body, key] of cases) {
      const r = await create(body)
      expect(r.status).toBe(422)
      expect(Object.keys(r.body.errors)).toContain(key)
    }
    for (const body of [
      { slug: 'Bad Slug', title: {}, items: [] },
      { slug: 'ok', title: {}, items: [], extra: 1 },
      { slug: 'ok', title: {}, items: [{ asset_uuid: 'not-a-uuid' }] },
      { slug: 'ok', title: 'Summer', items: [] },
      { slug: 'ok', items: [] },
    ]) {
      const r = await create(body)
      expect(r.status).toBe(422)
      expect(r.body.error).toBe('validation_failed')
    }
  })

  test('viewers read, editors write; another tenant sees 404', async () => {
    const viewer = await t.member(ownerTenant, space, 'viewer')
    const editor = await t.member(ownerTenant, space, 'editor')
    expect((await t.request('GET', base(), { token: viewer })).status).toBe(200)
    const denied = await create({ slug: 'by-viewer', title: {}, items: [] }, viewer)
    expect(denied.status).toBe(403)
    const made = await create({ slug: 'by-editor', title: {}, items: [] }, editor)
    expect(made.status).toBe(201)
    expect((await t.request('DELETE', `${base()}/${made.body.data.id}`, { token: viewer })).status).toBe(403)
    const stranger = (await t.register()).token
    expect((await t.request('GET', base(), { token: stranger })).status).toBe(404)
    expect((await t.request('GET', `${base()}/${made.body.data.id}`, { token: stranger })).status).toBe(404)
    expect((await t.request('GET', base())).status).toBe(401)
  })

  test('events reach webhooks with their bodies', async () => {
    const hook = await t.request('POST', `/v1/spaces/${space}/webhooks`, {
      token: owner,
      body: { label: 'galleries', url: hooks.url, events: ['gallery.created', 'gallery.updated', 'gallery.deleted'], active: true },
    })
    expect(hook.status).toBe(201)
    const g = (await create({ slug: 'hooked', title: {}, items: [{ asset_uuid: beach.uuid }] })).body.data
    await t.request('PUT', `${base()}/${g.id}`, { token: owner, body: { slug: 'hooked-2', title: {}, items: [] } })
    await t.request('DELETE', `${base()}/${g.id}`, { token: owner })
    // Earlier changes of the Space not yet relayed go out too: this gallery's deliveries are the ones checked.
    const mine = () => hooks.requests.map((r) => r.json).filter((b) => b.gallery?.id === g.id)
    for (let i = 0; i < 40 && mine().length < 3; i++) {
      await t.kernel.jobs.runDueJobs()
      await Bun.sleep(50)
    }
    // Deliveries run concurrently, so they may arrive in any order (docs/webhooks.md): put them in the order of the changes.
    const order = ['gallery.created', 'gallery.updated', 'gallery.deleted']
    const bodies = mine().sort((a, b) => order.indexOf(a.event) - order.indexOf(b.event))
    expect(bodies.map((b) => b.event)).toEqual(order)
    expect(bodies[0]).toMatchObject({ space: { slug: space }, gallery: { id: g.id, slug: 'hooked', items: 1 } })
    expect(bodies[1].gallery).toEqual({ id: g.id, slug: 'hooked-2', items: 0 })
    expect(bodies[2].gallery).toEqual({ id: g.id, slug: 'hooked-2', items: 0 })
  })
})

describe('galleries: the public read', () => {
  let g: any
  beforeAll(async () => {
    const r = await create({
      slug: 'holiday',
      title: { en: 'Holiday', de: 'Urlaub' },
      items: [
        { asset_uuid: beach.uuid, caption: { en: 'The beach', de: 'Der Strand' } },
        { asset_uuid: forest.uuid, caption: { en: 'The forest' }, alt: { en: 'Tall trees', 'de-at': 'Hohe Bäume' } },
        { asset_uuid: tiny.uuid },
      ],
    })
    expect(r.status).toBe(201)
    g = r.body.data
  })
  const read = (path: string, headers: Record<string, string> = {}) => t.request('GET', `/v1/cdn/${space}/galleries/${path}`, { headers })

  test('sizes, alt texts, captions and transform URLs in webp and avif', async () => {
    const r = await read('holiday')
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toContain('application/json')
    const d = r.body.data
    expect(d).toMatchObject({ id: g.id, slug: 'holiday', lang: 'en', title: 'Holiday' })
    const [b, f, s] = d.items
    const url = `https://cms.example.com/v1/cdn/${space}/assets/${beach.uuid}`
    expect(b).toMatchObject({ asset_uuid: beach.uuid, url, mime: 'image/png', width: 300, height: 200, alt: 'A beach', caption: 'The beach' })
    expect(b.transforms).toEqual([64, 128, 256].map((w) => ({ width: w, webp: `${url}.webp?w=${w}`, avif: `${url}.avif?w=${w}` })))
    expect(b.srcset.webp).toBe(`${url}.webp?w=64 64w, ${url}.webp?w=128 128w, ${url}.webp?w=256 256w`)
    expect(b.srcset.avif).toBe(`${url}.avif?w=64 64w, ${url}.avif?w=128 128w, ${url}.avif?w=256 256w`)
    expect(f).toMatchObject({ width: 700, height: 400, alt: 'Tall trees', caption: 'The forest' })
    expect(f.transforms.map((x: any) => x.width)).toEqual([64, 128, 256, 640])
    // Smaller than every allowed width: the smallest one.
    expect(s.transforms.map((x: any) => x.width)).toEqual([64])
    expect(s).toMatchObject({ alt: null, caption: null })
    // The URLs answer: a transform of an allowed width in both formats.
    for (const fmt of ['webp', 'avif']) {
      const v = await t.request('GET', `/v1/cdn/${space}/assets/${beach.uuid}.${fmt}?w=64`)
      expect(v.status).toBe(200)
      expect(v.headers.get('content-type')).toBe(`image/${fmt}`)
    }
  })

  test('the locale fallback chain: ?lang, its language, Accept-Language, the Space default', async () => {
    const at = (await read('holiday?lang=de-AT')).body.data
    expect(at).toMatchObject({ lang: 'de-AT', title: 'Urlaub' })
    expect(at.items[0]).toMatchObject({ alt: 'Ein Strand', caption: 'Der Strand' })
    expect(at.items[1]).toMatchObject({ alt: 'Hohe Bäume', caption: 'The forest' })
    const de = (await read('holiday', { 'Accept-Language': 'de;q=0.9, fr;q=0.8' })).body.data
    expect(de).toMatchObject({ lang: 'de', title: 'Urlaub' })
    expect(de.items[1].alt).toBe('Tall trees')
    expect((await read('holiday?lang=fr')).body.data).toMatchObject({ lang: 'en', title: 'Holiday' })
    const bad = await read('holiday?lang=!!')
    expect(bad.status).toBe(422)
  })

  test('ETag, 304, Vary and Cache-Control', async () => {
    const r = await read('holiday')
    const etag = r.headers.get('etag')!
    expect(etag).toMatch(/^"[\w-]{27}"$/)
    expect(r.headers.get('vary')).toBe('Accept-Language')
    expect(r.headers.get('cache-control')).toMatch(/^public, max-age=\d+, stale-while-revalidate=\d+$/)
    const nm = await read('holiday', { 'If-None-Match': etag })
    expect(nm.status).toBe(304)
    expect(nm.text).toBe('')
    expect(nm.headers.get('etag')).toBe(etag)
    expect((await read('holiday', { 'If-None-Match': '"other"' })).status).toBe(200)
    expect((await read('holiday?lang=de')).headers.get('etag')).not.toBe(etag)
  })

  test('unknown galleries and Spaces answer 404; a change shows at once', async () => {
    expect((await read('nope')).status).toBe(404)
    expect((await t.request('GET', `/v1/cdn/no-such-space/galleries/holiday`)).status).toBe(404)
    expect((await t.request('GET', `/v1/cdn/${other}/galleries/holiday`)).status).toBe(404)
    const before = (await read('holiday')).headers.get('etag')
    const put = await t.request('PUT', `${base()}/${g.id}`, { token: owner, body: { slug: 'holiday', title: { en: 'Holidays' }, items: g.items } })
    expect(put.status).toBe(200)
    const after = await read('holiday')
    expect(after.body.data.title).toBe('Holidays')
    expect(after.headers.get('etag')).not.toBe(before)
  })

  test('an asset deleted after the gallery was saved leaves the public answer (and GraphQL)', async () => {
    const gone = await upload(space, pngOf(photo(90, 90, 9)), 'gone.png', 'image/png')
    const made = await create({ slug: 'fragile', title: { en: 'Fragile' }, items: [{ asset_uuid: gone.uuid }, { asset_uuid: beach.uuid }] })
    expect(made.status).toBe(201)
    expect((await read('fragile')).body.data.items.map((i: any) => i.asset_uuid)).toEqual([gone.uuid, beach.uuid])
    expect((await t.request('DELETE', `/v1/spaces/${space}/assets/${gone.uuid}`, { token: owner })).status).toBe(204)
    expect((await read('fragile')).body.data.items.map((i: any) => i.asset_uuid)).toEqual([beach.uuid])
    const q = await t.request('POST', '/v1/graphql', {
      body: { query: `{ gallery(space: "${space}", slug: "fragile", lang: "de") { slug lang title items { assetUuid alt width transforms { width avif } srcsetWebp } } }` },
    })
    expect(q.status).toBe(200)
    expect(q.body.errors).toBeUndefined()
    expect(q.body.data.gallery).toMatchObject({ slug: 'fragile', lang: 'de', title: 'Fragile', items: [{ assetUuid: beach.uuid, alt: 'Ein Strand', width: 300 }] })
    expect(q.body.data.gallery.items[0].transforms[0].avif).toContain('.avif?w=64')
    const none = await t.request('POST', '/v1/graphql', { body: { query: `{ gallery(space: "${space}", slug: "missing") { slug } }` } })
    expect(none.body.data.gallery).toBeNull()
  })
})
