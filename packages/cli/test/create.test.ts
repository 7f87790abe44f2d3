/**
 * `create --template astro` as a user runs it (the built command under node, a subprocess) against a real server: the
 * folder gets a site wired to the Space — the loader over the Space's locales, a component per starter blueprint, and
 * `.env` naming the server, the Space and a viewer Space token that reads the Space (not the caller's own token);
 * `--sample` fills the empty Space with the starter blueprints and published Stories. A non-empty folder is a usage
 * error; `--sample` into a Space with Stories is refused. (packages/astro/test/starter.test.ts runs a real `astro build` of
 * the scaffolded site filled with --sample.)
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestApp, testApp } from '../../../test/helpers/app'

setDefaultTimeout(180_000)

const PKG = join(import.meta.dir, '..')
let t: TestApp
let server: { port: number | undefined; stop(force?: boolean): unknown }
let base: string
let owner: string
let space: string
let home: string

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

beforeAll(async () => {
  const build = Bun.spawnSync(['bun', join(PKG, 'scripts', 'build.ts')], { stdout: 'pipe', stderr: 'pipe' })
  if (build.exitCode !== 0) throw new Error(build.stderr.toString())
  t = await testApp()
  server = t.app.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 22, idleTimeout: 60 })
  base = `http://127.0.0.1:${server.port}`
  owner = (await t.register()).token
  space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en'] })).slug
  const r = await t.request('POST', `/v1/spaces/${space}/locales`, { token: owner, body: { code: 'de' } })
  if (r.status !== 201) throw new Error(r.text)
  home = mkdtempSync(join(tmpdir(), 'cli-create-'))
}, 240_000)

afterAll(async () => {
  server?.stop(true)
  await t?.close()
  if (home) rmSync(home, { recursive: true, force: true })
})

describe('create --template astro', () => {
  test('scaffolds a site wired to the Space, with --sample filling it', async () => {
    // Logged in first: the token comes from the stored credentials.
    expect((await cli(['login', '--server', base, '--token', owner])).code).toBe(0)
    const r = await cli(['create', '--template', 'astro', 'my-site', '--space', space, '--sample', '--json'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const summary = r.json()
    expect(summary).toMatchObject({ template: 'astro', space, server: base, locales: ['en', 'de'], token: 'space token (viewer)' })
    // The server's sample set (POST /spaces/{space}/sample-content): every locale, a form and a datasource too.
    expect(summary.sample.stories).toEqual(['home', 'blog', 'blog/hello-world', 'blog/getting-started', 'authors', 'authors/sample-author'].map((p) => expect.stringMatching(new RegExp(`^/?${p}$`))))
    expect(summary.sample).toMatchObject({ components: ['text_block', 'page', 'post', 'author'], locales: ['en', 'de'], forms: ['contact'], datasources: ['site_facts'] })

    const dir = join(home, 'my-site')
    for (const f of [
      'package.json',
      '.env',
      '.gitignore',
      'tsconfig.json',
      'astro.config.mjs',
      'src/content.config.ts',
      'src/pages/[...slug].astro',
      'src/pages/index.astro',
      'src/components/Page.astro',
      'src/components/Post.astro',
      'src/components/Author.astro',
      'src/components/TextBlock.astro',
      'README.md',
    ])
      expect(existsSync(join(dir, f))).toBe(true)
    const env = Object.fromEntries(
      readFileSync(join(dir, '.env'), 'utf8')
        .split('\n')
        .filter((l) => /^[A-Z_]+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    )
    expect(env.CONTENT_SERVICE_URL).toBe(base)
    expect(env.CONTENT_SERVICE_SPACE).toBe(space)
    expect(env.CONTENT_SERVICE_TOKEN).not.toBe(owner)
    expect(statSync(join(dir, '.env')).mode & 0o077).toBe(0)
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toContain('.env')
    // The written token is a viewer Space token of this Space: it reads drafts, it cannot write.
    const tok = env.CONTENT_SERVICE_TOKEN
    expect((await fetch(`${base}/v1/cdn/${space}/stories?version=draft`, { headers: { Authorization: `Bearer ${tok}` } })).status).toBe(200)
    expect((await t.request('POST', `/v1/spaces/${space}/stories`, { token: tok, body: { name: 'X', slug: 'x', content: { type: 'doc', blocks: [] } } })).status).toBe(403)
    const tokens = (await t.request('GET', `/v1/spaces/${space}/tokens`, { token: owner })).body.data
    expect(tokens).toHaveLength(1)
    expect(tokens[0]).toMatchObject({ role: 'viewer', name: 'astro site my-site' })

    // The config reads the environment; the loader reads both locales; every starter blueprint has a component.
    const config = readFileSync(join(dir, 'astro.config.mjs'), 'utf8')
    expect(config).toContain('space: process.env.CONTENT_SERVICE_SPACE')
    for (const b of ['page', 'post', 'author', 'text_block']) expect(config).toMatch(new RegExp(`\\b${b}: 'src/components/\\w+\\.astro'`))
    expect(readFileSync(join(dir, 'src/content.config.ts'), 'utf8')).toContain(`storyLoader({ langs: ["en","de"] })`)
    const transpiler = new Bun.Transpiler({ loader: 'ts' })
    for (const f of ['astro.config.mjs', 'src/content.config.ts']) expect(() => transpiler.transformSync(readFileSync(join(dir, f), 'utf8'))).not.toThrow()
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['@content-service/astro', '@content-service/sdk', 'astro'])

    // The sample content is published: the site's token (and anyone) reads it on the public read.
    const home_ = await fetch(`${base}/v1/cdn/${space}/stories/home`).then((x) => x.json())
    expect(home_.data.content.blocks[0]).toMatchObject({ component: 'page', headline: expect.stringMatching(/^Welcome to /) })
    const post = await fetch(`${base}/v1/cdn/${space}/stories/blog/hello-world?lang=de`).then((x) => x.json())
    expect(post.data.content.blocks[0]).toMatchObject({ component: 'post', headline: 'Hallo Welt' })
  })

  test('a folder that is not empty is a usage error; --sample into a Space with Stories is refused', async () => {
    const again = await cli(['create', '--template', 'astro', 'my-site', '--space', space])
    expect(again.code).toBe(2)
    expect(again.stderr).toContain('not empty')
    const sample = await cli(['create', '--template', 'astro', 'other-site', '--space', space, '--sample'])
    expect(sample.code).toBe(5)
    expect(existsSync(join(home, 'other-site'))).toBe(false)
    const bad = await cli(['create', '--template', 'next', 'x', '--space', space])
    expect(bad.code).toBe(2)
  })
})
