import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { unlink } from 'node:fs/promises'
import { assetChunks, assets } from '../src/modules/assets/tables'
import { decodePng, psnr } from '../src/modules/assets/pixels'
import { assetsModule } from '../src/modules/assets'
import { deliveryBody } from '../src/modules/webhooks/delivery'
import { createAvifCodec } from '../src/modules/assets/avif-codec'
import { transform } from '../src/modules/assets/transform'
import { type TestApp, testApp } from './helpers/app'
import { av1Parts, box, craftAvif, ispe } from './helpers/avif'
import { animatedGif, bombPng, jpegOf, photo, pngOf, webpOf, withExifOrientation } from './helpers/images'

setDefaultTimeout(60_000)

let t: TestApp
let space: string
let other: string
let admin: string
let editor: string
let viewer: string
let jpeg: Uint8Array
let png: Uint8Array

const member = (ownerTenant: number, role: 'viewer' | 'editor' | 'admin') => t.member(ownerTenant, space, role)

function form(file: Uint8Array | string, name: string, type: string, fields: Record<string, string> = {}) {
  const fd = new FormData()
  for (const [k, v] of Object.entries(fields)) fd.append(k, v)
  fd.append('file', new Blob([file as BlobPart], { type }), name)
  return fd
}

async function upload(file: Uint8Array | string, name = 'file.bin', type = 'application/octet-stream', fields: Record<string, string> = {}, opts: { token?: string; in?: string } = {}) {
  return t.request('POST', `/v1/spaces/${opts.in ?? space}/assets`, { token: opts.token ?? editor, raw: form(file, name, type, fields) })
}

/** A PDF of `size` bytes whose body is pseudo-random (seeded: the same size gives the same bytes). */
function pdfOf(size: number): Uint8Array {
  const out = new Uint8Array(size)
  let x = 2463534242 ^ size
  for (let i = 0; i < size; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = x & 255
  }
  out.set(new TextEncoder().encode('%PDF-1.7\n'))
  return out
}

async function cdn(path: string, headers: Record<string, string> = {}) {
  const res = await t.app.handle(new Request(`http://localhost/v1/cdn/${path}`, { headers: { 'X-Forwarded-For': '10.9.9.9', ...headers } }))
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) }
}

beforeAll(async () => {
  t = await testApp({ imageConcurrency: 2 })
  const owner = await t.register({ name: 'Ada Admin' })
  admin = owner.token
  space = (await t.createSpace(admin, { locales: ['en', 'de'] })).slug
  other = (await t.createSpace(admin)).slug
  editor = await member(owner.tenant.id, 'editor')
  viewer = await member(owner.tenant.id, 'viewer')
  jpeg = await jpegOf(photo(1200, 800))
  png = pngOf(photo(300, 200))
})

afterAll(() => t?.close())

