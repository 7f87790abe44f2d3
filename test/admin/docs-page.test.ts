/**
 * The `/docs` page (Redoc, served from the binary) in Chromium under its own Content Security Policy: it renders the
 * API reference with no policy violation, and another site cannot frame it.
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Server } from 'bun'
import type { Browser } from 'playwright-core'
import { hasChromium, launchChromium, warnNoChromium } from '../helpers/browser'
import { type TestApp, testApp } from '../helpers/app'

setDefaultTimeout(60_000)

warnNoChromium('the /docs page browser tests')

let t: TestApp
let api: Server<undefined>
let site: Server<undefined>
let browser: Browser

describe.skipIf(!hasChromium)('the /docs page in Chromium', () => {
  beforeAll(async () => {
    t = await testApp()
    api = Bun.serve({ port: 0, hostname: '127.0.0.1', development: false, fetch: (request, server) => t.app.fetch(request, server) })
    site = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      development: false,
      fetch: () =>
        new Response(`<!doctype html><title>framer</title><iframe id="f" src="http://127.0.0.1:${api.port}/docs" width="800" height="600"></iframe>`, {
          headers: { 'Content-Type': 'text/html' },
        }),
    })
    browser = await launchChromium()
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    api?.stop(true)
    site?.stop(true)
    await t?.close()
  }, 60_000)

  test('renders the API reference under its CSP without a violation', async () => {
    const page = await browser.newPage()
    const messages: string[] = []
    const errors: string[] = []
    page.on('console', (m) => messages.push(`${m.type()}: ${m.text()}`))
    page.on('pageerror', (e) => errors.push(String(e)))
    await page.goto(`http://127.0.0.1:${api.port}/docs`, { waitUntil: 'load', timeout: 120_000 })
    // Redoc fetched the description and drew the operations (the search box and an operation's heading).
    await page.getByRole('heading', { name: /Content Service/ }).first().waitFor({ timeout: 150_000 })
    await page.locator('input[placeholder="Search..."]').waitFor({ timeout: 30_000 })
    await page.locator('input[placeholder="Search..."]').fill('openapi')
    await page.waitForTimeout(500)
    // Nothing of the page's own is blocked. (Redoc's footer logo from its CDN is: the policy loads nothing from
    // elsewhere, as meant.)
    const violations = messages.filter((m) => /Content Security Policy|Refused to/i.test(m))
    expect(violations.filter((m) => !/Loading the image 'https:\/\/cdn\.redoc\.ly\/[^']*' violates/.test(m))).toEqual([])
    expect(errors).toEqual([])
    await page.close()
  }, 300_000)

  test('another site cannot frame it', async () => {
    const page = await browser.newPage()
    await page.goto(`http://127.0.0.1:${site.port}/`, { waitUntil: 'load', timeout: 60_000 })
    await page.waitForTimeout(1000)
    const frame = page.frames().find((f) => f !== page.mainFrame())
    // A blocked frame stays empty: no Redoc element, no title of the docs page.
    const framed = frame ? await frame.evaluate(() => document.querySelector('redoc') !== null).catch(() => false) : false
    expect(framed).toBe(false)
    await page.close()
  }, 120_000)
})
