/**
 * The package as users get it: `npm pack` of this package and of the SDK, installed with Astro into an empty project
 * outside the workspace; the README's example files, verbatim, build against a real server.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { type TestApp, testApp } from '../../../test/helpers/app'
import { astroVersion, buildPackages, fillSpace } from './helpers'

setDefaultTimeout(400_000)

const PKG = join(import.meta.dir, '..')
const SDK = join(PKG, '..', 'sdk')

const run = async (cmd: string[], cwd: string, env: Record<string, string> = {}) => {
  const p = Bun.spawn(cmd, { cwd, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...env } })
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  if (code !== 0) throw new Error(`${cmd.join(' ')}: ${code}\n${out}\n${err}`)
  return out
}

/** The README's example files: each code block preceded by a line naming its file (`` `src/x.astro`: ``). */
export function readmeFiles(readme: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const m of readme.matchAll(/^`([^`\s]+\.(?:mjs|ts|astro))`[^\n]*\n(?:[^\n]+\n)*\n```\w+\n([\s\S]*?)```/gm)) out[m[1]] = m[2]
  return out
}

describe('the Astro versions the package claims are the ones the tests run', () => {
  test('peerDependencies: Astro 5 only; the devDependency the builds use is the installed 5.18.x; the README says so', () => {
    const pkg = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'))
    expect(pkg.peerDependencies.astro).toBe('^5.0.0')
    expect(pkg.devDependencies.astro).toMatch(/^5\.18\.\d+$/)
    expect(astroVersion()).toBe(pkg.devDependencies.astro)
    expect(readFileSync(join(PKG, 'README.md'), 'utf8')).toContain('**Versions: Astro 5.x tested (5.18.x); Astro 6/7 need Node 22.**')
  })
})

describe('npm pack → install into an empty project → the README example builds against a real server', () => {
  let t: TestApp
  let server: { port: number | undefined; stop(force?: boolean): unknown }
  let dir: string
  beforeAll(async () => {
    await buildPackages()
    t = await testApp()
    server = t.app.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 22, idleTimeout: 60 })
    dir = mkdtempSync(join(tmpdir(), 'astro-pack-'))
  }, 240_000)
  afterAll(async () => {
    server?.stop(true)
    await t?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  test('the packed package installs with Astro and the example site builds', async () => {
    await run(['npm', 'pack', '--silent', '--pack-destination', dir], PKG)
    await run(['npm', 'pack', '--silent', '--pack-destination', dir], SDK)
    const tarballs = readdirSync(dir).filter((f) => f.endsWith('.tgz')).sort()
    expect(tarballs).toEqual(['content-service-astro-0.1.0.tgz', 'content-service-sdk-0.1.0.tgz'])
    const project = join(dir, 'site')
    mkdirSync(project)
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'site', private: true, type: 'module' }))
    await run(['npm', 'install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...tarballs.map((f) => join(dir, f)), `astro@${astroVersion()}`], project)
    const installed = join(project, 'node_modules', '@content-service', 'astro')
    expect(readdirSync(join(installed, 'dist')).sort()).toContain('index.d.ts')
    expect(readdirSync(join(installed, 'components')).sort()).toEqual(['Blocks.astro', 'Image.astro', 'RichText.astro', 'virtual.d.ts'])

    const files = readmeFiles(readFileSync(join(PKG, 'README.md'), 'utf8'))
    expect(Object.keys(files).sort()).toEqual(['astro.config.mjs', 'src/components/Page.astro', 'src/components/Teaser.astro', 'src/content.config.ts', 'src/pages/[...slug].astro'])
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(dirname(join(project, file)), { recursive: true })
      writeFileSync(join(project, file), text)
    }
    const f = await fillSpace(t)
    const env = { CONTENT_SERVICE_URL: `http://127.0.0.1:${server.port}`, CONTENT_SERVICE_SPACE: f.space, CONTENT_SERVICE_TOKEN: f.viewerToken, ASTRO_TELEMETRY_DISABLED: '1' }
    const log = await run(['node', join(project, 'node_modules', 'astro', 'astro.js'), 'build'], project, env)
    expect(log).toContain('first sync')
    const page = (id: string) => readFileSync(join(project, 'dist', id, 'index.html'), 'utf8')
    expect(page('en/home')).toContain('Welcome home')
    expect(page('de/blog/first')).toContain('Erster Beitrag')
    expect(page('de/blog/first')).toContain('<strong>Reich erster</strong>')
    expect(page('en/home')).toMatch(/srcset="[^"]+\.avif\?w=16 16w/)
    expect(page('en/home')).toContain(`data-story-uuid="${f.ids.home}"`)
    expect(existsSync(join(project, 'dist', 'en', 'blog', 'second'))).toBe(false)
  })
})
