/**
 * The embed scripts (spec 9) in a real browser: Debian's Chromium driven by playwright-core, a listening service on
 * one origin and a test page on another (a second Bun.serve on another port). Proves SRI with the integrity of
 * /version, the CORS and Cross-Origin-Resource-Policy headers (also under COEP require-corp), the OPTIONS preflight,
 * the version check at most once per 24 h, the console warning, the opt-in auto-update, and the beacon.
 *
 * CI installs Chromium (`apt-get install -y chromium`, .ci/run); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Server } from 'bun'
import type { BrowserContext, Page } from 'playwright-core'
import { hasChromium, launchPersistentChromium, warnNoChromium } from './helpers/browser'
import { buildScript, SERVICE_VERSION } from '../src/modules/system/service'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

warnNoChromium('the embed script browser tests')

describe('embed scripts: size', () => {
  test('the embed script is under 6 KB minified, the in-page editing bridge at most 6 KB gzipped; no dependencies', () => {
    for (const kind of ['embed', 'admin'] as const) {
      const { body } = buildScript(kind)
      if (kind === 'embed') expect(Buffer.byteLength(body)).toBeLessThan(6 * 1024)
      else expect(Bun.gzipSync(Buffer.from(body)).length).toBeLessThanOrEqual(6 * 1024)
      expect(body).not.toMatch(/\bimport\b|\brequire\(/)
    }
  })
})

interface Logged {
  method: string
  path: string
  status: number
  contentType: string | null
  body: string
}

let t: TestApp
let api: Server<undefined>
let site: Server<undefined>
let apiOrigin: string
let siteOrigin: string
let context: BrowserContext
let chromium: Awaited<ReturnType<typeof launchPersistentChromium>> | undefined
const log: Logged[] = []
const pages = new Map<string, { html: string; headers?: Record<string, string> }>()
let version: any

const requests = (method: string, path: string) => log.filter((l) => l.method === method && l.path === path)

/** Registers a page on the other origin; returns its URL. */
function sitePage(name: string, body: string, headers?: Record<string, string>) {
  pages.set(`/${name}`, { html: `<!doctype html><html lang="de"><head><meta charset="utf-8"><title>${name}</title></head><body>${body}</body></html>`, headers })
  return `${siteOrigin}/${name}`
}

const scriptTag = (attrs: Record<string, string | true>) =>
  `<script ${Object.entries(attrs)
    .map(([k, v]) => (v === true ? k : `${k}="${v}"`))
    .join(' ')}></script>`

async function open(url: string): Promise<{ page: Page; console: { type: string; text: string }[] }> {
  const page = await context.newPage()
  const messages: { type: string; text: string }[] = []
  page.on('console', (m) => messages.push({ type: m.type(), text: m.text() }))
  await page.goto(url, { waitUntil: 'load' })
  return { page, console: messages }
}

/** Waits until `predicate` holds (polling), or fails after `ms`. */
async function until(predicate: () => boolean | Promise<boolean>, ms = 5000) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await predicate()) return
    await Bun.sleep(25)
  }
  throw new Error('condition not met in time')
}

const embedOf = (page: Page) => page.evaluate(() => (window as any).ContentService?.embed ?? null)

