/**
 * The admin app's assets and rich text in Chromium (playwright-core, Debian's chromium) against a listening service:
 * the Assets screen (empty state, two images dropped onto the page with their progress, alt text in two locales,
 * the transform preview, delete after a confirmation), the richtext field (bold and a link typed, saved, reloaded:
 * the API holds the rich-text tree; a tree loaded and saved back is unchanged), the asset field's picker, and hostile
 * alt text and rich text (an `<img onerror>`, `javascript:` links) that stay inert. axe-core on both screens.
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import type { Server } from 'bun'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { hasChromium, launchChromium, warnNoChromium } from '../helpers/browser'
import { type TestApp, testApp } from '../helpers/app'
import { axeViolations } from './helpers'
import { photo, pngOf } from '../helpers/images'

setDefaultTimeout(60_000)

warnNoChromium('the admin assets browser tests')

const HOSTILE = `<img src=x onerror="window.__pwned=1">`
const PASSWORD = 'correct horse battery staple'

let t: TestApp
let server: Server<undefined>
let origin: string
let browser: Browser
let context: BrowserContext
let page: Page
let token = ''
let space = ''
const pageErrors: string[] = []

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

const pwned = () => page.evaluate(() => (window as { __pwned?: number }).__pwned)

/** Drops files onto an element as the browser does for a drag from the desktop (a DataTransfer holding Files). */
async function dropFiles(selector: string, files: { name: string; type: string; bytes: Uint8Array }[]) {
  const payload = files.map((f) => ({ name: f.name, type: f.type, b64: Buffer.from(f.bytes).toString('base64') }))
  await page.evaluate(
    ({ selector, payload }) => {
      const dt = new DataTransfer()
      for (const f of payload) {
        const bin = atob(f.b64)
        const bytes = new Uint8Array(bin.length)
        for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i)
        dt.items.add(new File([bytes], f.name, { type: f.type }))
      }
      const target = document.querySelector(selector)!
      for (const type of ['dragenter', 'dragover', 'drop']) {
        target.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: dt }))
      }
    },
    { selector, payload },
  )
}

