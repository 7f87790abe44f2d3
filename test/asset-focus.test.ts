import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { decodePng, type Rgba } from '../src/modules/assets/pixels'
import { type TestApp, testApp } from './helpers/app'
import { pngOf } from './helpers/images'

setDefaultTimeout(60_000)

/**
 * Focal point and crop of an image (docs/assets.md): stored by PATCH, applied by transforms, carried by the public
 * answers. The image is 400×200, its left half red and its right half blue, so what a cut keeps is plain to see.
 */
let t: TestApp
let space: string
let token: string
let uuid: string

function halves(width: number, height: number): Rgba {
  const data = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4
      data.set(x < width / 2 ? [255, 0, 0, 255] : [0, 0, 255, 255], i)
    }
  }
  return { data, width, height }
}

/** Share of pixels that are clearly red and clearly blue. */
function colours(img: Rgba) {
  let red = 0
  let blue = 0
  for (let i = 0; i < img.data.length; i += 4) {
    const [r, , b] = [img.data[i]!, img.data[i + 1]!, img.data[i + 2]!]
    if (r > 200 && b < 55) red++
    else if (b > 200 && r < 55) blue++
  }
  const n = img.width * img.height
  return { red: red / n, blue: blue / n }
}

const patch = (body: Record<string, unknown>, id = uuid) => t.request('PATCH', `/v1/spaces/${space}/assets/${id}`, { token, body })

async function variant(query: string) {
  const res = await t.app.handle(new Request(`http://localhost/v1/cdn/${space}/assets/${uuid}.png?${query}`, { headers: { 'X-Forwarded-For': '10.7.7.7' } }))
  expect(res.status).toBe(200)
  const img = decodePng(new Uint8Array(await res.arrayBuffer()))
  return { img, etag: res.headers.get('etag'), cache: res.headers.get('cache-control'), ...colours(img) }
}

beforeAll(async () => {
  t = await testApp({ publicUrl: 'https://cms.example.com', imageWidths: [64, 100, 128, 200, 400] })
  const u = await t.register()
  token = u.token
  space = (await t.createSpace(token)).slug
  const fd = new FormData()
  fd.append('file', new Blob([pngOf(halves(400, 200)) as BlobPart], { type: 'image/png' }), 'halves.png')
  const up = await t.request('POST', `/v1/spaces/${space}/assets`, { token, raw: fd })
  expect(up.status).toBe(201)
  expect(up.body.data).toMatchObject({ focus: null, crop: null })
  uuid = up.body.data.uuid
})

afterAll(() => t?.close())

describe('focal point', () => {
  test('a square cover cut centres on the focal point: at the right edge it is blue, at the left red; the ETag follows', async () => {
    const centre = await variant('w=128&h=128&fit=cover')
    expect(centre.img.width).toBe(128)
    expect(centre.img.height).toBe(128)
    // Without a focal point the centre cut holds both halves.
    expect(centre.red).toBeGreaterThan(0.4)
    expect(centre.blue).toBeGreaterThan(0.4)
    expect(centre.cache).toContain('immutable')

    const res = await patch({ focus: { x: 1, y: 0.5 } })
    expect(res.status).toBe(200)
    expect(res.body.data.focus).toEqual({ x: 1, y: 0.5 })
    expect(res.body.data.crop).toBeNull()
    expect((await t.request('GET', `/v1/spaces/${space}/assets/${uuid}`, { token })).body.data.focus).toEqual({ x: 1, y: 0.5 })

    const right = await variant('w=128&h=128&fit=cover')
    expect(right.blue).toBeGreaterThan(0.98)
    expect(right.etag).not.toBe(centre.etag)
    // The URL names no version while the image has one: the answer may change, so it is not cached for ever.
    expect(right.cache).not.toContain('immutable')

    await patch({ focus: { x: 0, y: 0 } })
    const left = await variant('w=128&h=128&fit=cover')
    expect(left.red).toBeGreaterThan(0.98)
    expect(left.etag).not.toBe(right.etag)

    // A focus near the middle but off it: the window is clamped inside the image and still shows both halves.
    await patch({ focus: { x: 0.55, y: 0.5 } })
    const near = await variant('w=200&h=200&fit=cover')
    expect(near.img.width).toBe(200)
    expect(near.blue).toBeGreaterThan(near.red)
    expect(near.red).toBeGreaterThan(0.2)

    // A resize that keeps the aspect ratio ignores the focus (and keeps its cache key).
    const plain = await variant('w=200')
    expect(plain.img.width).toBe(200)
    expect(plain.img.height).toBe(100)
    expect(plain.etag).toEndWith('-inside-q.png"')

    // null clears: back to the centre cut, the first ETag.
    const cleared = await patch({ focus: null })
    expect(cleared.body.data.focus).toBeNull()
    const again = await variant('w=128&h=128&fit=cover')
    expect(again.etag).toBe(centre.etag)
    expect(again.red).toBeGreaterThan(0.4)
  })
})

