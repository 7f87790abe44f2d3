import { join } from 'node:path'
import type { TestApp } from '../../../test/helpers/app'

const PKG = join(import.meta.dir, '..')

/** The fixture the program expects: Stories under /blog (en and de), a relation, a link, a draft edit, a form. */
export async function sdkFixture(t: TestApp, baseUrl: string) {
  const owner = (await t.register()).token
  const space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })).slug
  const ed = (await t.spaceToken(owner, space, 'editor')).token
  const req = async (method: string, path: string, body?: unknown) => {
    const r = await t.request(method, `/v1/spaces/${space}${path}`, { token: ed, body })
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`)
    return r.body?.data
  }
  await req('POST', '/components', { name: 'post', schema: { headline: { type: 'text', required: true }, related: { type: 'tags' }, link: { type: 'link' } } })
  const blog = await req('POST', '/stories', { name: 'Blog', slug: 'blog', is_folder: true })
  const doc = (headline: string, more: Record<string, unknown> = {}) => ({ type: 'doc', blocks: [{ component: 'post', _uid: 'p1', headline, ...more }] })
  const hello = await req('POST', '/stories', { name: 'Hello', slug: 'hello', parent_uuid: blog.uuid, content: doc('Hello') })
  await req('PUT', `/stories/${hello.uuid}`, { lang: 'de', name: 'Hallo', content: doc('Hallo') })
  const third = await req('POST', '/stories', { name: 'Third', slug: 'third', parent_uuid: blog.uuid, content: doc('Third') })
  const second = await req('POST', '/stories', {
    name: 'Second',
    slug: 'second',
    parent_uuid: blog.uuid,
    content: doc('Second', { related: [hello.uuid], link: { story_uuid: third.uuid } }),
  })
  for (const s of [hello, second, third]) await req('POST', `/stories/${s.uuid}/publish`)
  await req('PUT', `/stories/${hello.uuid}`, { content: doc('Hello (draft)') })
  const previewToken = (await req('POST', '/preview-tokens', {})).token as string
  await req('POST', '/forms', { slug: 'contact', label: 'Contact', fields: [{ key: 'email', type: 'email', label: 'E-mail', required: true }] })
  return { baseUrl, space, previewToken, formSlug: 'contact', editorToken: ed, ownerToken: owner }
}

/**
 * Builds dist/ (the package as it is packed), once per content of src/: test files running side by side
 * (`bun test --parallel`) share one build — a lock folder serialises them, a stamp of the sources skips a rebuild.
 */
export async function buildSdk() {
  const { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync, existsSync } = await import('node:fs')
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
