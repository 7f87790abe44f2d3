/**
 * content-service-cli as a user runs it: the built command (dist/cli.js under the machine's node) as a subprocess,
 * against a real listening server, with its own config folder.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestApp, testApp } from '../../../test/helpers/app'

setDefaultTimeout(180_000)

const PKG = join(import.meta.dir, '..')
let t: TestApp
let server: { port: number | undefined; stop(force?: boolean): unknown }
let base: string
let home: string
let owner: string
let email: string
let a: string
let b: string

/** Runs the command; asynchronous (the server answering it is in this process). */
async function cli(args: string[], env: Record<string, string> = {}, cwd = home) {
  const p = Bun.spawn(['node', join(PKG, 'dist', 'cli.js'), ...args], {
    cwd,
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
    env: { PATH: process.env.PATH!, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), CI: '1', ...env },
  })
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { stdout, stderr, code, json: () => JSON.parse(stdout) }
}

beforeAll(async () => {
  const build = Bun.spawnSync(['bun', join(PKG, 'scripts', 'build.ts')], { stdout: 'pipe', stderr: 'pipe' })
  if (build.exitCode !== 0) throw new Error(build.stderr.toString())
  t = await testApp()
  server = t.app.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 20, idleTimeout: 30 })
  base = `http://127.0.0.1:${server.port}`
  home = mkdtempSync(join(tmpdir(), 'cli-home-'))
  email = `cli-${Date.now()}@example.com`
  owner = (await t.register({ email, password: 'correct horse battery staple' })).token
  a = (await t.createSpace(owner)).slug
  b = (await t.createSpace(owner)).slug
  const bp = (body: Record<string, unknown>) => t.request('POST', `/v1/spaces/${a}/components`, { token: owner, body })
  await bp({ name: 'teaser', is_root: false, is_nestable: true, schema: { title: { type: 'text', required: true } } })
  await bp({
    name: 'page',
    display_name: 'Page',
    is_root: true,
    is_nestable: false,
    schema: { headline: { type: 'text', required: true }, theme: { type: 'select', options: ['light', 'dark mode'] }, body: { type: 'blocks', component_whitelist: ['teaser'] } },
  })
}, 240_000)

afterAll(async () => {
  server?.stop(true)
  await t?.close()
  if (home) rmSync(home, { recursive: true, force: true })
})

