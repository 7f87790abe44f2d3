import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { join } from 'node:path'
import { assets } from '../src/modules/assets/tables'
import { migrateAssets, MigrateError } from '../src/modules/assets/migrate'
import { stores } from '../src/modules/assets/store'
import { type TestApp, testApp } from './helpers/app'
import { type S3Sink, startS3 } from './helpers/s3'
import { SERVICE_COMMAND } from './helpers/command'

// `content-service assets migrate --to s3|postgres` against a real S3-compatible server (s3rver on 127.0.0.1), both
// ways, each stopped in the middle of an asset and run again. Both database drivers: TEST_DATABASE_URL.

setDefaultTimeout(300_000)
const MiB = 1024 * 1024

function pdfOf(size: number, seed = 1): Uint8Array {
  const out = new Uint8Array(size)
  let x = (2463534242 ^ size ^ (seed * 7919)) >>> 0 || 1
  for (let i = 0; i < size; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = x & 255
  }
  out.set(new TextEncoder().encode('%PDF-1.7\n'))
  return out
}

let s3: S3Sink
let t: TestApp
let space: string
let editor: string
const files = [pdfOf(1000, 1), pdfOf(3 * MiB + 5, 2), pdfOf(9 * MiB + 1, 3), pdfOf(2 * MiB, 4)]
const uuids: string[] = []

beforeAll(async () => {
  s3 = await startS3()
  // The bucket is configured, new uploads still go to Postgres: the state before `migrate --to s3`.
  t = await testApp({}, { ...s3.env, ASSET_STORE: 'postgres', S3_PREFIX: 'm/' })
  const owner = await t.register()
  editor = owner.token
  space = (await t.createSpace(owner.token)).slug
  for (const [i, bytes] of files.entries()) {
    const fd = new FormData()
    fd.append('file', new Blob([bytes as BlobPart], { type: 'application/pdf' }), `f${i}.pdf`)
    const res = await t.request('POST', `/v1/spaces/${space}/assets`, { token: editor, raw: fd })
    expect(res.status).toBe(201)
    uuids.push(res.body.data.uuid)
  }
})
afterAll(async () => {
  await t?.close()
  await s3?.close()
})

async function cdn(uuid: string, range?: string) {
  const res = await t.app.handle(
    new Request(`http://localhost/v1/cdn/${space}/assets/${uuid}`, { headers: { 'X-Forwarded-For': '10.9.9.9', ...(range ? { Range: range } : {}) } }),
  )
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) }
}
async function everyAssetReads() {
  for (const [i, uuid] of uuids.entries()) {
    const whole = await cdn(uuid)
    expect(whole.status).toBe(200)
    expect(Buffer.compare(whole.bytes, files[i]!)).toBe(0)
    const r = await cdn(uuid, 'bytes=999-1000')
    expect(Buffer.compare(r.bytes, files[i]!.subarray(999, 1001))).toBe(0)
  }
}
const storesOf = async () =>
  (await t.kernel.db.db.select({ uuid: assets.uuid, store: assets.store }).from(assets).orderBy(assets.id)).map((r) => r.store)
const chunkAssets = async () => Number((await t.kernel.db.query<{ n: number }>('select count(distinct asset_id)::int as n from asset_chunks'))[0]!.n)
const objects = () => s3.keys('m/assets/')

