import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { assets } from '../src/modules/assets/tables'
import { ConfigError, loadConfig } from '../src/config'
import { assetsModule } from '../src/modules/assets'
import { stores, storeNewAsset, sweepObjects } from '../src/modules/assets/store'
import { type TestApp, testApp } from './helpers/app'
import { pngOf, photo } from './helpers/images'
import { type S3Sink, startS3 } from './helpers/s3'

// One contract, two stores: everything below runs against the Postgres store (the default) and against the S3 store
// on a real S3-compatible server (s3rver, in this process on 127.0.0.1). Both database drivers: TEST_DATABASE_URL.

setDefaultTimeout(300_000)
const MiB = 1024 * 1024
/** The large object. 100 MB: the upload cap, and what docs/performance.md measures. */
const LARGE = 100 * 1000 * 1000

let s3: S3Sink
beforeAll(async () => {
  s3 = await startS3()
})
afterAll(async () => {
  await s3?.close()
})

/** `size` pseudo-random bytes starting like a PDF (seeded: the same size gives the same bytes). */
function pdfOf(size: number): Uint8Array {
  const out = new Uint8Array(size)
  let x = 2463534242 ^ size
  for (let i = 0; i < size; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = x & 255
  }
  out.set(new TextEncoder().encode('%PDF-1.7\n').subarray(0, size))
  return out
}
const sha256 = (b: Uint8Array) => new Bun.CryptoHasher('sha256').update(b).digest('hex')