describe('upload', () => {
  test('a JPEG is stored with its type, size, dimensions, hash and alt; the event carries the documented asset', async () => {
    const res = await upload(jpeg, 'beach.jpg', 'image/jpeg', { alt: JSON.stringify({ en: 'A beach' }), 'alt[de]': 'Ein Strand' })
    expect(res.status).toBe(201)
    const a = res.body.data
    expect(a).toMatchObject({ filename: 'beach.jpg', content_type: 'image/jpeg', size: jpeg.length, width: 1200, height: 800, alt: { en: 'A beach', de: 'Ein Strand' } })
    expect(a.sha256).toBe(new Bun.CryptoHasher('sha256').update(jpeg).digest('hex'))
    expect(a.url).toBe(`http://localhost/v1/cdn/${space}/assets/${a.uuid}`)
    const [ev] = await t.kernel.db.query<{ payload: any }>(`select payload from events where type = 'asset.uploaded' order by id desc limit 1`)
    expect(ev!.payload).toEqual({ asset: { uuid: a.uuid, filename: 'beach.jpg', content_type: 'image/jpeg', size: jpeg.length, alt: { en: 'A beach', de: 'Ein Strand' } } })
    // The webhook body of docs/webhooks.md.
    const body = JSON.parse(deliveryBody(t.kernel.events, 'asset.uploaded', new Date(0), space, ev!.payload))
    expect(body).toEqual({
      event: 'asset.uploaded',
      delivered_at: '1970-01-01T00:00:00.000Z',
      space: { slug: space },
      asset: { uuid: a.uuid, filename: 'beach.jpg', content_type: 'image/jpeg', size: jpeg.length, alt: { en: 'A beach', de: 'Ein Strand' } },
    })
  })

  test('the bytes are kept in 1 MiB rows and come back identical', async () => {
    const big = new Uint8Array(2.5 * 1024 * 1024)
    big.set(new TextEncoder().encode('%PDF-1.7\n'))
    for (let i = 10; i < big.length; i++) big[i] = (i * 31) & 255
    const res = await upload(big, 'doc.pdf', 'application/pdf')
    expect(res.status).toBe(201)
    expect(res.body.data.content_type).toBe('application/pdf')
    const [row] = await t.kernel.db.db.select({ id: assets.id }).from(assets).where(eq(assets.uuid, res.body.data.uuid))
    const chunks = await t.kernel.db.db.select({ idx: assetChunks.idx }).from(assetChunks).where(eq(assetChunks.assetId, row!.id))
    expect(chunks.length).toBe(3)
    const got = await cdn(`${space}/assets/${res.body.data.uuid}`)
    expect(got.status).toBe(200)
    expect(got.bytes.length).toBe(big.length)
    expect(Bun.hash(got.bytes)).toBe(Bun.hash(big))
  })

  test('a multi-chunk upload round-trips byte-exact: row sizes, the whole file, Range reads across every chunk boundary', async () => {
    const MiB = 1024 * 1024
    const big = pdfOf(3 * MiB + 12_345)
    const res = await upload(big, 'noisy.pdf', 'application/pdf')
    expect(res.status).toBe(201)
    expect(res.body.data.sha256).toBe(new Bun.CryptoHasher('sha256').update(big).digest('hex'))
    const [row] = await t.kernel.db.db.select({ id: assets.id }).from(assets).where(eq(assets.uuid, res.body.data.uuid))
    const sizes = await t.kernel.db.query<{ idx: number; n: number }>(
      'select idx, octet_length(data) as n from asset_chunks where asset_id = $1 order by idx',
      [row!.id],
    )
    expect(sizes.map((r) => [Number(r.idx), Number(r.n)])).toEqual([[0, MiB], [1, MiB], [2, MiB], [3, 12_345]])
    const whole = await cdn(`${space}/assets/${res.body.data.uuid}`)
    expect(whole.bytes.length).toBe(big.length)
    expect(Buffer.compare(whole.bytes, big)).toBe(0)
    for (const [from, to] of [[MiB - 7, MiB + 6], [2 * MiB - 1, 2 * MiB], [MiB - 3, 3 * MiB + 2], [big.length - 1, big.length - 1], [0, big.length - 1]] as const) {
      const r = await cdn(`${space}/assets/${res.body.data.uuid}`, { Range: `bytes=${from}-${to}` })
      expect(r.status).toBe(206)
      expect(r.headers.get('content-range')).toBe(`bytes ${from}-${to}/${big.length}`)
      expect(Buffer.compare(r.bytes, big.subarray(from, to + 1))).toBe(0)
    }
    // A size that is a whole number of rows has no empty last row.
    const even = await upload(pdfOf(2 * MiB), 'even.pdf', 'application/pdf')
    const [evenRow] = await t.kernel.db.db.select({ id: assets.id }).from(assets).where(eq(assets.uuid, even.body.data.uuid))
    const evenChunks = await t.kernel.db.db.select({ idx: assetChunks.idx }).from(assetChunks).where(eq(assetChunks.assetId, evenRow!.id))
    expect(evenChunks.length).toBe(2)
  })

  // The database refuses a chunk row (a real trigger): in the middle of the rows, or only once the last one is in
  // (an AFTER STATEMENT trigger: on Postgres the COPY fails at its very end, after every row was sent).
  for (const when of ['midway', 'at the end'] as const) {
    test(`an upload the database refuses ${when} leaves no asset and no chunk rows, and the next upload works`, async () => {
      const rowsBefore = await t.kernel.db.query<{ n: number }>('select count(*)::int as n from asset_chunks')
      await t.kernel.db.query(
        when === 'midway'
          ? `create function refuse_chunk() returns trigger language plpgsql as $$ begin
               if new.idx = 2 and exists (select 1 from assets where id = new.asset_id and filename = 'refused.pdf') then
                 raise exception 'refused chunk %', new.idx; end if; return new; end $$`
          : `create function refuse_chunk() returns trigger language plpgsql as $$ begin
               if exists (select 1 from assets where filename = 'refused.pdf') then raise exception 'refused'; end if;
               return null; end $$`,
      )
      await t.kernel.db.query(
        when === 'midway'
          ? 'create trigger refuse_chunk before insert on asset_chunks for each row execute function refuse_chunk()'
          : 'create trigger refuse_chunk after insert on asset_chunks for each statement execute function refuse_chunk()',
      )
      try {
        const res = await upload(pdfOf(4 * 1024 * 1024 + 5), 'refused.pdf', 'application/pdf')
        expect(res.status).toBe(500)
        expect(res.body.error).toBe('internal_error')
      } finally {
        await t.kernel.db.query('drop trigger refuse_chunk on asset_chunks')
        await t.kernel.db.query('drop function refuse_chunk()')
      }
      expect(await t.kernel.db.query(`select id from assets where filename = 'refused.pdf'`)).toEqual([])
      expect(await t.kernel.db.query<{ n: number }>('select count(*)::int as n from asset_chunks')).toEqual(rowsBefore)
      expect((await t.request('GET', `/v1/spaces/${space}/assets?q=refused`, { token: viewer })).body.meta.total).toBe(0)
      const next = await upload(pdfOf(3 * 1024 * 1024), 'after.pdf', 'application/pdf')
      expect(next.status).toBe(201)
      expect(Buffer.compare((await cdn(`${space}/assets/${next.body.data.uuid}`)).bytes, pdfOf(3 * 1024 * 1024))).toBe(0)
    })
  }

  test('the type comes from the bytes: a PNG named .jpg is a PNG', async () => {
    const res = await upload(png, 'photo.jpg', 'image/jpeg')
    expect(res.status).toBe(201)
    expect(res.body.data.content_type).toBe('image/png')
  })

  test('an HTML file named .png is 415', async () => {
    const res = await upload('<!doctype html><html><script>alert(1)</script></html>', 'evil.png', 'image/png')
    expect(res.status).toBe(415)
    expect(res.body.error).toBe('unsupported_media_type')
  })

  test('a PDF declared as image/jpeg is stored as a PDF', async () => {
    const res = await upload('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF', 'x.jpg', 'image/jpeg')
    expect(res.status).toBe(201)
    expect(res.body.data.content_type).toBe('application/pdf')
  })

  test('a recognised but not allowed type (ZIP) and plain text are 415', async () => {
    const zip = new Uint8Array([0x50, 0x4b, 0x03, 0x04, ...new Uint8Array(100)])
    expect((await upload(zip, 'a.zip')).status).toBe(415)
    expect((await upload('just text', 'a.txt', 'text/plain')).status).toBe(415)
  })

  test('SVG is accepted only when it parses as SVG', async () => {
    const svg = '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="red"/></svg>'
    const ok = await upload(svg, 'logo.svg', 'image/svg+xml')
    expect(ok.status).toBe(201)
    expect(ok.body.data).toMatchObject({ content_type: 'image/svg+xml', width: 40, height: 20 })
    expect((await upload('<svg xmlns="http://www.w3.org/2000/svg"><g></svg>', 'broken.svg', 'image/svg+xml')).status).toBe(415)
    expect((await upload('<html><svg></svg></html>', 'html.svg', 'image/svg+xml')).status).toBe(415)
    const bomb = '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>'
    expect((await upload(bomb, 'entities.svg', 'image/svg+xml')).status).toBe(415)
  })

  test('an image over 50 megapixels is 422 before any decoding', async () => {
    const res = await upload(bombPng(10_000, 6_000), 'bomb.png', 'image/png')
    expect(res.status).toBe(422)
    expect(res.body.error).toBe('image_too_large')
  })

  test('alt locales must be Space locales; editor+ only; multipart only', async () => {
    const bad = await upload(png, 'a.png', 'image/png', { 'alt[fr]': 'Bonjour' })
    expect(bad.status).toBe(422)
    expect(Object.keys(bad.body.errors)).toEqual(['alt.fr'])
    expect((await upload(png, 'a.png', 'image/png', {}, { token: viewer })).status).toBe(403)
    const json = await t.request('POST', `/v1/spaces/${space}/assets`, { token: editor, body: { file: 'x' } })
    expect(json.status).toBe(415)
    const noFile = new FormData()
    noFile.append('filename', 'x')
    expect((await t.request('POST', `/v1/spaces/${space}/assets`, { token: editor, raw: noFile })).status).toBe(422)
  })
})

