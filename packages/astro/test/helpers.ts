import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { TestApp } from '../../../test/helpers/app'
import { photo, pngOf } from '../../../test/helpers/images'
import { buildSdk } from '../../sdk/test/fixture'

const PKG = join(import.meta.dir, '..')
const ROOT = join(PKG, '..', '..')

/** The installed Astro's version (the one the build test covers). */
export function astroVersion(): string {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules', 'astro', 'package.json'), 'utf8')).version
  } catch {
    return 'not installed'
  }
}

/**
 * Builds the SDK's dist/ and this package's (as they are packed), once per content of their sources: test files
 * running side by side share one build (a lock folder serialises them, a stamp of the sources skips a rebuild).
 */
export async function buildPackages() {
  await buildSdk()
  const hasher = new Bun.CryptoHasher('sha256')
  const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]))
  for (const f of [...walk(join(PKG, 'src')), join(PKG, 'scripts', 'build.ts'), join(PKG, 'package.json')].sort()) hasher.update(f).update(readFileSync(f))
  const stamp = hasher.digest('hex')
  const stampFile = join(PKG, 'dist', '.stamp')
  const lock = join(PKG, '.build-lock')
  for (let i = 0; ; i++) {
    try {
      mkdirSync(lock)
      break
    } catch {
      if (i > 1200) throw new Error(`${lock} held for 10 minutes: remove it`)
      await Bun.sleep(500)
    }
  }
  try {
    if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return
    const b = Bun.spawn(['bun', join(PKG, 'scripts', 'build.ts')], { stdout: 'pipe', stderr: 'pipe' })
    const [err, code] = await Promise.all([new Response(b.stderr).text(), b.exited])
    if (code !== 0) throw new Error(`build failed: ${err}`)
    writeFileSync(stampFile, stamp)
  } finally {
    rmdirSync(lock)
  }
}

/**
 * A Space in English and German with the blueprints of the fixture site and the README's example (`page`: title,
 * rich-text body, image, teaser blocks; `teaser`: text), an 800×600 PNG with alt texts, and four Stories: home, about,
 * blog/first published, blog/second a draft.
 */
export async function fillSpace(t: TestApp) {
  const owner = (await t.register()).token
  const space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })).slug
  const editorToken = (await t.spaceToken(owner, space, 'editor')).token
  const viewerToken = (await t.spaceToken(owner, space, 'viewer')).token
  const req = async (method: string, path: string, body?: unknown, raw?: FormData) => {
    const r = await t.request(method, `/v1/spaces/${space}${path}`, { token: editorToken, body, raw })
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`)
    return r.body?.data
  }
  await req('POST', '/components', { name: 'teaser', is_root: false, schema: { text: { type: 'text', required: true } } })
  await req('POST', '/components', {
    name: 'page',
    is_nestable: false,
    schema: {
      title: { type: 'text', required: true },
      body: { type: 'richtext' },
      image: { type: 'asset' },
      blocks: { type: 'blocks', component_whitelist: ['teaser'] },
    },
  })
  const fd = new FormData()
  fd.append('alt', JSON.stringify({ en: 'A harbour', de: 'Ein Hafen' }))
  fd.append('file', new Blob([pngOf(photo(800, 600)) as BlobPart], { type: 'image/png' }), 'harbour.png')
  const asset = await req('POST', '/assets', undefined, fd)

  const rich = (s: string) => ({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: s, marks: [{ type: 'bold' }] }] }] })
  const doc = (title: string, body: string, teaser: string) => ({
    type: 'doc',
    blocks: [{ component: 'page', _uid: 'p1', title, body: rich(body), image: { uuid: asset.uuid }, blocks: [{ component: 'teaser', _uid: 't1', text: teaser }] }],
  })
  const story = async (name: string, slug: string, en: [string, string, string], de: [string, string, string], parent?: string) => {
    const s = await req('POST', '/stories', { name, slug, parent_uuid: parent, content: doc(...en) })
    await req('PUT', `/stories/${s.uuid}`, { lang: 'de', name: `${name} (de)`, content: doc(...de) })
    return s.uuid as string
  }
  const ids: Record<string, string> = {}
  const blog = await req('POST', '/stories', { name: 'Blog', slug: 'blog', is_folder: true })
  ids.home = await story('Home', 'home', ['Welcome home', 'Rich welcome', 'Read the blog'], ['Willkommen daheim', 'Reiches Willkommen', 'Lies den Blog'])
  ids.about = await story('About', 'about', ['About us', 'Rich about', 'Team'], ['Über uns', 'Reich über', 'Mannschaft'])
  ids.first = await story('First', 'first', ['First post', 'Rich first', 'More'], ['Erster Beitrag', 'Reich erster', 'Mehr'], blog.uuid)
  ids.second = await story('Second', 'second', ['Second post', 'Rich second', 'Later'], ['Zweiter Beitrag', 'Reich zweiter', 'Später'], blog.uuid)
  for (const k of ['home', 'about', 'first']) await req('POST', `/stories/${ids[k]}/publish`)
  return { space, editorToken, viewerToken, ids, assetUuid: asset.uuid as string }
}
