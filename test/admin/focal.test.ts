/**
 * The asset dialog's focal point and crop in Chromium against a listening service: the point set by a click on the
 * image and then moved by the keyboard (arrow keys on the marker), saved, and the API answers it; a crop given as
 * percentages; the previews follow; the square cover the service cuts is the side the point is on. axe-core clean.
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import type { Server } from 'bun'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { decodePng, type Rgba } from '../../src/modules/assets/pixels'
import { hasChromium, launchChromium, warnNoChromium } from '../helpers/browser'
import { type TestApp, testApp } from '../helpers/app'
import { axeViolations } from './helpers'
import { pngOf } from '../helpers/images'

setDefaultTimeout(60_000)

warnNoChromium('the admin focal point browser tests')

const PASSWORD = 'correct horse battery staple'

let t: TestApp
let server: Server<undefined>
let origin: string
let browser: Browser
let context: BrowserContext
let page: Page
let token = ''
let space = ''
let uuid = ''
const pageErrors: string[] = []

/** 400×200: the left half red, the right half blue. */
function halves(width: number, height: number): Rgba {
  const data = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.set(x < width / 2 ? [255, 0, 0, 255] : [0, 0, 255, 255], (y * width + x) * 4)
  return { data, width, height }
}

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

const focusOf = async () => (await call('GET', `/v1/spaces/${space}/assets/${uuid}`)).body.data

describe.skipIf(!hasChromium)('focal point and crop in the asset dialog (Chromium)', () => {
  beforeAll(async () => {
    t = await testApp({ imageWidths: [64, 128, 256, 640] })
    server = Bun.serve({ port: 0, hostname: '127.0.0.1', development: false, fetch: (request, s) => t.app.fetch(request, s) })
    origin = `http://127.0.0.1:${server.port}`
    const email = `focal-${Math.random().toString(36).slice(2, 8)}@example.com`
    token = (await t.register({ email, password: PASSWORD, name: 'Fay Focal' })).token
    space = (await t.createSpace(token, { locales: ['en', 'de'] })).slug
    const fd = new FormData()
    fd.append('file', new Blob([pngOf(halves(400, 200)) as BlobPart], { type: 'image/png' }), 'halves.png')
    const up = await fetch(`${origin}/v1/spaces/${space}/assets`, { method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: fd })
    expect(up.status).toBe(201)
    uuid = ((await up.json()) as { data: { uuid: string } }).data.uuid
    browser = await launchChromium()
    context = await browser.newContext({ baseURL: origin, viewport: { width: 1280, height: 900 } })
    page = await context.newPage()
    page.on('pageerror', (e) => pageErrors.push(String(e)))
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

  test('a click on the image sets the focal point; saved, the API answers it and the square cut is the blue side', async () => {
    await page.goto(`/admin/spaces/${space}/assets`)
    await page.getByRole('button', { name: 'Details of halves.png' }).click()
    const editor = page.getByRole('region', { name: 'Focal point and crop' })
    await editor.getByText('No focal point: cuts keep the centre.').waitFor()
    const image = editor.getByTestId('focal-image')
    await page.waitForFunction((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0, await image.locator('img').first().elementHandle(), { timeout: 30_000 })
    // The controls are enabled once the role is known.
    await page.waitForFunction((el) => !(el as HTMLButtonElement).disabled, await editor.getByTestId('focal-marker').elementHandle(), { timeout: 30_000 })
    await image.scrollIntoViewIfNeeded()
    const box = (await image.boundingBox())!
    await page.mouse.click(box.x + box.width * 0.9, box.y + box.height * 0.5)
    await editor.getByText(/^Focal point: 9\d(\.\d)? % × [45]\d(\.\d)? %$/).waitFor()
    // The square preview shows the right end of the image.
    const square = editor.getByRole('img', { name: 'Square cut of the image' })
    const left = await square.evaluate((el) => parseFloat((el as HTMLElement).style.left))
    expect(left).toBeCloseTo(-100, 0)
    await editor.getByRole('button', { name: 'Save focal point and crop' }).click()
    await editor.getByText('Saved. New image URLs follow it.').waitFor()
    const saved = await focusOf()
    expect(saved.focus.x).toBeGreaterThan(0.85)
    expect(saved.focus.x).toBeLessThanOrEqual(0.95)
    expect(saved.focus.y).toBeCloseTo(0.5, 1)
    expect(saved.crop).toBeNull()
    const cut = await fetch(`${origin}/v1/cdn/${space}/assets/${uuid}.png?w=128&h=128&fit=cover`)
    expect(cut.status).toBe(200)
    const px = decodePng(new Uint8Array(await cut.arrayBuffer()))
    let blue = 0
    for (let i = 0; i < px.data.length; i += 4) if (px.data[i + 2]! > 200 && px.data[i]! < 55) blue++
    expect(blue / (px.width * px.height)).toBeGreaterThan(0.98)
    expect(await axeViolations(page)).toEqual([])
  })

  test('the arrow keys move the marker (Shift in larger steps); a crop as percentages; both saved and answered', async () => {
    const editor = page.getByRole('region', { name: 'Focal point and crop' })
    await editor.getByRole('button', { name: 'Back to the centre' }).click()
    await editor.getByText('No focal point: cuts keep the centre.').waitFor()
    const marker = editor.getByTestId('focal-marker')
    await marker.focus()
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowLeft')
    await page.keyboard.press('Shift+ArrowUp')
    await page.keyboard.press('ArrowDown')
    await editor.getByText('Focal point: 45 % × 41 %').waitFor()
    expect(await marker.getAttribute('aria-label')).toContain('45 % from the left, 41 % from the top')
    await editor.getByLabel('Crop the image').check()
    await editor.getByLabel('Width (%)').fill('50')
    await editor.getByRole('button', { name: 'Save focal point and crop' }).click()
    await editor.getByText('Saved. New image URLs follow it.').waitFor()
    const saved = await focusOf()
    expect(saved.focus).toEqual({ x: 0.45, y: 0.41 })
    expect(saved.crop).toEqual({ x: 0, y: 0, width: 0.5, height: 1 })
    // A crop outside the image: the API refuses it and the screen says why at the fields.
    await editor.getByLabel('Left (%)').fill('80')
    await editor.getByRole('button', { name: 'Save focal point and crop' }).click()
    await editor.getByText('The crop must stay inside the image and have a width and height.').waitFor()
    expect((await focusOf()).crop).toEqual({ x: 0, y: 0, width: 0.5, height: 1 })
    // axe in both themes, with the crop's error shown.
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      expect({ scheme, violations: await axeViolations(page) }).toEqual({ scheme, violations: [] })
    }
    await page.emulateMedia({ colorScheme: 'light' })
    expect(pageErrors).toEqual([])
  })
})