describe('the 100 MB cap', () => {
  let small: TestApp
  beforeAll(async () => {
    small = await testApp({ assetMaxBytes: 256 * 1024 })
  })
  afterAll(() => small?.close())

  async function setup() {
    const u = await small.register()
    const s = await small.createSpace(u.token)
    return { token: u.token, slug: s.slug }
  }

  test('a Content-Length over the cap is 413 before the body is read', async () => {
    const { token, slug } = await setup()
    let pulled = 0
    const body = new ReadableStream({
      pull(c) {
        pulled++
        c.enqueue(new Uint8Array(1024))
      },
    })
    const res = await small.app.handle(
      new Request(`http://localhost/v1/spaces/${slug}/assets`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'multipart/form-data; boundary=x', 'Content-Length': String(1024 * 1024 * 1024) },
        body,
        duplex: 'half',
      } as RequestInit),
    )
    expect(res.status).toBe(413)
    expect(((await res.json()) as { error: string }).error).toBe('payload_too_large')
    expect(pulled).toBeLessThan(3)
  })

  test('a chunked body is cut at the cap with 413', async () => {
    const { token, slug } = await setup()
    const boundary = 'XyZ'
    const headPart = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
    let sent = 0
    let first = true
    const body = new ReadableStream({
      pull(c) {
        if (first) {
          first = false
          c.enqueue(headPart)
          return
        }
        sent += 64 * 1024
        if (sent > 10 * 1024 * 1024) return c.close() // never reached when the cut works
        c.enqueue(new Uint8Array(64 * 1024))
      },
    })
    const res = await small.app.handle(
      new Request(`http://localhost/v1/spaces/${slug}/assets`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
        body,
        duplex: 'half',
      } as RequestInit),
    )
    expect(res.status).toBe(413)
    expect(sent).toBeLessThan(1024 * 1024)
  })

  test('a file just under the cap is taken', async () => {
    const { token, slug } = await setup()
    const data = new Uint8Array(250 * 1024)
    data.set(new TextEncoder().encode('%PDF-1.5\n'))
    const res = await small.request('POST', `/v1/spaces/${slug}/assets`, { token, raw: form(data, 'ok.pdf', 'application/pdf') })
    expect(res.status).toBe(201)
  })
})

