/**
 * The site-feature screens in Chromium against a listening service (issue 45): Events, Galleries, Shop, Analytics.
 * An event made in the browser fills up and the next registration (through the public API) lands on the waitlist,
 * which the screen shows in order; a cancellation (asked first, by keyboard) and more capacity move the line up. A
 * gallery reordered by keyboard and by dragging, with an image from the asset picker, is what the public answer
 * serves. A product made in the browser is bought through the public cart; its order goes paid → fulfilled by the
 * buttons, which offer only the moves the API allows. Beacons sent by the embed script from a page on another
 * origin show on the analytics overview and in the Story's panel. A viewer finds no write control. Each screen is
 * axe-clean in both themes.
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { jpegOf, photo } from '../helpers/images'
import { analyticsModule } from '../../src/modules/analytics'
import { type FakeAi, startFakeAi } from '../helpers/fake-ai'
import { type AdminHarness, axeViolations, hasChromium, memberNamed, startAdmin, until, warnNoChromium } from './helpers'

setDefaultTimeout(120_000)
warnNoChromium('the admin app’s site-feature tests')

let h: AdminHarness
let owner: { token: string; user: { id: number }; tenant: { id: number } }
let editor: { token: string }
let space = ''
let fake: FakeAi

/** Waits until no skeleton or "Loading…" is on screen. */
async function settled(page: Page) {
  await until(() => page.getByTestId('skeleton').count(), 0)
  await until(() => page.getByText('Loading…').count(), 0)
}

async function upload(name: string, seed: number): Promise<string> {
  const fd = new FormData()
  fd.append('file', new Blob([(await jpegOf(photo(800, 500, seed))) as BlobPart], { type: 'image/jpeg' }), name)
  const res = await fetch(`${h.origin}/v1/spaces/${space}/assets`, { method: 'POST', headers: { Authorization: `Bearer ${owner.token}` }, body: fd })
  expect(res.status).toBe(201)
  return ((await res.json()) as { data: { uuid: string } }).data.uuid
}

async function axeBothThemes(page: Page, what: string) {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme })
    await settled(page)
    expect({ what, scheme, violations: await axeViolations(page) }).toEqual({ what, scheme, violations: [] })
  }
  await page.emulateMedia({ colorScheme: 'light' })
}

