/**
 * The admin web app (admin/) in a real browser: Debian's Chromium driven by playwright-core against a listening
 * service (the whole runtime behind Bun.serve). An editor's journey — register, a Space, a Story built from a
 * blueprint, a 422 shown at its field, save, publish, the CDN answers — plus what must hold on every screen: the CSP
 * and framing headers, hostile content that stays text, sign-in and back after a 401, the 409 dialog, keyboard
 * reordering of blocks, and axe-core finding no serious or critical violation.
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import type { Server } from 'bun'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { hasChromium, launchChromium, warnNoChromium } from '../helpers/browser'
import { type TestApp, testApp } from '../helpers/app'
import { axeViolations, until } from './helpers'
import { photo, pngOf } from '../helpers/images'
import { type SmtpSink, startSmtpSink } from '../helpers/smtp'

setDefaultTimeout(120_000)

warnNoChromium('the admin app browser tests')

const HOSTILE = `<img src=x onerror="window.__pwned=1">`
const PASSWORD = 'correct horse battery staple'

let t: TestApp
let sink: SmtpSink
let server: Server<undefined>
let origin: string
let browser: Browser
let context: BrowserContext
let page: Page
const pageErrors: string[] = []
const email = `editor-${Math.random().toString(36).slice(2, 8)}@example.com`
let spaceSlug = ''

/** The API as the test's own client (a second device of the same user). */
async function call(method: string, path: string, token: string | null, body?: unknown) {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null }
}

/** ADMIN_SCREENSHOTS=<folder>: the main screens as PNGs, for the docs. */
const SHOTS = process.env.ADMIN_SCREENSHOTS
async function shot(name: string) {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
}

const tokenInPage = () => page.evaluate(() => sessionStorage.getItem('content-service.token'))

interface Chunk {
  /** Brotli-compressed bytes on the wire. */
  bytes: number
  /** Static imports (loaded with the chunk) and lazy ones (`import("…")`), as /admin/assets/ paths. */
  imports: string[]
  lazy: string[]
}

/**
 * Every chunk reachable from `entries`, fetched as the browser would: each must answer 200 as JavaScript with immutable
 * caching, compressed, and name the others below /admin/assets/ (the bundle rebases the bundler's root-absolute URLs).
 */
