/**
 * `export` and `import` as a user runs them (the built command under node, a subprocess) between two real servers,
 * each with its own database: a Space in two locales with a folder, a draft, an asset, links and relations is exported
 * from one and imported into an empty Space on the other; every Story, translation, asset byte, link and relation is
 * equal there, with every uuid remapped — and so are its audience segments, variants, forms, datasources (entries
 * included) and, with --versions all, each Story's history. A second import into the same Space is refused; a
 * --dry-run writes nothing. An import interrupted three times (a proxy that, after N writes, passes one more to the
 * server and loses its answer, once by dropping the connection) finishes when run again from its state file: nothing
 * twice, everything equal. Progress bars show in a terminal only.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHash, createHmac } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
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
  const space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en'] })).slug
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
const png = pngOf(photo(64, 48))

async function cli(args: string[]) {
  const p = Bun.spawn(['node', join(PKG, 'dist', 'cli.js'), ...args], {
    cwd: home,
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
    env: { PATH: process.env.PATH!, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), CI: '1' },
  })
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { stdout, stderr, code, json: () => JSON.parse(stdout) }
}

/** A Space's Stories as comparable data: by full path, per locale, uuids replaced by the full path / asset sha256. */
async function snapshot(s: Side) {
  const list = (await s.t.request('GET', `/v1/spaces/${s.space}/stories?per_page=100`, { token: s.token })).body.data as any[]
  const assets = (await s.t.request('GET', `/v1/spaces/${s.space}/assets?per_page=100`, { token: s.token })).body.data as any[]
  const names = new Map<string, string>([...list.map((x) => [x.uuid, `story:${x.full_path}`] as [string, string]), ...assets.map((x) => [x.uuid, `asset:${x.sha256}`] as [string, string])])
  const swap = (v: unknown): unknown =>
    typeof v === 'string' ? (names.get(v) ?? v) : Array.isArray(v) ? v.map(swap) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, swap(x)])) : v
  const out: Record<string, unknown> = {}
  const history: Record<string, unknown[]> = {}
  for (const x of list) {
    const tr: Record<string, unknown> = {}
    for (const lang of x.translations) {
      const v = (await s.t.request('GET', `/v1/spaces/${s.space}/stories/${x.uuid}?lang=${lang}`, { token: s.token })).body.data
      tr[lang] = { name: v.name, content: swap(v.content) }
    }
    const variants = x.is_folder ? [] : ((await s.t.request('GET', `/v1/spaces/${s.space}/stories/${x.uuid}/variants`, { token: s.token })).body.data as any[])
    const versions: unknown[] = []
    if (!x.is_folder) {
      const list = (await s.t.request('GET', `/v1/spaces/${s.space}/stories/${x.uuid}/versions?per_page=100`, { token: s.token })).body.data as any[]
      for (const v of list.sort((p, q) => p.version_no - q.version_no)) {
        const full = (await s.t.request('GET', `/v1/spaces/${s.space}/stories/${x.uuid}/versions/${v.version_no}`, { token: s.token })).body.data
        versions.push({ lang: full.lang, name: full.name, content: swap(full.content) })
      }
    }
    out[x.full_path] = {
      folder: x.is_folder,
      status: x.status,
      parent: x.parent_uuid ? names.get(x.parent_uuid) : null,
      tr,
      variants: variants.map((v) => ({ segment: v.segment_key, lang: v.lang, content: swap(v.content) })),
    }
    history[x.full_path] = versions
  }
  const get = async (path: string) => (await s.t.request('GET', `/v1/spaces/${s.space}${path}`, { token: s.token })).body.data as any[]
  const segments = (await get('/audience-segments')).map(({ id: _i, created_at: _c, updated_at: _u, ...g }) => g)
  const forms = (await get('/forms')).map((f) => ({ slug: f.slug, label: f.label, fields: f.fields, submit_action: f.submit_action, success_message: f.success_message }))
  const datasources: unknown[] = []
  for (const d of await get('/datasources')) {
    const entries = (await s.t.request('GET', `/v1/spaces/${s.space}/datasources/${d.key}/entries?per_page=100`, { token: s.token })).body.data
    datasources.push({ key: d.key, label: d.label, type: d.type, schema: d.config.schema, entries })
  }
  return {
    stories: out,
    history,
    assets: assets.map((x) => ({ sha256: x.sha256, filename: x.filename, alt: x.alt })),
    segments,
    forms,
    datasources,
    uuids: [...names.keys()],
  }
}

