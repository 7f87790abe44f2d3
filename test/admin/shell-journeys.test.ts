/**
 * The shell's journeys in Chromium against a real server: the sidebar by section and role, the command palette
 * (Ctrl+K: a screen, a Story by name, New Story), the shortcuts dialog (?), the Account screen (language and theme
 * stored per user: German after a change, in a fresh browser too), Space settings (add and remove a locale, keyed
 * errors as sentences), the slug derived from a Space's name, and the small-screen layout at 390×844.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type AdminHarness, axeViolations, hasChromium, memberNamed, startAdmin, until, warnNoChromium } from './helpers'

setDefaultTimeout(180_000)
warnNoChromium('the admin app’s shell journeys')

let h: AdminHarness
let owner: { token: string; tenant: { id: number } }
let space = ''
let storyUuid = ''

describe.skipIf(!hasChromium)('shell journeys in Chromium', () => {
  beforeAll(async () => {
    h = await startAdmin()
    owner = await h.t.register({ name: 'Palette Owner' })
    space = (await h.t.createSpace(owner.token, { name: 'Palette Site' })).slug
    await h.call('POST', `/v1/spaces/${space}/components`, owner.token, { name: 'page', schema: { title: { type: 'text' } } })
    const story = await h.call('POST', `/v1/spaces/${space}/stories`, owner.token, {
      name: 'Quarterly Report',
      slug: 'quarterly-report',
      content: { type: 'doc', blocks: [{ component: 'page', _uid: 'p1', title: 'Hi' }] },
    })
    expect(story.status).toBe(201)
    storyUuid = story.body.data.uuid
  }, 240_000)

  afterAll(async () => {
    await h?.close()
  })

  test('the sidebar shows the sections the role may use; the palette goes to a screen and finds a Story, by keyboard alone', async () => {
    const { context, page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('heading', { name: 'Stories', level: 1 }).waitFor()
    const nav = page.getByRole('navigation', { name: 'Space switcher' })
    for (const section of ['Content', 'Assets', 'Settings']) await nav.getByRole('heading', { name: section }).waitFor()
    for (const link of ['Stories', 'Components', 'Assets', 'Members', 'Tokens', 'Space settings']) expect(await nav.getByRole('link', { name: link, exact: true }).count()).toBe(1)
    expect(await axeViolations(page)).toEqual([])

    // Ctrl+K, type, Enter: the Members screen, with focus on its heading.
    await page.keyboard.press('Control+k')
    const palette = page.getByRole('dialog', { name: 'Go to, find, do' })
    await palette.waitFor()
    expect(await axeViolations(page)).toEqual([])
    await page.keyboard.type('members')
    await until(() => palette.getByRole('option', { selected: true }).textContent(), 'MembersGo to')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor()
    await until(() => page.evaluate(() => document.activeElement?.tagName + ':' + document.activeElement?.textContent), 'H1:Members')

    // A Story by name (the API's search), chosen with the arrow keys.
    await page.keyboard.press('Control+k')
    await palette.waitFor()
    await page.keyboard.type('quarterly')
    const hit = palette.getByRole('option', { name: /Quarterly Report/ })
    await hit.waitFor()
    for (let i = 0; i < 10 && !(await hit.getAttribute('aria-selected'))?.includes('true'); i++) await page.keyboard.press('ArrowDown')
    await page.keyboard.press('Enter')
    await page.waitForURL(new RegExp(`/stories/${storyUuid}`))
    await page.getByRole('heading', { name: 'Quarterly Report', level: 1 }).waitFor()

    // "New Story" from the palette opens the tree's dialog.
    await page.keyboard.press('Control+k')
    await palette.waitFor()
    await page.keyboard.type('new story')
    await page.keyboard.press('Enter')
    await page.getByRole('dialog', { name: 'New Story' }).waitFor()
    await page.keyboard.press('Escape')

    // ? lists the shortcuts (not while typing in a field).
    await page.getByRole('heading', { name: 'Stories', level: 1 }).click()
    await page.keyboard.press('?')
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' })
    await help.waitFor()
    expect(await help.getByRole('cell', { name: /command palette/ }).count()).toBe(1)
    await page.keyboard.press('Escape')
    await until(() => help.isVisible(), false)
    expect(errors).toEqual([])
    await context.close()
  })

  test('an editor sees no Settings section and no Members, Tokens or Space settings anywhere, the palette included', async () => {
    const editor = (await memberNamed(h.t, owner.tenant.id, space, 'editor', 'Eddie Editor')).token
    const { context, page, errors } = await h.signedIn(editor)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('heading', { name: 'Stories', level: 1 }).waitFor()
    const nav = page.getByRole('navigation', { name: 'Space switcher' })
    await nav.getByRole('link', { name: 'Components' }).waitFor()
    expect(await nav.getByRole('heading', { name: 'Settings' }).count()).toBe(0)
    await page.keyboard.press('Control+k')
    const palette = page.getByRole('dialog', { name: 'Go to, find, do' })
    await palette.waitFor()
    const options = await palette.getByRole('option').allTextContents()
    expect(options.some((o) => o.startsWith('Components'))).toBe(true)
    expect(options.some((o) => /^(Members|Tokens|Space settings)/.test(o))).toBe(false)
    expect(errors).toEqual([])
    await context.close()
  })

  test('Space settings: a locale is added with its fallback, a bad one is explained in a sentence, and removed again', async () => {
    const { context, page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}/settings`)
    await page.getByRole('heading', { name: 'Space settings', level: 1 }).waitFor()
    await page.getByLabel('New locale').fill('not a tag!!')
    await page.getByRole('button', { name: 'Add locale' }).click()
    await page.getByText('This is not a language tag: use one such as fr, pt-BR or de-AT.').waitFor()
    await page.getByLabel('New locale').fill('fr')
    await page.getByLabel('Fallback').selectOption('en')
    await page.getByRole('button', { name: 'Add locale' }).click()
    await page.getByTestId('toast').filter({ hasText: 'Locale fr added.' }).waitFor()
    const row = page.locator('tr[data-locale="fr"]')
    await row.waitFor()
    expect(await row.textContent()).toContain('en')
    const api = await h.call('GET', `/v1/spaces/${space}/locales`, owner.token)
    expect(api.body.data.find((l: { code: string }) => l.code === 'fr')).toMatchObject({ fallback: 'en' })
    expect(await axeViolations(page)).toEqual([])
    // The default cannot be removed (no button); fr can, after a confirmation.
    expect(await page.getByRole('button', { name: 'Remove locale en' }).count()).toBe(0)
    await page.getByRole('button', { name: 'Remove locale fr' }).click()
    await page.getByRole('dialog', { name: 'Remove the locale fr?' }).getByRole('button', { name: 'Remove' }).click()
    await page.getByTestId('toast').filter({ hasText: 'Locale fr removed.' }).waitFor()
    await until(() => row.count(), 0)
    // A preview URL that is no URL: a sentence, not the pattern.
    await page.getByLabel('Preview URL').fill('not a url')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await page.getByText('Enter a full address starting with https:// or http://, or leave it empty.').waitFor()
    expect(errors).toEqual([])
    await context.close()
  })

  test('creating a Space derives its slug from the name', async () => {
    const { context, page, errors } = await h.signedIn(owner.token)
    await page.goto('/admin')
    await page.getByRole('heading', { name: 'Spaces', level: 1 }).waitFor()
    await page.getByLabel('Name').fill('Mein Café Blog')
    expect(await page.getByLabel('Slug').inputValue()).toBe('mein-cafe-blog')
    await page.getByLabel('Slug').fill('Bad Slug')
    await page.getByRole('button', { name: 'Create Space' }).click()
    await page.getByText('Use lower-case letters, digits and dashes, starting with a letter (at most 64), e.g. my-site.').waitFor()
    expect(errors).toEqual([])
    await context.close()
  })

  test('Account: the language chosen in the profile turns the app German, in another browser too', async () => {
    const user = await h.t.register({ name: 'Lena Lang' })
    const mine = (await h.t.createSpace(user.token, { name: 'Lena Site' })).slug
    const { context, page, errors } = await h.signedIn(user.token)
    await page.goto('/admin')
    await page.getByRole('heading', { name: 'Spaces', level: 1 }).waitFor()
    await page.getByRole('link', { name: 'Account' }).click()
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor()
    expect(await axeViolations(page)).toEqual([])
    await page.getByLabel('Language of this app').selectOption('de')
    await page.getByRole('button', { name: 'Save profile' }).click()
    await page.getByRole('heading', { name: 'Konto', level: 1 }).waitFor()
    await until(() => page.evaluate(() => document.documentElement.lang), 'de')
    const me = await h.call('GET', '/v1/auth/me', user.token)
    expect(me.body.data.ui_language).toBe('de')
    await context.close()

    // A fresh browser with an English preference: the profile's German wins once it is read.
    const other = await h.signedIn(user.token)
    await other.page.goto(`/admin/spaces/${mine}`)
    const nav = other.page.getByRole('navigation', { name: 'Space wechseln' })
    await nav.getByRole('link', { name: 'Storys' }).waitFor()
    expect(await other.page.evaluate(() => document.documentElement.lang)).toBe('de')
    await nav.getByRole('link', { name: 'Space-Einstellungen' }).waitFor()
    await other.page.keyboard.press('Control+k')
    await other.page.getByRole('dialog', { name: 'Gehe zu, finde, tu' }).waitFor()
    expect(errors).toEqual([])
    expect(other.errors).toEqual([])
    await other.context.close()
  })

  test('Account: a wrong current password is explained at its field; sign out everywhere ends the session', async () => {
    const user = await h.t.register({ name: 'Sam Session' })
    const { context, page, errors } = await h.signedIn(user.token)
    await page.goto('/admin/account')
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor()
    await page.getByLabel('Current password').fill('not my password')
    await page.getByLabel('New password', { exact: true }).fill('a brand new password')
    await page.getByLabel('New password again').fill('a brand new password')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByText('This is not your current password.').waitFor()
    await page.getByRole('button', { name: 'Sign out everywhere' }).click()
    await page.getByRole('dialog', { name: 'Sign out everywhere?' }).getByRole('button', { name: 'Sign out everywhere' }).click()
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor()
    expect((await h.call('GET', '/v1/auth/me', user.token)).status).toBe(401)
    // Password reset is one link away from sign-in.
    await page.getByRole('link', { name: 'Forgot your password?' }).click()
    await page.getByRole('heading', { name: 'Reset your password', level: 1 }).waitFor()
    expect(errors).toEqual([])
    await context.close()
  })

  test('at 390×844 nothing is wider than the screen: the tree, the editor and settings', async () => {
    const { context, page, errors } = await h.signedIn(owner.token)
    await page.setViewportSize({ width: 390, height: 844 })
    for (const [path, heading] of [
      [`/admin/spaces/${space}`, 'Stories'],
      [`/admin/spaces/${space}/stories/${storyUuid}`, 'Quarterly Report'],
      [`/admin/spaces/${space}/settings`, 'Space settings'],
      ['/admin/account', 'Account'],
    ] as const) {
      await page.goto(path)
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
      // What sticks out past the right edge (named, so a failure says where).
      const wide = await page.evaluate(() =>
        [...document.querySelectorAll('body *')]
          .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5 && !el.closest('dialog:not([open])') && getComputedStyle(el).position !== 'fixed')
          .slice(0, 5)
          .map((el) => `${el.tagName.toLowerCase()}.${String(el.className).slice(0, 60)} ${(el.textContent ?? '').trim().slice(0, 30)}`),
      )
      expect({ path, wide, width: await page.evaluate(() => document.documentElement.scrollWidth) }).toEqual({ path, wide: [], width: 390 })
    }
    expect(errors).toEqual([])
    await context.close()
  })
})