describe.skipIf(!hasChromium)('assets and rich text in the admin app (Chromium)', () => {
  beforeAll(async () => {
    t = await testApp()
    server = Bun.serve({ port: 0, hostname: '127.0.0.1', development: false, fetch: (request, s) => t.app.fetch(request, s) })
    origin = `http://127.0.0.1:${server.port}`
    const email = `assets-${Math.random().toString(36).slice(2, 8)}@example.com`
    token = (await t.register({ email, password: PASSWORD, name: 'Ada Assets' })).token
    space = (await t.createSpace(token, { locales: ['en', 'de'] })).slug
    const page_ = await call('POST', `/v1/spaces/${space}/components`, {
      name: 'page',
      display_name: 'Page',
      is_root: true,
      is_nestable: false,
      schema: { title: { type: 'text' }, body: { type: 'richtext' }, image: { type: 'asset' } },
    })
    expect(page_.status).toBe(201)
    browser = await launchChromium()
    context = await browser.newContext({ baseURL: origin, viewport: { width: 1280, height: 900 } })
    page = await context.newPage()
    page.on('pageerror', (e) => pageErrors.push(String(e)))
    page.on('dialog', (d) => {
      pageErrors.push(`unexpected dialog: ${d.message()}`)
      void d.dismiss()
    })
    await page.goto('/admin/sign-in')
    await page.getByLabel('E-mail').fill(email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(/\/admin\/?$/)
  }, 120_000)

  afterAll(async () => {
    await context?.close()
    await browser?.close()
    server?.stop(true)
    await t?.close()
  }, 60_000)

  test('the Assets screen starts with an empty state that says what to do; no serious accessibility violations', async () => {
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('navigation', { name: 'Space switcher' }).getByRole('link', { name: 'Assets' }).click()
    await page.waitForURL(`${origin}/admin/spaces/${space}/assets`)
    await page.getByRole('heading', { name: 'No assets yet' }).waitFor()
    await page.getByText('Drag image files onto this page').waitFor()
    expect(await axeViolations(page)).toEqual([])
  })

  test('two images dropped onto the page upload with their progress to the end, and fill the grid', async () => {
    await dropFiles('[data-testid="assets-screen"]', [
      { name: 'red.png', type: 'image/png', bytes: pngOf(photo(320, 200, 7)) },
      { name: 'blue.png', type: 'image/png', bytes: pngOf(photo(200, 320, 9)) },
    ])
    const uploads = page.getByRole('region', { name: 'Uploads' })
    await uploads.getByText('2 of 2 uploaded.').waitFor()
    for (const name of ['red.png', 'blue.png']) {
      const bar = uploads.getByRole('progressbar', { name: `Upload of ${name}` })
      expect(await bar.evaluate((el) => (el as HTMLProgressElement).value)).toBe(1)
    }
    const grid = page.getByRole('list', { name: 'Assets' })
    await grid.locator('[data-asset="red.png"]').waitFor()
    await grid.locator('[data-asset="blue.png"]').waitFor()
    // Thumbnails come from the transform route (a 256 px WebP) and load.
    const thumb = grid.locator('[data-asset="red.png"] img')
    expect(await thumb.getAttribute('src')).toMatch(/^\/v1\/cdn\/[^/]+\/assets\/[0-9a-f-]{36}\.webp\?w=256$/)
    await page.waitForFunction((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0, await thumb.elementHandle(), { timeout: 30_000 })
    const listed = await call('GET', `/v1/spaces/${space}/assets`)
    expect(listed.body.data.map((a: { filename: string }) => a.filename).sort()).toEqual(['blue.png', 'red.png'])
    // The file input takes several files too.
    await page.getByLabel('Upload files').setInputFiles([{ name: 'green.png', mimeType: 'image/png', buffer: Buffer.from(pngOf(photo(64, 64, 3))) }])
    await page.getByRole('region', { name: 'Uploads' }).getByText('1 of 1 uploaded.').waitFor()
    await grid.locator('[data-asset="green.png"]').waitFor()
  })

  test('alt text in two locales is saved (hostile text stays text), the transform preview shows its URL', async () => {
    await page.getByRole('button', { name: 'Details of red.png' }).click()
    const details = page.getByRole('region', { name: 'red.png' })
    await details.getByLabel('Alt text (en)').fill('A red field')
    await details.getByLabel('Alt text (de)').fill(`Ein rotes Feld ${HOSTILE}`)
    await details.getByRole('button', { name: 'Save alt text' }).click()
    await details.getByRole('status').getByText('Alt text saved.').waitFor()
    const red = (await call('GET', `/v1/spaces/${space}/assets`)).body.data.find((a: { filename: string }) => a.filename === 'red.png')
    expect(red.alt).toEqual({ en: 'A red field', de: `Ein rotes Feld ${HOSTILE}` })

    // After a reload the saved texts are shown; the markup made no element and ran nothing.
    await page.reload()
    await page.getByRole('button', { name: 'Details of red.png' }).click()
    expect(await details.getByLabel('Alt text (de)').inputValue()).toBe(`Ein rotes Feld ${HOSTILE}`)
    expect(await page.locator('img[src="x"]').count()).toBe(0)
    expect(await pwned()).toBeUndefined()

    // The transform preview: the URL shown is the image shown, and the service answers it.
    const url = details.getByTestId('transform-url')
    expect(await url.textContent()).toBe(`${origin}/v1/cdn/${space}/assets/${red.uuid}.webp?w=640`)
    await details.getByLabel('Format').selectOption('jpg')
    await details.getByLabel('Width').selectOption('384')
    expect(await url.textContent()).toBe(`${origin}/v1/cdn/${space}/assets/${red.uuid}.jpg?w=384`)
    const img = details.getByRole('img', { name: 'Preview: jpg, 384 px wide' })
    await page.waitForFunction((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0, await img.elementHandle(), { timeout: 30_000 })
    // Never enlarged: the 320 px original is served at 1:1.
    expect(await img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(320)
    const res = await fetch((await url.textContent())!)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/jpeg')
    await res.arrayBuffer()
    expect(await axeViolations(page)).toEqual([])
  })

  test('delete asks first, then the asset is gone from the grid and the API', async () => {
    await page.getByRole('button', { name: 'Details of green.png' }).click()
    const details = page.getByRole('region', { name: 'green.png' })
    const green = (await call('GET', `/v1/spaces/${space}/assets?q=green`)).body.data[0]
    await details.getByRole('button', { name: 'Delete asset' }).click()
    const confirm = page.getByRole('dialog', { name: 'Delete this asset?' })
    await confirm.getByRole('button', { name: 'Cancel' }).click()
    expect((await call('GET', `/v1/spaces/${space}/assets/${green.uuid}`)).status).toBe(200)
    await details.getByRole('button', { name: 'Delete asset' }).click()
    await confirm.getByRole('button', { name: 'Delete', exact: true }).click()
    await page.locator('[data-asset="green.png"]').waitFor({ state: 'detached' })
    expect((await call('GET', `/v1/spaces/${space}/assets/${green.uuid}`)).status).toBe(404)
    expect(pageErrors).toEqual([])
  })

  test('richtext: bold and a link typed, an asset picked, saved; the API holds the rich-text tree and the reference', async () => {
    const created = await call('POST', `/v1/spaces/${space}/stories`, {
      name: 'Home',
      slug: 'home',
      content: { type: 'doc', blocks: [{ component: 'page', _uid: 'p1', title: 'Home' }] },
    })
    expect(created.status).toBe(201)
    const uuid = created.body.data.uuid
    await page.goto(`/admin/spaces/${space}/stories/${uuid}`)
    const body = page.getByRole('textbox', { name: /^body/ })
    await body.click()
    // The rich-text editor holds the focus before anything is typed (keys before that go to the page).
    await page.waitForFunction(() => (document.activeElement as HTMLElement | null)?.isContentEditable === true)
    await page.keyboard.type('Hello ')
    await page.keyboard.press('Control+b')
    await page.keyboard.type('bold')
    await page.keyboard.press('Control+b')
    await page.keyboard.type(' and ')
    // A javascript: link is refused in the link dialog.
    await page.keyboard.press('Control+k')
    const dialog = page.getByRole('dialog', { name: 'Add link' })
    await dialog.getByLabel('URL').fill('javascript:window.__pwned=1')
    await dialog.getByRole('button', { name: 'Apply' }).click()
    await dialog.getByText('Use an http(s), mailto: or tel: link').waitFor()
    await dialog.getByLabel('URL').fill('https://example.com/docs')
    await dialog.getByRole('button', { name: 'Apply' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await body.locator('strong', { hasText: 'bold' }).waitFor()
    expect(await body.locator('a').getAttribute('href')).toBe('https://example.com/docs')

    // The asset field: the picker lists the Space's assets; pick one.
    await page.getByRole('button', { name: 'Choose an asset for image' }).click()
    const picker = page.getByRole('dialog', { name: 'Choose an asset' })
    await picker.getByRole('searchbox', { name: 'Search by file name' }).fill('blue')
    await picker.getByRole('button', { name: 'Choose red.png' }).waitFor({ state: 'detached' })
    await picker.getByRole('button', { name: 'Choose blue.png' }).click()
    await picker.waitFor({ state: 'hidden' })
    const imageField = page.locator('[data-field-path="blocks/0/image"]')
    await imageField.getByText('blue.png').waitFor()

    await page.keyboard.press('Control+s')
    await page.getByText(/^Saved \(version \d+\)\.$/).waitFor()
    const blue = (await call('GET', `/v1/spaces/${space}/assets?q=blue`)).body.data[0]
    const saved = (await call('GET', `/v1/spaces/${space}/stories/${uuid}`)).body.data.content.blocks[0]
    expect(saved.image).toEqual({ uuid: blue.uuid })
    expect(saved.body).toEqual({
      type: 'doc',
      content: [
        {
          type: 'paragraph',
          content: [
            { type: 'text', text: 'Hello ' },
            { type: 'text', text: 'bold', marks: [{ type: 'bold' }] },
            { type: 'text', text: ' and ' },
            { type: 'text', text: 'https://example.com/docs', marks: [{ type: 'link', attrs: { href: 'https://example.com/docs', title: null } }] },
          ],
        },
      ],
    })

    // Reloaded, the editor shows what was saved; the picked asset shows its thumbnail.
    await page.reload()
    await body.locator('strong', { hasText: 'bold' }).waitFor()
    await imageField.getByText('blue.png').waitFor()
    expect(await imageField.locator('img').getAttribute('src')).toBe(`/v1/cdn/${space}/assets/${blue.uuid}.webp?w=256`)
    expect(await axeViolations(page)).toEqual([])
    expect(pageErrors).toEqual([])
  })

  test('a rich-text tree loaded from the API saves back unchanged when another field is edited', async () => {
    // Headings, lists, a line break, code, italic: everything the schema knows, written by another client.
    const tree = {
      type: 'doc',
      content: [
        { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Title' }] },
        {
          type: 'paragraph',
          content: [
            { type: 'text', text: 'one', marks: [{ type: 'italic' }] },
            { type: 'hard_break' },
            { type: 'text', text: 'two', marks: [{ type: 'bold' }, { type: 'code' }] },
          ],
        },
        {
          type: 'bullet_list',
          content: [
            { type: 'list_item', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'a' }] }] },
            { type: 'list_item', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'b' }] }] },
          ],
        },
        { type: 'ordered_list', attrs: { order: 3 }, content: [{ type: 'list_item', content: [{ type: 'paragraph' }] }] },
        { type: 'blockquote', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'q' }] }] },
      ],
    }
    const created = await call('POST', `/v1/spaces/${space}/stories`, {
      name: 'Tree',
      slug: 'tree',
      content: { type: 'doc', blocks: [{ component: 'page', _uid: 'p1', title: 'Tree', body: tree }] },
    })
    expect(created.status).toBe(201)
    const uuid = created.body.data.uuid
    await page.goto(`/admin/spaces/${space}/stories/${uuid}`)
    const body = page.getByRole('textbox', { name: /^body/ })
    await body.locator('h2', { hasText: 'Title' }).waitFor()
    expect(await body.locator('ul > li').count()).toBe(2)
    await page.locator('[data-field-path="blocks/0/title"]').getByRole('textbox').fill('Tree, renamed')
    // An edit undone: the editor's own serialisation of the tree is what gets saved, and it is the tree.
    await body.locator('h2').click()
    await page.keyboard.press('End')
    await page.keyboard.type('!')
    await body.locator('h2', { hasText: 'Title!' }).waitFor()
    await page.keyboard.press('Control+z')
    await body.locator('h2', { hasText: /^Title$/ }).waitFor()
    await page.keyboard.press('Control+s')
    await page.getByText(/^Saved \(version \d+\)\.$/).waitFor()
    const saved = (await call('GET', `/v1/spaces/${space}/stories/${uuid}`)).body.data.content.blocks[0]
    expect(saved.title).toBe('Tree, renamed')
    expect(saved.body).toEqual(tree)
  })

  test('hostile rich text stays inert: a javascript: link has no href, markup makes no element, no script runs', async () => {
    const tree = {
      type: 'doc',
      content: [
        {
          type: 'paragraph',
          content: [
            { type: 'text', text: HOSTILE },
            { type: 'text', text: ' click me', marks: [{ type: 'link', attrs: { href: ' java\tscript:window.__pwned=1', title: null } }] },
          ],
        },
      ],
    }
    const markup = `<p>Hi <a href="javascript:window.__pwned=1">there</a> ${HOSTILE}<script>window.__pwned=1</script></p>`
    for (const [slug, value] of [
      ['hostile-tree', tree],
      ['hostile-markup', markup],
    ] as const) {
      const created = await call('POST', `/v1/spaces/${space}/stories`, {
        name: slug,
        slug,
        content: { type: 'doc', blocks: [{ component: 'page', _uid: 'p1', title: slug, body: value }] },
      })
      expect(created.status).toBe(201)
      await page.goto(`/admin/spaces/${space}/stories/${created.body.data.uuid}`)
      const body = page.getByRole('textbox', { name: /^body/ })
      await body.waitFor()
      if (slug === 'hostile-tree') {
        await body.getByText(HOSTILE).waitFor()
        const a = body.locator('a', { hasText: 'click me' })
        expect(await a.getAttribute('href')).toBeNull()
        await a.click()
      } else {
        await body.getByText('there').waitFor()
        // The markup's unsafe link is dropped (plain text); its image and script are not part of the schema.
        expect(await body.locator('a').count()).toBe(0)
        expect(await body.locator('img, script').count()).toBe(0)
      }
      expect(await page.locator('img[src="x"]').count()).toBe(0)
      expect(await pwned()).toBeUndefined()
    }
    expect(pageErrors).toEqual([])
  })
})