beforeAll(async () => {
  const build = Bun.spawnSync(['bun', join(PKG, 'scripts', 'build.ts')], { stdout: 'pipe', stderr: 'pipe' })
  if (build.exitCode !== 0) throw new Error(build.stderr.toString())
  A = await side()
  B = await side()
  home = mkdtempSync(join(tmpdir(), 'cli-archive-'))
  await call(A, 'POST', '/locales', { code: 'de' })
  await call(A, 'POST', '/components', { name: 'card', is_root: false, schema: { text: { type: 'text', required: true } } })
  await call(A, 'POST', '/components', {
    name: 'post',
    is_nestable: false,
    schema: {
      headline: { type: 'text', required: true },
      image: { type: 'asset' },
      link: { type: 'link' },
      related: { type: 'tags' },
      cards: { type: 'blocks', component_whitelist: ['card'] },
    },
  })
  const fd = new FormData()
  fd.append('alt', JSON.stringify({ en: 'A photo', de: 'Ein Foto' }))
  fd.append('file', new Blob([png as BlobPart], { type: 'image/png' }), 'photo.png')
  const asset = await call(A, 'POST', '/assets', undefined, fd)
  const blog = await call(A, 'POST', '/stories', { name: 'Blog', slug: 'blog', is_folder: true })
  const doc = (h: string, more: Record<string, unknown> = {}) => ({ type: 'doc', blocks: [{ component: 'post', _uid: 'p1', headline: h, cards: [{ component: 'card', _uid: 'c1', text: `${h} card` }], ...more }] })
  const one = await call(A, 'POST', '/stories', { name: 'One', slug: 'one', parent_uuid: blog.uuid, content: doc('One') })
  const two = await call(A, 'POST', '/stories', {
    name: 'Two',
    slug: 'two',
    parent_uuid: blog.uuid,
    content: doc('Two', { image: { uuid: asset.uuid }, link: { story_uuid: one.uuid }, related: [one.uuid] }),
  })
  await call(A, 'PUT', `/stories/${two.uuid}`, { lang: 'de', name: 'Zwei', content: doc('Zwei', { image: { uuid: asset.uuid }, link: { story_uuid: one.uuid }, related: [one.uuid] }) })
  await call(A, 'POST', '/stories', { name: 'Draft', slug: 'draft', content: doc('Only a draft') })
  // An audience segment with a variant of Two (linking One), a form, a datasource with pushed entries.
  const segment = (await A.t.request('POST', `/v1/spaces/${A.space}/audience-segments`, {
    token: A.token,
    body: { key: 'germans', label: 'German speakers', priority: 1, rules: [{ type: 'language', operator: 'eq', value: 'de' }] },
  })).body.data
  await call(A, 'POST', `/stories/${two.uuid}/variants`, { audience_segment_id: segment.id, lang: 'en', content: doc('Two for Germans', { link: { story_uuid: one.uuid } }) })
  await call(A, 'POST', '/forms', { slug: 'contact', label: 'Contact', fields: [{ key: 'email', type: 'email', label: 'E-mail', required: true }], success_message: { en: 'Thanks', de: 'Danke' } })
  const ds = await call(A, 'POST', '/datasources', { key: 'facts', label: 'Facts', type: 'webhook_push', config: { secret_hash: 'auto', schema: { key: 'string', value: 'string' } } })
  const entries = JSON.stringify([{ key: 'tagline', value: 'Hello' }, { key: 'founded', value: '1999' }])
  const ts = String(Math.floor(A.t.clock.ms() / 1000))
  const pushed = await fetch(`${A.base}/v1/spaces/${A.space}/datasources/facts/webhook`, {
    method: 'POST',
    body: entries,
    headers: { 'Content-Type': 'application/json', 'X-Service-Timestamp': ts, 'X-Service-Signature': `sha256=${createHmac('sha256', ds.webhook_secret).update(`${ts}.${entries}`).digest('hex')}` },
  })
  if (!pushed.ok) throw new Error(`push: ${pushed.status} ${await pushed.text()}`)
  // A second version of One (its history has two).
  await call(A, 'PUT', `/stories/${one.uuid}`, { lang: 'en', name: 'One', content: doc('One, edited') })
  for (const s of [one, two]) await call(A, 'POST', `/stories/${s.uuid}/publish`)
}, 240_000)

