/**
 * The admin app's shell in Chromium: light and dark theme (the system's by default, switchable, remembered), a title
 * per route, the skip link, and focus on the new screen's heading after a navigation.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type AdminHarness, axeViolations, hasChromium, startAdmin, until, warnNoChromium } from './helpers'

setDefaultTimeout(120_000)
warnNoChromium('the admin app’s shell tests')

let h: AdminHarness
let owner: { token: string }
let space = ''

const background = (page: import('playwright-core').Page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor)
/** Whether a CSS colour is dark (Chromium reports oklch or rgb). */
function isDark(color: string): boolean {
  const ok = /oklch\(([\d.]+)%?/.exec(color)
  if (ok) return Number(ok[1]) < (color.includes('%') ? 50 : 0.5)
  const rgb = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(color)
  if (!rgb) throw new Error(`unreadable colour ${color}`)
  return (Number(rgb[1]) + Number(rgb[2]) + Number(rgb[3])) / 3 < 128
}

describe.skipIf(!hasChromium)('the admin shell in Chromium', () => {
  beforeAll(async () => {
    h = await startAdmin()
    owner = await h.t.register({ name: 'Shell Owner' })
    space = (await h.t.createSpace(owner.token, { name: 'Shell Site' })).slug
  }, 240_000)

  afterAll(async () => {
    await h?.close()
  })

  test('the theme follows the system, can be switched, and is remembered', async () => {
    const { context, page, errors } = await h.signedIn(owner.token)
    await page.emulateMedia({ colorScheme: 'dark' })
    await page.goto('/admin')
    await page.getByRole('heading', { level: 1 }).waitFor()
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark')
    expect(isDark(await background(page))).toBe(true)
    expect(await axeViolations(page)).toEqual([])
    // The system turns light: the app follows while the choice is "System".
    await page.emulateMedia({ colorScheme: 'light' })
    await until(() => page.evaluate(() => document.documentElement.dataset.theme), 'light')
    expect(isDark(await background(page))).toBe(false)
    // Chosen: dark, against a light system, and still dark after a reload.
    await page.getByLabel('Theme').selectOption('dark')
    await until(() => page.evaluate(() => document.documentElement.dataset.theme), 'dark')
    await page.reload()
    await page.getByRole('heading', { level: 1 }).waitFor()
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark')
    expect(await page.getByLabel('Theme').inputValue()).toBe('dark')
    expect(isDark(await background(page))).toBe(true)
    expect(await axeViolations(page)).toEqual([])
    // Back to the system's.
    await page.getByLabel('Theme').selectOption('system')
    await until(() => page.evaluate(() => document.documentElement.dataset.theme), 'light')
    expect(errors).toEqual([])
    await context.close()
  })

  test('every route has its own title, and a navigation moves focus to the new screen’s heading', async () => {
    const { context, page, errors } = await h.signedIn(owner.token)
    await page.goto('/admin')
    await page.getByRole('heading', { name: 'Spaces', level: 1 }).waitFor()
    await until(() => page.title(), 'Spaces · Content Service')
    await page.getByRole('link', { name: 'Shell Site' }).first().click()
    await page.getByRole('heading', { name: 'Stories', level: 1 }).waitFor()
    await until(() => page.title(), 'Stories · Content Service')
    await until(() => page.evaluate(() => document.activeElement?.tagName + ':' + document.activeElement?.textContent), 'H1:Stories')
    await page.getByRole('link', { name: 'Components' }).click()
    await until(() => page.title(), 'Components · Content Service')
    await until(() => page.evaluate(() => document.activeElement?.tagName + ':' + document.activeElement?.textContent), 'H1:Components')
    // Back with the browser's button: the same.
    await page.goBack()
    await until(() => page.title(), 'Stories · Content Service')
    await until(() => page.evaluate(() => document.activeElement?.tagName), 'H1')
    expect(errors).toEqual([])
    await context.close()
  })

  test('in German, sign-in, registration and the skip link speak German, and the title follows', async () => {
    const context = await h.browser.newContext({ baseURL: h.origin, locale: 'de-DE' })
    const page = await context.newPage()
    await page.goto('/admin/sign-in')
    await page.getByRole('heading', { name: 'Anmelden', level: 1 }).waitFor()
    await until(() => page.title(), 'Anmelden · Content Service')
    await page.getByLabel('Passwort').waitFor()
    expect(await page.getByRole('link', { name: 'Zum Inhalt springen' }).count()).toBe(1)
    await page.getByRole('link', { name: 'Konto anlegen' }).click()
    await page.getByRole('heading', { name: 'Konto anlegen', level: 1 }).waitFor()
    await until(() => page.title(), 'Konto anlegen · Content Service')
    await until(() => page.evaluate(() => document.activeElement?.tagName), 'H1')
    await page.getByLabel('Ihr Name').waitFor()
    await context.close()
  })

  test('the skip link is the first Tab stop and takes focus to the screen', async () => {
    const { context, page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('heading', { name: 'Stories', level: 1 }).waitFor()
    await page.keyboard.press('Tab')
    const skip = page.getByRole('link', { name: 'Skip to content' })
    expect(await skip.evaluate((el) => el === document.activeElement)).toBe(true)
    expect(await skip.isVisible()).toBe(true)
    await page.keyboard.press('Enter')
    await until(() => page.evaluate(() => document.activeElement?.tagName + ':' + document.activeElement?.textContent), 'H1:Stories')
    // The next Tab goes on inside the screen, not back to the header.
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => !!document.activeElement?.closest('main'))).toBe(true)
    expect(errors).toEqual([])
    await context.close()
  })
})
