/**
 * The pages behind mailed links in a real browser (Debian's Chromium through playwright-core): the page of a confirm
 * or unsubscribe link changes nothing when loaded, its button works under the page's strict Content-Security-Policy
 * (no script; form-action 'self'), and when the Space has a newsletter_redirect_url the button's POST may redirect
 * there (browsers check form-action on the redirect too).
 *
 * CI installs Chromium (`apt-get install -y chromium`, .ci/run); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Server } from 'bun'
import type { BrowserContext, Page } from 'playwright-core'
import { hasChromium, launchPersistentChromium, warnNoChromium } from './helpers/browser'
import { type TestApp, testApp } from './helpers/app'
import { type SmtpSink, startSmtpSink } from './helpers/smtp'

setDefaultTimeout(120_000)

warnNoChromium("the mail link pages' browser tests")

let t: TestApp
let sink: SmtpSink
let api: Server<undefined>
let site: Server<undefined>
let origin: string
let siteOrigin: string
let context: BrowserContext
let chromium: Awaited<ReturnType<typeof launchPersistentChromium>> | undefined
let admin: string
let space: string

describe.skipIf(!hasChromium)('mail link pages in Chromium', () => {
  beforeAll(async () => {
    sink = await startSmtpSink()
    // The service listens first, so its origin can be PUBLIC_URL (the base of every mailed link).
    let app: TestApp | null = null
    api = Bun.serve({ port: 0, hostname: '127.0.0.1', development: false, fetch: (request, server) => app!.app.fetch(request, server) })
    origin = `http://127.0.0.1:${api.port}`
    t = app = await testApp({ publicUrl: origin }, { SMTP_URL: sink.url })
    // The Space's own site (another origin), where newsletter_redirect_url points.
    site = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      development: false,
      fetch: (request) => new Response(`<!doctype html><title>Thanks</title><p id="status">${new URL(request.url).searchParams.get('status')}</p>`, { headers: { 'Content-Type': 'text/html' } }),
    })
    siteOrigin = `http://127.0.0.1:${site.port}`
    const owner = await t.register()
    admin = owner.token
    space = (await t.createSpace(admin, { name: 'Acme News' })).slug
    chromium = await launchPersistentChromium()
    context = chromium.context
  }, 240_000)

  afterAll(async () => {
    await chromium?.close()
    api?.stop(true)
    site?.stop(true)
    await t?.close()
    await sink?.stop()
  })

  const statusOf = async (email: string) =>
    (await t.kernel.db.query<{ status: string }>('select status from subscribers where email = $1', [email]))[0]?.status

  /** Subscribes `email` and answers the confirm and unsubscribe links of its mail. */
  async function links(email: string) {
    sink.clear()
    expect((await t.request('POST', `/v1/cdn/${space}/subscribe`, { body: { email } })).status).toBe(202)
    await t.kernel.jobs.runDueJobs()
    const text = sink.mails.find((m) => m.to.includes(email))?.parsed.text ?? ''
    const confirm = /http:\S+\/subscribe\/confirm\/[A-Za-z0-9_-]{43}/.exec(text)![0]
    const unsubscribe = /http:\S+\/unsubscribe\/[A-Za-z0-9_-]{43}/.exec(text)![0]
    expect(confirm.startsWith(origin)).toBe(true)
    return { confirm, unsubscribe }
  }

  async function open(url: string): Promise<{ page: Page; errors: string[] }> {
    const page = await context.newPage()
    const errors: string[] = []
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text())
    })
    await page.goto(url, { waitUntil: 'load' })
    return { page, errors }
  }

  test('loading the confirm page confirms no one; its button confirms, with nothing blocked by the CSP', async () => {
    const { confirm } = await links('browser@example.com')
    const { page, errors } = await open(confirm)
    expect(await page.title()).toBe('Confirm your subscription')
    expect(await statusOf('browser@example.com')).toBe('pending')
    await Promise.all([page.waitForURL(confirm), page.click('button[type=submit]')])
    await page.waitForSelector('h1')
    expect(await page.textContent('h1')).toBe('Subscription confirmed')
    expect(await statusOf('browser@example.com')).toBe('confirmed')
    expect(errors).toEqual([])
    await page.close()
  })

  test('with newsletter_redirect_url, the unsubscribe button lands on the Space’s site', async () => {
    await t.request('PUT', `/v1/spaces/${space}/newsletter`, { token: admin, body: { newsletter_redirect_url: `${siteOrigin}/thanks` } })
    const { confirm, unsubscribe } = await links('leaving@example.com')
    await t.request('POST', new URL(confirm).pathname)
    const { page, errors } = await open(unsubscribe)
    expect(await page.title()).toBe('Unsubscribe')
    expect(await statusOf('leaving@example.com')).toBe('confirmed')
    await Promise.all([page.waitForURL(`${siteOrigin}/thanks?status=unsubscribed`), page.click('button[type=submit]')])
    expect(await page.textContent('#status')).toBe('unsubscribed')
    expect(await statusOf('leaving@example.com')).toBe('unsubscribed')
    expect(errors).toEqual([])
    await page.close()
  })
})
