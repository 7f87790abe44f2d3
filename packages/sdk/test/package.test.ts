/**
 * The package as users get it: its API types match the server's OpenAPI description, its entries stay within their
 * size budgets, and `npm pack` yields a tarball that installs into an empty project where the README's example runs
 * against a real server.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { generateSdkApi, SDK_SCHEMA_FILE } from '../../../scripts/gen-sdk-api'
import { type TestApp, testApp } from '../../../test/helpers/app'
import { buildSdk, sdkFixture } from './fixture'

setDefaultTimeout(240_000)

const PKG = join(import.meta.dir, '..')

test('src/api/schema.d.ts is generated from the current OpenAPI description (else: bun run gen:sdk-api)', async () => {
  const expected = await generateSdkApi()
  const current = await Bun.file(SDK_SCHEMA_FILE).text()
  if (current !== expected) throw new Error('packages/sdk/src/api/schema.d.ts is stale: run `bun run gen:sdk-api` and commit the result.')
  expect(current).toContain('"/v1/cdn/{space}/stories"')
  expect(current).toContain('listPublishedStories')
})

describe('size budgets (minified and gzipped, as a bundler ships them)', () => {
  const size = async (entry: string) => {
    const out = await Bun.build({ entrypoints: [join(PKG, 'dist', entry)], minify: true, format: 'esm', target: 'browser', external: ['openapi-fetch'] })
    if (!out.success) throw new AggregateError(out.logs)
    return gzipSync(Buffer.from(await out.outputs[0].arrayBuffer()), { level: 9 }).length
  }
  beforeAll(buildSdk, 120_000)
  test('core ≤ 5 KB, /image ≤ 1 KB, /richtext ≤ 2 KB; openapi-fetch is loaded on the first client.api call only', async () => {
    const sizes = { core: await size('index.js'), image: await size('image.js'), richtext: await size('richtext.js') }
    console.log(`sizes (min+gzip, bytes): ${JSON.stringify(sizes)}`)
    expect(sizes.core).toBeLessThanOrEqual(5 * 1024)
    expect(sizes.image).toBeLessThanOrEqual(1024)
    expect(sizes.richtext).toBeLessThanOrEqual(2 * 1024)
    const core = await Bun.file(join(PKG, 'dist', 'index.js')).text()
    expect(core).not.toMatch(/^import .* from ["']openapi-fetch["']/m)
    expect(core).toContain('import("openapi-fetch")')
  })
})

describe('npm pack → install into an empty project → the README example runs against a real server', () => {
  let t: TestApp
  let server: { port: number | undefined; stop(force?: boolean): unknown }
  let dir: string
  beforeAll(async () => {
    t = await testApp()
    server = t.app.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 20, idleTimeout: 30 })
    dir = mkdtempSync(join(tmpdir(), 'sdk-pack-'))
  }, 120_000)
  afterAll(async () => {
    server?.stop(true)
    await t?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  test('the packed package installs and its example works in Node', async () => {
    const run = async (cmd: string[], cwd: string, env: Record<string, string> = {}) => {
      const p = Bun.spawn(cmd, { cwd, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...env } })
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
      if (code !== 0) throw new Error(`${cmd.join(' ')}: ${code}\n${out}\n${err}`)
      return out
    }
    await run(['npm', 'pack', '--silent', '--pack-destination', dir], PKG)
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))!
    expect(tarball).toBe('content-service-sdk-0.1.0.tgz')
    const project = join(dir, 'project')
    await run(['mkdir', '-p', project], dir)
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'site', private: true, type: 'module' }))
    await run(['npm', 'install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', join(dir, tarball)], project)
    // The README's first example, verbatim.
    const readme = await Bun.file(join(PKG, 'README.md')).text()
    const example = /```js\n([\s\S]*?)```/.exec(readme)![1]
    writeFileSync(join(project, 'example.mjs'), example)
    const f = await sdkFixture(t, `http://127.0.0.1:${server.port}`)
    const out = await run(['node', 'example.mjs'], project, { CONTENT_SERVICE_URL: f.baseUrl, CONTENT_SERVICE_SPACE: f.space })
    expect(out).toContain('/blog/hello Hello')
    expect(out).toContain('Second 1 related')
    expect(out).toContain('404 not_found')
    // Sub-paths and types resolve from the installed package.
    const sub = await run(['node', '-e', "import('@content-service/sdk/image').then((m) => console.log(typeof m.srcset))"], project)
    expect(sub.trim()).toBe('function')
    expect(readdirSync(join(project, 'node_modules', '@content-service', 'sdk', 'dist')).sort()).toContain('index.d.ts')
  })
})
