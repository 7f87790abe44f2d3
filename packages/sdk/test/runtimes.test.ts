/**
 * The SDK's test program (program.js) against a real listening server, in each runtime the package promises: Bun (this
 * process), Node (a subprocess of the machine's node), Chromium (playwright-core, the page on another origin than the
 * API: CORS for real) and workerd (the `workerd` package's binary, the program bundled as a Worker). Each runs the built
 * package (dist/), as an installed copy would.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { type TestApp, testApp } from '../../../test/helpers/app'
import { buildSdk, sdkFixture } from './fixture'

setDefaultTimeout(180_000)

const PKG = join(import.meta.dir, '..')
const DIST = join(PKG, 'dist')
const CHROMIUM = '/usr/bin/chromium'
const WORKERD = join(PKG, '..', '..', 'node_modules', '.bin', 'workerd')

let t: TestApp
let server: { port: number | undefined; stop(force?: boolean): unknown }
let env: { baseUrl: string; space: string; previewToken: string; formSlug: string }
let work: string
let bundle: string
const closers: (() => unknown)[] = []

beforeAll(async () => {
  await buildSdk()
  t = await testApp()
  server = t.app.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 20, idleTimeout: 30 })
  const f = await sdkFixture(t, `http://127.0.0.1:${server.port}`)
  env = { baseUrl: f.baseUrl, space: f.space, previewToken: f.previewToken, formSlug: f.formSlug }
  work = mkdtempSync(join(tmpdir(), 'sdk-runtimes-'))
  // One file for the browser and workerd: the built package, its dependency and the program.
  const entry = join(work, 'entry.js')
  writeFileSync(
    entry,
    `import * as sdk from ${JSON.stringify(join(DIST, 'index.js'))}
import * as image from ${JSON.stringify(join(DIST, 'image.js'))}
import * as richtext from ${JSON.stringify(join(DIST, 'richtext.js'))}
import * as editable from ${JSON.stringify(join(DIST, 'editable.js'))}
import { run } from ${JSON.stringify(join(import.meta.dir, 'program.js'))}
export const runAll = (env) => run(sdk, image, richtext, editable, env)
export default {
  async fetch(_request, bindings) {
    try {
      return Response.json({ passed: await runAll(JSON.parse(bindings.ENV)) })
    } catch (err) {
      return Response.json({ error: String(err && err.stack || err) }, { status: 500 })
    }
  },
}
`,
  )
  const out = await Bun.build({ entrypoints: [entry], outdir: work, format: 'esm', target: 'browser', naming: 'bundle.js' })
  if (!out.success) throw new AggregateError(out.logs, 'bundle failed')
  bundle = join(work, 'bundle.js')
}, 240_000)

afterAll(async () => {
  for (const c of closers) c()
  server?.stop(true)
  await t?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

const ALL = ['story', 'cache', 'stories', 'relations', 'changes', 'preview', 'errors', 'retry', 'surfaces', 'subpaths']

describe('the same test program passes in every runtime', () => {
  test('Bun', async () => {
    const load = (f: string) => import(pathToFileURL(join(DIST, f)).href)
    const { run } = await import('./program.js')
    expect(await run(await load('index.js'), await load('image.js'), await load('richtext.js'), await load('editable.js'), env)).toEqual(ALL)
  })

  test('Node (the machine’s node, ESM)', async () => {
    const script = `
      const load = (f) => import(${JSON.stringify(pathToFileURL(DIST).href)} + '/' + f)
      const { run } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dir, 'program.js')).href)})
      const passed = await run(await load('index.js'), await load('image.js'), await load('richtext.js'), await load('editable.js'), ${JSON.stringify(env)})
      console.log(JSON.stringify({ passed, version: process.version }))`
    // Asynchronously: the server answering it runs in this process.
    const p = Bun.spawn(['node', '--input-type=module', '-e', script], { stdout: 'pipe', stderr: 'pipe' })
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
    if (code !== 0) throw new Error(stderr)
    const out = JSON.parse(stdout.trim().split('\n').pop()!)
    expect(out.passed).toEqual(ALL)
    expect(Number(out.version.slice(1).split('.')[0])).toBeGreaterThanOrEqual(20)
  })

  test.skipIf(!existsSync(CHROMIUM))('Chromium (a page on another origin than the API)', async () => {
    const { chromium } = await import('playwright-core')
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
    try {
      const page = await browser.newPage()
      // The page comes from another loopback server than the API: cross-origin (CORS for real), same address space.
      const site = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        fetch: (r) =>
          new URL(r.url).pathname === '/bundle.js'
            ? new Response(Bun.file(bundle), { headers: { 'Content-Type': 'text/javascript' } })
            : new Response('<!doctype html><title>sdk</title>', { headers: { 'Content-Type': 'text/html' } }),
      })
      closers.push(() => site.stop(true))
      await page.goto(`http://127.0.0.1:${site.port}/`)
      const passed = await page.evaluate(async (e) => {
        const m = await import(/* page-relative */ '/bundle.js' as string)
        return m.runAll(e)
      }, env)
      expect(passed).toEqual(ALL)
    } finally {
      await browser.close()
    }
  })

  test('workerd (the Worker runtime of the `workerd` package)', async () => {
    expect(existsSync(WORKERD)).toBe(true)
    const port = 20000 + Math.floor(Math.random() * 20000)
    const config = join(work, 'config.capnp')
    writeFileSync(
      config,
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    # The test server listens on 127.0.0.1: the Worker may reach loopback addresses (the default outbound may not).
    (name = "loopback", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "bundle.js")],
  compatibilityDate = "2025-01-01",
  compatibilityFlags = ["nodejs_compat"],
  globalOutbound = "loopback",
  bindings = [(name = "ENV", text = ${JSON.stringify(JSON.stringify(env))})],
);
`,
    )
    const proc = Bun.spawn([WORKERD, 'serve', config, '--verbose'], { stdout: 'pipe', stderr: 'pipe' })
    try {
      let res: Response | null = null
      for (let i = 0; i < 100 && !res; i++) {
        res = await fetch(`http://127.0.0.1:${port}/`).catch(() => null)
        if (!res) await Bun.sleep(100)
      }
      if (!res) throw new Error(`workerd did not start: ${await new Response(proc.stderr).text()}`)
      const body = (await res.json()) as { passed?: string[]; error?: string }
      if (body.error) throw new Error(body.error)
      expect(body.passed).toEqual(ALL)
    } finally {
      proc.kill()
      await proc.exited
    }
  })
})