describe.skipIf(!hasChromium)('site-feature screens in Chromium', () => {
  beforeAll(async () => {
    // AI is on (a fake OpenAI-compatible provider): the analytics screen offers its insights.
    fake = startFakeAi()
    h = await startAdmin({ publicUrl: true, env: { AI_BASE_URL: fake.url, AI_API_KEY: 'sk-test', AI_MODEL: 'fake-chat' } })
    owner = await h.t.register({ name: 'Olga Owner' })
    space = (await h.t.createSpace(owner.token, { name: 'Harbour Site' })).slug
    editor = await memberNamed(h.t, owner.tenant.id, space, 'editor', 'Eda Editor')
  }, 240_000)

  afterAll(async () => {
    await h?.close()
    await fake?.stop()
  })

  test('events: made in the browser, it fills up; the next registration lands on the waitlist; a cancellation moves it up', async () => {
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('link', { name: 'Events' }).click()
    await page.getByRole('heading', { name: 'Events', level: 1 }).waitFor()
    await page.getByText('No upcoming event').waitFor()
    await page.getByRole('button', { name: 'New event' }).click()
    const form = page.getByRole('form', { name: 'New event' })
    await form.getByLabel('Slug').fill('harbour-walk')
    await form.getByLabel('Title (en)').fill('Harbour walk')
    await form.getByLabel('Time zone').selectOption('Europe/Berlin')
    await form.getByLabel('Starts').fill('2030-06-01T18:00')
    await form.getByLabel('Ends').fill('2030-06-01T16:00')
    await form.getByLabel('Place', { exact: true }).fill('Pier 3')
    await form.getByLabel('Capacity').fill('1')
    await form.getByLabel('Waitlist when full').check()
    await form.getByLabel('Published (public and open for registration)').check()
    await form.getByRole('button', { name: 'Add a field' }).click()
    await form.getByLabel('Key of field 1').fill('company')
    await form.getByLabel('Label of field 1').fill('Company')
    // The API's refusal reads as a sentence at its field.
    await form.getByRole('button', { name: 'Create event' }).click()
    await form.getByText('The end must come after the start.').waitFor()
    await form.getByLabel('Ends').fill('2030-06-01T20:00')
    await form.getByRole('button', { name: 'Create event' }).click()
    await page.getByRole('status').filter({ hasText: 'Event “harbour-walk” saved.' }).waitFor()

    const [stored] = (await h.call('GET', `/v1/spaces/${space}/events`, owner.token)).body.data
    // 18:00 on Berlin's summer clock is 16:00 UTC.
    expect(stored).toMatchObject({ slug: 'harbour-walk', starts_at: '2030-06-01T16:00:00.000Z', ends_at: '2030-06-01T18:00:00.000Z', timezone: 'Europe/Berlin', capacity: 1, waitlist: true, published: true })
    expect(stored.fields).toEqual({ type: 'object', properties: { company: { type: 'string', maxLength: 1000, title: 'Company' } } })

    // Two guests through the public API: the first takes the one spot, the second waits.
    const reg = (name: string, email: string) => h.call('POST', `/v1/cdn/${space}/events/harbour-walk/register`, null, { name, email, fields: { company: 'Acme' } })
    expect((await reg('Ada First', 'ada@example.com')).body.data.registration.status).toBe('confirmed')
    expect((await reg('Bo Second', 'bo@example.com')).body.data.registration.status).toBe('waitlisted')
    expect((await reg('Cy Third', 'cy@example.com')).body.data.registration.status).toBe('waitlisted')

    const detail = page.getByTestId('event-detail')
    await page.reload()
    await page.getByRole('button', { name: 'Harbour walk' }).click()
    await detail.getByTestId('counts').waitFor()
    expect(await detail.getByTestId('counts').textContent()).toBe('1 of 1 spots taken, 2 on the waitlist.')
    // The registrations (admin only) load after the event's counts: wait for the waitlist's two entries.
    await detail.getByTestId('waitlist').locator('li').nth(1).waitFor()
    expect(await detail.getByTestId('waitlist').locator('li').allTextContents()).toEqual([expect.stringContaining('Bo Second'), expect.stringContaining('Cy Third')])
    expect(await detail.locator('[data-registration="bo@example.com"]').textContent()).toContain('Waitlisted')
    expect(await detail.getByTestId('public-link').getAttribute('href')).toBe(`${h.origin}/v1/cdn/${space}/events/harbour-walk`)
    await axeBothThemes(page, 'events')

    // Cancel the confirmed guest by keyboard: the first in line moves up.
    await detail.getByRole('button', { name: 'Cancel the registration of Ada First' }).focus()
    await page.keyboard.press('Enter')
    // It asks first; the focus is on the confirmation.
    await detail.getByText('Cancel Ada First’s registration? They get a mail.').waitFor()
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Yes, cancel')
    await page.keyboard.press('Enter')
    await page.getByRole('status').filter({ hasText: 'The registration of Ada First is cancelled.' }).waitFor()
    await until(async () => (await detail.getByTestId('waitlist').locator('li').allTextContents()).length, 1)
    expect(await detail.locator('[data-registration="bo@example.com"]').textContent()).toContain('Confirmed')
    expect(await detail.getByTestId('counts').textContent()).toBe('1 of 1 spots taken, 1 on the waitlist.')

    // Edit: one more spot moves the last in line up; the extra fields stay as they were.
    await detail.getByRole('button', { name: 'Edit', exact: true }).click()
    const edit = page.getByRole('form', { name: 'Edit event' })
    expect(await edit.getByLabel('Starts').inputValue()).toBe('2030-06-01T18:00')
    await edit.getByLabel('Capacity').fill('2')
    await edit.getByRole('button', { name: 'Save event' }).click()
    await page.getByRole('status').filter({ hasText: 'Event “harbour-walk” saved.' }).waitFor()
    await until(() => detail.getByTestId('counts').textContent(), '2 of 2 spots taken, 0 on the waitlist.')
    const edited = (await h.call('GET', `/v1/spaces/${space}/events/${stored.id}`, owner.token)).body.data
    expect(edited).toMatchObject({ capacity: 2, waitlisted_count: 0, confirmed_count: 2, starts_at: '2030-06-01T16:00:00.000Z', fields: stored.fields })

    // The calendar file downloads.
    const [file] = await Promise.all([page.waitForEvent('download'), detail.getByRole('button', { name: 'Calendar file' }).click()])
    expect(file.suggestedFilename()).toBe('harbour-walk.ics')
    // The CSV export too.
    const [csv] = await Promise.all([page.waitForEvent('download'), detail.getByRole('button', { name: 'Export CSV' }).click()])
    expect(csv.suggestedFilename()).toBe('harbour-walk-registrations.csv')

    // An editor sees the event but not its registrations (personal data).
    const ed = await h.signedIn(editor.token)
    await ed.page.goto(`/admin/spaces/${space}/events`)
    await ed.page.getByRole('button', { name: 'Harbour walk' }).click()
    await ed.page.getByText('Registrations are personal data: Space admins see them.').waitFor()
    expect(await ed.page.getByTestId('counts').count()).toBe(0)
    expect(errors).toEqual([])
    expect(ed.errors).toEqual([])
  })

  test('galleries: reordered by keyboard, an image added from the picker, a caption written; the public answer follows', async () => {
    const [a, b, c] = [await upload('anchor.jpg', 1), await upload('buoy.jpg', 2), await upload('crane.jpg', 3)]
    const made = await h.call('POST', `/v1/spaces/${space}/galleries`, editor.token, { slug: 'harbour', title: { en: 'Harbour' }, items: [{ asset_uuid: a }, { asset_uuid: b }] })
    expect(made.status).toBe(201)
    const publicOrder = async () => ((await h.call('GET', `/v1/cdn/${space}/galleries/harbour`, null)).body.data.items as { asset_uuid: string }[]).map((i) => i.asset_uuid)
    expect(await publicOrder()).toEqual([a, b])

    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('link', { name: 'Galleries' }).click()
    await page.getByRole('heading', { name: 'Galleries', level: 1 }).waitFor()
    await page.getByRole('button', { name: 'Harbour' }).click()
    const editorBox = page.getByTestId('gallery-editor')
    // The preview draws the public answer with its srcset.
    const previewImgs = editorBox.getByTestId('gallery-preview').locator('picture')
    await until(() => previewImgs.count(), 2)
    expect(await previewImgs.first().locator('source[type="image/webp"]').getAttribute('srcset')).toMatch(/\.webp\?w=\d+ \d+w/)

    // Keyboard: Alt+↓ on the first handle moves it down; the focus stays on the moved handle.
    await editorBox.getByRole('button', { name: 'Image 1: drag to move' }).focus()
    await page.keyboard.press('Alt+ArrowDown')
    expect(await editorBox.locator('[data-item]').evaluateAll((els) => els.map((e) => e.getAttribute('data-item')))).toEqual([b, a])
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Image 2: drag to move')
    // From the asset picker.
    await editorBox.getByRole('button', { name: 'Add an image' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Choose crane.jpg' }).click()
    await editorBox.getByLabel('Caption of image 3 (en)').fill('The old crane')
    await editorBox.getByLabel('Alt text of image 3 (en)').fill('A rusty crane at dusk')
    await editorBox.getByRole('button', { name: 'Save gallery' }).click()
    await page.getByRole('status').filter({ hasText: 'Gallery saved.' }).waitFor()
    expect(await publicOrder()).toEqual([b, a, c])
    const third = (await h.call('GET', `/v1/cdn/${space}/galleries/harbour`, null)).body.data.items[2]
    expect(third).toMatchObject({ caption: 'The old crane', alt: 'A rusty crane at dusk' })
    await until(() => previewImgs.count(), 3)
    expect(await editorBox.getByTestId('gallery-preview').locator('img').nth(2).getAttribute('alt')).toBe('A rusty crane at dusk')

    // Drag and drop: the third image onto the first place.
    await editorBox.getByRole('button', { name: 'Image 3: drag to move' }).dragTo(editorBox.locator('[data-item]').first())
    expect(await editorBox.locator('[data-item]').evaluateAll((els) => els.map((e) => e.getAttribute('data-item')))).toEqual([c, b, a])
    await editorBox.getByRole('button', { name: 'Save gallery' }).click()
    await until(async () => (await publicOrder()).join(), [c, b, a].join())
    await axeBothThemes(page, 'galleries')
    expect(errors).toEqual([])
  })

  test('shop: a product made in the browser is bought; its order goes paid → fulfilled by the buttons, only the allowed moves shown', async () => {
    await upload('rope.jpg', 4)
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('link', { name: 'Shop' }).click()
    await page.getByRole('heading', { name: 'Shop', level: 1 }).waitFor()
    await page.getByText('No product yet').waitFor()
    await page.getByRole('button', { name: 'New product' }).click()
    const form = page.getByRole('form', { name: 'New product' })
    await form.getByLabel('Slug').fill('rope')
    await form.getByLabel('Name (en)').fill('Harbour rope')
    await form.getByLabel('Price in EUR').fill('19,9x')
    await form.getByRole('button', { name: 'Save product' }).click()
    await form.getByText('Give the price as a number, e.g. 19.99.').waitFor()
    await form.getByLabel('Price in EUR').fill('19.99')
    await form.getByLabel('Stock').fill('5')
    await form.getByRole('button', { name: 'Add an image' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Choose rope.jpg' }).click()
    await form.getByRole('button', { name: 'Save product' }).click()
    await page.getByRole('status').filter({ hasText: 'Product “rope” saved.' }).waitFor()
    const product = (await h.call('GET', `/v1/spaces/${space}/products`, owner.token)).body.data[0]
    expect(product).toMatchObject({ slug: 'rope', price: 1999, currency: 'EUR', stock: 5, active: true })
    expect(product.images).toHaveLength(1)
    expect(await page.locator('[data-product="rope"]').textContent()).toContain('€19.99')

    // A buyer checks out through the public API: manual payment (no Stripe keys), the order waits.
    const cart = (await h.call('POST', `/v1/cdn/${space}/carts`, null)).body.data.uuid
    expect((await h.call('POST', `/v1/cdn/${space}/carts/${cart}/items`, null, { product: 'rope', quantity: 2 })).status).toBe(201)
    const order = await h.call('POST', `/v1/cdn/${space}/carts/${cart}/checkout`, null, { email: 'buyer@example.com', name: 'Bea Buyer' })
    expect(order.status).toBe(201)

    // The tabs by keyboard: → from Products is Orders.
    await page.getByRole('tab', { name: 'Products' }).focus()
    await page.keyboard.press('ArrowRight')
    await page.getByRole('heading', { name: 'Orders', level: 2 }).waitFor()
    await page.getByRole('button', { name: order.body.data.number }).click()
    const detail = page.getByTestId('order-detail')
    await detail.getByTestId('order-total').waitFor()
    expect(await detail.getByTestId('order-total').textContent()).toBe('€39.98')
    expect(await detail.getByTestId('payment').textContent()).toContain('Manual payment · not paid yet')
    const moves = () => detail.getByRole('group', { name: 'Move the order' }).getByRole('button').allTextContents()
    expect(await moves()).toEqual(['Mark paid', 'Cancel order'])
    await axeBothThemes(page, 'shop orders')
    await detail.getByRole('button', { name: 'Mark paid' }).click()
    await page.getByRole('status').filter({ hasText: `Order ${order.body.data.number} is now Paid.` }).waitFor()
    expect(await moves()).toEqual(['Fulfil', 'Cancel order'])
    await detail.getByRole('button', { name: 'Fulfil' }).click()
    await page.getByRole('status').filter({ hasText: `Order ${order.body.data.number} is now Fulfilled.` }).waitFor()
    expect(await moves()).toEqual([])
    const stored = (await h.call('GET', `/v1/spaces/${space}/orders/${order.body.data.id}`, owner.token)).body.data
    expect(stored).toMatchObject({ status: 'fulfilled', payment_provider: null })
    expect(stored.paid_at).toBeTruthy()
    expect(stored.fulfilled_at).toBeTruthy()

    await page.getByRole('tab', { name: 'Settings' }).click()
    await page.getByTestId('payment-source').waitFor()
    expect(await page.getByTestId('payment-source').textContent()).toContain('orders wait for manual payment')
    expect(await page.getByLabel('Currency').inputValue()).toBe('EUR')
    await page.getByLabel('Secret key').fill('sk_test_abcdefgh12345678')
    await page.getByLabel('Webhook signing secret').fill('whsec_abcdefgh12345678')
    await page.getByRole('button', { name: 'Save Stripe keys' }).click()
    await page.getByRole('status').filter({ hasText: 'Stripe keys saved' }).waitFor()
    const stripe = page.getByTestId('stripe')
    await until(async () => (await stripe.textContent())?.includes('5678') ?? false, true)
    expect(await stripe.textContent()).not.toContain('sk_test_abcdefgh12345678')
    await axeBothThemes(page, 'shop settings')

    // An editor sees products and settings but no orders (personal data) and no Stripe keys.
    const ed = await h.signedIn(editor.token)
    await ed.page.goto(`/admin/spaces/${space}/shop`)
    await ed.page.locator('[data-product="rope"]').waitFor()
    expect(await ed.page.getByRole('tab').allTextContents()).toEqual(['Products', 'Settings'])
    expect(errors).toEqual([])
    expect(ed.errors).toEqual([])
  })

  test('analytics: views sent by the beacon from a page on another origin show on the overview and in the Story’s panel', async () => {
    expect((await h.call('POST', `/v1/spaces/${space}/components`, owner.token, { name: 'page', is_root: true, schema: { title: { type: 'text' } } })).status).toBe(201)
    const story = async (slug: string) => {
      const r = await h.call('POST', `/v1/spaces/${space}/stories`, owner.token, { name: slug, slug, content: { type: 'doc', blocks: [{ component: 'page', _uid: 'p1', title: slug }] } })
      expect(r.status).toBe(201)
      expect((await h.call('POST', `/v1/spaces/${space}/stories/${r.body.data.uuid}/publish`, owner.token)).status).toBe(200)
      return r.body.data.uuid as string
    }
    // A segment of the Space: a beacon's segment_key is kept only when it names one.
    const seg = await h.call('POST', `/v1/spaces/${space}/audience-segments`, owner.token, { key: 'sailors', label: 'Sailors', priority: 1, rules: [{ type: 'cookie', key: 'sailor', operator: 'eq', value: '1' }] })
    expect(seg.status).toBe(201)
    const tides = await story('tides')
    const ferries = await story('ferries')
    // The customer's site on another origin: the service's embed script sends a beacon per Story on the page.
    const embed = (await h.call('GET', '/v1/version', null)).body.components.embed_js
    const html = (body: string) =>
      `<!doctype html><html lang="de"><head><meta charset="utf-8"><title>site</title></head><body>${body}<script src="${embed.url}" integrity="${embed.integrity}" crossorigin="anonymous" data-space="${space}"></script></body></html>`
    const pages: Record<string, string> = {
      '/one': html(`<article data-story-uuid="${tides}" data-space="${space}" data-lang="de" data-segment-key="sailors">Tides</article><article data-story-uuid="${ferries}" data-space="${space}" data-lang="en">Ferries</article>`),
      '/two': html(`<article data-story-uuid="${tides}" data-space="${space}" data-lang="de">Tides</article>`),
    }
    const site = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => new Response(pages[new URL(r.url).pathname] ?? 'not found', { status: pages[new URL(r.url).pathname] ? 200 : 404, headers: { 'Content-Type': 'text/html; charset=utf-8' } }) })
    try {
      // A reader's Chrome (the headless one names itself HeadlessChrome, which the beacon drops as a bot).
      const ctx = await h.browser.newContext({ userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' })
      const reader = await ctx.newPage()
      let beacons = 0
      reader.on('request', (r) => { if (r.url().endsWith('/_beacon')) beacons++ })
      await reader.goto(`http://127.0.0.1:${site.port}/one`, { waitUntil: 'load' })
      await until(async () => beacons, 2)
      await reader.goto(`http://127.0.0.1:${site.port}/two`, { waitUntil: 'load' })
      await until(async () => beacons, 3)
      await ctx.close()
    } finally {
      site.stop(true)
    }
    const state = h.t.state(analyticsModule)
    await until(async () => {
      await Promise.allSettled([...state.beacon.inflight])
      await state.buffer.flush()
      return (await h.call('GET', `/v1/spaces/${space}/analytics/overview?days=7`, owner.token)).body.data.window.mounts
    }, 3)

    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('link', { name: 'Analytics' }).click()
    await page.getByRole('heading', { name: 'Analytics', level: 1 }).waitFor()
    await page.getByTestId('views-total').waitFor()
    expect(await page.getByTestId('views-total').textContent()).toBe('3')
    // The chart names itself and says its numbers; the table under it holds every day.
    const chart = page.getByTestId('views-chart').locator('svg[role="img"]')
    expect(await chart.locator('title').textContent()).toStartWith('Views per day from')
    expect(await chart.locator('desc').textContent()).toStartWith('3 views from')
    expect(await page.getByTestId('views-chart').locator('table tbody tr').count()).toBe(30)
    await page.getByRole('button', { name: '7 days' }).click()
    await until(() => page.getByTestId('views-chart').locator('table tbody tr').count(), 7)
    expect(await page.getByTestId('top-stories').locator('li').allTextContents()).toEqual(['tides · 2', 'ferries · 1'])
    expect(await page.getByTestId('languages').locator('table').textContent()).toBe('Languagesde66.7%en33.3%')
    expect(await page.getByTestId('segments').locator('table').textContent()).toBe('Segmentssailors33.3%')
    expect(await page.getByTestId('devices').locator('table').textContent()).toBe('DevicesDesktop100%')
    // Insights, where AI is on: observations with their numbers.
    await page.getByRole('button', { name: 'Find insights' }).click()
    await page.getByTestId('insights').locator('li').first().waitFor()
    expect(await page.getByTestId('insights').locator('li').first().textContent()).toStartWith('3 mounts across 2 Stories between')
    await axeBothThemes(page, 'analytics')

    // The Story's panel in the editor: its sparkline, by language and segment.
    await page.getByTestId('top-stories').getByRole('link', { name: 'tides' }).click()
    const panel = page.getByTestId('story-analytics')
    await panel.locator('summary').click()
    await panel.getByTestId('story-views').waitFor()
    expect(await panel.getByTestId('story-views').textContent()).toBe('2 views')
    expect(await panel.locator('svg[data-chart="sparkline"] title').textContent()).toBe('Views per day over 30 days, 2 in all')
    expect(await panel.locator('table').first().textContent()).toBe('By languagede2')
    expect(errors).toEqual([])
  })

  test('a viewer reads every site screen but finds no write control and no personal data', async () => {
    const viewer = await memberNamed(h.t, owner.tenant.id, space, 'viewer', 'Vic Viewer')
    const { page, errors } = await h.signedIn(viewer.token)
    await page.goto(`/admin/spaces/${space}/events`)
    await page.getByRole('heading', { name: 'Events', level: 1 }).waitFor()
    await settled(page)
    await page.getByRole('button', { name: 'Past' }).click()
    await settled(page)
    await page.getByRole('button', { name: 'Upcoming' }).click()
    await page.getByRole('button', { name: 'Harbour walk' }).click()
    await page.getByText('Registrations are personal data: Space admins see them.').waitFor()
    for (const name of ['New event', 'Edit', 'Delete event']) expect({ name, n: await page.getByRole('button', { name, exact: true }).count() }).toEqual({ name, n: 0 })
    await page.goto(`/admin/spaces/${space}/galleries`)
    await page.getByRole('button', { name: 'Harbour' }).click()
    await page.getByTestId('gallery-preview').waitFor()
    for (const name of ['New gallery', 'Save gallery', 'Add an image', 'Image 1: drag to move']) expect({ name, n: await page.getByRole('button', { name }).count() }).toEqual({ name, n: 0 })
    await page.goto(`/admin/spaces/${space}/shop`)
    await page.locator('[data-product="rope"]').waitFor()
    expect(await page.getByRole('tab').allTextContents()).toEqual(['Products', 'Settings'])
    expect(await page.getByRole('button', { name: 'New product' }).count()).toBe(0)
    expect(await page.getByRole('checkbox', { name: 'Harbour rope on sale' }).isDisabled()).toBe(true)
    expect(errors).toEqual([])
  })
})
