/**
 * Access that changes under an open tab, and publishing by keyboard, in Chromium against a listening service: an
 * admin in one browser demotes an editor working in another; the editor's write controls go without a reload (the app
 * reads whoami again every 15 s, on focus, on navigation and after a 403), and after a removal the editor's browser
 * leaves the Space for the Space list with a message. Keyboard alone publishes a Story (the keyboard invitation and
 * role change, and the last admin's refused self-demotion, are in people.test.ts).
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type AdminHarness, hasChromium, memberNamed, startAdmin, warnNoChromium } from './helpers'

setDefaultTimeout(120_000)
warnNoChromium('the admin app’s access-change tests')

let h: AdminHarness
let owner: { token: string; user: { id: number; email: string; name: string }; tenant: { id: number } }
let space = ''

async function newStory(name: string, slug: string) {
  const created = await h.call('POST', `/v1/spaces/${space}/stories`, owner.token, { name, slug })
  expect(created.status).toBe(201)
  return created.body.data.uuid as string
}

describe.skipIf(!hasChromium)('access changes and keyboard publishing in Chromium', () => {
  beforeAll(async () => {
    h = await startAdmin()
    owner = await h.t.register({ name: 'Ada Admin' })
    space = (await h.t.createSpace(owner.token, { name: 'Shared Site' })).slug
  }, 240_000)

  afterAll(async () => {
    await h?.close()
  })

  test('an editor demoted in another browser loses the write controls, then removed leaves the Space, without a reload', async () => {
    const uuid = await newStory('Team page', 'team')
    const editor = await memberNamed(h.t, owner.tenant.id, space, 'editor', 'Eddie Editor')
    const b = await h.signedIn(editor.token)
    await b.page.goto(`/admin/spaces/${space}/stories/${uuid}`)
    await b.page.getByRole('heading', { name: 'Team page', level: 1 }).waitFor()
    await b.page.getByRole('button', { name: 'Publish', exact: true }).waitFor()
    // A mark on the page: still there at the end means nothing reloaded it.
    await b.page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true))

    const a = await h.signedIn(owner.token)
    await a.page.goto(`/admin/spaces/${space}/members`)
    const select = a.page.getByLabel('Role of Eddie Editor')
    await select.waitFor()
    await select.selectOption('viewer')
    await a.page.getByRole('status').filter({ hasText: 'Eddie Editor is now Viewer.' }).waitFor()

    // Within the next whoami read (15 s while visible), with no click in B: Publish and Save go, the notice comes.
    await b.page.getByText('Your role in this Space is now Viewer.').waitFor({ timeout: 30_000 })
    await b.page.getByTestId('read-only-space').waitFor()
    expect(await b.page.getByRole('button', { name: 'Publish', exact: true }).count()).toBe(0)
    expect(await b.page.getByRole('button', { name: 'Save', exact: true }).count()).toBe(0)
    // The API refuses what the old controls would have sent.
    expect((await h.call('POST', `/v1/spaces/${space}/stories/${uuid}/publish`, editor.token, {})).status).toBe(403)

    // Removed: B's next navigation inside the Space reads whoami again and leaves for the Space list, with a message.
    await a.page.getByRole('button', { name: 'Remove Eddie Editor' }).click()
    const dialog = a.page.getByRole('dialog')
    await dialog.getByRole('button', { name: 'Remove', exact: true }).click()
    await a.page.getByRole('status').filter({ hasText: 'Eddie Editor was removed.' }).waitFor()
    await b.page.getByRole('link', { name: 'Assets' }).first().click()
    await b.page.getByText(`You no longer have access to the Space ${space}.`).waitFor()
    await b.page.waitForURL(/\/admin\/?$/)
    await b.page.getByRole('heading', { name: 'Spaces', level: 1 }).waitFor()
    // The Space list is read again on arrival: the lost Space goes from it (a cached list may show it for a moment).
    await b.page.getByRole('link', { name: 'Shared Site' }).waitFor({ state: 'detached' })
    expect(await b.page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true)
    expect(b.errors).toEqual([])
    expect(a.errors).toEqual([])
    await a.context.close()
    await b.context.close()
  })

  test('an open Space lost without any click (removal while reading) is left within the next whoami read', async () => {
    const viewer = await memberNamed(h.t, owner.tenant.id, space, 'viewer', 'Vera Viewer')
    const b = await h.signedIn(viewer.token)
    await b.page.goto(`/admin/spaces/${space}`)
    await b.page.getByTestId('read-only-space').waitFor()
    await b.page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true))
    const members = (await h.call('GET', `/v1/spaces/${space}/members`, owner.token)).body.data
    const member = members.find((m: any) => m.user.id === viewer.id)
    expect((await h.call('DELETE', `/v1/spaces/${space}/members/${member.user.id}`, owner.token)).status).toBe(204)
    await b.page.getByText(`You no longer have access to the Space ${space}.`).waitFor({ timeout: 30_000 })
    await b.page.getByRole('heading', { name: 'Spaces', level: 1 }).waitFor()
    expect(await b.page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true)
    expect(b.errors).toEqual([])
    await b.context.close()
  })

  test('keyboard alone publishes a Story: Tab to Publish, Enter, Tab to the confirmation, Enter', async () => {
    const uuid = await newStory('Keyboard news', 'keyboard-news')
    const { page, context, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}/stories/${uuid}`)
    await page.getByRole('heading', { name: 'Keyboard news', level: 1 }).waitFor()
    await page.getByRole('button', { name: 'Publish', exact: true }).waitFor()
    const focusedText = () => page.evaluate(() => (document.activeElement as HTMLElement | null)?.textContent?.trim() ?? '')
    const inDialog = () => page.evaluate(() => !!document.activeElement?.closest('dialog'))
    let steps = 0
    while ((await focusedText()) !== 'Publish' && steps++ < 80) await page.keyboard.press('Tab')
    expect(await focusedText()).toBe('Publish')
    await page.keyboard.press('Enter')
    const confirm = page.getByRole('dialog')
    await confirm.getByText('becomes public').waitFor()
    steps = 0
    while (!((await inDialog()) && (await focusedText()) === 'Publish') && steps++ < 20) await page.keyboard.press('Tab')
    expect(await inDialog()).toBe(true)
    await page.keyboard.press('Enter')
    await page.getByText('Published.', { exact: true }).waitFor()
    const cdn = await h.call('GET', `/v1/cdn/${space}/stories/keyboard-news`, null)
    expect(cdn.status).toBe(200)
    expect(errors).toEqual([])
    await context.close()
  })
})
