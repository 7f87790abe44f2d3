/**
 * The in-page editing bridge (`/service-admin.js`, docs/in-page-editing.md) in Chromium: a site on another origin (a
 * second Bun.serve on another port) includes it. Without a preview token it does nothing and requests nothing; with
 * a valid one (from the URL fragment, then from the tab's sessionStorage) it outlines the Stories with Edit links to
 * the admin app and fills draft content as text; expired, foreign-Space and malformed tokens, and tokens of a Space
 * the page's script tag does not name (data-space), do nothing; a link naming a segment reads its variants; hostile
 * content stays inert; a strict CSP on the site does not stop it.
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Server } from 'bun'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { hasChromium, launchChromium, warnNoChromium } from '../helpers/browser'
import { type TestApp, testApp } from '../helpers/app'

setDefaultTimeout(60_000)

warnNoChromium('the in-page editing bridge browser tests')

const HOSTILE = `<img src=x onerror="window.__pwned=1">`
const JS_LINK = 'javascript:window.__pwned=2'

let t: TestApp
let api: Server<undefined>
let site: Server<undefined>
let apiOrigin: string
let siteOrigin: string
let browser: Browser
let context: BrowserContext
let owner: string
let space: string
let other: string
let helloUuid: string
let evilUuid: string
let otherUuid: string
/** Every request the service answered: method, path, status, Origin. */
const log: { method: string; path: string; status: number; origin: string | null }[] = []
const pages = new Map<string, { html: string; headers?: Record<string, string> }>()

const doc = (...blocks: Record<string, unknown>[]) => ({ type: 'doc', blocks })

async function call(method: string, path: string, body?: unknown) {
  const r = await t.request(method, path, { token: owner, body })
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`)
  return r.body.data
}

async function mint(s = space): Promise<string> {
  return (await call('POST', `/v1/spaces/${s}/preview-tokens`, {})).token
}

/** A page of the site (another origin) that includes the bridge, pinned to `pin` (data-space); returns its URL. */
function sitePage(name: string, headers?: Record<string, string>, scriptAttrs = '', pin: string | null = space) {
  const body = `
    <main>
      <article data-story-uuid="${helloUuid}" data-story-path="/hello">
        <h1 data-story-field="content/blocks/0/headline">Published headline</h1>
        <p data-story-field="name">Hello</p>
      </article>
      <article data-story-uuid="${evilUuid}" data-story-path="evil">
        <h2 data-story-field="content/blocks/0/headline">safe</h2>
        <p data-story-field="content/blocks/0/cta">link text</p>
      </article>
      <section data-story-uuid="${otherUuid}" data-story-path="/hello"><h3 data-story-field="content/blocks/0/headline">Kept</h3></section>
      <div id="bad" data-story-uuid="javascript:alert(1)">not a Story</div>
    </main>
    <script src="${apiOrigin}/service-admin.js"${pin === null ? '' : ` data-space="${pin}"`}${scriptAttrs}></script>`
  pages.set(`/${name}`, {
    html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${name}</title></head><body>${body}</body></html>`,
    headers,
  })
  return `${siteOrigin}/${name}`
}

const fragment = (token: string, s = space) => `#service-preview=${encodeURIComponent(token)}&space=${encodeURIComponent(s)}`

interface Opened {
  page: Page
  errors: string[]
  console: string[]
}

async function open(url: string): Promise<Opened> {
  const page = await context.newPage()
  const errors: string[] = []
  const messages: string[] = []
  page.on('pageerror', (e) => errors.push(String(e)))
  page.on('console', (m) => messages.push(`${m.type()}: ${m.text()}`))
  page.on('dialog', (d) => {
    errors.push(`dialog: ${d.message()}`)
    void d.dismiss()
  })
  await page.goto(url, { waitUntil: 'load' })
  return { page, errors, console: messages }
}

const bridge = (page: Page) =>
  page.evaluate(async () => {
    const a = (window as any).ServiceAdmin
    const active = a ? await a.ready : null
    return { loaded: !!a, active, space: a?.space ?? null }
  })

const editLinks = (page: Page) =>
  page.evaluate(() => [...document.querySelectorAll('a[data-service-admin-edit]')].map((a) => ({ href: (a as HTMLAnchorElement).href, target: (a as HTMLAnchorElement).target, rel: (a as HTMLAnchorElement).rel })))

const text = (page: Page, selector: string) => page.evaluate((s) => document.querySelector(s)!.textContent, selector)

