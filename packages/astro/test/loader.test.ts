/**
 * The parts of @content-service/astro that run without an Astro build, against a real server: the schema derived from
 * blueprints, the live loader (published, drafts with a preview token, a missing Story), `getPreviewStory` with a
 * preview token in the URL and then in its cookie, and the types: a blueprint left out of the component map is a type
 * error.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { generateTypes } from '../../cli/src/typegen'
import { type TestApp, testApp } from '../../../test/helpers/app'
import { type Blueprint, fetchBlueprints, getPreviewStory, liveStoryLoader, storySchema } from '../src/index'

setDefaultTimeout(120_000)

const PKG = join(import.meta.dir, '..')

const BLUEPRINTS: Blueprint[] = [
  { name: 'page', is_root: true, is_nestable: false, schema: { title: { type: 'text', required: true }, kind: { type: 'select', options: ['a', 'b'] }, blocks: { type: 'blocks', component_whitelist: ['teaser'] } } },
  { name: 'teaser', is_root: false, is_nestable: true, schema: { text: { type: 'text', required: true }, blocks: { type: 'blocks' } } },
  { name: 'hero', is_root: false, is_nestable: true, schema: { image: { type: 'asset' } } },
]

const story = (blocks: unknown[]) => ({ uuid: 'u', name: 'n', slug: 's', full_path: '/s', locale: 'en', lang: 'en', content: { type: 'doc', blocks } })

describe('the schema derived from blueprints', () => {
  const schema = storySchema(BLUEPRINTS)
  test('content that matches passes, nested blocks (recursive) included', () => {
    const ok = story([{ component: 'page', _uid: '1', title: 'T', kind: 'a', blocks: [{ component: 'teaser', _uid: '2', text: 'x', blocks: [{ component: 'hero', _uid: '3', image: null }] }] }])
    expect(schema.safeParse(ok).success).toBe(true)
  })
  test('a missing required field, an unknown option, a block the whitelist refuses, a non-root top block: all fail', () => {
    for (const blocks of [
      [{ component: 'page', _uid: '1' }],
      [{ component: 'page', _uid: '1', title: 'T', kind: 'c' }],
      [{ component: 'page', _uid: '1', title: 'T', blocks: [{ component: 'hero', _uid: '2' }] }],
      [{ component: 'teaser', _uid: '1', text: 'x' }],
    ])
      expect(schema.safeParse(story(blocks)).success).toBe(false)
  })
  test('without blueprints any block passes', () => {
    expect(storySchema(null).safeParse(story([{ component: 'whatever', _uid: '1', x: 1 }])).success).toBe(true)
  })
})

describe('against a real server', () => {
  let t: TestApp
  let server: { port: number | undefined; stop(force?: boolean): unknown }
  let conn: { baseUrl: string; space: string }
  let previewToken: string
  let viewer: string
  beforeAll(async () => {
    t = await testApp()
    server = t.app.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 20, idleTimeout: 30 })
    const owner = (await t.register()).token
    const space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })).slug
    const ed = (await t.spaceToken(owner, space, 'editor')).token
    viewer = (await t.spaceToken(owner, space, 'viewer')).token
    const req = async (method: string, path: string, body?: unknown) => {
      const r = await t.request(method, `/v1/spaces/${space}${path}`, { token: ed, body })
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`)
      return r.body?.data
    }
    await req('POST', '/components', { name: 'post', schema: { headline: { type: 'text', required: true } } })
    const doc = (h: string) => ({ type: 'doc', blocks: [{ component: 'post', _uid: 'p1', headline: h }] })
    const blog = await req('POST', '/stories', { name: 'Blog', slug: 'blog', is_folder: true })
    const hello = await req('POST', '/stories', { name: 'Hello', slug: 'hello', parent_uuid: blog.uuid, content: doc('Hello') })
    await req('PUT', `/stories/${hello.uuid}`, { lang: 'de', name: 'Hallo', content: doc('Hallo') })
    await req('POST', '/stories', { name: 'Draft', slug: 'draft', parent_uuid: blog.uuid, content: doc('Only a draft') })
    await req('POST', `/stories/${hello.uuid}/publish`)
    await req('PUT', `/stories/${hello.uuid}`, { content: doc('Hello (draft)') })
    previewToken = (await req('POST', '/preview-tokens', {})).token
    conn = { baseUrl: `http://127.0.0.1:${server.port}`, space }
  })
  afterAll(async () => {
    server?.stop(true)
    await t?.close()
  })

  test('fetchBlueprints reads them with a viewer token; none without a token', async () => {
    const bps = await fetchBlueprints({ ...conn, token: viewer })
    expect(bps!.map((b) => b.name)).toEqual(['post'])
    expect(await fetchBlueprints({ ...conn, token: undefined, baseUrl: conn.baseUrl })).toBeNull()
  })

  test('liveStoryLoader: entries keyed by locale and path, drafts with a preview token, a missing Story is undefined', async () => {
    const live = liveStoryLoader({ ...conn, previewToken })
    const list = await live.loadCollection({ filter: { startsWith: 'blog/', lang: 'de' } })
    expect((list as { entries: { id: string }[] }).entries.map((e) => e.id)).toEqual(['de/blog/hello'])
    const de = (await live.loadEntry({ filter: { id: 'de/blog/hello' } })) as { id: string; data: any }
    expect(de.data.content.blocks[0].headline).toBe('Hallo')
    const draft = (await live.loadEntry({ filter: { path: 'blog/hello', version: 'draft' } })) as { data: any }
    expect(draft.data.content.blocks[0].headline).toBe('Hello (draft)')
    const drafts = await live.loadCollection({ filter: { startsWith: 'blog/', version: 'draft' } })
    expect((drafts as { entries: { id: string }[] }).entries.map((e) => e.id).sort()).toEqual(['en/blog/draft', 'en/blog/hello'])
    expect(await live.loadEntry({ filter: { path: 'blog/nope' } })).toBeUndefined()
    const bad = await liveStoryLoader({ ...conn, space: 'no-such-space' }).loadCollection({})
    expect('error' in bad).toBe(true)
  })

  test('getPreviewStory: the draft with ?service-preview (then from its cookie), else the published version', async () => {
    const jar = new Map<string, string>()
    const cookies = { get: (n: string) => (jar.has(n) ? { value: jar.get(n)! } : undefined), set: (n: string, v: string) => void jar.set(n, v) }
    const astro = (url: string) => ({ url: new URL(url), params: { slug: 'blog/hello' }, cookies })
    const pub = await getPreviewStory(astro('https://site.example/blog/hello'), conn)
    expect([pub.preview, pub.story.content.blocks[0].headline]).toEqual([false, 'Hello'])
    const first = await getPreviewStory(astro(`https://site.example/blog/hello?service-preview=${previewToken}`), conn)
    expect([first.preview, first.story.content.blocks[0].headline]).toEqual([true, 'Hello (draft)'])
    const next = await getPreviewStory(astro('https://site.example/blog/hello'), conn)
    expect(next.preview).toBe(true)
    const de = await getPreviewStory({ url: new URL('https://site.example/x'), params: {} }, { ...conn, path: '/blog/hello', lang: 'de' })
    expect(de.story.name).toBe('Hallo')
  })
})

test('types: contentService<ComponentMap> needs a component for every blueprint', async () => {
  const dir = mkdtempSync(join(PKG, 'test', '.run-types-'))
  try {
    writeFileSync(join(dir, 'content.d.ts'), generateTypes(BLUEPRINTS as never))
    const program = (components: string) => `import { contentService } from '../../src/index'
import type { ComponentMap } from './content'
contentService<ComponentMap>({ baseUrl: 'http://x', space: 's', components: ${components} })
`
    writeFileSync(join(dir, 'ok.ts'), program("{ page: 'a.astro', teaser: 'b.astro', hero: 'c.astro' }"))
    writeFileSync(join(dir, 'missing.ts'), program("{ page: 'a.astro', teaser: 'b.astro' }"))
    // One tsc run over both programs: only the one missing a component has an error.
    const tsc = Bun.spawnSync(
      ['bun', 'x', 'tsc', '--noEmit', '--strict', '--skipLibCheck', '--module', 'esnext', '--moduleResolution', 'bundler', '--target', 'es2022', '--types', 'node', join(dir, 'ok.ts'), join(dir, 'missing.ts')],
      { cwd: PKG },
    )
    const out = tsc.stdout.toString()
    expect(tsc.exitCode).not.toBe(0)
    expect(out).toMatch(/missing\.ts\(3,\d+\): error TS2741: Property 'hero' is missing/)
    expect(out).not.toContain('ok.ts')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