for (const kind of ['postgres', 's3'] as const) {
  describe(`asset store contract: ${kind}`, () => {
    let t: TestApp
    let space: string
    let spaceId: number
    let editor: string

    beforeAll(async () => {
      t = await testApp({}, kind === 's3' ? { ...s3.env, S3_PREFIX: `contract-${crypto.randomUUID().slice(0, 8)}/` } : {})
      const owner = await t.register()
      editor = owner.token
      space = (await t.createSpace(owner.token)).slug
      const [row] = await t.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [space])
      spaceId = row!.id
    })
    afterAll(async () => {
      await t?.close()
    })

    const prefix = () => stores(t.kernel).s3?.prefix ?? ''
    /** How many assets have bytes in this store: chunked assets, or objects under `assets/`. */
    async function storedCount(): Promise<number> {
      if (kind === 's3') return (await s3.keys(`${prefix()}assets/`)).length
      const [r] = await t.kernel.db.query<{ n: number }>('select count(distinct asset_id)::int as n from asset_chunks')
      return Number(r!.n)
    }
    async function hasBytes(uuid: string): Promise<boolean> {
      if (kind === 's3') return (await s3.keys(`${prefix()}assets/${uuid}`)).length > 0
      return (await t.kernel.db.query('select 1 from asset_chunks c join assets a on a.id = c.asset_id where a.uuid = $1', [uuid])).length > 0
    }

    /** An asset of any size (an empty or 1-byte file is no allowed upload type): through the store, as uploads go. */
    async function putRaw(bytes: Uint8Array): Promise<string> {
      const path = join(tmpdir(), `blob-${crypto.randomUUID()}`)
      await Bun.write(path, bytes)
      const uuid = crypto.randomUUID()
      try {
        await storeNewAsset(t.kernel, { uuid, path, size: bytes.length, type: 'application/pdf' }, async (tx, _emit, store) => {
          const now = new Date()
          const [row] = await tx
            .insert(assets)
            .values({ uuid, spaceId, filename: 'raw.pdf', contentType: 'application/pdf', size: bytes.length, sha256: sha256(bytes), alt: {}, store, createdAt: now, updatedAt: now })
            .returning()
          return row!
        })
      } finally {
        await unlink(path)
      }
      return uuid
    }

    async function upload(bytes: Uint8Array, name: string, type = 'application/pdf') {
      const fd = new FormData()
      fd.append('file', new Blob([bytes as BlobPart], { type }), name)
      return t.request('POST', `/v1/spaces/${space}/assets`, { token: editor, raw: fd })
    }

    async function cdn(uuid: string, headers: Record<string, string> = {}, suffix = '') {
      const res = await t.app.handle(new Request(`http://localhost/v1/cdn/${space}/assets/${uuid}${suffix}`, { headers: { 'X-Forwarded-For': '10.9.9.9', ...headers } }))
      return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) }
    }

    test('the row says where the bytes are', async () => {
      const uuid = await putRaw(pdfOf(10))
      const [row] = await t.kernel.db.db.select({ store: assets.store }).from(assets).where(eq(assets.uuid, uuid))
      expect(row!.store).toBe(kind)
      expect(await hasBytes(uuid)).toBe(true)
    })

    for (const size of [0, 1, 5 * MiB + 1]) {
      test(`${size} bytes come back identical, with ETag = SHA-256, 304 and range edges`, async () => {
        const bytes = pdfOf(size)
        const uuid = await putRaw(bytes)
        const whole = await cdn(uuid)
        expect(whole.status).toBe(200)
        expect(whole.headers.get('content-length')).toBe(String(size))
        expect(whole.headers.get('etag')).toBe(`"${sha256(bytes)}"`)
        expect(Buffer.compare(whole.bytes, bytes)).toBe(0)
        const cached = await cdn(uuid, { 'If-None-Match': `"${sha256(bytes)}"` })
        expect(cached.status).toBe(304)
        expect(cached.bytes.length).toBe(0)
        if (size === 0) {
          expect((await cdn(uuid, { Range: 'bytes=0-0' })).status).toBe(416)
          return
        }
        const edges: [string, number, number][] = [
          ['bytes=0-0', 0, 0],
          [`bytes=-1`, size - 1, size - 1],
          [`bytes=${size - 1}-`, size - 1, size - 1],
          [`bytes=0-${size + 100}`, 0, size - 1],
          [`bytes=-${size + 5}`, 0, size - 1],
        ]
        if (size > 5 * MiB) edges.push([`bytes=${MiB - 1}-${MiB}`, MiB - 1, MiB], [`bytes=${5 * MiB - 3}-${5 * MiB}`, 5 * MiB - 3, 5 * MiB], ['bytes=7-3145735', 7, 3145735])
        for (const [range, from, to] of edges) {
          const r = await cdn(uuid, { Range: range })
          expect(r.status).toBe(206)
          expect(r.headers.get('content-range')).toBe(`bytes ${from}-${to}/${size}`)
          expect(r.headers.get('content-length')).toBe(String(to - from + 1))
          expect([range, Buffer.compare(r.bytes, bytes.subarray(from, to + 1))]).toEqual([range, 0])
        }
        const past = await cdn(uuid, { Range: `bytes=${size}-` })
        expect(past.status).toBe(416)
        expect(past.headers.get('content-range')).toBe(`bytes */${size}`)
        // If-Range with another validator: the whole file.
        expect((await cdn(uuid, { Range: 'bytes=0-0', 'If-Range': '"other"' })).status).toBe(200)
      })
    }

    test(`a large object (${LARGE / 1e6} MB) uploads through the API and downloads byte-exact`, async () => {
      const bytes = pdfOf(LARGE)
      const up = await upload(bytes, 'large.pdf')
      expect(up.status).toBe(201)
      expect(up.body.data.sha256).toBe(sha256(bytes))
      const t0 = performance.now()
      const res = await t.app.handle(new Request(`http://localhost/v1/cdn/${space}/assets/${up.body.data.uuid}`, { headers: { 'X-Forwarded-For': '10.9.9.9' } }))
      const hasher = new Bun.CryptoHasher('sha256')
      let n = 0
      for await (const piece of res.body! as unknown as AsyncIterable<Uint8Array>) {
        hasher.update(piece)
        n += piece.length
      }
      const seconds = (performance.now() - t0) / 1000
      expect(n).toBe(LARGE)
      expect(hasher.digest('hex')).toBe(sha256(bytes))
      console.log(`[${kind}] ${LARGE / 1e6} MB download through app.handle: ${seconds.toFixed(2)} s (${(LARGE / 1e6 / seconds).toFixed(0)} MB/s)`)
      const tail = await cdn(up.body.data.uuid, { Range: `bytes=${LARGE - 10}-` })
      expect(Buffer.compare(tail.bytes, bytes.subarray(LARGE - 10))).toBe(0)
    })

    test('image variants are made from the stored original', async () => {
      const up = await upload(await pngOf(photo(96, 64)), 'p.png', 'image/png')
      expect(up.status).toBe(201)
      const v = await cdn(up.body.data.uuid, {}, '.webp?w=64')
      expect(v.status).toBe(200)
      expect(v.headers.get('content-type')).toBe('image/webp')
    })

    test('an upload whose transaction rolls back leaves no bytes in the store', async () => {
      const before = await storedCount()
      await t.kernel.db.query(
        `create function refuse_asset() returns trigger language plpgsql as $$ begin
           if new.filename = 'refused.pdf' then raise exception 'refused'; end if; return new; end $$`,
      )
      await t.kernel.db.query('create trigger refuse_asset after insert on assets for each row execute function refuse_asset()')
      try {
        const res = await upload(pdfOf(6 * MiB + 3), 'refused.pdf')
        expect(res.status).toBe(500)
      } finally {
        await t.kernel.db.query('drop trigger refuse_asset on assets')
        await t.kernel.db.query('drop function refuse_asset()')
      }
      expect(await t.kernel.db.query(`select id from assets where filename = 'refused.pdf'`)).toEqual([])
      expect(await storedCount()).toBe(before)
      const next = await upload(pdfOf(MiB), 'after.pdf')
      expect(next.status).toBe(201)
      expect(await storedCount()).toBe(before + 1)
    })

    test("a deleted asset's bytes are gone once the jobs have run", async () => {
      const up = await upload(pdfOf(2 * MiB + 1), 'doomed.pdf')
      const uuid = up.body.data.uuid
      expect(await hasBytes(uuid)).toBe(true)
      expect((await t.request('DELETE', `/v1/spaces/${space}/assets/${uuid}`, { token: editor })).status).toBe(204)
      expect((await cdn(uuid)).status).toBe(404)
      await t.kernel.jobs.runDueJobs()
      expect(await hasBytes(uuid)).toBe(false)
    })

    if (kind === 's3') {
      test('an image variant is transformed once for the fleet: kept in the bucket, fetched by another instance, deleted with its asset', async () => {
        const up = await upload(await pngOf(photo(120, 80, 7)), 'fleet.png', 'image/png')
        const uuid = up.body.data.uuid
        const first = await cdn(uuid, {}, '.jpg?w=64')
        expect(first.status).toBe(200)
        const variants = await s3.keys(`${prefix()}variants/${uuid}/`)
        expect(variants.length).toBe(1)
        expect(variants[0]).toMatch(new RegExp(`^${prefix()}variants/${uuid}/[0-9a-f]{16}-64x-inside-q80\\.jpg$`))
        const other = await t.instance()
        try {
          const images = other.state(assetsModule).images
          const before = images.transformsRun
          const res = await other.get(`/v1/cdn/${space}/assets/${uuid}.jpg?w=64`)
          expect(res.status).toBe(200)
          expect(images.transformsRun).toBe(before) // fetched from the bucket, not transformed again
          const again = await other.runtime.handle(new Request(`http://localhost/v1/cdn/${space}/assets/${uuid}.jpg?w=64`, { headers: { 'X-Forwarded-For': '10.9.9.8' } }))
          expect(Buffer.compare(new Uint8Array(await again.arrayBuffer()), first.bytes)).toBe(0)
        } finally {
          await other.close()
        }
        expect((await t.request('DELETE', `/v1/spaces/${space}/assets/${uuid}`, { token: editor })).status).toBe(204)
        await t.kernel.jobs.runDueJobs()
        expect(await s3.keys(`${prefix()}variants/${uuid}/`)).toEqual([])
        expect(await hasBytes(uuid)).toBe(false)
      })

      test('the sweeper deletes objects no row names once they are an hour old, and keeps every asset', async () => {
        const bucket = stores(t.kernel).s3!
        const orphan = crypto.randomUUID()
        await bucket.client.write(bucket.key(orphan), 'left by a process that died before its commit')
        const kept = (await upload(pdfOf(1000), 'kept.pdf')).body.data.uuid
        expect(await sweepObjects(t.kernel, bucket)).toBe(0) // too young: an upload may be in flight
        t.clock.advance(2 * 3600_000)
        expect(await sweepObjects(t.kernel, bucket)).toBe(1)
        expect(await hasBytes(orphan)).toBe(false)
        expect(await hasBytes(kept)).toBe(true)
        expect(Buffer.compare((await cdn(kept)).bytes, pdfOf(1000))).toBe(0)
      })
    }
  })
}