async function chunkGraph(entries: string[]): Promise<Map<string, Chunk>> {
  const graph = new Map<string, Chunk>()
  const queue = [...entries]
  while (queue.length) {
    const src = queue.shift() as string
    if (graph.has(src)) continue
    expect(src).toMatch(/^\/admin\/assets\/[\w.-]+\.js$/)
    const res = await fetch(`${origin}${src}`, { headers: { 'Accept-Encoding': 'br' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    const text = await res.text()
    const bytes = res.headers.get('content-encoding') === 'br' ? Number(res.headers.get('content-length')) : Buffer.byteLength(text)
    expect(text).not.toMatch(/"\/chunk-[\w]+\.js"/)
    const imports = [...text.matchAll(/(?:from|import)\s*"(\/admin\/assets\/[\w.-]+\.js)"/g)].map((m) => m[1])
    const lazy = [...text.matchAll(/import\(\s*"(\/admin\/assets\/[\w.-]+\.js)"\s*\)/g)].map((m) => m[1])
    graph.set(src, { bytes, imports, lazy })
    queue.push(...imports, ...lazy)
  }
  return graph
}

describe.skipIf(!hasChromium)('the admin app in Chromium', () => {
  beforeAll(async () => {
    // As a public install runs: sign-ups past the first account confirm their address by mail, with links to this
    // server (PUBLIC_URL), mailed to an SMTP sink.
    sink = await startSmtpSink()
    server = Bun.serve({ port: 0, hostname: '127.0.0.1', development: false, fetch: (request, s) => t.app.fetch(request, s) })
    origin = `http://127.0.0.1:${server.port}`
    t = await testApp({ publicUrl: origin }, { SMTP_URL: sink.url, REGISTRATION_VERIFY: 'on' })
    browser = await launchChromium()
    context = await browser.newContext({ baseURL: origin, viewport: { width: 1280, height: 800 } })
    page = await context.newPage()
    page.on('pageerror', (e) => pageErrors.push(String(e)))
    page.on('dialog', (d) => {
      pageErrors.push(`unexpected dialog: ${d.message()}`)
      void d.dismiss()
    })
  }, 120_000)

  afterAll(async () => {
    await context?.close()
    await browser?.close()
    server?.stop(true)
    await t?.close()
    await sink?.stop()
  }, 60_000)

  test('/admin is served with a strict CSP, no framing, immutable compressed assets, and under 200 KB of compressed JS', async () => {
    const res = await fetch(`${origin}/admin/some/client/route`, { headers: { 'Accept-Encoding': 'br, gzip' } })
    expect(res.status).toBe(200)
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain('unsafe-inline')
    expect(csp).not.toContain('unsafe-eval')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect(res.headers.get('cache-control')).toBe('no-cache')
    const html = await res.text()
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/) // no inline script
    const scripts = [...html.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1])
    const styles = [...html.matchAll(/<link[^>]*href="([^"]+\.css)"/g)].map((m) => m[1])
    expect(scripts.length).toBeGreaterThan(0)
    let jsBytes = 0
    for (const src of [...scripts, ...styles]) {
      expect(src).toMatch(/^\/admin\/assets\/[\w.-]+\.(js|css)$/)
      const a = await fetch(`${origin}${src}`, { headers: { 'Accept-Encoding': 'br' } })
      expect(a.status).toBe(200)
      expect(a.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      expect(a.headers.get('content-encoding')).toBe('br')
      // Bytes on the wire (fetch hands back the decoded body).
      const bytes = Number(a.headers.get('content-length'))
      await a.arrayBuffer()
      if (src.endsWith('.js')) jsBytes += bytes
      const gz = await fetch(`${origin}${src}`, { headers: { 'Accept-Encoding': 'gzip' } })
      expect(gz.headers.get('content-encoding')).toBe('gzip')
      await gz.arrayBuffer()
    }
    // The first load is the HTML's scripts and what they import statically (the chunks shared with the screens).
    const graph = await chunkGraph(scripts)
    const firstLoad = new Set<string>()
    const visit = (src: string) => {
      if (firstLoad.has(src)) return
      firstLoad.add(src)
      for (const dep of graph.get(src)?.imports ?? []) visit(dep)
    }
    for (const src of scripts) visit(src)
    for (const src of firstLoad) if (!scripts.includes(src)) jsBytes += graph.get(src)?.bytes ?? 0
    console.log(`admin first load: ${jsBytes} bytes of brotli-compressed JS in ${firstLoad.size} files`)
    expect(jsBytes).toBeLessThan(200 * 1024)
    expect((await fetch(`${origin}/admin/assets/missing.js`)).status).toBe(404)
    // The HTML revalidates (no-cache + ETag); a refused coding is not used.
    const again = await fetch(`${origin}/admin`, { headers: { 'If-None-Match': res.headers.get('etag') ?? '' } })
    expect(again.status).toBe(304)
    const js = await fetch(`${origin}${scripts[0]}`, { headers: { 'Accept-Encoding': 'br;q=0, gzip' } })
    expect(js.headers.get('content-encoding')).toBe('gzip')
    await js.arrayBuffer()
  })

  test('every screen is a lazily loaded chunk of its own, served immutable as JavaScript, each under 60 KB compressed', async () => {
    const html = await (await fetch(`${origin}/admin`)).text()
    const scripts = [...html.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1])
    const graph = await chunkGraph(scripts)
    const firstLoad = new Set<string>()
    const visit = (src: string, into: Set<string>) => {
      if (into.has(src)) return
      into.add(src)
      for (const dep of graph.get(src)?.imports ?? []) visit(dep, into)
    }
    for (const src of scripts) visit(src, firstLoad)
    // The screens: what the first load imports lazily (router.tsx's lazyRouteComponent). Opening one costs its chunk and
    // the chunks it imports that the first load did not bring.
    const screens = [...new Set([...firstLoad].flatMap((src) => graph.get(src)?.lazy ?? []))]
    expect(screens.length).toBeGreaterThanOrEqual(10) // sign-in, register, invite, spaces, tree, editor, blueprints, assets, members, tokens
    const sizes: string[] = []
    for (const screen of screens) {
      const needs = new Set<string>()
      visit(screen, needs)
      const bytes = [...needs].filter((src) => !firstLoad.has(src)).reduce((sum, src) => sum + (graph.get(src)?.bytes ?? 0), 0)
      sizes.push(`${screen.split('/').pop()}=${bytes}`)
      expect(bytes).toBeLessThanOrEqual(60 * 1024)
    }
    // Lazily loaded below a screen: the rich-text editor (ProseMirror), with the first richtext field only.
    const deeper = [...graph.values()].flatMap((c) => c.lazy).filter((src) => !firstLoad.has(src) && !screens.includes(src))
    expect(deeper.length).toBeGreaterThanOrEqual(1)
    console.log(`admin screen chunks (brotli bytes beyond the first load): ${sizes.join(' ')}; below them: ${deeper.map((src) => `${src.split('/').pop()}=${graph.get(src)?.bytes}`).join(' ')}`)
  })

  test('sign-in has no serious or critical accessibility violations; /admin without a session goes to sign-in', async () => {
    await page.goto('/admin')
    await page.waitForURL(/\/admin\/sign-in/)
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await shot('sign-in')
    expect(await axeViolations(page)).toEqual([])
  })

  test('register, then create a Space: empty states say what to do next, the switcher shows the role', async () => {
    await page.getByRole('link', { name: 'Create one' }).click()
    await page.getByLabel('Your name').fill('Edna Editor')
    await page.getByLabel('E-mail').fill(email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.getByRole('heading', { name: 'No Space yet' }).waitFor()
    await shot('spaces-empty')
    // The token is in sessionStorage (this tab), never in localStorage.
    expect(await tokenInPage()).toMatch(/\./)
    expect(await page.evaluate(() => Object.keys(localStorage).length)).toBe(0)

    spaceSlug = `site-${Math.random().toString(36).slice(2, 6)}`
    await page.getByLabel('Name').fill('Marketing site')
    await page.getByLabel('Slug').fill(spaceSlug)
    await page.getByRole('button', { name: 'Create Space' }).click()
    await page.getByRole('heading', { name: 'No Stories yet' }).waitFor()
    expect(page.url()).toBe(`${origin}/admin/spaces/${spaceSlug}`)
    await page.getByTestId('role').getByText('admin').waitFor()
    expect(await page.getByLabel('Space', { exact: true }).inputValue()).toBe(spaceSlug)
  })

  test('a Story built from blueprints: 422 at its field, save, publish, and the CDN answers the content', async () => {
    const token = await tokenInPage()
    // Blueprints through the API (the schema editor is not in the app yet).
    expect(
      (
        await call('POST', `/v1/spaces/${spaceSlug}/components`, token, {
          name: 'page',
          display_name: 'Page',
          is_root: true,
          is_nestable: false,
          schema: {
            title: { type: 'text', required: true },
            intro: { type: 'textarea' },
            cta: { type: 'link' },
            image: { type: 'asset' },
            keywords: { type: 'tags' },
            channels: { type: 'multiselect', options: ['web', 'app'] },
            body: { type: 'blocks' },
          },
        })
      ).status,
    ).toBe(201)
    // The nested component through the app's schema editor, with the API's 422 shown at the field it names.
    await page.getByRole('link', { name: 'Components' }).click()
    await page.getByRole('list', { name: 'Components' }).getByText('Page', { exact: true }).waitFor()
    await page.getByRole('button', { name: 'New component' }).click()
    const form = page.getByRole('form', { name: 'New component' })
    await form.getByLabel('Name', { exact: true }).fill('teaser')
    await form.getByLabel('Display name').fill('Teaser')
    await form.getByLabel('Top level (a Story can start with it)').uncheck()
    await form.getByLabel('Nestable (inside a blocks field)').check()
    const fieldSpecs: [string, string][] = [
      ['headline', 'text'],
      ['count', 'number'],
      ['featured', 'boolean'],
      ['tone', 'select'],
    ]
    for (const [i, [name, type]] of fieldSpecs.entries()) {
      await form.getByRole('button', { name: 'Add field' }).click()
      const row = form.locator('[data-schema-field]').nth(i)
      await row.getByLabel('Field name').fill(name)
      await row.getByLabel('Type').selectOption(type)
    }
    const tone = form.locator('[data-schema-field="tone"]')
    await tone.getByLabel('Translatable').uncheck()
    await form.getByRole('button', { name: 'Create component' }).click()
    await tone.getByText('options: is required for select and multiselect fields').waitFor()
    await shot('components-editor')
    await tone.getByLabel('Options (comma-separated)').fill('calm, loud')
    await form.getByRole('button', { name: 'Create component' }).click()
    await page.getByRole('list', { name: 'Components' }).getByText('Teaser', { exact: true }).waitFor()
    expect(await axeViolations(page)).toEqual([])
    const teaser = (await call('GET', `/v1/spaces/${spaceSlug}/components/teaser`, token)).body.data
    expect(teaser).toMatchObject({ is_root: false, is_nestable: true })
    expect(teaser.schema).toEqual({
      headline: { type: 'text' },
      count: { type: 'number' },
      featured: { type: 'boolean' },
      tone: { type: 'select', options: ['calm', 'loud'], translatable: false },
    })
    await page.getByRole('link', { name: 'Stories', exact: true }).click()

    await page.getByRole('button', { name: 'New Story' }).click()
    await page.getByRole('dialog').getByLabel('Name').fill('Home')
    await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click()
    await page.waitForURL(/\/admin\/spaces\/[^/]+\/stories\/[0-9a-f-]{36}$/)
    const uuid = page.url().split('/').pop()!
    await page.getByRole('heading', { name: 'Home' }).waitFor()

    // Add a page block and save it without its required title and with a javascript: link: the API's 422s are
    // shown at their fields (the link's message is keyed `blocks/0/cta/url`).
    await page.getByRole('button', { name: 'Add', exact: true }).click()
    const cta = page.locator('[data-field-path="blocks/0/cta"]').getByRole('textbox')
    await cta.fill('javascript:alert(1)')
    await page.getByRole('button', { name: 'Save' }).click()
    const titleRow = page.locator('[data-field-path="blocks/0/title"]')
    await titleRow.getByText('is required').waitFor()
    expect(await titleRow.getByRole('textbox').getAttribute('aria-invalid')).toBe('true')
    await page.locator('[data-field-path="blocks/0/cta"]').getByText(/must be an http\(s\)/).waitFor()
    await page.getByRole('region', { name: 'Problems' }).getByText('blocks/0/title').waitFor()
    await cta.fill('/contact')
    const keywords = page.locator('[data-field-path="blocks/0/keywords"]').getByRole('textbox')
    await keywords.fill('news, launch')
    await keywords.press('Enter')
    await page.locator('[data-field-path="blocks/0/channels"]').getByLabel('app').check()

    // Fill it (with markup that must stay text), add nested teasers, save.
    await titleRow.getByRole('textbox').fill(`Welcome ${HOSTILE}`)
    const body = page.locator('[data-field-path="blocks/0/body"]')
    await body.getByLabel('Add block').selectOption('teaser')
    await body.getByRole('button', { name: 'Add', exact: true }).click()
    await body.getByRole('button', { name: 'Add', exact: true }).click()
    const teasers = body.locator('li[data-block-uid]')
    expect(await teasers.count()).toBe(2)
    await teasers.nth(0).getByLabel(/^headline/).fill('First')
    await teasers.nth(1).getByLabel(/^headline/).fill('Second')
    await teasers.nth(1).getByLabel(/^count/).fill('42')
    await teasers.nth(1).getByLabel(/^featured/).check()
    await teasers.nth(1).getByLabel(/^tone/).selectOption('loud')

    // Keyboard-only reordering: Alt+↑ on the second teaser's handle moves it first, and focus stays with it.
    await teasers.nth(1).locator('[data-block-handle]').focus()
    await page.keyboard.press('Alt+ArrowUp')
    await until(() => teasers.nth(0).getByLabel(/^headline/).inputValue(), 'Second')
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-block-handle'))).toBe(await teasers.nth(0).getAttribute('data-block-uid'))

    // An image, uploaded from the asset field's picker and chosen there.
    await page.getByRole('button', { name: 'Choose an asset for image' }).click()
    const picker = page.getByRole('dialog', { name: 'Choose an asset' })
    await picker.getByLabel('Upload files').setInputFiles([{ name: 'hero.png', mimeType: 'image/png', buffer: Buffer.from(pngOf(photo(96, 64, 7))) }])
    await picker.getByRole('button', { name: 'Choose hero.png' }).click()
    await picker.waitFor({ state: 'hidden' })
    await page.locator('[data-field-path="blocks/0/image"]').getByText('hero.png').waitFor()

    await page.keyboard.press('Control+s')
    await page.getByText(/^Saved \(version \d+\)\.$/).waitFor()
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined()

    // The document the API holds is the one edited.
    const saved = await call('GET', `/v1/spaces/${spaceSlug}/stories/${uuid}`, token)
    const doc = saved.body.data.content
    expect(doc.blocks[0].title).toBe(`Welcome ${HOSTILE}`)
    expect(doc.blocks[0]).toMatchObject({ cta: { url: '/contact' }, keywords: ['news', 'launch'], channels: ['app'] })
    const hero = (await call('GET', `/v1/spaces/${spaceSlug}/assets?q=hero`, token)).body.data[0]
    expect(doc.blocks[0].image).toEqual({ uuid: hero.uuid })
    expect(doc.blocks[0].body.map((b: { headline: string }) => b.headline)).toEqual(['Second', 'First'])
    expect(doc.blocks[0].body[0]).toMatchObject({ component: 'teaser', count: 42, featured: true, tone: 'loud' })
    await shot('story-editor')

    expect(await axeViolations(page)).toEqual([])

    // Publish, with a confirmation that names the public URL.
    await page.getByRole('button', { name: 'Publish' }).click()
    const confirm = page.getByRole('dialog')
    await confirm.getByText('becomes public').waitFor()
    await confirm.getByRole('button', { name: 'Publish' }).click()
    await page.getByText('Published.', { exact: true }).waitFor()
    const url = await page.getByTestId('public-url').textContent()
    expect(url).toBe(`${origin}/v1/cdn/${spaceSlug}/stories/home`)
    const cdn = await call('GET', new URL(url!).pathname, null)
    expect(cdn.status).toBe(200)
    expect(JSON.stringify(cdn.body)).toContain('Welcome <img src=x onerror=')
    // The public read resolves the image to its public URL.
    expect(cdn.body.data.content.blocks[0].image).toMatchObject({ uuid: hero.uuid, url: expect.stringContaining(hero.uuid) })
    expect(pageErrors).toEqual([])
  })

  test('hostile names and field values render as text in every screen: no element is made, no script runs', async () => {
    const token = await tokenInPage()
    const created = await call('POST', `/v1/spaces/${spaceSlug}/stories`, token, { name: HOSTILE, slug: 'hostile' })
    expect(created.status).toBe(201)
    await page.goto(`/admin/spaces/${spaceSlug}`)
    await page.getByText(HOSTILE, { exact: true }).first().waitFor()
    await page.goto(`/admin/spaces/${spaceSlug}?q=onerror`)
    await page.getByRole('heading', { name: /Results for/ }).waitFor()
    await page.getByRole('region', { name: 'Search results' }).getByText(HOSTILE).waitFor()
    await page.goto(`/admin/spaces/${spaceSlug}/stories/${created.body.data.uuid}`)
    await page.getByRole('heading', { name: HOSTILE }).waitFor()
    expect(await page.locator('img[src="x"]').count()).toBe(0)
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined()
    expect(pageErrors).toEqual([])
  })

  test('rename and search by name in the Story tree; badges show draft, published and changed', async () => {
    await page.goto(`/admin/spaces/${spaceSlug}`)
    const tree = page.getByRole('list', { name: 'Story tree' })
    await tree.getByText('Published', { exact: true }).waitFor()
    await tree.getByText('Draft', { exact: true }).waitFor()
    await page.getByRole('button', { name: 'Rename Home' }).click()
    await page.getByRole('dialog').getByLabel('New name').fill('Start page')
    await page.getByRole('dialog').getByRole('button', { name: 'Rename' }).click()
    await tree.getByRole('link', { name: 'Start page' }).waitFor()
    // A rename is a change since publish.
    await tree.getByText('Changed since publish').waitFor()
    await shot('story-tree')
    await page.getByRole('searchbox', { name: 'Search Stories by name' }).fill('start')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByRole('region', { name: 'Search results' }).getByRole('link', { name: 'Start page' }).waitFor()
  })

  test('a folder, and a Story created inside it, show nested in the tree', async () => {
    await page.goto(`/admin/spaces/${spaceSlug}`)
    await page.getByRole('button', { name: 'New folder' }).click()
    await page.getByRole('dialog').getByLabel('Name').fill('Blog')
    await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click()
    const tree = page.getByRole('list', { name: 'Story tree' })
    await tree.getByText('Blog', { exact: true }).waitFor()
    await page.getByRole('button', { name: 'New Story' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByLabel('Name').fill('First post')
    await dialog.getByLabel('Folder').selectOption({ label: 'Blog' })
    await dialog.getByRole('button', { name: 'Create' }).click()
    await page.getByRole('heading', { name: 'First post' }).waitFor()
    await page.getByText('/blog/first-post · version 1').waitFor()
    // Unsaved changes: leaving asks first.
    await page.getByRole('button', { name: 'Add', exact: true }).click()
    await page.getByRole('link', { name: '← Stories' }).click()
    const leave = page.getByRole('dialog', { name: 'Leave without saving?' })
    await leave.getByRole('button', { name: 'Stay' }).click()
    await page.getByRole('heading', { name: 'First post' }).waitFor()
    await page.getByRole('link', { name: '← Stories' }).click()
    await leave.getByRole('button', { name: 'Leave without saving' }).click()
    // The post is a child of the folder's item.
    await tree.getByRole('listitem').filter({ hasText: 'Blog' }).getByRole('link', { name: 'First post' }).waitFor()
  })

  test('move by drag and drop onto a folder; bulk publish and bulk move with a confirmation', async () => {
    const token = await tokenInPage()
    for (const name of ['Alpha', 'Beta']) {
      expect((await call('POST', `/v1/spaces/${spaceSlug}/stories`, token, { name, slug: name.toLowerCase() })).status).toBe(201)
    }
    await page.goto(`/admin/spaces/${spaceSlug}`)
    const tree = page.getByRole('list', { name: 'Story tree' })
    const row = (name: string) => tree.locator('[data-tree-uuid]').filter({ has: page.getByRole('link', { name, exact: true }) })
    const folder = tree.locator('[data-tree-uuid]').filter({ hasText: 'Blog' }).first()
    await row('Alpha').dragTo(folder)
    await page.getByText('Moved.', { exact: true }).waitFor()
    await tree.getByText('/blog/alpha', { exact: true }).waitFor()

    await page.getByRole('checkbox', { name: 'Select Alpha' }).check()
    await page.getByRole('checkbox', { name: 'Select Beta' }).check()
    const bar = page.getByRole('toolbar', { name: 'Selected Stories' })
    await bar.getByText('2 selected').waitFor()
    await bar.getByRole('button', { name: 'Publish', exact: true }).click()
    await page.getByRole('dialog', { name: 'Publish 2 item(s)?' }).getByRole('button', { name: 'Publish' }).click()
    await page.getByText('2 published.', { exact: true }).waitFor()
    await row('Beta').getByText('Published', { exact: true }).waitFor()
    expect((await call('GET', `/v1/cdn/${spaceSlug}/stories/blog/alpha`, null)).status).toBe(200)

    await page.getByRole('checkbox', { name: 'Select Alpha' }).check()
    await bar.getByRole('button', { name: 'Move to…' }).click()
    const dialog = page.getByRole('dialog', { name: 'Move 1 item(s)' })
    await dialog.getByLabel('Into folder').selectOption({ label: '(top level)' })
    await dialog.getByRole('button', { name: 'Move' }).click()
    await page.getByText('1 moved.', { exact: true }).waitFor()
    await tree.getByText('/alpha', { exact: true }).waitFor()
    expect(await axeViolations(page)).toEqual([])
  })

  test('a save over someone else’s newer version opens the 409 dialog; reload shows theirs', async () => {
    const token = await tokenInPage()
    const list = await call('GET', `/v1/spaces/${spaceSlug}/stories?q=start`, token)
    const story = list.body.data[0]
    await page.goto(`/admin/spaces/${spaceSlug}/stories/${story.uuid}`)
    const title = page.locator('[data-field-path="blocks/0/title"]').getByRole('textbox')
    await title.fill('Mine')
    // Meanwhile, another device saves.
    const current = (await call('GET', `/v1/spaces/${spaceSlug}/stories/${story.uuid}`, token)).body.data
    const theirs = structuredClone(current.content)
    theirs.blocks[0].title = 'Theirs'
    expect((await call('PUT', `/v1/spaces/${spaceSlug}/stories/${story.uuid}`, token, { content: theirs, expected_version_no: current.version_no })).status).toBe(200)
    await page.getByRole('button', { name: 'Save' }).click()
    const dialog = page.getByRole('dialog', { name: 'Someone saved this Story meanwhile' })
    await dialog.waitFor()
    await shot('conflict-dialog')
    await dialog.getByRole('button', { name: 'Reload theirs' }).click()
    await until(() => title.inputValue(), 'Theirs')
  })

  test('a translation: the locale switcher offers to start it from the own locale; shared fields stay read-only', async () => {
    const token = await tokenInPage()
    expect((await call('POST', `/v1/spaces/${spaceSlug}/locales`, token, { code: 'de', fallback: 'en' })).status).toBe(201)
    const story = (await call('GET', `/v1/spaces/${spaceSlug}/stories?q=start`, token)).body.data[0]
    await page.goto(`/admin/spaces/${spaceSlug}/stories/${story.uuid}`)
    await page.getByRole('heading', { name: 'Start page' }).waitFor()
    await page.getByLabel('Locale').selectOption('de')
    await page.getByRole('heading', { name: 'No “de” translation yet' }).waitFor()
    await page.getByRole('button', { name: 'Start from en' }).click()
    const title = page.locator('[data-field-path="blocks/0/title"]').getByRole('textbox')
    await until(() => title.inputValue(), 'Theirs')
    await title.fill('Willkommen')
    const tone = page.locator('[data-field-path="blocks/0/body/0/tone"]')
    expect(await tone.getByRole('combobox').isDisabled()).toBe(true)
    await tone.getByText('Not translated').waitFor()
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText(/^Saved \(version \d+\)\.$/).waitFor()
    expect(page.url()).toContain('lang=de')
    const de = await call('GET', `/v1/spaces/${spaceSlug}/stories/${story.uuid}?lang=de`, token)
    expect(de.body.data.content.blocks[0].title).toBe('Willkommen')
    const en = await call('GET', `/v1/spaces/${spaceSlug}/stories/${story.uuid}`, token)
    expect(en.body.data.content.blocks[0].title).toBe('Theirs')
    expect(en.body.data.translations.sort()).toEqual(['de', 'en'])
    // Back to the own locale: its content, not the translation's.
    await page.getByLabel('Locale').selectOption('en')
    await until(() => title.inputValue(), 'Theirs')
    expect(await axeViolations(page)).toEqual([])
  })

  test('a 401 (the token was revoked) sends the user to sign-in, and back to where they were', async () => {
    const token = await tokenInPage()
    const story = (await call('GET', `/v1/spaces/${spaceSlug}/stories?q=start`, token)).body.data[0]
    const where = `/admin/spaces/${spaceSlug}/stories/${story.uuid}`
    await page.goto(where)
    await page.getByRole('heading', { name: 'Start page' }).waitFor()
    expect((await call('POST', '/v1/auth/logout', token)).status).toBe(204)
    await page.reload()
    await page.waitForURL(/\/admin\/sign-in\?redirect=/)
    expect(await tokenInPage()).toBeNull()
    await page.getByLabel('E-mail').fill(email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${origin}${where}`)
    await page.getByRole('heading', { name: 'Start page' }).waitFor()
  })

  test('unpublish asks first; then the CDN no longer answers the Story', async () => {
    await page.getByRole('button', { name: 'Unpublish' }).click()
    const confirm = page.getByRole('dialog', { name: /^Unpublish/ })
    await confirm.getByText('stops being public').waitFor()
    await confirm.getByRole('button', { name: 'Unpublish' }).click()
    await page.getByText('Unpublished: the Story is a draft again.').waitFor()
    expect((await call('GET', `/v1/cdn/${spaceSlug}/stories/home`, null)).status).toBe(404)
  })

  test('versions: restoring an old one saves it as a new version, after a confirmation', async () => {
    await page.getByText('Versions', { exact: true }).click()
    const list = page.getByRole('list', { name: 'Versions' })
    await list.getByText('current').waitFor()
    await list.getByRole('button', { name: 'Restore version 2' }).click()
    await page.getByRole('dialog', { name: 'Restore version 2?' }).getByRole('button', { name: 'Restore' }).click()
    const title = page.locator('[data-field-path="blocks/0/title"]').getByRole('textbox')
    await until(() => title.inputValue(), `Welcome ${HOSTILE}`)
    const token = await tokenInPage()
    const uuid = page.url().split('/').pop()!
    expect((await call('GET', `/v1/spaces/${spaceSlug}/stories/${uuid}`, token)).body.data.content.blocks[0].title).toBe(`Welcome ${HOSTILE}`)
  })

  test('archive asks first; the Story then shows as archived', async () => {
    const token = await tokenInPage()
    const hostile = (await call('GET', `/v1/spaces/${spaceSlug}/stories?q=onerror`, token)).body.data[0]
    await page.goto(`/admin/spaces/${spaceSlug}/stories/${hostile.uuid}`)
    await page.getByRole('button', { name: 'Archive' }).click()
    const dialog = page.getByRole('dialog', { name: /^Archive/ })
    await dialog.getByText('can only be deleted').waitFor()
    await dialog.getByRole('button', { name: 'Archive' }).click()
    await page.getByText('Archived.', { exact: true }).waitFor()
    await page.getByRole('link', { name: '← Stories' }).click()
    // It left the tree, and is listed with the archived ones.
    await page.getByRole('list', { name: 'Story tree' }).getByText('Blog', { exact: true }).waitFor()
    expect(await page.getByRole('list', { name: 'Story tree' }).getByText(HOSTILE).count()).toBe(0)
    await page.getByText('Archived Stories', { exact: true }).click()
    const archived = page.getByRole('list', { name: 'Archived Stories' })
    await archived.getByText(HOSTILE).waitFor()
    await archived.getByText('Archived', { exact: true }).waitFor()
  })

  test('sign-out calls logout: the token no longer works', async () => {
    const token = await tokenInPage()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    expect(await tokenInPage()).toBeNull()
    expect((await call('GET', '/v1/auth/me', token)).status).toBe(401)
    expect(pageErrors).toEqual([])
  })

  test('register with a first Space and sample content (one step, POST /v1/onboard): check your mail, confirm, sign in, the tree shows the samples', async () => {
    await page.getByRole('link', { name: 'Create one' }).click()
    await page.getByLabel('Your name').fill('Olga Onboard')
    const address = `onboard-${Math.random().toString(36).slice(2, 8)}@example.com`
    await page.getByLabel('E-mail').fill(address)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByLabel('Create my first Space now').check()
    const name = `Bäckerei ${Math.random().toString(36).slice(2, 6)}`
    await page.getByLabel('Space name').fill(name)
    expect(await page.getByLabel(/Add sample content/).isChecked()).toBe(true)
    await page.getByRole('button', { name: 'Create account' }).click()
    // Not the service's first account: nothing exists until the mailed link is followed.
    await page.getByRole('heading', { name: 'Check your mail' }).waitFor()
    expect(await tokenInPage()).toBeNull()
    expect(await axeViolations(page)).toEqual([])
    await t.kernel.jobs.runDueJobs()
    const mail = (await sink.waitFor(1)).find((m) => m.to.includes(address))!
    const link = new RegExp(`${origin.replace(/[.]/g, '\\.')}/confirm-sign-up/[A-Za-z0-9_-]{43}`).exec(mail.parsed.text ?? '')![0]
    await page.goto(link)
    await page.getByRole('button', { name: 'Confirm my address' }).click()
    await page.getByText('Your address is confirmed and your account is ready.').waitFor()
    await page.getByRole('link', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await page.getByLabel('E-mail').fill(address)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    const slug = name.toLowerCase().replace('ä', 'a').replace(' ', '-')
    await until(async () => (await tokenInPage()) !== null, true)
    await page.goto(`/admin/spaces/${slug}`)
    await page.getByTestId('role').getByText('admin').waitFor()
    const token = await tokenInPage()
    const stories = (await call('GET', `/v1/spaces/${slug}/stories?per_page=100`, token)).body.data as { name: string }[]
    expect(stories.length).toBeGreaterThan(0)
    await page.getByText(stories[0].name, { exact: true }).first().waitFor()
    expect(await axeViolations(page)).toEqual([])
    expect(pageErrors).toEqual([])
  })
})