for (const to of ['s3', 'postgres'] as const) {
  describe(`assets migrate --to ${to}`, () => {
    test('stopped in the middle of an asset, every asset still reads from where its row says', async () => {
      const stop = new AbortController()
      const lines: string[] = []
      // Stop inside the third asset (9 MiB + 1: several pieces, a multipart upload to S3), after its first 2 MiB.
      const third = files[0]!.length + files[1]!.length
      const run = migrateAssets(t.kernel, {
        to,
        print: (l) => lines.push(l),
        signal: stop.signal,
        onPiece: (p) => {
          if (p.done === 2 && p.bytes >= third + 2 * MiB) stop.abort()
        },
      })
      expect(run).rejects.toBeInstanceOf(MigrateError)
      await run.catch(() => {})
      const from = to === 's3' ? 'postgres' : 's3'
      expect(await storesOf()).toEqual([to, to, from, from])
      expect(lines[0]).toContain(`4 asset(s)`)
      await everyAssetReads()
      if (to === 's3') {
        // The two moved assets are objects and no longer chunk rows; the stopped one is not an object.
        expect(await chunkAssets()).toBe(2)
        expect(await objects()).toEqual(uuids.slice(0, 2).map((u) => `m/assets/${u}`).sort())
      } else {
        expect(await chunkAssets()).toBe(2)
      }
    })

    test('run again, it moves what is left, and the old copies go', async () => {
      const lines: string[] = []
      const p = await migrateAssets(t.kernel, { to, print: (l) => lines.push(l) })
      expect(p.done).toBe(2)
      expect(p.total).toBe(2)
      expect(lines.at(-1)).toBe(`assets migrate --to ${to}: done, 2 asset(s) moved`)
      expect(lines.some((l) => /^ {2}2\/2 assets, .*\(100%\)$/.test(l))).toBe(true)
      expect(await storesOf()).toEqual([to, to, to, to])
      await t.kernel.jobs.runDueJobs() // the objects' deletions (--to postgres)
      if (to === 's3') {
        expect(await chunkAssets()).toBe(0)
        expect(await objects()).toEqual(uuids.map((u) => `m/assets/${u}`).sort())
      } else {
        expect(await chunkAssets()).toBe(4)
        expect(await objects()).toEqual([])
      }
      await everyAssetReads()
      // Nothing left: a third run moves nothing.
      expect((await migrateAssets(t.kernel, { to })).done).toBe(0)
    })
  })
}

test('an asset deleted while it is being moved leaves no object behind', async () => {
  const extra = pdfOf(6 * MiB, 9)
  const fd = new FormData()
  fd.append('file', new Blob([extra as BlobPart], { type: 'application/pdf' }), 'late.pdf')
  const uuid = (await t.request('POST', `/v1/spaces/${space}/assets`, { token: editor, raw: fd })).body.data.uuid
  let deleted = false
  await migrateAssets(t.kernel, {
    to: 's3',
    onPiece: () => {
      if (deleted) return
      deleted = true
      // The row goes while its bytes are on the way (another connection on Postgres; queued behind on PGlite).
      void t.kernel.db.db.delete(assets).where(eq(assets.uuid, uuid)).then(() => {})
    },
  })
  await t.kernel.jobs.runDueJobs()
  expect(await objects()).not.toContain(`m/assets/${uuid}`)
  expect(stores(t.kernel).s3!.prefix).toBe('m/')
})

describe('the command line', () => {
  const cli = (args: string[], env: Record<string, string> = {}) => {
    const p = Bun.spawnSync([...SERVICE_COMMAND, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_FORMAT: 'pretty', DATA_DIR: '/nonexistent/cs-data', ...env },
    })
    return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() }
  }
  test('assets migrate needs --to and a bucket, and says so', () => {
    const noTo = cli(['assets', 'migrate'])
    expect(noTo.code).toBe(2)
    expect(noTo.err).toContain('assets migrate needs --to s3 or --to postgres')
    const wrong = cli(['assets', 'copy'])
    expect(wrong.code).toBe(2)
    expect(wrong.err).toContain('unknown or missing action "assets copy"')
    const noBucket = cli(['assets', 'migrate', '--to', 's3'])
    expect(noBucket.code).toBe(1)
    expect(noBucket.err).toContain('set S3_BUCKET')
    const secret = cli(['assets', 'migrate', '--to', 's3'], { S3_BUCKET: 'Bad_Bucket', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 'super-secret-123' })
    expect(secret.code).toBe(2)
    expect(secret.err).toContain('S3_BUCKET must be a bucket name')
    expect(secret.err + secret.out).not.toContain('super-secret-123')
    expect(cli(['assets', '--help']).out).toContain('content-service assets migrate --to s3|postgres')
  })
})