describe('S3 configuration', () => {
  const base = { S3_BUCKET: 'media', S3_ACCESS_KEY_ID: 'AKIDEXAMPLE', S3_SECRET_ACCESS_KEY: 'very-secret-value' }
  const refusal = (env: Record<string, string>) => {
    try {
      loadConfig(env)
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError)
      return (err as Error).message
    }
    return null
  }
  test('defaults to the Postgres store, with no bucket', () => {
    const c = loadConfig({})
    expect(c.assetStore).toBe('postgres')
    expect(c.s3).toBeNull()
    expect(c.assetDelivery).toBe('proxy')
  })
  test('is validated at start with messages that name the variables and never the keys', () => {
    expect(refusal({ ASSET_STORE: 's3' })).toContain('ASSET_STORE=s3 needs S3_BUCKET')
    expect(refusal({ ASSET_STORE: 'disk' })).toContain('ASSET_STORE must be one of postgres, s3')
    expect(refusal({ S3_BUCKET: 'media', S3_SECRET_ACCESS_KEY: 'very-secret-value' })).toBe('S3_BUCKET is set: S3_ACCESS_KEY_ID must be set too')
    expect(refusal({ ...base, S3_BUCKET: 'No_Such' })).toContain('S3_BUCKET must be a bucket name')
    expect(refusal({ ...base, S3_ENDPOINT: 'ftp://x' })).toContain('S3_ENDPOINT must be an http or https URL')
    expect(refusal({ ...base, S3_ENDPOINT: 'https://key:very-secret-value@s3.example.com' })).toBe(
      'S3_ENDPOINT must not carry credentials: set S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY',
    )
    expect(refusal({ ...base, S3_PREFIX: 'a/../b' })).toContain('S3_PREFIX must be a key prefix')
    expect(refusal({ ASSET_DELIVERY: 'redirect' })).toContain('ASSET_DELIVERY=redirect')
    for (const env of [{ ...base, S3_BUCKET: 'No_Such' }, { ...base, S3_PREFIX: '../' }, { ...base, S3_REGION: 'Bad Region' }]) {
      expect(refusal(env)).not.toContain('very-secret-value')
    }
  })
  test('a prefix is normalised to end in one slash', () => {
    expect(loadConfig({ ...base, S3_PREFIX: '/cms/prod' }).s3!.prefix).toBe('cms/prod/')
    expect(loadConfig({ ...base }).s3!.prefix).toBe('')
    expect(loadConfig({ ...base, ASSET_STORE: 's3' }).s3!.region).toBe('us-east-1')
  })
})

