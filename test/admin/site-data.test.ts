/**
 * The site-data screens in Chromium against a listening service: Datasources (a pull from a real HTTP receiver on
 * 127.0.0.1 fails, the screen says why in words, the receiver recovers, Sync now shows the entries; JSONPath tested
 * against the last pull; a cron's next runs; the Stories using its markers; a push datasource's secret once and its
 * signed curl) and Segments (the rule builder checks a regex as you type; order by keyboard; on/off), and the Story
 * editor's variants panel: a variant made there is what the CDN serves to that segment's readers, the default to
 * others. axe-core finds no serious or critical violation on these screens in either theme.
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { type Receiver, startReceiver } from '../helpers/receiver'
import { type AdminHarness, axeViolations, hasChromium, heard, listen, memberNamed, startAdmin, until, warnNoChromium } from './helpers'

setDefaultTimeout(180_000)
warnNoChromium('the admin app’s site-data tests')

let h: AdminHarness
let receiver: Receiver
let owner: { token: string; user: { id: number }; tenant: { id: number } }
let viewer: { token: string }
let space = ''
let story = ''
let sourceUp = false

const ITEMS = { data: { items: [{ id: 'a', name: 'Alpha harbour' }, { id: 'b', name: 'Beta bay' }, { id: 'c', name: 'Gamma gulf' }] } }

async function settled(page: Page) {
  await until(() => page.getByTestId('skeleton').count(), 0)
  await until(() => page.getByText('Loading…').count(), 0)
}

describe.skipIf(!hasChromium)('site-data screens in Chromium', () => {
  beforeAll(async () => {
    receiver = startReceiver(() => (sourceUp ? Response.json(ITEMS) : new Response('down for maintenance', { status: 500 })))
    h = await startAdmin({ config: { outboundAllowPrivate: true } })
    owner = await h.t.register({ name: 'Dana Owner' })
    space = (await h.t.createSpace(owner.token, { name: 'Data Site' })).slug
    viewer = await memberNamed(h.t, owner.tenant.id, space, 'viewer', 'Vic Viewer')
    expect((await h.call('POST', `/v1/spaces/${space}/components`, owner.token, { name: 'page', is_root: true, schema: { title: { type: 'text' } } })).status).toBe(201)
    const s = await h.call('POST', `/v1/spaces/${space}/stories`, owner.token, {
      name: 'Harbour guide',
      slug: 'harbour',
      content: { type: 'doc', blocks: [{ component: 'page', _uid: 'p1', title: 'Welcome, everyone' }] },
    })
    expect(s.status).toBe(201)
    story = s.body.data.uuid
  }, 240_000)

  afterAll(async () => {
    await h?.close()
    await receiver?.stop()
  })

  test('a failing pull is explained in words; once the source recovers, Sync now shows the entries', async () => {
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}/datasources`)
    await page.getByRole('heading', { name: 'Datasources', level: 1 }).waitFor()
    await page.getByText('No datasources yet').waitFor()
    await page.getByRole('button', { name: 'New datasource' }).click()
    const dialog = page.getByRole('dialog', { name: 'New datasource' })
    await dialog.getByLabel('Key', { exact: true }).fill('harbours')
    await dialog.getByLabel('Name', { exact: true }).fill('Harbours feed')
    await dialog.getByLabel('URL', { exact: true }).fill(`${receiver.url}/feed`)
    await dialog.getByLabel('JSONPath', { exact: true }).fill('$.data.items')
    await dialog.getByLabel('Schedule (cron)', { exact: true }).fill('30 6 * * 1')
    // The next runs, in words: Mondays at 06:30 UTC.
    await dialog.getByTestId('cron-runs').getByRole('listitem').first().waitFor()
    expect(await dialog.getByTestId('cron-runs').getByRole('listitem').count()).toBe(3)
    await dialog.getByLabel('Schedule (cron)', { exact: true }).fill('61 * * * *')
    await dialog.getByText('This is not a valid five-field cron expression.').waitFor()
    await dialog.getByLabel('Schedule (cron)', { exact: true }).fill('30 6 * * 1')
    await dialog.getByRole('button', { name: 'Add a header' }).click()
    await dialog.getByLabel('Header name 1').fill('X-Api-Key')
    await dialog.getByLabel('Header value 1').fill('sk-very-secret')
    await dialog.getByRole('button', { name: 'Create' }).click()
    await page.getByRole('heading', { name: 'Harbours feed', level: 1 }).waitFor()
    await settled(page)
    // The header's value never comes back: masked.
    expect(await page.getByLabel('Header value 1').inputValue()).toBe('••••')
    expect(await page.content()).not.toContain('sk-very-secret')

    // The receiver is down: the pull fails, and the screen says why.
    await page.getByRole('button', { name: 'Sync now' }).click()
    await page.getByTestId('sync-error').waitFor()
    expect(await page.getByTestId('sync-error').textContent()).toBe('The pull failed: The source answered with status 500 instead of data.')
    await until(async () => (await page.getByTestId('ds-state').textContent())?.includes('Failing') ?? false, true)
    expect(await page.getByTestId('ds-state').getByTestId('last-error').textContent()).toBe('The source answered with status 500 instead of data.')
    expect(receiver.requests.at(-1)?.headers['x-api-key']).toBe('sk-very-secret')
    await page.goto(`/admin/spaces/${space}/datasources`)
    await page.locator('[data-ds="harbours"]').getByTestId('last-error').waitFor()
    expect(await page.locator('[data-ds="harbours"]').textContent()).toContain('Failing')

    // The receiver recovers: Sync now shows the entries.
    sourceUp = true
    await page.getByRole('link', { name: 'Harbours feed' }).click()
    await page.getByRole('heading', { name: 'Harbours feed', level: 1 }).waitFor()
    await page.getByRole('button', { name: 'Sync now' }).click()
    await page.getByText('Pulled: 3 entries, revision 1').waitFor()
    await until(async () => (await page.getByTestId('ds-state').textContent())?.includes('Working') ?? false, true)
    await page.getByTestId('entries').getByText('Alpha harbour').waitFor()
    expect(await page.getByTestId('entries').getByRole('listitem').count()).toBe(3)
    await page.getByLabel('Search entries').fill('gulf')
    await until(() => page.getByTestId('entries').getByRole('listitem').count(), 1)
    expect(await page.getByTestId('entries').textContent()).toContain('Gamma gulf')

    // "Test it": another JSONPath against the last pull, nothing fetched.
    const pulls = receiver.requests.length
    await page.getByLabel('JSONPath', { exact: true }).fill('$..name')
    await page.getByRole('button', { name: 'Test it' }).click()
    await page.getByTestId('path-result').waitFor()
    expect(await page.getByTestId('path-result').textContent()).toContain('It selects 3 values, 3 entries')
    expect(await page.getByTestId('path-tester').textContent()).toContain('"value": "Beta bay"')
    expect(receiver.requests.length).toBe(pulls)

    // Which Stories use it.
    const user = await h.call('POST', `/v1/spaces/${space}/stories`, owner.token, {
      name: 'Ports list',
      slug: 'ports',
      content: { type: 'doc', blocks: [{ component: 'page', _uid: 'p1', title: 'First: $ds:harbours.0.name' }] },
    })
    expect(user.status).toBe(201)
    await page.reload()
    await page.getByTestId('usage').getByRole('link', { name: 'Ports list' }).waitFor()

    // Keyboard: Tab reaches Sync now and Enter runs it.
    await page.getByRole('link', { name: 'All datasources' }).focus()
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Sync now')
    const before = receiver.requests.length
    await page.keyboard.press('Enter')
    await until(() => Promise.resolve(receiver.requests.length), before + 1)
    expect(errors).toEqual([])
  })

  test('a push datasource shows its secret once, rotates it, and gives a signed curl that works', async () => {
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}/datasources`)
    await page.getByRole('button', { name: 'New datasource' }).click()
    const dialog = page.getByRole('dialog', { name: 'New datasource' })
    await dialog.getByLabel('Key', { exact: true }).fill('prices')
    await dialog.getByLabel('Name', { exact: true }).fill('Prices')
    await dialog.getByLabel(/Signed push/).check()
    await dialog.getByRole('button', { name: 'Create' }).click()
    await page.getByRole('heading', { name: 'Prices', level: 1 }).waitFor()
    const secret = (await page.getByTestId('secret').textContent())!
    expect(secret).toMatch(/^dssec_/)
    expect(await page.getByTestId('curl').textContent()).toContain(secret)
    // The example, run by a shell: the push is accepted.
    const curl = (await page.getByTestId('curl').textContent())!
    // (Asynchronously: the service answering it runs in this process.)
    const run = Bun.spawn(['sh', '-c', curl.replace('curl -X POST', 'curl -s -o /dev/null -w "%{http_code}" -X POST')], { stdout: 'pipe' })
    expect(await new Response(run.stdout).text()).toBe('200')
    expect((await h.call('GET', `/v1/spaces/${space}/datasources/prices/entries`, owner.token)).body.data).toEqual([{ id: 'a', name: 'Alpha' }])
    // Gone after a reload; a rotation shows a new one.
    await page.reload()
    await page.getByRole('heading', { name: 'Prices', level: 1 }).waitFor()
    expect(await page.getByTestId('secret').count()).toBe(0)
    await page.getByRole('button', { name: 'Rotate the secret' }).click()
    await page.getByRole('dialog', { name: 'Rotate the signing secret?' }).getByRole('button', { name: 'Rotate the secret' }).click()
    await page.getByTestId('secret').waitFor()
    expect(await page.getByTestId('secret').textContent()).not.toBe(secret)
    expect(errors).toEqual([])
  })

  test('segments: the rule builder checks as you type, order by keyboard and by drag, on/off; a variant made in the editor is what that segment reads', async () => {
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}/segments`)
    await page.getByRole('heading', { name: 'Audience segments', level: 1 }).waitFor()
    await page.getByRole('button', { name: 'New segment' }).click()
    const dialog = page.getByRole('dialog', { name: 'New segment' })
    await dialog.getByLabel('Key', { exact: true }).fill('newsletter')
    await dialog.getByLabel('Name', { exact: true }).fill('Newsletter readers')
    await dialog.getByLabel('Rule 1: signal').selectOption('utm_source')
    await dialog.getByLabel('Rule 1: comparison').selectOption('regex')
    await dialog.getByLabel('Rule 1: pattern (RE2)').fill('^(news')
    // The API's own regex check, as you type.
    await until(async () => (await dialog.getByLabel('Rule 1: pattern (RE2)').getAttribute('aria-invalid')) === 'true', true)
    await dialog.getByText(/^This is not a valid RE2 pattern: /).waitFor()
    await dialog.getByLabel('Rule 1: pattern (RE2)').fill('^news(letter)?$')
    await until(async () => (await dialog.getByLabel('Rule 1: pattern (RE2)').getAttribute('aria-invalid')) === null, true)
    await dialog.getByRole('button', { name: 'Save' }).click()
    await page.locator('[data-segment="newsletter"]').waitFor()
    const created = (await h.call('GET', `/v1/spaces/${space}/audience-segments/newsletter`, owner.token)).body.data
    expect(created.rules).toEqual([{ type: 'utm_source', operator: 'regex', value: '^news(letter)?$' }])

    // A second segment (API), then the first moved below it with the keyboard, and switched off and on.
    expect((await h.call('POST', `/v1/spaces/${space}/audience-segments`, owner.token, { key: 'germans', label: 'German readers', priority: 100, rules: [{ type: 'language', operator: 'eq', value: 'de' }] })).status).toBe(201)
    await page.reload()
    await page.locator('[data-segment="germans"]').waitFor()
    const keys = async () => (await h.call('GET', `/v1/spaces/${space}/audience-segments`, owner.token)).body.data.map((s: { key: string }) => s.key).join()
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '')
    // A move is saved when the list is no longer busy: the next key waits for it.
    const saved = () => until(() => page.getByTestId('segments').getAttribute('aria-busy'), null)
    await page.getByRole('button', { name: 'Move Newsletter readers (position 1)' }).focus()
    await page.keyboard.press('Alt+ArrowDown')
    await until(keys, 'germans,newsletter')
    // The move is announced in the live region; the focus follows the moved segment's handle, where Alt+↑ moves it back.
    await until(() => page.getByTestId('announcer').textContent(), 'Newsletter readers moved to position 2 of 2')
    await until(focused, 'Move Newsletter readers (position 2)')
    await saved()
    // Two moves in a row, the second while the first is being saved (the list busy): the second is made on the order
    // shown and saved after the first, not computed from the priorities before it. Each is announced; the focus stays.
    await listen(page)
    await page.keyboard.press('Alt+ArrowUp')
    await page.keyboard.press('Alt+ArrowDown')
    await until(focused, 'Move Newsletter readers (position 2)')
    await saved()
    expect(await keys()).toBe('germans,newsletter')
    expect(await heard(page)).toEqual(['Newsletter readers moved to position 1 of 2', 'Newsletter readers moved to position 2 of 2'])
    const priorities = (await h.call('GET', `/v1/spaces/${space}/audience-segments`, owner.token)).body.data.map((s: { priority: number }) => s.priority)
    expect(new Set(priorities).size).toBe(2)
    // The order as saved, after a reload.
    await page.reload()
    await page.locator('[data-segment="germans"]').waitFor()
    expect(await page.locator('[data-segment]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-segment')).join())).toBe('germans,newsletter')
    await page.getByRole('switch', { name: /Active German readers/ }).click()
    await until(async () => (await h.call('GET', `/v1/spaces/${space}/audience-segments/germans`, owner.token)).body.data.active, false)
    // And back to the top by dragging its handle with the pointer.
    const handle = page.getByRole('button', { name: 'Move Newsletter readers (position 2)' })
    const from = (await handle.boundingBox())!
    const top = (await page.locator('[data-segment="germans"]').boundingBox())!
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2)
    await page.mouse.down()
    await page.mouse.move(from.x + from.width / 2, top.y + 4, { steps: 5 })
    await page.mouse.up()
    await until(keys, 'newsletter,germans')
    // The drop is shown at once and saved in the background: what follows (an edit's PUT) starts from the saved order.
    await saved()

    // The Story editor: a variant for the newsletter segment, from the default, edited with the block editor.
    await page.goto(`/admin/spaces/${space}/stories/${story}`)
    await page.getByRole('heading', { name: 'Harbour guide', level: 1 }).waitFor()
    const panel = page.getByTestId('variants-panel')
    await panel.locator('[data-variant-segment="newsletter"]').getByText('Its readers get the default content (no variant).').waitFor()
    await panel.getByRole('button', { name: 'Create from the default for Newsletter readers' }).click()
    const editor = panel.getByTestId('variant-editor')
    await editor.waitFor()
    const field = editor.getByRole('textbox').first()
    expect(await field.inputValue()).toBe('Welcome, everyone')
    await field.fill('Welcome back, subscriber')
    await panel.getByRole('button', { name: 'Save the variant for Newsletter readers' }).click()
    await page.getByText('Variant for Newsletter readers saved').waitFor()
    await panel.locator('[data-variant-segment="newsletter"]').getByText('Its readers get this variant.').waitFor()
    expect(await panel.locator('[data-variant-segment="germans"]').getByTestId('reader-gets').textContent()).toBe('Inactive: its readers get the default content.')
    expect((await h.call('POST', `/v1/spaces/${space}/stories/${story}/publish`, owner.token)).status).toBe(200)

    // The CDN: the segment's signal reads the variant; no signal reads the default.
    const title = async (query: string, headers: Record<string, string> = {}) => {
      const r = await fetch(`${h.origin}/v1/cdn/${space}/stories/harbour${query}`, { headers })
      const body = (await r.json()) as { data: { content: { blocks: { title: string }[] } } }
      return body.data.content.blocks[0]!.title
    }
    expect(await title('?utm_source=newsletter')).toBe('Welcome back, subscriber')
    expect(await title('', { 'X-Service-Segment': 'newsletter' })).toBe('Welcome back, subscriber')
    expect(await title('')).toBe('Welcome, everyone')
    expect(await title('?utm_source=search')).toBe('Welcome, everyone')
    expect(errors).toEqual([])
  })

  test('a viewer sees no write control; axe is clean on every site-data screen in both themes', async () => {
    const v = await h.signedIn(viewer.token)
    await v.page.goto(`/admin/spaces/${space}/datasources/harbours`)
    await v.page.getByRole('heading', { name: 'Harbours feed', level: 1 }).waitFor()
    await settled(v.page)
    expect(await v.page.getByRole('button', { name: /Sync now|Delete|Save/ }).count()).toBe(0)
    await v.page.goto(`/admin/spaces/${space}/segments`)
    await v.page.locator('[data-segment="newsletter"]').waitFor()
    expect(await v.page.getByRole('button', { name: /New segment|Edit|Delete|Move/ }).count()).toBe(0)
    expect(await v.page.getByRole('switch').count()).toBe(0)
    expect(v.errors).toEqual([])

    const { page, errors } = await h.signedIn(owner.token)
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      for (const [path, heading] of [
        ['datasources', 'Datasources'],
        ['datasources/harbours', 'Harbours feed'],
        ['datasources/prices', 'Prices'],
        ['segments', 'Audience segments'],
        [`stories/${story}`, 'Harbour guide'],
      ] as const) {
        await page.goto(`/admin/spaces/${space}/${path}`)
        await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
        await settled(page)
        if (path.startsWith('stories/')) await page.getByTestId('variants-panel').locator('[data-variant-segment="newsletter"]').waitFor()
        expect({ path, scheme, violations: await axeViolations(page) }).toEqual({ path, scheme, violations: [] })
      }
    }
    // The rule builder's dialog, too.
    await page.goto(`/admin/spaces/${space}/segments`)
    await page.getByRole('button', { name: 'Edit Newsletter readers' }).click()
    await page.getByRole('dialog', { name: 'Edit Newsletter readers' }).waitFor()
    expect(await axeViolations(page)).toEqual([])
    expect(errors).toEqual([])
  })
})