describe('list, show, update, delete', () => {
  let uuid: string
  beforeAll(async () => {
    uuid = (await upload(png, 'list-me.png', 'image/png', { 'alt[en]': 'Chart', 'alt[de]': 'Diagramm' })).body.data.uuid
  })

  test('list with paging, q and content_type', async () => {
    const all = await t.request('GET', `/v1/spaces/${space}/assets?per_page=2`, { token: viewer })
    expect(all.status).toBe(200)
    expect(all.body.data.length).toBe(2)
    expect(all.body.meta.total).toBeGreaterThan(2)
    const q = await t.request('GET', `/v1/spaces/${space}/assets?q=LIST-me`, { token: viewer })
    expect(q.body.data.map((a: any) => a.uuid)).toEqual([uuid])
    const images = await t.request('GET', `/v1/spaces/${space}/assets?content_type=image/*`, { token: viewer })
    expect(images.body.data.every((a: any) => a.content_type.startsWith('image/'))).toBe(true)
    const pdfs = await t.request('GET', `/v1/spaces/${space}/assets?content_type=application/pdf`, { token: viewer })
    expect(pdfs.body.data.every((a: any) => a.content_type === 'application/pdf')).toBe(true)
    expect((await t.request('GET', `/v1/spaces/${space}/assets?content_type=nonsense`, { token: viewer })).status).toBe(422)
  })

  test('PATCH merges alt per locale; null removes one; filename renames', async () => {
    const res = await t.request('PATCH', `/v1/spaces/${space}/assets/${uuid}`, { token: editor, body: { alt: { en: 'Bar chart', de: null }, filename: 'chart.png' } })
    expect(res.status).toBe(200)
    expect(res.body.data.alt).toEqual({ en: 'Bar chart' })
    expect(res.body.data.filename).toBe('chart.png')
    const again = await t.request('PATCH', `/v1/spaces/${space}/assets/${uuid}`, { token: editor, body: { alt: { de: 'Balken' } } })
    expect(again.body.data.alt).toEqual({ en: 'Bar chart', de: 'Balken' })
    const bad = await t.request('PATCH', `/v1/spaces/${space}/assets/${uuid}`, { token: editor, body: { alt: { xx: 'no' } } })
    expect(bad.status).toBe(422)
    expect((await t.request('PATCH', `/v1/spaces/${space}/assets/${uuid}`, { token: viewer, body: { filename: 'x' } })).status).toBe(403)
  })

  test("another Space's asset is 404 on every route, management and public", async () => {
    expect((await t.request('GET', `/v1/spaces/${other}/assets/${uuid}`, { token: admin })).status).toBe(404)
    expect((await t.request('PATCH', `/v1/spaces/${other}/assets/${uuid}`, { token: admin, body: { filename: 'x' } })).status).toBe(404)
    expect((await t.request('DELETE', `/v1/spaces/${other}/assets/${uuid}`, { token: admin })).status).toBe(404)
    expect((await cdn(`${other}/assets/${uuid}`)).status).toBe(404)
    expect((await cdn(`${other}/assets/${uuid}.webp?w=64`)).status).toBe(404)
    expect((await t.request('GET', `/v1/spaces/${space}/assets/${uuid}`, { token: viewer })).status).toBe(200)
  })

  test('another instance serves the same bytes and drops its cached variants when the asset is deleted there', async () => {
    const id = (await upload(png, 'shared.png', 'image/png')).body.data.uuid
    const b = await t.instance()
    try {
      const r = await b.get(`/v1/cdn/${space}/assets/${id}.webp?w=64`)
      expect(r.status).toBe(200)
      const bImages = b.state(assetsModule).images
      const cached = () => [...(bImages.cache as any).entries.keys()].filter((k: string) => k.startsWith(id))
      expect(cached().length).toBe(1)
      expect((await t.request('DELETE', `/v1/spaces/${space}/assets/${id}`, { token: editor })).status).toBe(204)
      for (let i = 0; i < 50 && cached().length; i++) await Bun.sleep(20)
      expect(cached().length).toBe(0)
    } finally {
      await b.close()
    }
  })

  test('DELETE removes the bytes and the cached variants', async () => {
    const del = (await upload(png, 'gone.png', 'image/png')).body.data.uuid
    expect((await cdn(`${space}/assets/${del}.webp?w=64`)).status).toBe(200)
    const images = t.state(assetsModule).images
    const cached = () => [...(images.cache as any).entries.keys()].filter((k: string) => k.startsWith(del))
    expect(cached().length).toBe(1)
    expect((await t.request('DELETE', `/v1/spaces/${space}/assets/${del}`, { token: editor })).status).toBe(204)
    expect(cached().length).toBe(0)
    expect((await cdn(`${space}/assets/${del}`)).status).toBe(404)
    expect((await cdn(`${space}/assets/${del}.webp?w=64`)).status).toBe(404)
    const rows = await t.kernel.db.query('select 1 from asset_chunks c join assets a on a.id = c.asset_id where a.uuid = $1', [del])
    expect(rows.length).toBe(0)
  })
})