describe('ASSET_DELIVERY=redirect', () => {
  let t: TestApp
  let space: string
  let editor: string
  beforeAll(async () => {
    t = await testApp({}, { ...s3.env, ASSET_DELIVERY: 'redirect', S3_PREFIX: 'redirect/' })
    const owner = await t.register()
    editor = owner.token
    space = (await t.createSpace(owner.token)).slug
  })
  afterAll(async () => {
    await t?.close()
  })

  test('an original in S3 answers 302 to a short-lived presigned URL that serves the bytes and ranges; 304 stays a 304', async () => {
    const bytes = pdfOf(3 * MiB + 7)
    const fd = new FormData()
    fd.append('file', new Blob([bytes as BlobPart], { type: 'application/pdf' }), 'r.pdf')
    const up = await t.request('POST', `/v1/spaces/${space}/assets`, { token: editor, raw: fd })
    expect(up.status).toBe(201)
    const get = (headers: Record<string, string> = {}) =>
      t.app.handle(new Request(`http://localhost/v1/cdn/${space}/assets/${up.body.data.uuid}`, { headers: { 'X-Forwarded-For': '10.9.9.9', ...headers } }))
    const res = await get()
    expect(res.status).toBe(302)
    const location = res.headers.get('location')!
    expect(location.startsWith(`${s3.endpoint}/${s3.bucket}/redirect/assets/${up.body.data.uuid}?`)).toBe(true)
    expect(new URL(location).searchParams.get('X-Amz-Expires')).toBe('300')
    expect(res.headers.get('etag')).toBe(`"${sha256(bytes)}"`)
    expect(Number(/max-age=(\d+)/.exec(res.headers.get('cache-control')!)![1])).toBeLessThan(300)
    const object = await fetch(location)
    expect(object.status).toBe(200)
    expect(Buffer.compare(new Uint8Array(await object.arrayBuffer()), bytes)).toBe(0)
    const ranged = await fetch(location, { headers: { Range: 'bytes=1048570-1048580' } })
    expect(ranged.status).toBe(206)
    expect(Buffer.compare(new Uint8Array(await ranged.arrayBuffer()), bytes.subarray(1048570, 1048581))).toBe(0)
    expect((await get({ 'If-None-Match': `"${sha256(bytes)}"` })).status).toBe(304)
  })
})