afterAll(async () => {
  for (const s of [A, B]) {
    s?.server.stop(true)
    await s?.t.close()
  }
  if (home) rmSync(home, { recursive: true, force: true })
})

describe('export → import into an empty Space on another server', () => {
  test('everything arrives equal, every uuid remapped', async () => {
    const file = join(home, 'space.json')
    const ex = await cli(['export', '--server', A.base, '--token', A.token, '--space', A.space, '--out', file, '--versions', 'all', '--json'])
    expect(ex.code).toBe(0)
    expect(ex.json()).toMatchObject({ versions: 'all', components: 2, assets: 1, stories: 4, variants: 1, segments: 1, forms: 1, datasources: 1 })
    expect(ex.json().locales.sort()).toEqual(['de', 'en'])

    const dry = await cli(['import', file, '--server', B.base, '--token', B.token, '--space', B.space, '--dry-run', '--json'])
    expect(dry.code).toBe(0)
    expect(dry.json()).toMatchObject({ dry_run: true, resume: false, in_the_way: [], stories: 4, assets: 1 })
    expect((await B.t.request('GET', `/v1/spaces/${B.space}/stories`, { token: B.token })).body.data).toEqual([])

    B.t.clock.set(Date.now()) // the datasource's entries are pushed signed, with a timestamp the server checks
    const im = await cli(['import', file, '--server', B.base, '--token', B.token, '--space', B.space, '--json'])
    expect(im.stderr).toBe('')
    expect(im.code).toBe(0)
    expect(im.json()).toMatchObject({ components: 2, assets: { uploaded: 1, reused: 0 }, stories: 4, published: 2, variants: 1, segments: 1, forms: 1, datasources: 1 })
    expect(im.json().secrets.facts).toMatch(/.{32,}/)

    const [a, b] = [await snapshot(A), await snapshot(B)]
    expect(b.stories).toEqual(a.stories)
    expect(b.assets).toEqual(a.assets)
    expect(b.segments).toEqual(a.segments)
    expect(b.forms).toEqual(a.forms)
    expect(b.datasources).toEqual(a.datasources)
    expect(a.datasources).toMatchObject([{ key: 'facts', entries: [{ key: 'tagline' }, { key: 'founded' }] }])
    // Every version again, in order, after the empty one each Story is created with.
    for (const [path, versions] of Object.entries(a.history)) expect(b.history[path].slice(1)).toEqual(versions)
    expect(a.history[Object.keys(a.history).find((p) => /one$/.test(p))!].length).toBe(2)
    // The variant's link points at the new One.
    const variant = (b.stories[Object.keys(b.stories).find((p) => /two$/.test(p))!] as any).variants[0]
    expect(variant).toMatchObject({ segment: 'germans', lang: 'en', content: { blocks: [{ headline: 'Two for Germans', link: { story_uuid: expect.stringMatching(/^story:\/?blog\/one$/) } }] } })
    expect(b.uuids.filter((u) => a.uuids.includes(u))).toEqual([])
    // The link and relation point at the new Story; the asset's bytes are the same.
    const two = (b.stories['/blog/two'] ?? b.stories['blog/two']) as any
    expect(two.tr.en.content.blocks[0].link.story_uuid).toMatch(/^story:\/?blog\/one$/)
    expect(two.tr.de.content.blocks[0].related).toEqual([two.tr.en.content.blocks[0].link.story_uuid])
    const assetB = (await B.t.request('GET', `/v1/spaces/${B.space}/assets`, { token: B.token })).body.data[0]
    const bytes = new Uint8Array(await (await fetch(`${B.base}/v1/cdn/${B.space}/assets/${assetB.uuid}`)).arrayBuffer())
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(createHash('sha256').update(png).digest('hex'))
    // Published on the other server's public read, in both locales.
    const pub = await fetch(`${B.base}/v1/cdn/${B.space}/stories/blog/two?lang=de`).then((r) => r.json())
    expect(pub.data.content.blocks[0].headline).toBe('Zwei')

    // A second import into the same (no longer empty) Space is refused, nothing duplicated.
    const again = await cli(['import', file, '--server', B.base, '--token', B.token, '--space', B.space])
    expect(again.code).toBe(5)
    expect(again.stderr).toContain('import needs an empty Space')
  })

  test('an interrupted import continues when run again: nothing twice, everything equal; a fresh import into a non-empty Space is refused', async () => {
    const file = join(home, 'resume.json')
    expect((await cli(['export', '--server', A.base, '--token', A.token, '--space', A.space, '--out', file, '--versions', 'all'])).code).toBe(0)
    // Another empty Space on B, reached through a proxy that, after N writes, passes one more to the server and loses
    // its answer (as a dropped connection would).
    const C: Side = { ...B, space: (await B.t.createSpace(B.token, { default_lang: 'en', locales: ['en'] })).slug }
    const gate = { writes: 0, failAfter: Number.POSITIVE_INFINITY, drop: false }
    const proxy = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        const url = new URL(req.url)
        const headers = new Headers(req.headers)
        headers.delete('host')
        const res = await fetch(`${B.base}${url.pathname}${url.search}`, { method: req.method, headers, body: req.method === 'GET' ? undefined : await req.arrayBuffer() })
        if (req.method !== 'GET' && ++gate.writes > gate.failAfter) {
          await res.arrayBuffer()
          // The connection dropped in the middle of the answer (Bun prints the stream's error: expected), or a gateway
          // saying it lost it.
          if (gate.drop) return new Response(new ReadableStream({ start: (c) => c.error(new Error('connection dropped by the test proxy')) }), { headers: { 'Content-Type': 'application/json' } })
          return Response.json({ error: 'bad_gateway', message: 'the connection was lost' }, { status: 502 })
        }
        return new Response(await res.arrayBuffer(), { status: res.status, headers: { 'Content-Type': res.headers.get('content-type') ?? 'application/json' } })
      },
    })
    try {
      B.t.clock.set(Date.now())
      const run = () => cli(['import', file, '--server', `http://127.0.0.1:${proxy.port}`, '--token', B.token, '--space', C.space, '--json'])
      // 1st run: the 8th write (the datasource's create, after locales, blueprints and the segment) reaches the server
      // and its answer — with the push secret — is lost. 2nd (the connection dropped mid-answer) and 3rd: lost in the
      // middle of Stories and of versions.
      const writesPerRun: number[] = []
      for (const [failAfter, drop] of [[7, false], [6, true], [6, false]] as const) {
        Object.assign(gate, { writes: 0, failAfter, drop })
        const r = await run()
        writesPerRun.push(gate.writes)
        expect([r.code, r.stderr]).toEqual([6, expect.stringContaining('Interrupted: the progress is in')])
      }
      expect(writesPerRun).toEqual([8, 7, 7])
      const state = JSON.parse(readFileSync(`${file}.import-state.json`, 'utf8'))
      expect(Object.values(state.targets)[0]).toMatchObject({ done: { setup: true, segments: ['germans'], datasources: ['facts'], forms: ['contact'] } })
      Object.assign(gate, { writes: 0, failAfter: Number.POSITIVE_INFINITY, drop: false })
      const dry = await cli(['import', file, '--server', `http://127.0.0.1:${proxy.port}`, '--token', B.token, '--space', C.space, '--dry-run'])
      expect([dry.code, dry.stdout]).toEqual([0, expect.stringMatching(/^Would continue the interrupted import \(\d+ Stories done\) of 2 blueprints/)])
      expect(gate.writes).toBe(0)
      const last = await run()
      expect([last.code, last.stderr]).toEqual([0, ''])
      expect(last.json()).toMatchObject({ resumed: true, stories: 4 })
      // The push secret lost with the 1st run's answer was made anew and shown now; the entries are there.
      expect(last.json().secrets.facts).toMatch(/.{32,}/)

      const [a, c] = [await snapshot(A), await snapshot(C)]
      expect(c.stories).toEqual(a.stories)
      expect(c.assets).toEqual(a.assets)
      expect(c.segments).toEqual(a.segments)
      expect(c.forms).toEqual(a.forms)
      expect(c.datasources).toEqual(a.datasources)
      // No version saved twice: the empty one each Story is created with, then exactly the archived ones.
      for (const [path, versions] of Object.entries(a.history)) expect([path, c.history[path].slice(1)]).toEqual([path, versions])
      expect(c.uuids.filter((u) => a.uuids.includes(u))).toEqual([])

      // Run again once finished: refused (the Space is not empty any more), saying it was imported already.
      const again = await run()
      expect(again.code).toBe(5)
      expect(again.stderr).toContain('imported into it already')
      // A fresh import (no state) into a non-empty Space: refused, naming what is in the way; nothing written.
      const fresh = await cli(['import', file, '--server', B.base, '--token', B.token, '--space', C.space, '--state', join(home, 'other-state.json')])
      expect(fresh.code).toBe(5)
      expect(fresh.stderr).toMatch(/already has 4 Stories \(\/?blog, .*the segments germans; the forms contact; the datasources facts\. import needs an empty Space/)
      const dryFresh = await cli(['import', file, '--server', B.base, '--token', B.token, '--space', C.space, '--state', join(home, 'other-state.json'), '--dry-run', '--json'])
      expect(dryFresh.code).toBe(5)
      expect(dryFresh.json()).toMatchObject({ resume: false, in_the_way: [expect.stringMatching(/^4 Stories/), 'the segments germans', 'the forms contact', 'the datasources facts'] })
      expect(await snapshot(C)).toEqual(c)
    } finally {
      proxy.stop(true)
    }
  })

  test('--versions current (the default) holds no history', async () => {
    const file = join(home, 'current.json')
    const ex = await cli(['export', '--server', A.base, '--token', A.token, '--space', A.space, '--out', file, '--json'])
    expect(ex.json()).toMatchObject({ versions: 'current', story_versions: 0, stories: 4 })
    expect((await cli(['export', '--server', A.base, '--token', A.token, '--space', A.space, '--out', file, '--versions', 'some'])).code).toBe(2)
  })

  test('progress bars in a terminal (on stderr), never with --json or without a terminal; --version --json', async () => {
    // `script` gives the command a terminal (stdout and stderr both land in its output).
    const inTerminal = async (args: string[]) => {
      const cmd = ['node', join(PKG, 'dist', 'cli.js'), ...args].map((a) => `'${a}'`).join(' ')
      const p = Bun.spawn(['script', '-q', '-e', '-c', cmd, '/dev/null'], {
        cwd: home,
        stdout: 'pipe',
        stderr: 'pipe',
        stdin: 'ignore',
        env: { PATH: process.env.PATH!, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), CI: '1', TERM: 'xterm', COLUMNS: '120' },
      })
      const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited])
      return { out, code }
    }
    const file = join(home, 'tty.json')
    const human = await inTerminal(['export', '--server', A.base, '--token', A.token, '--space', A.space, '--out', file])
    expect(human.code).toBe(0)
    expect(human.out).toMatch(/export: stories \[█*░*\] 1\/4/)
    expect(human.out).toMatch(/export: stories \[█{20}\] 4\/4/)
    expect(human.out).toContain(`Wrote ${file}`)
    const json = await inTerminal(['export', '--server', A.base, '--token', A.token, '--space', A.space, '--out', file, '--json'])
    expect(json.code).toBe(0)
    expect(json.out).not.toMatch(/[█░]|export: stories/)
    expect(JSON.parse(json.out.trim())).toMatchObject({ stories: 4 })
    // Without a terminal (the other tests' runs): no bar either.
    const plain = await cli(['export', '--server', A.base, '--token', A.token, '--space', A.space, '--out', file])
    expect(plain.stderr).toBe('')
    expect((await cli(['--version', '--json'])).json()).toEqual({ version: '0.1.0' })
    expect((await cli(['--version'])).stdout).toBe('0.1.0\n')
  })

  test('a file that is not an archive is a usage error', async () => {
    const r = await cli(['import', join(home, 'nope.json'), '--server', B.base, '--token', B.token, '--space', B.space])
    expect(r.code).toBe(2)
  })
})