describe('public delivery of the original', () => {
  let uuid: string
  let sha: string
  beforeAll(async () => {
    const res = await upload(jpeg, 'Strand über.jpg', 'image/jpeg')
    uuid = res.body.data.uuid
    sha = res.body.data.sha256
  })

  test('headers: type, ETag, immutable caching, disposition with the filename', async () => {
    const r = await cdn(`${space}/assets/${uuid}`)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('image/jpeg')
    expect(r.headers.get('etag')).toBe(`"${sha}"`)
    expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(r.headers.get('content-disposition')).toBe(`inline; filename="Strand _ber.jpg"; filename*=UTF-8''Strand%20%C3%BCber.jpg`)
    expect(r.bytes.length).toBe(jpeg.length)
  })

  test('originals carry Cross-Origin-Resource-Policy: cross-origin (an <img> on a COEP: require-corp page)', async () => {
    for (const headers of [{}, { Range: 'bytes=0-9' }, { 'If-None-Match': `"${sha}"` }] as Record<string, string>[]) {
      const r = await cdn(`${space}/assets/${uuid}`, headers)
      expect([200, 206, 304]).toContain(r.status)
      expect(r.headers.get('cross-origin-resource-policy')).toBe('cross-origin')
    }
  })

  test('If-None-Match → 304', async () => {
    const r = await cdn(`${space}/assets/${uuid}`, { 'If-None-Match': `"${sha}"` })
    expect(r.status).toBe(304)
    expect(r.bytes.length).toBe(0)
  })

  test('Range requests: a slice, a suffix, an open end, unsatisfiable', async () => {
    const a = await cdn(`${space}/assets/${uuid}`, { Range: 'bytes=10-19' })
    expect(a.status).toBe(206)
    expect(a.headers.get('content-range')).toBe(`bytes 10-19/${jpeg.length}`)
    expect([...a.bytes]).toEqual([...jpeg.subarray(10, 20)])
    const b = await cdn(`${space}/assets/${uuid}`, { Range: 'bytes=-5' })
    expect([...b.bytes]).toEqual([...jpeg.subarray(jpeg.length - 5)])
    const c = await cdn(`${space}/assets/${uuid}`, { Range: `bytes=${jpeg.length - 3}-` })
    expect(c.bytes.length).toBe(3)
    const d = await cdn(`${space}/assets/${uuid}`, { Range: `bytes=${jpeg.length}-` })
    expect(d.status).toBe(416)
    expect(d.headers.get('content-range')).toBe(`bytes */${jpeg.length}`)
  })

  test('a range across 1 MiB chunk rows', async () => {
    const big = new Uint8Array(3 * 1024 * 1024)
    big.set(new TextEncoder().encode('%PDF-1.7\n'))
    for (let i = 9; i < big.length; i++) big[i] = (i * 7) & 255
    const id = (await upload(big, 'big.pdf')).body.data.uuid
    const from = 1024 * 1024 - 5
    const r = await cdn(`${space}/assets/${id}`, { Range: `bytes=${from}-${from + 1024 * 1024 + 9}` })
    expect(r.status).toBe(206)
    expect(r.bytes.length).toBe(1024 * 1024 + 10)
    expect(Bun.hash(r.bytes)).toBe(Bun.hash(big.subarray(from, from + 1024 * 1024 + 10)))
  })

  test('SVG is served with the CSP and nosniff', async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle r="4"/></svg>'
    const id = (await upload(svg, 'c.svg', 'image/svg+xml')).body.data.uuid
    const r = await cdn(`${space}/assets/${id}`)
    expect(r.headers.get('content-type')).toBe('image/svg+xml')
    expect(r.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'")
    expect(r.headers.get('x-content-type-options')).toBe('nosniff')
    expect((await cdn(`${space}/assets/${id}.png?w=64`)).status).toBe(404) // not rasterised
  })

  test('unknown and malformed ids are 404', async () => {
    expect((await cdn(`${space}/assets/${crypto.randomUUID()}`)).status).toBe(404)
    expect((await cdn(`${space}/assets/not-a-uuid`)).status).toBe(404)
    expect((await cdn(`${space}/assets/${uuid}.gif`)).status).toBe(404)
  })
})

