/**
 * The DOM overlays screen in Chromium against a listening service (issue 45): a rule made in the browser (its refusals
 * first, read as sentences at their fields) hides an element; the tester applies the path's rules to a snippet on
 * the server and shows the result; a page on another origin with the embed script has the element hidden. Rules are
 * reordered by keyboard and by dragging, switched off (the tester and the page stop getting it) and deleted by
 * keyboard; a viewer finds no write control but may test. Axe-clean in both themes.
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { type AdminHarness, axeViolations, hasChromium, heard, listen, memberNamed, until, startAdmin, warnNoChromium } from './helpers'

setDefaultTimeout(120_000)
warnNoChromium('the admin app’s DOM overlays tests')

let h: AdminHarness
let owner: { token: string; tenant: { id: number } }
let editor: { token: string }
let viewer: { token: string }
let space = ''

async function settled(page: Page) {
  await until(() => page.getByTestId('skeleton').count(), 0)
  await until(() => page.getByText('Loading…').count(), 0)
}

async function axeBothThemes(page: Page, what: string) {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme })
    await settled(page)
    expect({ what, scheme, violations: await axeViolations(page) }).toEqual({ what, scheme, violations: [] })
  }
  await page.emulateMedia({ colorScheme: 'light' })
}

const names = async () => ((await h.call('GET', `/v1/spaces/${space}/dom-overlays`, owner.token)).body.data as { name: string }[]).map((r) => r.name).join()

describe.skipIf(!hasChromium)('DOM overlays screen in Chromium', () => {
  beforeAll(async () => {
    h = await startAdmin({ publicUrl: true })
    owner = await h.t.register({ name: 'Olga Owner' })
    space = (await h.t.createSpace(owner.token, { name: 'Harbour Site' })).slug
    editor = await memberNamed(h.t, owner.tenant.id, space, 'editor', 'Eda Editor')
    viewer = await memberNamed(h.t, owner.tenant.id, space, 'viewer', 'Vic Viewer')
  }, 240_000)

  afterAll(async () => {
    await h?.close()
  })

  test('a rule made in the screen hides an element: in the tester and on a page on another origin', async () => {
    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('link', { name: 'DOM overlays' }).click()
    await page.getByRole('heading', { name: 'DOM overlays', level: 1 }).waitFor()
    await page.getByText('No overlay rule yet').waitFor()

    await page.getByRole('button', { name: 'New rule' }).click()
    const form = page.getByTestId('overlay-form')
    await form.getByLabel('Name').fill('Hide the promo')
    // Refused by the API: each refusal reads as a sentence at its field.
    await form.getByLabel('Pages (path glob)').fill('/shop/{a,b}')
    await form.getByLabel('CSS selector').fill('p::before')
    await form.getByLabel('Action').selectOption('hide')
    await form.getByRole('button', { name: 'Save rule' }).click()
    await form.getByText(/^Use a path starting with \/ and only \*, \*\*/).waitFor()
    await form.getByText(/^This is not a CSS selector a browser can run here/).waitFor()
    expect(await form.getByLabel('Pages (path glob)').getAttribute('aria-invalid')).toBe('true')
    await axeBothThemes(page, 'form with refusals')
    await form.getByLabel('Pages (path glob)').fill('/shop/**')
    await form.getByLabel('CSS selector').fill('.promo')
    // Submitted by keyboard.
    await form.getByLabel('CSS selector').press('Enter')
    await page.getByRole('status').filter({ hasText: '“Hide the promo” saved.' }).waitFor()
    const [stored] = (await h.call('GET', `/v1/spaces/${space}/dom-overlays`, owner.token)).body.data
    expect(stored).toMatchObject({ name: 'Hide the promo', path_pattern: '/shop/**', selector: '.promo', action: 'hide', active: true, segment_key: null })

    // The tester: a path and a snippet in, the snippet after the rules out.
    const tester = page.getByTestId('overlay-tester')
    await tester.getByLabel('Page path').fill('/shop/shoes')
    await tester.getByLabel('HTML snippet').fill('<main><h1>Shoes</h1><p class="promo">50% off</p></main>')
    await tester.getByRole('button', { name: 'Apply rules' }).click()
    await until(() => tester.getByTestId('overlay-test-result').count(), 1)
    expect(await tester.getByTestId('overlay-test-result').textContent()).toBe('<main><h1>Shoes</h1><p class="promo" style="display: none;">50% off</p></main>')
    expect(await tester.getByTestId('overlay-test-rules').textContent()).toContain('Hide the promo')
    // Another path gets no rule.
    await tester.getByLabel('Page path').fill('/blog/post')
    await tester.getByRole('button', { name: 'Apply rules' }).click()
    await tester.getByText('No active rule matches this path.').waitFor()
    expect(await tester.getByTestId('overlay-test-result').textContent()).toBe('<main><h1>Shoes</h1><p class="promo">50% off</p></main>')
    // A path the API refuses: the sentence at the field.
    await tester.getByLabel('Page path').fill('shop')
    await tester.getByRole('button', { name: 'Apply rules' }).click()
    await tester.getByText('Enter a page path that starts with /.').waitFor()
    await tester.getByLabel('Page path').fill('/shop/shoes')
    await tester.getByRole('button', { name: 'Apply rules' }).click()
    await tester.getByText('Hide the promo', { exact: false }).waitFor()
    await axeBothThemes(page, 'list and tester')

    // The customer's site on another origin, with the service's embed script: the element is hidden there.
    const embed = (await h.call('GET', '/v1/version', null)).body.components.embed_js
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>shop</title></head><body><main><h1>Shoes</h1><p class="promo">50% off</p><p class="other">Stays</p></main><script src="${embed.url}" integrity="${embed.integrity}" crossorigin="anonymous" data-space="${space}"></script></body></html>`
    const site = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (r) => (new URL(r.url).pathname.startsWith('/shop/') ? new Response(html, { headers: { 'Content-Type': 'text/html; charset=utf-8' } }) : new Response('not found', { status: 404 })),
    })
    try {
      const ctx = await h.browser.newContext()
      const visitor = await ctx.newPage()
      await visitor.goto(`http://127.0.0.1:${site.port}/shop/shoes`, { waitUntil: 'load' })
      await until(() => visitor.evaluate(() => getComputedStyle(document.querySelector('.promo')!).display), 'none')
      expect(await visitor.evaluate(() => getComputedStyle(document.querySelector('.other')!).display)).toBe('block')
      await ctx.close()
    } finally {
      site.stop(true)
    }
    expect(errors).toEqual([])
  })

  test('reordered by keyboard and by dragging, switched off, deleted by keyboard; a viewer only reads and tests', async () => {
    expect((await h.call('POST', `/v1/spaces/${space}/dom-overlays`, owner.token, { name: 'New title', path_pattern: '/shop/*', selector: 'h1', action: 'replace_text', content: { en: 'Sale' }, priority: 1000 })).status).toBe(201)
    expect(await names()).toBe('Hide the promo,New title')
    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}/overlays`)
    await page.locator('[data-overlay="New title"]').waitFor()

    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '')
    // A move is saved when the list is no longer busy: the next key waits for it.
    const saved = () => until(() => page.getByTestId('overlays').getAttribute('aria-busy'), null)
    await page.getByRole('button', { name: 'Move “Hide the promo” (position 1)' }).focus()
    await page.keyboard.press('Alt+ArrowDown')
    await until(names, 'New title,Hide the promo')
    // The move is announced in the live region; the focus follows the moved rule's handle, where Alt+↑ moves it back.
    await until(() => page.getByTestId('announcer').textContent(), '“Hide the promo” moved to position 2 of 2.')
    expect(await page.getByTestId('announcer').getAttribute('aria-live')).toBe('polite')
    await until(focused, 'Move “Hide the promo” (position 2)')
    await saved()
    // Two moves in a row, the second while the first is being saved (the list busy): the second is made on the order
    // shown and saved after the first, not computed from the priorities before it. Each is announced; the focus stays.
    await listen(page)
    await page.keyboard.press('Alt+ArrowUp')
    await page.keyboard.press('Alt+ArrowDown')
    await until(focused, 'Move “Hide the promo” (position 2)')
    await saved()
    expect(await names()).toBe('New title,Hide the promo')
    expect(await heard(page)).toEqual(['“Hide the promo” moved to position 1 of 2.', '“Hide the promo” moved to position 2 of 2.'])
    const priorities = ((await h.call('GET', `/v1/spaces/${space}/dom-overlays`, owner.token)).body.data as { priority: number }[]).map((r) => r.priority)
    expect(new Set(priorities).size).toBe(2)
    // The order as saved, after a reload.
    await page.reload()
    await page.locator('[data-overlay="New title"]').waitFor()
    expect(await page.locator('[data-overlay]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-overlay')).join())).toBe('New title,Hide the promo')

    const handle = page.getByRole('button', { name: 'Move “Hide the promo” (position 2)' })
    const from = (await handle.boundingBox())!
    const top = (await page.locator('[data-overlay="New title"]').boundingBox())!
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2)
    await page.mouse.down()
    await page.mouse.move(from.x + from.width / 2, top.y + 4, { steps: 5 })
    await page.mouse.up()
    await until(names, 'Hide the promo,New title')
    // The drop is shown at once and saved in the background: what follows (an edit's PUT) starts from the saved order.
    await saved()

    // Edited: the form opens with the rule as stored; the new text is what the tester applies.
    await page.getByRole('button', { name: 'Edit “New title”' }).click()
    const form = page.getByTestId('overlay-form')
    expect(await form.getByLabel('CSS selector').inputValue()).toBe('h1')
    expect(await form.getByLabel('Action').inputValue()).toBe('replace_text')
    expect(await form.getByLabel('Content (en)').inputValue()).toBe('Sale')
    await form.getByLabel('Content (en)').fill('Big sale')
    await form.getByRole('button', { name: 'Save rule' }).click()
    await page.getByRole('status').filter({ hasText: '“New title” saved.' }).waitFor()
    expect((await h.call('GET', `/v1/spaces/${space}/dom-overlays`, owner.token)).body.data.find((r: { name: string }) => r.name === 'New title')).toMatchObject({ content: { en: 'Big sale' }, priority: 20, active: true })

    // Switched off: the tester no longer applies it.
    await page.getByRole('switch', { name: /Active New title/ }).click()
    await until(async () => (await h.call('GET', `/v1/spaces/${space}/dom-overlays`, owner.token)).body.data.find((r: { name: string }) => r.name === 'New title').active, false)
    const tester = page.getByTestId('overlay-tester')
    await tester.getByLabel('Page path').fill('/shop/shoes')
    await tester.getByLabel('HTML snippet').fill('<h1>Shoes</h1>')
    await tester.getByRole('button', { name: 'Apply rules' }).click()
    await until(() => tester.getByTestId('overlay-test-result').count(), 1)
    expect(await tester.getByTestId('overlay-test-result').textContent()).toBe('<h1>Shoes</h1>')
    await page.getByRole('switch', { name: /Active New title/ }).click()
    await until(async () => (await h.call('GET', `/v1/spaces/${space}/dom-overlays`, owner.token)).body.data.find((r: { name: string }) => r.name === 'New title').active, true)
    await tester.getByRole('button', { name: 'Apply rules' }).click()
    await until(() => tester.getByTestId('overlay-test-result').textContent(), '<h1>Big sale</h1>')

    // Deleted by keyboard: it asks first.
    await page.getByRole('button', { name: 'Delete “New title”' }).focus()
    await page.keyboard.press('Enter')
    const confirm = page.getByRole('dialog', { name: 'Delete “New title”?' })
    await confirm.waitFor()
    await confirm.getByRole('button', { name: 'Delete', exact: true }).focus()
    await page.keyboard.press('Enter')
    await page.getByRole('status').filter({ hasText: '“New title” deleted.' }).waitFor()
    await until(names, 'Hide the promo')
    expect(errors).toEqual([])

    // A viewer: the list and the tester, no write control.
    const v = await h.signedIn(viewer.token)
    await v.page.goto(`/admin/spaces/${space}/overlays`)
    await v.page.locator('[data-overlay="Hide the promo"]').waitFor()
    expect(await v.page.getByRole('button', { name: 'New rule' }).count()).toBe(0)
    expect(await v.page.getByRole('switch').count()).toBe(0)
    expect(await v.page.getByRole('button', { name: /^Move|^Delete|^Edit/ }).count()).toBe(0)
    await v.page.getByTestId('overlay-tester').getByLabel('Page path').fill('/shop/x')
    await v.page.getByTestId('overlay-tester').getByLabel('HTML snippet').fill('<p class="promo">x</p>')
    await v.page.getByRole('button', { name: 'Apply rules' }).click()
    await until(() => v.page.getByTestId('overlay-test-result').textContent(), '<p class="promo" style="display: none;">x</p>')
    await axeBothThemes(v.page, 'viewer')
    expect(v.errors).toEqual([])
  })
})