describe('content-service-cli against a real server', () => {
  test('--help everywhere, documented exit codes, unknown commands are usage errors', async () => {
    const help = await cli(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Exit codes: 0 ok, 1 differences')
    for (const c of ['login', 'whoami', 'spaces', 'components', 'types']) {
      const r = await cli([c, '--help'])
      expect([r.code, r.stdout.startsWith(`content-service-cli ${c}`)]).toEqual([0, true])
    }
    expect((await cli(['frobnicate'])).code).toBe(2)
    expect((await cli(['whoami', '--server', base])).code).toBe(3)
  })

  test('login stores the token per server with mode 0600; under CI nothing is asked', async () => {
    const noPassword = await cli(['login', '--server', base, '--email', email])
    expect(noPassword.code).toBe(2)
    expect(noPassword.stderr).toContain('nothing is asked under CI')
    const r = await cli(['login', '--server', base, '--email', email, '--password', 'correct horse battery staple', '--json'])
    expect(r.code).toBe(0)
    expect(r.json().user.email).toBe(email)
    const file = join(home, 'config', 'content-service', 'credentials.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const stored = JSON.parse(readFileSync(file, 'utf8'))
    expect(stored.current).toBe(base)
    expect(stored.servers[base].token).toMatch(/\./)
    const bad = await cli(['login', '--server', base, '--email', email, '--password', 'wrong'])
    expect(bad.code).toBe(3)
  })

  test('whoami and spaces, human and --json', async () => {
    const who = await cli(['whoami', '--json'])
    expect(who.code).toBe(0)
    expect(who.json()).toMatchObject({ server: base, user: { email } })
    expect((await cli(['whoami'])).stdout).toContain(email)
    const spaces = await cli(['spaces', '--json'])
    expect(spaces.json().map((s: { slug: string }) => s.slug).sort()).toEqual([a, b].sort())
    expect((await cli(['spaces'])).stdout).toContain(a)
  })

  test('components: pull from one Space, push to another (dry run first), diff empty afterwards', async () => {
    const pull = await cli(['components', 'pull', '--space', a, '--out', 'a.json', '--json'])
    expect(pull.json()).toEqual({ file: 'a.json', count: 2 })
    const file = JSON.parse(readFileSync(join(home, 'a.json'), 'utf8'))
    expect(file.components.map((c: { name: string }) => c.name)).toEqual(['page', 'teaser'])
    expect(Object.keys(file.components[0].schema)).toEqual(['headline', 'theme', 'body'])

    const before = await cli(['components', 'diff', '--space', b, '--to-space', a, '--json'])
    expect(before.code).toBe(1)
    expect(before.json().changes).toEqual([
      { name: 'page', change: 'added' },
      { name: 'teaser', change: 'added' },
    ])
    const dry = await cli(['components', 'push', '--space', b, '--file', 'a.json', '--dry-run', '--json'])
    expect(dry.json()).toMatchObject({ dry_run: true, changes: [{ name: 'page' }, { name: 'teaser' }] })
    expect((await t.request('GET', `/v1/spaces/${b}/components`, { token: owner })).body.data).toEqual([])

    const push = await cli(['components', 'push', '--space', b, '--file', 'a.json'])
    expect(push.code).toBe(0)
    expect(push.stdout).toContain('+ page')
    const after = await cli(['components', 'diff', '--space', b, '--to-space', a])
    expect([after.code, after.stdout.trim()]).toEqual([0, 'No differences.'])

    // A change on one side shows as `changed`, and pushing from the Space (not a file) applies it.
    await t.request('PUT', `/v1/spaces/${a}/components/teaser`, { token: owner, body: { schema: { title: { type: 'text', required: false } } } })
    const changed = await cli(['components', 'diff', '--space', b, '--to-space', a, '--json'])
    expect(changed.json().changes).toEqual([{ name: 'teaser', change: 'changed', fields: ['schema.title'] }])
    expect((await cli(['components', 'push', '--space', b, '--from-space', a, '--from-server', base])).code).toBe(0)
    expect((await cli(['components', 'diff', '--space', b, '--to-space', a])).code).toBe(0)

    const refused = await cli(['components', 'push', '--space', 'no-such-space', '--file', 'a.json'])
    expect(refused.code).toBe(4)
    const missing = await cli(['components', 'push', '--space', b])
    expect(missing.code).toBe(2)
  })

  test('types writes the .d.ts and the validator from the Space', async () => {
    const r = await cli(['types', '--space', a, '--out', 'src/content.d.ts', '--json'])
    expect(r.code).toBe(0)
    expect(r.json().files).toEqual(['src/content.d.ts', 'src/content.validate.js', 'src/content.validate.d.ts'])
    const dts = readFileSync(join(home, 'src', 'content.d.ts'), 'utf8')
    expect(dts).toContain("export type RootBlock = Page")
    expect(dts).toContain('theme?: "light" | "dark mode"')
    expect(dts).toContain('body?: Array<Teaser>')
    expect(readdirSync(join(home, 'src')).sort()).toEqual(['content.d.ts', 'content.validate.d.ts', 'content.validate.js'])
  })

  test('types --watch regenerates when a blueprint changes', async () => {
    const p = Bun.spawn(['node', join(PKG, 'dist', 'cli.js'), 'types', '--space', a, '--out', 'w/content.d.ts', '--watch', '--json'], {
      cwd: home,
      stdout: 'pipe',
      stderr: 'pipe',
      env: { PATH: process.env.PATH!, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), CI: '1' },
    })
    try {
      const file = join(home, 'w', 'content.d.ts')
      for (let i = 0; i < 100; i++) {
        if (await Bun.file(file).exists()) break
        await Bun.sleep(100)
      }
      expect(await Bun.file(file).text()).not.toContain('Footer')
      await t.request('POST', `/v1/spaces/${a}/components`, { token: owner, body: { name: 'footer', is_root: true, schema: { note: { type: 'text' } } } })
      for (let i = 0; i < 150; i++) {
        if ((await Bun.file(file).text()).includes('export interface Footer')) break
        await Bun.sleep(100)
      }
      expect(await Bun.file(file).text()).toContain('export type RootBlock = Footer | Page')
    } finally {
      p.kill()
      await p.exited
    }
  })

  test('npm pack → install into an empty project → the README example runs against the server', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-pack-'))
    try {
      const sh = async (cmd: string[], cwd: string, env: Record<string, string> = {}) => {
        const p = Bun.spawn(cmd, { cwd, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...env } })
        const [o, e, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
        if (code !== 0) throw new Error(`${cmd.join(' ')}: ${code}\n${o}\n${e}`)
        return o
      }
      await sh(['npm', 'pack', '--silent', '--pack-destination', dir], PKG)
      const project = join(dir, 'project')
      await sh(['mkdir', '-p', project], dir)
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'site', private: true, type: 'module' }))
      await sh(['npm', 'install', '--no-audit', '--no-fund', '--offline', '--loglevel=error', join(dir, 'content-service-cli-0.1.0.tgz')], project)
      const readme = await Bun.file(join(PKG, 'README.md')).text()
      writeFileSync(join(project, 'example.sh'), `set -e\n${/```sh\n# A token[\s\S]*?```/.exec(readme)![0].replace(/```sh\n|```/g, '')}`)
      const out = await sh(['sh', 'example.sh'], project, {
        HOME: project,
        XDG_CONFIG_HOME: join(project, 'config'),
        CI: '1',
        CONTENT_SERVICE_URL: base,
        CONTENT_SERVICE_TOKEN: owner,
        SPACE: a,
        OTHER_SPACE: (await t.createSpace(owner)).slug,
      })
      expect(out).toContain('Would push to')
      expect(out).toContain('No differences.')
      expect(readFileSync(join(project, 'src', 'content.d.ts'), 'utf8')).toContain('export interface Page')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('logout forgets the token', async () => {
    expect((await cli(['logout', '--json'])).json()).toEqual({ server: base, removed: true })
    expect((await cli(['whoami', '--server', base])).code).toBe(3)
    writeFileSync(join(home, 'x'), '')
  })
})