describe('image transforms', () => {
  let uuid: string
  beforeAll(async () => {
    uuid = (await upload(jpeg, 'photo.jpg', 'image/jpeg')).body.data.uuid
  })

  const fits = ['cover', 'contain', 'inside'] as const
  const formats = [
    ['webp', 'image/webp'],
    ['jpg', 'image/jpeg'],
    ['png', 'image/png'],
    ['avif', 'image/avif'],
  ] as const

  for (const [format, type] of formats) {
    for (const fit of fits) {
      test(`${format} × ${fit}`, async () => {
        const r = await cdn(`${space}/assets/${uuid}.${format}?w=256&h=256&fit=${fit}`)
        expect(r.status).toBe(200)
        expect(r.headers.get('content-type')).toBe(type)
        expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
        const { fileTypeFromBuffer } = await import('file-type')
        expect((await fileTypeFromBuffer(r.bytes))?.mime).toBe(type)
        if (format !== 'avif') {
          const m = await new Bun.Image(r.bytes).metadata()
          expect([m.width, m.height]).toEqual(fit === 'inside' ? [256, 171] : [256, 256])
        }
      })
    }
  }

  test('ETag and 304 on a variant', async () => {
    const a = await cdn(`${space}/assets/${uuid}.webp?w=128`)
    const etag = a.headers.get('etag')!
    expect(etag).toBeTruthy()
    expect((await cdn(`${space}/assets/${uuid}.webp?w=128`, { 'If-None-Match': etag })).status).toBe(304)
  })

  test('variants carry Cross-Origin-Resource-Policy: cross-origin, 304s too', async () => {
    const a = await cdn(`${space}/assets/${uuid}.webp?w=128`)
    expect(a.status).toBe(200)
    expect(a.headers.get('cross-origin-resource-policy')).toBe('cross-origin')
    const b = await cdn(`${space}/assets/${uuid}.webp?w=128`, { 'If-None-Match': a.headers.get('etag')! })
    expect(b.status).toBe(304)
    expect(b.headers.get('cross-origin-resource-policy')).toBe('cross-origin')
  })

  test('never enlarged: a width above the original gives the original size', async () => {
    const r = await cdn(`${space}/assets/${uuid}.png?w=1920`)
    const m = await new Bun.Image(r.bytes).metadata()
    expect([m.width, m.height]).toEqual([1200, 800])
  })

  test('sizes outside IMAGE_WIDTHS need a valid signature', async () => {
    const bad = await cdn(`${space}/assets/${uuid}.webp?w=300`)
    expect(bad.status).toBe(422)
    const signed = await t.request('POST', `/v1/spaces/${space}/assets/${uuid}/signed-url`, { token: viewer, body: { format: 'webp', w: 300, fit: 'cover', h: 100 } })
    expect(signed.status).toBe(200)
    const url = new URL(signed.body.data.url)
    const ok = await cdn(`${url.pathname.slice('/v1/cdn/'.length)}${url.search}`)
    expect(ok.status).toBe(200)
    const m = await new Bun.Image(ok.bytes).metadata()
    expect([m.width, m.height]).toEqual([300, 100])
    // Tampering with any parameter breaks the signature.
    const tampered = `${url.pathname.slice('/v1/cdn/'.length)}${url.search.replace('w=300', 'w=301')}`
    expect((await cdn(tampered)).status).toBe(422)
    expect((await cdn(`${space}/assets/${uuid}.webp?w=300&s=${'0'.repeat(32)}`)).status).toBe(422)
  })

  test('bad query values are 422; a non-image asset is 404', async () => {
    expect((await cdn(`${space}/assets/${uuid}.webp?w=0`)).status).toBe(422)
    expect((await cdn(`${space}/assets/${uuid}.webp?fit=fill`)).status).toBe(422)
    expect((await cdn(`${space}/assets/${uuid}.webp?q=101`)).status).toBe(422)
    const pdf = (await upload('%PDF-1.4\n%%EOF', 'a.pdf')).body.data.uuid
    expect((await cdn(`${space}/assets/${pdf}.webp?w=64`)).status).toBe(404)
  })

  test('resize quality: PSNR ≥ 40 dB against an area-average reference', async () => {
    // 1920×1281 → 640×427: an exact 3:1 box average of the decoded source is the reference.
    const src = photo(1920, 1281, 7)
    const srcJpeg = await jpegOf(src, 95)
    const id = (await upload(srcJpeg, 'q.jpg', 'image/jpeg')).body.data.uuid
    const r = await cdn(`${space}/assets/${id}.png?w=640`)
    const out = decodePng(r.bytes)
    expect([out.width, out.height]).toEqual([640, 427])
    const decoded = decodePng(await new Bun.Image(srcJpeg).png({ compressionLevel: 0 }).bytes())
    const ref = new Uint8Array(640 * 427 * 4)
    for (let y = 0; y < 427; y++) {
      for (let x = 0; x < 640; x++) {
        for (let k = 0; k < 4; k++) {
          let sum = 0
          for (let dy = 0; dy < 3; dy++) for (let dx = 0; dx < 3; dx++) sum += decoded.data[((y * 3 + dy) * 1920 + x * 3 + dx) * 4 + k]!
          ref[(y * 640 + x) * 4 + k] = Math.round(sum / 9)
        }
      }
    }
    const score = psnr(out, { data: ref, width: 640, height: 427 })
    expect(score).toBeGreaterThanOrEqual(40)
  })

  test('EXIF orientation is applied and the metadata is stripped', async () => {
    const tagged = withExifOrientation(await jpegOf(photo(64, 32)), 6)
    const id = (await upload(tagged, 'rotated.jpg', 'image/jpeg')).body.data.uuid
    const r = await cdn(`${space}/assets/${id}.jpg?w=64`)
    const m = await new Bun.Image(r.bytes).metadata()
    expect([m.width, m.height]).toEqual([32, 64])
    expect(Buffer.from(r.bytes).includes(Buffer.from('Exif'))).toBe(false)
  })

  test('an animated GIF gives its first frame', async () => {
    const id = (await upload(animatedGif(), 'anim.gif', 'image/gif')).body.data.uuid
    const r = await cdn(`${space}/assets/${id}.png`)
    expect(r.status).toBe(200)
    const px = decodePng(r.bytes)
    expect([px.data[0], px.data[1], px.data[2]]).toEqual([255, 255, 255])
  })

  test('WebP and AVIF sources transform too', async () => {
    const w = (await upload(await webpOf(photo(200, 100)), 'a.webp')).body.data
    expect(w.content_type).toBe('image/webp')
    expect((await cdn(`${space}/assets/${w.uuid}.jpg?w=64`)).status).toBe(200)
    const avifBytes = (await cdn(`${space}/assets/${w.uuid}.avif?w=128`)).bytes
    const a = (await upload(avifBytes, 'a.avif')).body.data
    expect(a).toMatchObject({ content_type: 'image/avif', width: 128, height: 64 })
    const back = await cdn(`${space}/assets/${a.uuid}.png?w=64`)
    expect(back.status).toBe(200)
    expect((await new Bun.Image(back.bytes).metadata()).width).toBe(64)
  })

  test('a cached file removed from disk behind the index is transformed again', async () => {
    const images = t.state(assetsModule).images
    const url = `${space}/assets/${uuid}.jpg?w=96`
    expect((await cdn(url)).status).toBe(200)
    const name = [...(images.cache as any).entries.keys()].find((k: string) => k.startsWith(uuid) && k.includes('-96x') && k.endsWith('.jpg'))!
    await unlink(images.cache.path(name))
    const before = images.transformsRun
    const again = await cdn(url)
    expect(again.status).toBe(200)
    expect(images.transformsRun).toBe(before + 1)
  })

  test('single-flight: 100 concurrent requests for one new variant run one transform', async () => {
    const images = t.state(assetsModule).images
    const before = images.transformsRun
    const all = await Promise.all(Array.from({ length: 100 }, () => cdn(`${space}/assets/${uuid}.webp?w=640&h=640&fit=cover&q=70`)))
    expect(all.every((r) => r.status === 200)).toBe(true)
    expect(images.transformsRun - before).toBe(1)
    expect(new Set(all.map((r) => Bun.hash(r.bytes))).size).toBe(1)
  })
})

