/**
 * `stories | assets | datasources pull | push` as a user runs them (the built command under node, a subprocess)
 * between two real servers, each with its own database: a Space's content is pulled into a folder of JSON files and
 * pushed into a Space on the other server, every uuid remapped (Stories, assets in fields, links, relations), assets
 * deduplicated by SHA-256. A dry run writes nothing; a push interrupted twice (a proxy in front of the target that,
 * after N writes, passes one more to the server and loses its answer, as a dropped connection would) finishes when run
 * again, with no Story written twice; a push of unchanged files writes nothing.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHash, createHmac } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestApp, testApp } from '../../../test/helpers/app'
import { photo, pngOf } from '../../../test/helpers/images'

setDefaultTimeout(180_000)

const PKG = join(import.meta.dir, '..')

interface Side {
  t: TestApp
  server: { port: number | undefined; stop(force?: boolean): unknown }
  base: string
  token: string
  space: string
}

async function side(): Promise<Side> {
  const t = await testApp()
  const server = t.app.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 22, idleTimeout: 60 })
  const owner = (await t.register()).token
  const space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })).slug
  return { t, server, base: `http://127.0.0.1:${server.port}`, token: owner, space }
}

const call = async (s: Side, method: string, path: string, body?: unknown, raw?: FormData) => {
  const r = await s.t.request(method, `/v1/spaces/${s.space}${path}`, { token: s.token, body, raw })
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`)
  return r.body?.data
}

let A: Side
let B: Side
let home: string
let proxy: { port: number | undefined; stop(force?: boolean): unknown }
/** Writes (non-GET) to Stories the proxy passed; past `failAfter` it passes one more and answers 502 instead. */
const gate = { writes: 0, failAfter: Number.POSITIVE_INFINITY }
const png = pngOf(photo(40, 30))

async function cli(args: string[], server: Side | string, token: string) {
  const base = typeof server === 'string' ? server : server.base
  const p = Bun.spawn(['node', join(PKG, 'dist', 'cli.js'), ...args, '--server', base, '--token', token], {
    cwd: home,
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
    env: { PATH: process.env.PATH!, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), CI: '1' },
  })
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { stdout, stderr, code, json: () => JSON.parse(stdout) }
}

/** The Stories of a Space by full path, per locale, uuids replaced by the full path / asset sha256; and version counts. */
async function snapshot(s: Side) {
  const list = (await s.t.request('GET', `/v1/spaces/${s.space}/stories?per_page=100`, { token: s.token })).body.data as any[]
  const assets = (await s.t.request('GET', `/v1/spaces/${s.space}/assets?per_page=100`, { token: s.token })).body.data as any[]
  const names = new Map<string, string>([...list.map((x) => [x.uuid, `story:${x.full_path}`] as [string, string]), ...assets.map((x) => [x.uuid, `asset:${x.sha256}`] as [string, string])])
  const swap = (v: unknown): unknown =>
    typeof v === 'string' ? (names.get(v) ?? v) : Array.isArray(v) ? v.map(swap) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, swap(x)])) : v
  const stories: Record<string, unknown> = {}
  const versions: Record<string, number> = {}
  for (const x of list) {
    const tr: Record<string, unknown> = {}
    for (const lang of x.translations) {
      const v = (await s.t.request('GET', `/v1/spaces/${s.space}/stories/${x.uuid}?lang=${lang}`, { token: s.token })).body.data
      tr[lang] = { name: v.name, content: swap(v.content) }
    }
    stories[x.full_path] = { folder: x.is_folder, status: x.status, parent: x.parent_uuid ? names.get(x.parent_uuid) : null, tr }
    if (!x.is_folder) versions[x.full_path] = (await s.t.request('GET', `/v1/spaces/${s.space}/stories/${x.uuid}/versions?per_page=100`, { token: s.token })).body.meta.total
  }
  return { stories, versions, assets: assets.map((x) => ({ sha256: x.sha256, filename: x.filename, alt: x.alt })), uuids: [...names.keys()] }
}