describe('crop', () => {
  test('an explicit crop is cut before resizing; with a focal point too, the cover cut centres inside the crop', async () => {
    const res = await patch({ crop: { x: 0, y: 0, width: 0.25, height: 1 } })
    expect(res.status).toBe(200)
    expect(res.body.data.crop).toEqual({ x: 0, y: 0, width: 0.25, height: 1 })
    // 100×200 of red, scaled to 64 wide.
    const cut = await variant('w=64')
    expect([cut.img.width, cut.img.height]).toEqual([64, 128])
    expect(cut.red).toBeGreaterThan(0.98)

    // The right half cropped, a square cover focused at its left edge: the left part of the right half, blue.
    await patch({ crop: { x: 0.5, y: 0, width: 0.5, height: 1 }, focus: { x: 0, y: 0.5 } })
    const sq = await variant('w=100&h=100&fit=cover')
    expect([sq.img.width, sq.img.height]).toEqual([100, 100])
    expect(sq.blue).toBeGreaterThan(0.98)

    // The focal point is a point of the whole image: crop the middle half (100..300), focus at x=0.3 (pixel 120, red)
    // → a square of the crop's height (100 px) from 100 to 200, red; focus at 0.7 (pixel 280) → 200..300, blue.
    await patch({ crop: { x: 0.25, y: 0.25, width: 0.5, height: 0.5 }, focus: { x: 0.3, y: 0.5 } })
    expect((await variant('w=100&h=100&fit=cover')).red).toBeGreaterThan(0.98)
    await patch({ focus: { x: 0.7, y: 0.5 } })
    expect((await variant('w=100&h=100&fit=cover')).blue).toBeGreaterThan(0.98)

    // A crop that straddles the halves, resized whole: the left quarter red, the rest blue.
    await patch({ crop: { x: 0.375, y: 0.25, width: 0.5, height: 0.5 }, focus: null })
    const mid = await variant('w=200')
    expect([mid.img.width, mid.img.height]).toEqual([200, 100])
    expect(mid.red).toBeGreaterThan(0.2)
    expect(mid.red).toBeLessThan(0.3)
    expect(mid.blue).toBeGreaterThan(0.7)

    expect((await patch({ crop: null })).body.data.crop).toBeNull()
    const whole = await variant('w=200')
    expect(whole.red).toBeGreaterThan(0.45)
    expect(whole.blue).toBeGreaterThan(0.45)
  })

  test('a URL naming the current version (v=, as public answers give it) is cached for ever; a stale one for an hour', async () => {
    await patch({ crop: { x: 0, y: 0, width: 0.5, height: 1 } })
    const gallery = await t.request('POST', `/v1/spaces/${space}/galleries`, { token, body: { slug: 'halves', title: {}, items: [{ asset_uuid: uuid }] } })
    expect(gallery.status).toBe(201)
    const pub = await t.request('GET', `/v1/cdn/${space}/galleries/halves`)
    expect(pub.status).toBe(200)
    const item = pub.body.data.items[0]
    expect(item.crop).toEqual({ x: 0, y: 0, width: 0.5, height: 1 })
    expect(item.focus).toBeNull()
    const v = new URL(item.transforms[0].webp).searchParams.get('v')
    expect(v).toBeTruthy()
    expect(item.srcset.webp).toContain(`v=${v}`)
    const fresh = await variant(`w=64&v=${v}`)
    expect(fresh.cache).toContain('immutable')
    expect(fresh.red).toBeGreaterThan(0.98)

    await patch({ crop: { x: 0.5, y: 0, width: 0.5, height: 1 } })
    const pub2 = await t.request('GET', `/v1/cdn/${space}/galleries/halves`)
    const v2 = new URL(pub2.body.data.items[0].transforms[0].webp).searchParams.get('v')
    expect(v2).not.toBe(v)
    const stale = await variant(`w=64&v=${v}`)
    expect(stale.cache).toBe('public, max-age=3600')
    expect(stale.blue).toBeGreaterThan(0.98)
    await patch({ crop: null })
    const none = await t.request('GET', `/v1/cdn/${space}/galleries/halves`)
    expect(none.body.data.items[0].transforms[0].webp).not.toContain('v=')
  })
})

describe('refusals', () => {
  test('values outside 0..1, a crop outside the image or without area, and a focus on a non-image are 422 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ focus: { x: 1.5, y: 0.5 } }, 'focus'],
      [{ focus: { x: -0.1, y: 0.5 } }, 'focus'],
      [{ focus: { x: 0.5 } }, 'focus'],
      [{ focus: 'middle' }, 'focus'],
      [{ crop: { x: 0, y: 0, width: 2, height: 1 } }, 'crop'],
      [{ crop: { x: 0.6, y: 0, width: 0.5, height: 1 } }, 'crop/width'],
      [{ crop: { x: 0, y: 0.9, width: 0.5, height: 0.2 } }, 'crop/height'],
      [{ crop: { x: 0, y: 0, width: 0, height: 1 } }, 'crop/width'],
    ]
    for (const [body, field] of cases) {
      const r = await patch(body)
      expect({ body, status: r.status, error: r.body.error }).toEqual({ body, status: 422, error: 'validation_failed' })
      const keys = Object.keys(r.body.errors ?? {})
      expect({ body, named: keys.some((k) => k === field || k.startsWith(`${field}.`) || k.startsWith(`${field}/`)) }).toEqual({ body, named: true })
    }
    // Nothing of those was stored.
    const a = (await t.request('GET', `/v1/spaces/${space}/assets/${uuid}`, { token })).body.data
    expect(a).toMatchObject({ focus: null, crop: null })

    const fd = new FormData()
    fd.append('file', new Blob(['%PDF-1.7\nhello'], { type: 'application/pdf' }), 'a.pdf')
    const pdf = (await t.request('POST', `/v1/spaces/${space}/assets`, { token, raw: fd })).body.data
    const r = await patch({ focus: { x: 0.5, y: 0.5 } }, pdf.uuid)
    expect(r.status).toBe(422)
    expect(Object.keys(r.body.errors)).toEqual(['focus'])
  })
})