describe.skipIf(!hasChromium)('embed scripts in Chromium, cross-origin', () => {
  beforeAll(async () => {
    t = await testApp()
    // The service, with every request it answers logged (method, path, status, and the body of beacons).
    api = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      development: false,
      fetch: async (request, server) => {
        const path = new URL(request.url).pathname
        const body = request.method === 'POST' ? await request.clone().text() : ''
        const res = await t.app.fetch(request, server)
        log.push({ method: request.method, path, status: res.status, contentType: request.headers.get('content-type'), body })
        return res
      },
    })
    apiOrigin = `http://127.0.0.1:${api.port}`
    // The customer's site: another origin (another port).
    site = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      development: false,
      fetch: (request) => {
        const p = pages.get(new URL(request.url).pathname)
        if (!p) return new Response('not found', { status: 404 })
        return new Response(p.html, { headers: { 'Content-Type': 'text/html; charset=utf-8', ...p.headers } })
      },
    })
    siteOrigin = `http://127.0.0.1:${site.port}`
    version = await (await fetch(`${apiOrigin}/v1/version`)).json()
    log.length = 0
    chromium = await launchPersistentChromium()
    context = chromium.context
  }, 60_000)

  afterAll(async () => {
    await chromium?.close()
    api?.stop(true)
    site?.stop(true)
    await t?.close()
  }, 60_000)

  beforeEach(async () => {
    log.length = 0
    await context.unroute('**/*').catch(() => {})
    // A fresh day for every test: the version check remembers its last run in the site's localStorage.
    const p = await context.newPage()
    await p.goto(sitePage('blank', ''))
    await p.evaluate(() => localStorage.clear())
    await p.close()
  })

  test('loads from another origin under SRI with the integrity /version announces; a wrong hash is refused', async () => {
    expect(version.components.embed_js.integrity).toMatch(/^sha384-/)
    const good = await open(
      sitePage('sri', scriptTag({ src: version.components.embed_js.url, integrity: version.components.embed_js.integrity, crossorigin: 'anonymous' })),
    )
    await until(async () => (await embedOf(good.page)) !== null)
    expect(await embedOf(good.page)).toMatchObject({ version: SERVICE_VERSION, base: apiOrigin, api: `${apiOrigin}/v1` })
    expect(new URL(good.page.url()).origin).not.toBe(apiOrigin)
    const versioned = await open(
      sitePage('sri-versioned', scriptTag({ src: version.components.embed_js.versioned_url, integrity: version.components.embed_js.integrity, crossorigin: 'anonymous' })),
    )
    await until(async () => (await embedOf(versioned.page)) !== null)
    const admin = await open(
      sitePage('sri-admin', scriptTag({ src: version.components.service_admin_js.url, integrity: version.components.service_admin_js.integrity, crossorigin: 'anonymous' })),
    )
    await until(async () => (await admin.page.evaluate(() => (window as any).ContentService?.admin?.version)) === SERVICE_VERSION)

    const wrong = `sha384-${Buffer.from(new Uint8Array(48)).toString('base64')}`
    const bad = await open(sitePage('sri-bad', scriptTag({ src: version.components.embed_js.url, integrity: wrong, crossorigin: 'anonymous' })))
    await Bun.sleep(300)
    expect(await embedOf(bad.page)).toBeNull()
    expect(bad.console.some((m) => m.type === 'error' && /integrity/i.test(m.text))).toBe(true)
    for (const p of [good, versioned, admin, bad]) await p.page.close()
  })

  test('CORS and Cross-Origin-Resource-Policy allow cross-origin use (also under COEP require-corp); OPTIONS preflight is 204', async () => {
    // No crossorigin attribute (a no-cors load) on a page that requires CORP of every cross-origin resource.
    const coep = await open(sitePage('coep', scriptTag({ src: version.components.embed_js.url }), { 'Cross-Origin-Embedder-Policy': 'require-corp' }))
    await until(async () => (await embedOf(coep.page)) !== null)
    // A script reading the embed script with fetch and a non-safelisted header: preflight, then the GET.
    const res = await coep.page.evaluate(async (u) => {
      const r = await fetch(u, { headers: { 'X-Request-Id': 'from-the-page' } })
      return { status: r.status, corp: r.headers.get('cross-origin-resource-policy'), text: (await r.text()).length }
    }, `${apiOrigin}/embed.js`)
    expect(res.status).toBe(200)
    expect(res.text).toBeGreaterThan(100)
    const preflight = requests('OPTIONS', '/embed.js')
    expect(preflight.length).toBe(1)
    expect(preflight[0].status).toBe(204)
    // And for the version check the script makes (a simple CORS GET).
    await until(() => requests('GET', '/v1/version').length > 0)
    expect(requests('GET', '/v1/version')[0].status).toBe(200)
    await coep.page.close()
  })

  test('polls /version at most once per 24 h: a second mount within the day makes no request', async () => {
    const url = sitePage('poll', scriptTag({ src: version.components.embed_js.url, integrity: version.components.embed_js.integrity, crossorigin: 'anonymous' }))
    const first = await open(url)
    await until(() => requests('GET', '/v1/version').length === 1)
    await first.page.reload({ waitUntil: 'load' })
    await until(async () => (await embedOf(first.page)) !== null)
    const second = await open(url)
    await until(async () => (await embedOf(second.page)) !== null)
    await Bun.sleep(500)
    expect(requests('GET', '/v1/version').length).toBe(1)
    // A day later (the remembered check is 25 h old), the next mount checks again.
    await second.page.evaluate(() => {
      for (const k of Object.keys(localStorage)) if (k.includes('version-check')) localStorage.setItem(k, String(Date.now() - 25 * 3600_000))
    })
    await second.page.reload({ waitUntil: 'load' })
    await until(() => requests('GET', '/v1/version').length === 2)
    expect(first.console.concat(second.console).filter((m) => m.type === 'warning')).toEqual([])
    await first.page.close()
    await second.page.close()
  })

  /** Answers /version as a newer release would: latest 9.9.9, its versioned URL (the real versioned script here). */
  async function newerRelease() {
    await context.route(`${apiOrigin}/v1/version`, async (route) => {
      const real = await route.fetch()
      const doc = await real.json()
      doc.components.embed_js.latest = '9.9.9'
      await route.fulfill({ response: real, json: doc })
    })
  }

  test('a newer latest version logs a console warning; without the attribute the script stays', async () => {
    await newerRelease()
    const { page, console: messages } = await open(
      sitePage('warn', scriptTag({ src: version.components.embed_js.url, integrity: version.components.embed_js.integrity, crossorigin: 'anonymous' })),
    )
    await until(() => messages.some((m) => m.type === 'warning'))
    const warning = messages.find((m) => m.type === 'warning')!
    expect(warning.text).toContain(`embed.js ${SERVICE_VERSION} is outdated; 9.9.9 is available`)
    expect(warning.text).toContain(version.components.embed_js.changelog)
    await Bun.sleep(300)
    expect(requests('GET', `/embed-v${SERVICE_VERSION}.js`)).toEqual([])
    expect((await embedOf(page)).src).toBe(version.components.embed_js.url)
    await page.close()
  })

  test('data-service-auto-update="on" swaps the script for the versioned URL, under its SRI hash', async () => {
    await newerRelease()
    const { page } = await open(
      sitePage(
        'auto',
        scriptTag({
          id: 'cs',
          src: version.components.embed_js.url,
          integrity: version.components.embed_js.integrity,
          crossorigin: 'anonymous',
          'data-service-auto-update': 'on',
          'data-space': 'acme',
        }),
      ),
    )
    await until(() => requests('GET', `/embed-v${SERVICE_VERSION}.js`).length === 1)
    await until(async () => (await embedOf(page))?.src === version.components.embed_js.versioned_url)
    const scripts = await page.evaluate(() =>
      [...document.querySelectorAll('script')].map((s) => ({ src: s.src, integrity: s.integrity, auto: s.getAttribute('data-service-auto-update'), space: s.dataset.space })),
    )
    expect(scripts).toEqual([{ src: version.components.embed_js.versioned_url, integrity: version.components.embed_js.integrity, auto: null, space: 'acme' }])
    // The new copy found the day's check done: one /version request in all, and no second swap.
    await Bun.sleep(300)
    expect(requests('GET', '/v1/version').length).toBe(1)
    await page.close()
  })

  test('sends the beacon for data-story-uuid with navigator.sendBeacon, once per Story, without blocking the page', async () => {
    const uuid = crypto.randomUUID()
    const other = crypto.randomUUID()
    const { page } = await open(
      sitePage(
        'beacon',
        `<article data-story-uuid="${uuid}" data-space="acme" data-segment-key="vip">A</article>` +
          `<article data-story-uuid="${uuid}" data-space="acme">A again</article>` +
          `<article data-story-uuid="${other}" data-beacon-url="${apiOrigin}/v1/cdn/other-space/_beacon" data-lang="fr">B</article>` +
          scriptTag({ src: version.components.embed_js.url, integrity: version.components.embed_js.integrity, crossorigin: 'anonymous' }),
      ),
    )
    await until(() => requests('POST', '/v1/cdn/acme/_beacon').length === 1 && requests('POST', '/v1/cdn/other-space/_beacon').length === 1)
    const a = requests('POST', '/v1/cdn/acme/_beacon')[0]
    expect(a.contentType).toStartWith('text/plain')
    expect(JSON.parse(a.body)).toEqual({ story_uuid: uuid, device: 'desktop', segment_key: 'vip', lang: 'de' })
    expect(JSON.parse(requests('POST', '/v1/cdn/other-space/_beacon')[0].body)).toMatchObject({ story_uuid: other, lang: 'fr' })
    // A re-scan (e.g. after client-side navigation) does not count the same Stories again.
    await page.evaluate(() => (window as any).ContentService.embed.scan())
    await Bun.sleep(300)
    expect(requests('POST', '/v1/cdn/acme/_beacon').length).toBe(1)
    expect(await page.evaluate(() => document.readyState)).toBe('complete')
    await page.close()
  })
})