beforeAll(async () => {
  const build = Bun.spawnSync(['bun', join(PKG, 'scripts', 'build.ts')], { stdout: 'pipe', stderr: 'pipe' })
  if (build.exitCode !== 0) throw new Error(build.stderr.toString())
  A = await side()
  B = await side()
  home = mkdtempSync(join(tmpdir(), 'cli-content-'))
  await call(A, 'POST', '/components', {
    name: 'post',
    is_nestable: false,
    schema: { headline: { type: 'text', required: true }, image: { type: 'asset' }, link: { type: 'link' }, related: { type: 'tags' } },
  })
  const fd = new FormData()
  fd.append('alt', JSON.stringify({ en: 'A photo', de: 'Ein Foto' }))
  fd.append('file', new Blob([png as BlobPart], { type: 'image/png' }), 'photo.png')
  const asset = await call(A, 'POST', '/assets', undefined, fd)
  const blog = await call(A, 'POST', '/stories', { name: 'Blog', slug: 'blog', is_folder: true })
  const doc = (h: string, more: Record<string, unknown> = {}) => ({ type: 'doc', blocks: [{ component: 'post', _uid: 'p1', headline: h, ...more }] })
  const one = await call(A, 'POST', '/stories', { name: 'One', slug: 'one', parent_uuid: blog.uuid, content: doc('One') })
  const refs = { image: { uuid: asset.uuid }, link: { story_uuid: one.uuid }, related: [one.uuid] }
  const two = await call(A, 'POST', '/stories', { name: 'Two', slug: 'two', parent_uuid: blog.uuid, content: doc('Two', refs) })
  await call(A, 'PUT', `/stories/${two.uuid}`, { lang: 'de', name: 'Zwei', content: doc('Zwei', refs) })
  await call(A, 'POST', '/stories', { name: 'Draft', slug: 'draft', content: doc('Only a draft', { link: { story_uuid: two.uuid } }) })
  for (const s of [one, two]) await call(A, 'POST', `/stories/${s.uuid}/publish`)
  const ds = await call(A, 'POST', '/datasources', { key: 'facts', label: 'Facts', type: 'webhook_push', config: { secret_hash: 'auto', schema: { key: 'string', value: 'string' } } })
  const entries = JSON.stringify([{ key: 'tagline', value: 'Hello' }])
  const ts = String(Math.floor(A.t.clock.ms() / 1000))
  const pushed = await fetch(`${A.base}/v1/spaces/${A.space}/datasources/facts/webhook`, {
    method: 'POST',
    body: entries,
    headers: { 'Content-Type': 'application/json', 'X-Service-Timestamp': ts, 'X-Service-Signature': `sha256=${createHmac('sha256', ds.webhook_secret).update(`${ts}.${entries}`).digest('hex')}` },
  })
  if (!pushed.ok) throw new Error(`push: ${pushed.status}`)

  // The flaky way to B.
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url)
      const write = req.method !== 'GET' && url.pathname.includes('/stories')
      const headers = new Headers(req.headers)
      headers.delete('host')
      const res = await fetch(`${B.base}${url.pathname}${url.search}`, { method: req.method, headers, body: req.method === 'GET' ? undefined : await req.arrayBuffer() })
      if (write && ++gate.writes > gate.failAfter) {
        await res.arrayBuffer()
        return Response.json({ error: 'bad_gateway', message: 'the connection was lost' }, { status: 502 })
      }
      return new Response(await res.arrayBuffer(), { status: res.status, headers: { 'Content-Type': res.headers.get('content-type') ?? 'application/json' } })
    },
  })
  proxy = server
}, 240_000)

afterAll(async () => {
  proxy?.stop(true)
  for (const s of [A, B]) {
    s?.server.stop(true)
    await s?.t.close()
  }
  if (home) rmSync(home, { recursive: true, force: true })
})