describe('transform Workers', () => {
  test('run at IMAGE_NICE (10) on their own threads; the main thread that answers reads stays at 0', async () => {
    if (process.platform !== 'linux') return
    const { readdirSync, readFileSync } = await import('node:fs')
    const niceOf = (tid: string) => Number(readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16])
    const tids = readdirSync(`/proc/${process.pid}/task`)
    expect(niceOf(String(process.pid))).toBe(0)
    // Transforms ran above, so the pool's Workers exist and have applied their first message.
    expect(tids.some((tid) => niceOf(tid) === 10)).toBe(true)
  })
})

describe('the variant cache', () => {
  let small: TestApp
  beforeAll(async () => {
    small = await testApp({ imageCacheBytes: 4608, imageConcurrency: 1 })
  })
  afterAll(() => small?.close())

  test('evicts the least recently used variants to stay under IMAGE_CACHE_MB', async () => {
    const u = await small.register()
    const s = await small.createSpace(u.token)
    const res = await small.request('POST', `/v1/spaces/${s.slug}/assets`, { token: u.token, raw: form(jpeg, 'p.jpg', 'image/jpeg') })
    const id = res.body.data.uuid
    const get = (w: number) => small.app.handle(new Request(`http://localhost/v1/cdn/${s.slug}/assets/${id}.webp?w=${w}`, { headers: { 'X-Forwarded-For': '10.1.1.1' } }))
    const images = small.state(assetsModule).images
    for (const w of [96, 128, 256]) expect((await get(w)).status).toBe(200)
    expect(images.cache.usedBytes).toBeLessThanOrEqual(4608)
    const names = [...(images.cache as any).entries.keys()] as string[]
    expect(names.some((n) => n.includes('-96x'))).toBe(false) // the oldest went first
    expect(names.some((n) => n.includes('-256x'))).toBe(true)
    // An evicted variant is transformed again on demand.
    const before = images.transformsRun
    expect((await get(96)).status).toBe(200)
    expect(images.transformsRun).toBe(before + 1)
  })
})