async function until(predicate: () => boolean | Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await predicate()) return
    await Bun.sleep(25)
  }
  throw new Error('condition not met in time')
}

/** Requests the service answered for pages of the site (its Origin, or the script itself). */
const fromSite = () => log.filter((l) => l.origin === siteOrigin || l.path === '/service-admin.js')
/** The status of the bridge's check (the GET, not its CORS preflight). */
const checkStatus = () => fromSite().find((l) => l.method === 'GET' && l.path === `/v1/cdn/${space}/preview`)?.status

describe.skipIf(!hasChromium)('the in-page editing bridge in Chromium, on another origin', () => {
  beforeAll(async () => {
    t = await testApp()
    api = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      development: false,
      fetch: async (request, server) => {
        const res = await t.app.fetch(request, server)
        log.push({ method: request.method, path: new URL(request.url).pathname, status: res.status, origin: request.headers.get('origin') })
        return res
      },
    })
    apiOrigin = `http://127.0.0.1:${api.port}`
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

    owner = (await t.register()).token
    space = (await t.createSpace(owner, { default_lang: 'en' })).slug
    other = (await t.createSpace(owner, { default_lang: 'en' })).slug
    for (const s of [space, other]) {
      await call('POST', `/v1/spaces/${s}/components`, { name: 'hero', schema: { headline: { type: 'text' }, cta: { type: 'text' } } })
    }
    const hello = await call('POST', `/v1/spaces/${space}/stories`, {
      name: 'Hello',
      slug: 'hello',
      content: doc({ component: 'hero', _uid: 'h1', headline: 'Published headline' }),
    })
    helloUuid = hello.uuid
    await call('POST', `/v1/spaces/${space}/stories/${helloUuid}/publish`)
    await call('PUT', `/v1/spaces/${space}/stories/${helloUuid}`, {
      name: 'Hello (draft)',
      content: doc({ component: 'hero', _uid: 'h1', headline: 'Draft headline' }),
      expected_version_no: hello.version_no,
    })
    evilUuid = (
      await call('POST', `/v1/spaces/${space}/stories`, {
        name: HOSTILE,
        slug: 'evil',
        content: doc({ component: 'hero', _uid: 'e1', headline: HOSTILE, cta: JS_LINK }),
      })
    ).uuid
    otherUuid = (await call('POST', `/v1/spaces/${other}/stories`, { name: 'Other', slug: 'hello', content: doc({ component: 'hero', _uid: 'o1', headline: 'Other Space' }) }))
      .uuid

    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1200, height: 900 } })
  }, 120_000)

  afterAll(async () => {
    await context?.close()
    await browser?.close()
    api?.stop(true)
    site?.stop(true)
    await t?.close()
  }, 60_000)

  beforeEach(() => {
    log.length = 0
  })

  test('without a token it does nothing: no request beyond the script itself, no change to the page', async () => {
    const url = sitePage('plain')
    const p = await open(url)
    const before = await p.page.evaluate(() => document.body.innerHTML)
    expect(await bridge(p.page)).toEqual({ loaded: true, active: false, space: null })
    expect(await p.page.evaluate(() => (window as any).ServiceAdmin.draft('/hello'))).toBeNull()
    await Bun.sleep(300)
    // The one request to the service is the script; the browser's own list of fetched resources agrees.
    expect(fromSite().map((l) => `${l.method} ${l.path}`)).toEqual(['GET /service-admin.js'])
    const resources = await p.page.evaluate(() => performance.getEntriesByType('resource').map((r) => r.name))
    expect(resources.filter((r) => r.startsWith(apiOrigin))).toEqual([`${apiOrigin}/service-admin.js`])
    expect(await p.page.evaluate(() => document.body.innerHTML)).toBe(before)
    expect(await text(p.page, 'h1')).toBe('Published headline')
    expect(await editLinks(p.page)).toEqual([])
    expect(p.errors).toEqual([])
    // A fragment that is not a preview (an anchor) is left alone.
    const anchored = await open(`${url}#section-2`)
    expect(await bridge(anchored.page)).toMatchObject({ active: false })
    expect(new URL(anchored.page.url()).hash).toBe('#section-2')
    await p.page.close()
    await anchored.page.close()
  })

  test('with a valid token: Edit links to each Story in /admin, draft content as text, the token out of the URL', async () => {
    const token = await mint()
    const url = sitePage('preview')
    const p = await open(`${url}${fragment(token)}&keep=1`)
    await until(async () => (await bridge(p.page)).active === true)
    expect((await bridge(p.page)).space).toBe(space)
    // The token left the address bar (other fragment parameters stay) and lives in this tab's sessionStorage.
    expect(p.page.url()).toBe(`${url}#keep=1`)
    expect(await p.page.evaluate(() => sessionStorage.getItem('content-service:preview'))).toContain(token)
    expect(await p.page.evaluate(() => Object.keys(localStorage).length)).toBe(0)

    // One Edit link per element with a valid uuid, pointing at the Story in the admin app (foreign or not: the
    // admin app decides what the editor may open); the hostile uuid gets none.
    const links = await editLinks(p.page)
    expect(links.map((l) => l.href).sort()).toEqual(
      [helloUuid, evilUuid, otherUuid].map((u) => `${apiOrigin}/admin/spaces/${space}/stories/${u}`).sort(),
    )
    for (const l of links) expect(l).toMatchObject({ target: '_blank', rel: 'noopener' })
    expect(await p.page.evaluate(() => (document.getElementById('bad') as HTMLElement).style.outlineStyle)).toBe('')
    expect(await p.page.evaluate(() => (document.querySelector('article') as HTMLElement).style.outlineStyle)).toBe('dashed')

    // Draft content where the site asked for it; an element whose path leads to another Story keeps its own text.
    await until(async () => (await text(p.page, 'h1')) === 'Draft headline')
    expect(await text(p.page, 'article p')).toBe('Hello (draft)')
    expect(await text(p.page, 'h3')).toBe('Kept')
    // The API for sites that render themselves.
    const story = await p.page.evaluate(() => (window as any).ServiceAdmin.draft('/hello'))
    expect(story).toMatchObject({ uuid: helloUuid, name: 'Hello (draft)', content: { blocks: [{ headline: 'Draft headline' }] } })
    expect(await p.page.evaluate(() => (window as any).ServiceAdmin.draft('/no-such-story'))).toBeNull()
    // The requests it made: the check and the drafts, all with the token, all answered.
    const made = fromSite().filter((l) => l.path !== '/service-admin.js' && l.method === 'GET')
    expect(made.map((l) => l.path)).toContain(`/v1/cdn/${space}/preview`)
    expect(made.some((l) => l.path === `/v1/cdn/${space}/stories/hello`)).toBe(true)

    // The Edit link opens the Story in the admin app (which asks this new tab to sign in, and comes back to it).
    const [admin] = await Promise.all([context.waitForEvent('page'), p.page.click(`a[data-service-admin-edit="${helloUuid}"]`)])
    await admin.waitForURL(/\/admin\/sign-in/)
    expect(new URL(admin.url()).searchParams.get('redirect')).toBe(`/spaces/${space}/stories/${helloUuid}`)
    await admin.close()

    // A reload (or another page of the site in this tab) stays in preview without the fragment.
    await p.page.goto(url, { waitUntil: 'load' })
    await until(async () => (await bridge(p.page)).active === true)
    await until(async () => (await text(p.page, 'h1')) === 'Draft headline')
    // Exit preview forgets the token: the page is the visitor's again.
    await p.page.getByRole('button', { name: 'Exit preview' }).click()
    await p.page.waitForLoadState('load')
    await until(async () => (await bridge(p.page)).active === false)
    expect(await p.page.evaluate(() => sessionStorage.getItem('content-service:preview'))).toBeNull()
    expect(await text(p.page, 'h1')).toBe('Published headline')
    expect(p.errors).toEqual([])
    await p.page.close()
  })

  test('hostile content stays inert: markup and javascript: text are shown as text, nothing runs', async () => {
    const token = await mint()
    const p = await open(`${sitePage('hostile')}${fragment(token)}`)
    await until(async () => (await text(p.page, 'h2')) === HOSTILE)
    expect(await text(p.page, 'article:nth-of-type(2) p')).toBe(JS_LINK)
    expect(await p.page.evaluate(() => document.querySelectorAll('main img').length)).toBe(0)
    // Every link the bridge made points at the admin app over http(s).
    for (const l of await editLinks(p.page)) expect(l.href.startsWith(`${apiOrigin}/admin/`)).toBe(true)
    await Bun.sleep(300)
    expect(await p.page.evaluate(() => (window as any).__pwned ?? null)).toBeNull()
    expect(p.errors).toEqual([])
    // A fragment with a hostile Space or token is dropped from the URL and ignored, without a request.
    log.length = 0
    const q = await open(`${sitePage('hostile-fragment')}#service-preview=javascript:alert(1)&space=%3Cscript%3E`)
    expect(await bridge(q.page)).toMatchObject({ active: false })
    expect(new URL(q.page.url()).hash).toBe('')
    // (The script itself may come from the browser's cache.)
    expect(fromSite().filter((l) => l.path !== '/service-admin.js')).toEqual([])
    await p.page.close()
    await q.page.close()
  })

  test('a strict CSP on the site (no inline script or style, connect-src for the service only) does not stop it', async () => {
    const token = await mint()
    const csp = `default-src 'none'; script-src ${apiOrigin}; connect-src ${apiOrigin}; style-src 'self'; img-src 'self'; base-uri 'none'`
    const p = await open(`${sitePage('csp', { 'Content-Security-Policy': csp }, ' async')}${fragment(token)}`)
    await until(async () => (await bridge(p.page)).active === true)
    await until(async () => (await text(p.page, 'h1')) === 'Draft headline')
    expect((await editLinks(p.page)).length).toBe(3)
    expect(await p.page.evaluate(() => (document.querySelector('a[data-service-admin-edit]') as HTMLElement).style.position)).toBe('absolute')
    expect(p.console.filter((m) => /Content Security Policy/i.test(m))).toEqual([])
    expect(p.errors).toEqual([])
    await p.page.close()
  })

  test('a token of another Space, or a made-up one, does nothing and is forgotten', async () => {
    const foreign = await mint(other)
    const p = await open(`${sitePage('foreign')}${fragment(foreign, space)}`)
    expect(await bridge(p.page)).toMatchObject({ active: false })
    expect(checkStatus()).toBe(404)
    expect(await editLinks(p.page)).toEqual([])
    expect(await text(p.page, 'h1')).toBe('Published headline')
    expect(await p.page.evaluate(() => sessionStorage.getItem('content-service:preview'))).toBeNull()

    const [id] = (await mint()).split('.')
    const fake = await open(`${sitePage('fake')}${fragment(`${id}.${'A'.repeat(43)}`)}`)
    expect(await bridge(fake.page)).toMatchObject({ active: false })
    expect(await editLinks(fake.page)).toEqual([])
    await p.page.close()
    await fake.page.close()
  })

  test('a valid token of a Space the page does not name in data-space is ignored, without a request', async () => {
    // A link someone else made with a token of their own Space: the page shows `space`, so `other`'s drafts never
    // get into it.
    const foreign = await mint(other)
    const p = await open(`${sitePage('pinned')}${fragment(foreign, other)}`)
    await Bun.sleep(300)
    expect(await bridge(p.page)).toMatchObject({ active: false, space: null })
    expect(new URL(p.page.url()).hash).toBe('')
    expect(fromSite().filter((l) => l.path !== '/service-admin.js')).toEqual([])
    expect(await p.page.evaluate(() => (window as any).ServiceAdmin.draft('/hello'))).toBeNull()
    expect(await p.page.evaluate(() => sessionStorage.getItem('content-service:preview'))).toBeNull()
    expect(await editLinks(p.page)).toEqual([])
    // A page whose tag names both Spaces takes it.
    const both = await open(`${sitePage('both', undefined, '', `${space} ${other}`)}${fragment(await mint(other), other)}`)
    await until(async () => (await bridge(both.page)).active === true)
    expect((await bridge(both.page)).space).toBe(other)
    // A tag without data-space never turns preview on, and says why in the console. (The page above goes on reading
    // `other`'s drafts, and on a loaded machine those requests may arrive late: only `space`'s count here.)
    await both.page.close()
    log.length = 0
    const bare = await open(`${sitePage('unpinned', undefined, '', null)}${fragment(await mint())}`)
    await Bun.sleep(300)
    expect(await bridge(bare.page)).toMatchObject({ active: false })
    expect(fromSite().filter((l) => l.path !== '/service-admin.js' && !l.path.startsWith(`/v1/cdn/${other}/`))).toEqual([])
    expect(bare.console.some((m) => m.includes('data-space'))).toBe(true)
    await p.page.close()
    await bare.page.close()
  })

  test("the editor's Preview button asks an admin for the site URL once, then opens the Story on the site in preview", async () => {
    sitePage('hello')
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(String(e)))
    // Signed in as the owner (the app keeps its session in sessionStorage).
    await page.goto(`${apiOrigin}/admin/sign-in`)
    await page.evaluate((token) => sessionStorage.setItem('content-service.token', token), owner)
    await page.goto(`${apiOrigin}/admin/spaces/${space}/stories/${helloUuid}`)
    await page.getByRole('heading', { name: 'Hello (draft)' }).waitFor()
    await page.getByRole('button', { name: 'Preview' }).click()
    // No preview URL yet: the dialog asks for one; a bad one is refused at the field.
    await page.getByLabel('Site preview URL').fill('ftp://nope.example/')
    await page.getByRole('button', { name: 'Save and preview' }).click()
    await page.getByText('Enter a full address starting with https:// or http://, or leave it empty.').waitFor()
    await page.getByLabel('Site preview URL').fill(`${siteOrigin}/`)
    const [opened] = await Promise.all([context.waitForEvent('page'), page.getByRole('button', { name: 'Save and preview' }).click()])
    await opened.waitForLoadState('load')
    expect(new URL(opened.url()).pathname).toBe('/hello')
    await until(async () => (await bridge(opened)).active === true)
    expect(new URL(opened.url()).hash).toBe('')
    await until(async () => (await text(opened, 'h1')) === 'Draft headline')
    expect((await editLinks(opened)).map((l) => l.href)).toContain(`${apiOrigin}/admin/spaces/${space}/stories/${helloUuid}`)
    await opened.close()
    // The Space remembers the URL: the next Preview opens the site at once.
    expect((await t.request('GET', `/v1/spaces/${space}`, { token: owner })).body.data.preview_url).toBe(`${siteOrigin}/`)
    const [again] = await Promise.all([context.waitForEvent('page'), page.getByRole('button', { name: 'Preview' }).click()])
    await again.waitForLoadState('load')
    await until(async () => (await bridge(again)).active === true)
    await again.close()
    expect(errors).toEqual([])
    await page.close()
  })

  test("a preview link naming a segment (the admin's Preview as) reads that segment's variant drafts", async () => {
    const seg = await call('POST', `/v1/spaces/${space}/audience-segments`, { key: 'vip', label: 'VIP', priority: 1, rules: [{ type: 'cookie', key: 'vip', operator: 'eq', value: 'yes' }] })
    await call('POST', `/v1/spaces/${space}/stories/${helloUuid}/variants`, { audience_segment_id: seg.id, content: doc({ component: 'hero', _uid: 'h1', headline: 'VIP headline' }) })
    const url = sitePage('as-segment')
    const p = await open(`${url}${fragment(await mint())}&service-segment=vip`)
    await until(async () => (await bridge(p.page)).active === true)
    // The segment left the address bar with the token, and the draft reads name it: the variant fills the page.
    expect(p.page.url()).toBe(url)
    await until(async () => (await text(p.page, 'h1')) === 'VIP headline')
    expect(await p.page.evaluate(() => (window as any).ServiceAdmin.draft('/hello'))).toMatchObject({ content: { blocks: [{ headline: 'VIP headline' }] } })
    // Without it (or with a malformed one), the default draft.
    const plain = await open(`${sitePage('not-as-segment')}${fragment(await mint())}&service-segment=${encodeURIComponent('VIP!')}`)
    await until(async () => (await bridge(plain.page)).active === true)
    await until(async () => (await text(plain.page, 'h1')) === 'Draft headline')
    expect(await plain.page.evaluate(() => sessionStorage.getItem('content-service:preview'))).not.toContain('segment')
    expect(p.errors).toEqual([])
    expect(plain.errors).toEqual([])
    await p.page.close()
    await plain.page.close()
    expect((await t.request('DELETE', `/v1/spaces/${space}/audience-segments/vip`, { token: owner })).status).toBe(204)
  })

  test('an expired token does nothing (the kernel clock moved past its hour)', async () => {
    const token = await mint()
    t.clock.advance(60 * 60 * 1000)
    const p = await open(`${sitePage('expired')}${fragment(token)}`)
    expect(await bridge(p.page)).toMatchObject({ active: false })
    expect(checkStatus()).toBe(401)
    expect(await editLinks(p.page)).toEqual([])
    expect(await text(p.page, 'h1')).toBe('Published headline')
    expect(await p.page.evaluate(() => sessionStorage.getItem('content-service:preview'))).toBeNull()
    await p.page.close()
  })
})
