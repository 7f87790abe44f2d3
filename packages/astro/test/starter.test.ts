/**
 * The starter as a user gets it: `content-service-cli create --template astro <dir> --space <s> --sample` (the built
 * command under node, a subprocess) scaffolds a site into a Space it fills with onboarding's sample content, and a real
 * `astro build` of that folder (its .env, untouched) gives a page per published Story and locale holding that locale's
 * content as the server publishes it, with the editing attributes, and no client script.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { type TestApp, testApp } from '../../../test/helpers/app'
import { astroVersion, buildPackages } from './helpers'

setDefaultTimeout(300_000)

const PKG = join(import.meta.dir, '..')
const ROOT = join(PKG, '..', '..')
const ASTRO = join(ROOT, 'node_modules', 'astro', 'astro.js')
const CLI = join(ROOT, 'packages', 'cli')

function astroRunnable(): string | null {
  if (!existsSync(ASTRO)) return `astro is not installed (${ASTRO}): run bun install`
  const node = Bun.spawnSync(['node', '--version'])
  if (node.exitCode !== 0) return 'node is not on PATH'
  const [maj, min] = node.stdout.toString().trim().slice(1).split('.').map(Number)
  if (!((maj === 20 && min >= 3) || maj >= 22)) return `Node ${node.stdout.toString().trim()} cannot run Astro 5`
  return null
}
const reason = astroRunnable()
if (reason) console.warn(`\n!!! SKIPPING the starter build test: ${reason} !!!\n`)

const run = async (cmd: string[], cwd: string, env: Record<string, string> = {}) => {
  const p = Bun.spawn(cmd, { cwd, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore', env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? cwd, ...env } })
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  if (code !== 0) throw new Error(`${cmd.join(' ')}: exit ${code}\n${out}\n${err}`)
  return out
}

describe.skipIf(!!reason)(`the starter (create --template astro --sample) builds with Astro ${astroVersion()}`, () => {
  let t: TestApp
  let server: { port: number | undefined; stop(force?: boolean): unknown }
  let dir: string
  beforeAll(async () => {
    await buildPackages()
    const cli = Bun.spawnSync(['bun', join(CLI, 'scripts', 'build.ts')], { stdout: 'pipe', stderr: 'pipe' })
    if (cli.exitCode !== 0) throw new Error(cli.stderr.toString())
    t = await testApp()
    server = t.app.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 22, idleTimeout: 60 })
    // Inside the workspace, as the fixture: astro resolves to the workspace's.
    dir = mkdtempSync(join(PKG, 'test', '.run-starter-'))
  }, 240_000)
  afterAll(async () => {
    server?.stop(true)
    await t?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  test('a page per published sample Story and locale, with its content and the editing attributes', async () => {
    const owner = (await t.register()).token
    const space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })).slug
    const base = `http://127.0.0.1:${server.port}`
    const created = JSON.parse(await run(['node', join(CLI, 'dist', 'cli.js'), 'create', '--template', 'astro', dir, '--space', space, '--sample', '--server', base, '--token', owner, '--json'], ROOT, { CI: '1' }))
    expect(created.sample.stories.length).toBeGreaterThan(0)
    expect(readFileSync(join(dir, '.env'), 'utf8')).toContain(`CONTENT_SERVICE_SPACE=${space}`)

    // `npm install` of the site, with this workspace's packages (as built for packing) in place of the registry's.
    mkdirSync(join(dir, 'node_modules', '@content-service'), { recursive: true })
    symlinkSync(PKG, join(dir, 'node_modules', '@content-service', 'astro'), 'dir')
    symlinkSync(join(ROOT, 'packages', 'sdk'), join(dir, 'node_modules', '@content-service', 'sdk'), 'dir')
    const log = await run(['node', ASTRO, 'build', '--root', dir], dir, { ASTRO_TELEMETRY_DISABLED: '1' })
    expect(log).toContain('first sync')

    // What the server publishes, per locale: every Story has its page in every locale, with its headline — and no
    // other page is built.
    const built = (lang: string) =>
      (readdirSync(join(dir, 'dist', lang), { recursive: true }) as string[]).filter((f) => f.endsWith('index.html')).map((f) => f.replace(/\/?index\.html$/, '')).sort()
    let headlines = 0
    for (const lang of ['en', 'de']) {
      const published = (await fetch(`${base}/v1/cdn/${space}/stories?lang=${lang}&per_page=100`).then((r) => r.json())).data as any[]
      expect(published.length).toBeGreaterThan(0)
      for (const s of published) {
        const path = String(s.full_path).replace(/^\/+/, '')
        const file = join(dir, 'dist', lang, path, 'index.html')
        expect([file, existsSync(file)]).toEqual([file, true])
        const html = readFileSync(file, 'utf8')
        expect(html).toContain(`<html lang="${lang}"`)
        const headline = s.content.blocks.find((b: any) => typeof b.headline === 'string')?.headline
        if (headline) {
          expect(html).toContain(escapeHtml(headline))
          headlines++
        }
        expect(html).toContain(`data-story-uuid="${s.uuid}"`)
        expect(html).not.toContain('<script')
      }
      expect(built(lang)).toEqual(published.map((s) => String(s.full_path).replace(/^\/+/, '')).sort())
    }
    expect(headlines).toBeGreaterThanOrEqual(2)
    // The German pages are German: their headlines differ from the English ones somewhere.
    const en = (await fetch(`${base}/v1/cdn/${space}/stories?lang=en&per_page=100`).then((r) => r.json())).data as any[]
    const de = (await fetch(`${base}/v1/cdn/${space}/stories?lang=de&per_page=100`).then((r) => r.json())).data as any[]
    expect(JSON.stringify(de.map((s) => s.content))).not.toBe(JSON.stringify(en.map((s) => s.content)))
    expect(readFileSync(join(dir, 'dist', 'index.html'), 'utf8')).toContain('<li><a href="/en/')
  })
})

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