describe('AVIF sizes and the decoder', () => {
  test("the primary item's size counts, not the first ispe of the file: a decoy small ispe before a large primary is refused", async () => {
    const parts = await av1Parts(64, 64)
    // The primary item (64×64, its real size) comes after a 32×32 thumbnail's ispe: it is 64×64.
    const honest = await upload(craftAvif(parts, { w: 64, h: 64 }, { w: 32, h: 32 }), 'thumb-first.avif')
    expect(honest.status).toBe(201)
    expect(honest.body.data).toMatchObject({ content_type: 'image/avif', width: 64, height: 64 })
    const variant = await cdn(`${space}/assets/${honest.body.data.uuid}.png?w=32`)
    expect(variant.status).toBe(200)
    // A 9000×9000 primary (81 megapixels) behind a 64×64 decoy: over the cap.
    const crafted = await upload(craftAvif(parts, { w: 9000, h: 9000 }, { w: 64, h: 64 }), 'decoy.avif')
    expect(crafted.status).toBe(422)
    expect(crafted.body.error).toBe('image_too_large')
    // Any item over the cap (a decoy tile or thumbnail larger than the primary) counts too.
    const hugeThumb = await upload(craftAvif(parts, { w: 64, h: 64 }, { w: 10_000, h: 10_000 }), 'huge-thumb.avif')
    expect(hugeThumb.body.error).toBe('image_too_large')
    // A container that names no primary size, or breaks its boxes, is not an image.
    const ftyp = box('ftyp', new TextEncoder().encode('avif'), new Uint8Array(4), new TextEncoder().encode('avifmif1miaf'))
    for (const bad of [
      new Uint8Array([...ftyp, ...box('meta', new Uint8Array(4), box('iprp', box('ipco', ispe(64, 64))))]),
      new Uint8Array([...ftyp, 0, 0, 0, 9, 0x6d, 0x65, 0x74, 0x61]),
      new Uint8Array([...ftyp, 0xff, 0xff, 0xff, 0xf0, 0x6d, 0x65, 0x74, 0x61]),
    ]) {
      const r = await upload(bad, 'bad.avif')
      expect([r.status, r.body.error]).toEqual([422, 'invalid_image'])
    }
  })

  test('the transform checks the container again before decoding: a large primary is refused without a decode', async () => {
    const parts = await av1Parts(64, 64)
    const crafted = craftAvif(parts, { w: 9000, h: 9000 }, { w: 64, h: 64 })
    const codec = createAvifCodec()
    let decodes = 0
    const counting = { encode: codec.encode, decode: (b: Uint8Array, max: number) => (decodes++, codec.decode(b, max)) }
    const err = await transform(
      { source: crafted, sourceType: 'image/avif', format: 'png', w: 32, h: null, fit: 'inside', q: 80, maxPixels: 50_000_000 },
      async () => counting,
    ).then(
      () => null,
      (e) => e,
    )
    expect(err?.code).toBe('image_too_large')
    expect(decodes).toBe(0)
  })

  test("the decoder has a pixel limit and a memory cap of its own, and recovers after refusing", async () => {
    const parts = await av1Parts(512, 512)
    const file = craftAvif(parts, { w: 512, h: 512 })
    // 512×512 decodes in 24 MiB; under a 100,000-pixel limit it is refused.
    const codec = createAvifCodec(24 * 1024 * 1024)
    expect((await codec.decode(file, 1_000_000)).width).toBe(512)
    const limited = await codec.decode(file, 100_000).then(
      () => null,
      (e) => e,
    )
    expect(limited?.code).toBe('image_too_large')
    // A memory cap smaller than the image needs: an error, not the process's memory; the next image decodes.
    const tiny = createAvifCodec(17 * 1024 * 1024)
    const big = await av1Parts(1024, 1024)
    const capped = await tiny.decode(craftAvif(big, { w: 1024, h: 1024 }), 50_000_000).then(
      () => null,
      (e) => e,
    )
    expect(String(capped)).toContain('AVIF decoding failed')
    expect((await tiny.decode(craftAvif(await av1Parts(64, 64), { w: 64, h: 64 }), 50_000_000)).width).toBe(64)
  })
})