describe('content folders: pull from one server, push into another', () => {
  test('pull writes a folder of JSON files and a manifest; assets once per hash', async () => {
    for (const kind of ['stories', 'assets', 'datasources']) {
      const r = await cli([kind, 'pull', '--space', A.space, '--dir', 'content', '--json'], A, A.token)
      expect([r.code, r.stderr]).toEqual([0, ''])
    }
    const dir = join(home, 'content')
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))
    expect(manifest).toMatchObject({ format: 'content-service-folder', source: { server: A.base, space: A.space }, pulled: { stories: { count: 4 }, assets: { count: 1 }, datasources: { count: 1 } } })
    expect(Object.values(manifest.stories).sort()).toEqual(['stories/blog.json', 'stories/blog/one.json', 'stories/blog/two.json', 'stories/draft.json'])
    const two = JSON.parse(readFileSync(join(dir, 'stories/blog/two.json'), 'utf8'))
    expect(two.translations.de.name).toBe('Zwei')
    const files = readdirSync(join(dir, 'assets'))
    const bytes = files.find((f) => f.endsWith('.png'))!
    expect(createHash('sha256').update(readFileSync(join(dir, 'assets', bytes))).digest('hex')).toBe(createHash('sha256').update(png).digest('hex'))
    expect(JSON.parse(readFileSync(join(dir, 'datasources/facts.json'), 'utf8')).entries).toEqual([{ key: 'tagline', value: 'Hello' }])
    // Pulling again downloads no bytes that are there already.
    expect((await cli(['assets', 'pull', '--space', A.space, '--dir', 'content', '--json'], A, A.token)).json()).toMatchObject({ count: 1, fetched: 0 })
    // Another Space's content into the same folder is refused.
    expect((await cli(['stories', 'pull', '--space', B.space, '--dir', 'content'], B, B.token)).code).toBe(2)
  })

  test('push: dry run writes nothing; assets deduplicated by SHA-256; an interrupted Story push finishes without duplicates', async () => {
    // Blueprints first, as a user would.
    expect((await cli(['components', 'pull', '--space', A.space, '--out', 'components.json'], A, A.token)).code).toBe(0)
    expect((await cli(['components', 'push', '--space', B.space, '--file', 'components.json'], B, B.token)).code).toBe(0)

    const dryAssets = await cli(['assets', 'push', '--space', B.space, '--dir', 'content', '--dry-run', '--json'], B, B.token)
    expect(dryAssets.json()).toMatchObject({ dry_run: true, uploaded: 1, reused: 0 })
    const dryStories = await cli(['stories', 'push', '--space', B.space, '--dir', 'content', '--dry-run'], B, B.token)
    expect(dryStories.code).toBe(0)
    expect(dryStories.stdout).toMatch(/would create \/?blog\/two and publish/)
    expect((await B.t.request('GET', `/v1/spaces/${B.space}/stories`, { token: B.token })).body.data).toEqual([])
    expect((await B.t.request('GET', `/v1/spaces/${B.space}/assets`, { token: B.token })).body.data).toEqual([])

    const assets = await cli(['assets', 'push', '--space', B.space, '--dir', 'content', '--json'], B, B.token)
    expect(assets.json()).toMatchObject({ uploaded: 1, reused: 0 })
    // The same bytes again (another folder, no manifest state): reused, not uploaded.
    rmSync(join(home, 'copy'), { recursive: true, force: true })
    expect((await cli(['assets', 'pull', '--space', A.space, '--dir', 'copy'], A, A.token)).code).toBe(0)
    expect((await cli(['assets', 'push', '--space', B.space, '--dir', 'copy', '--json'], B, B.token)).json()).toMatchObject({ uploaded: 0, reused: 1 })
    expect((await B.t.request('GET', `/v1/spaces/${B.space}/assets`, { token: B.token })).body.data).toHaveLength(1)

    // 1st run: the 3rd Story create reaches the server, its answer is lost (the CLI stops, exit 6).
    Object.assign(gate, { writes: 0, failAfter: 2 })
    const first = await cli(['stories', 'push', '--space', B.space, '--dir', 'content'], proxyUrl(), B.token)
    expect(first.code).toBe(6)
    const state = JSON.parse(readFileSync(join(home, 'content', 'manifest.json'), 'utf8')).pushes[`${proxyUrl()} ${B.space}`]
    expect(Object.keys(state.uuids).length).toBeGreaterThanOrEqual(2)
    // 2nd run: one more create, then content: the 4th write (a translation's save) reaches the server, its answer is lost.
    Object.assign(gate, { writes: 0, failAfter: 3 })
    expect((await cli(['stories', 'push', '--space', B.space, '--dir', 'content'], proxyUrl(), B.token)).code).toBe(6)
    // 3rd run: finishes.
    Object.assign(gate, { writes: 0, failAfter: Number.POSITIVE_INFINITY })
    const third = await cli(['stories', 'push', '--space', B.space, '--dir', 'content', '--json'], proxyUrl(), B.token)
    expect([third.code, third.stderr]).toEqual([0, ''])
    expect(third.json().changes.filter((c: any) => c.change === 'done').length).toBeGreaterThan(0)

    const [a, b] = [await snapshot(A), await snapshot(B)]
    expect(b.stories).toEqual(a.stories)
    expect(b.assets).toEqual(a.assets)
    expect(b.uuids.filter((u) => a.uuids.includes(u))).toEqual([])
    const two = b.stories[Object.keys(b.stories).find((p) => /two$/.test(p))!] as any
    expect(two.tr.de.content.blocks[0]).toMatchObject({ image: { uuid: `asset:${createHash('sha256').update(png).digest('hex')}` }, link: { story_uuid: expect.stringMatching(/^story:\/?blog\/one$/) } })
    // No Story written twice: one version for the create and one per translation.
    for (const [path, n] of Object.entries(b.versions)) expect([path, n]).toEqual([path, 1 + Object.keys((b.stories[path] as any).tr).length])
    expect((await fetch(`${B.base}/v1/cdn/${B.space}/stories/blog/two?lang=de`).then((r) => r.json())).data.content.blocks[0].headline).toBe('Zwei')

    // Unchanged files: nothing written (no new versions). An edited file: one translation saved, published again.
    const again = await cli(['stories', 'push', '--space', B.space, '--dir', 'content', '--json'], B, B.token)
    expect(again.json()).toMatchObject({ created: 0, updated: 0, unchanged: 4, published: 0 })
    expect((await snapshot(B)).versions).toEqual(b.versions)
    const file = join(home, 'content', 'stories/blog/one.json')
    const one = JSON.parse(readFileSync(file, 'utf8'))
    one.translations.en.content.blocks[0].headline = 'One, edited in the folder'
    writeFileSync(file, JSON.stringify(one))
    const edited = await cli(['stories', 'push', '--space', B.space, '--dir', 'content', '--json'], B, B.token)
    expect(edited.json()).toMatchObject({ created: 0, updated: 1, unchanged: 3, published: 1 })
    expect((await fetch(`${B.base}/v1/cdn/${B.space}/stories/blog/one`).then((r) => r.json())).data.content.blocks[0].headline).toBe('One, edited in the folder')
  })

  test('datasources push creates them with their entries (a new push secret, printed once); again: unchanged', async () => {
    B.t.clock.set(Date.now()) // entries are pushed signed, with a timestamp the server checks
    const r = await cli(['datasources', 'push', '--space', B.space, '--dir', 'content', '--json'], B, B.token)
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.json()).toMatchObject({ created: 1, secrets: { facts: expect.stringMatching(/.{32,}/) } })
    const entries = (await B.t.request('GET', `/v1/spaces/${B.space}/datasources/facts/entries`, { token: B.token })).body.data
    expect(entries).toEqual([{ key: 'tagline', value: 'Hello' }])
    expect((await cli(['datasources', 'push', '--space', B.space, '--dir', 'content', '--json'], B, B.token)).json()).toMatchObject({ created: 0, updated: 0, unchanged: 1 })
  })

  test('variants travel with their Story: matched to the target segment by key (uuids remapped); without it, reported and skipped', async () => {
    const storiesA = (await A.t.request('GET', `/v1/spaces/${A.space}/stories?per_page=100`, { token: A.token })).body.data as any[]
    const [two, one] = [/two$/, /one$/].map((re) => storiesA.find((x) => re.test(x.full_path)))
    const segment = await call(A, 'POST', '/audience-segments', { key: 'germans', label: 'German speakers', priority: 1, rules: [{ type: 'language', operator: 'eq', value: 'de' }] })
    const variantDoc = { type: 'doc', blocks: [{ component: 'post', _uid: 'p1', headline: 'Two for Germans', link: { story_uuid: one.uuid } }] }
    await call(A, 'POST', `/stories/${two.uuid}/variants`, { audience_segment_id: segment.id, lang: 'de', content: variantDoc })
    await call(A, 'POST', `/stories/${two.uuid}/publish`)
    const pulled = await cli(['stories', 'pull', '--space', A.space, '--dir', 'variants'], A, A.token)
    expect([pulled.code, pulled.stderr]).toEqual([0, ''])
    expect(JSON.parse(readFileSync(join(home, 'variants/stories/blog/two.json'), 'utf8')).variants).toEqual([{ segment_key: 'germans', lang: 'de', content: variantDoc }])

    const variantsOfTwo = async () => {
      const list = (await B.t.request('GET', `/v1/spaces/${B.space}/stories?per_page=100`, { token: B.token })).body.data as any[]
      const [twoB, oneB] = [/two$/, /one$/].map((re) => list.find((x) => re.test(x.full_path)))
      return { oneB, list: (await B.t.request('GET', `/v1/spaces/${B.space}/stories/${twoB.uuid}/variants`, { token: B.token })).body.data as any[] }
    }
    // B has no segment "germans": the dry run shows the variant skipped, the push reports it and writes nothing of it.
    const push = (...more: string[]) => cli(['stories', 'push', '--space', B.space, '--dir', 'variants', ...more], B, B.token)
    const dry = await push('--dry-run')
    expect(dry.code).toBe(0)
    expect(dry.stdout).toMatch(/would skip \/?blog\/two variant germans \[de\]/)
    expect(dry.stdout).toContain('has no audience segment "germans"')
    const skipped = await push('--json')
    expect([skipped.code, skipped.stderr]).toEqual([0, ''])
    expect(skipped.json()).toMatchObject({ variants: { created: 0, skipped: 1 }, warnings: [expect.stringMatching(/variant germans \[de\]: not pushed, .* has no audience segment "germans"/)] })
    expect((await variantsOfTwo()).list).toEqual([])

    // With the segment there (another id): the dry run shows the create; the push creates it, its link remapped, and
    // publishes the Story again; once more: unchanged, nothing written.
    const segB = await call(B, 'POST', '/audience-segments', { key: 'germans', label: 'Germans on B', priority: 1, rules: [{ type: 'language', operator: 'eq', value: 'de' }] })
    const dry2 = await push('--dry-run', '--json')
    expect(dry2.json()).toMatchObject({ dry_run: true, variants: { created: 1, skipped: 0 } })
    expect(dry2.json().changes).toContainEqual({ kind: 'stories', item: expect.stringMatching(/blog\/two variant germans \[de\]$/), change: 'create', variant: true })
    expect((await variantsOfTwo()).list).toEqual([])
    const made = await push('--json')
    expect(made.json()).toMatchObject({ variants: { created: 1, updated: 0, skipped: 0 }, published: 1, warnings: [] })
    const { oneB, list } = await variantsOfTwo()
    expect(list).toMatchObject([{ segment_key: 'germans', audience_segment_id: segB.id, lang: 'de', content: { blocks: [{ headline: 'Two for Germans', link: { story_uuid: oneB.uuid } }] } }])
    expect(oneB.uuid).not.toBe(one.uuid)
    expect((await push('--json')).json()).toMatchObject({ created: 0, updated: 0, published: 0, variants: { created: 0, updated: 0, unchanged: 1 } })
    // Edited in the folder: updated in place (no second variant).
    const file = join(home, 'variants/stories/blog/two.json')
    const story = JSON.parse(readFileSync(file, 'utf8'))
    story.variants[0].content.blocks[0].headline = 'Two for Germans, edited'
    writeFileSync(file, JSON.stringify(story))
    expect((await push('--json')).json()).toMatchObject({ variants: { created: 0, updated: 1 }, published: 1 })
    expect((await variantsOfTwo()).list).toMatchObject([{ content: { blocks: [{ headline: 'Two for Germans, edited' }] } }])
  })

  test('usage errors: no subcommand, a folder never pulled', async () => {
    expect((await cli(['stories', '--space', B.space], B, B.token)).code).toBe(2)
    const r = await cli(['stories', 'push', '--space', B.space, '--dir', 'nothing-here'], B, B.token)
    expect(r.code).toBe(2)
    expect(existsSync(join(home, 'nothing-here'))).toBe(false)
  })
})

function proxyUrl() {
  return `http://127.0.0.1:${proxy.port}`
}
