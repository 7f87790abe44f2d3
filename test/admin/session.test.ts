/**
 * The sign-in shared by every tab of a browser (admin/README.md "Signing in across tabs"), in Chromium against a
 * listening service: signing in on the sign-in screen opens an admin session (an HttpOnly, SameSite=Strict cookie
 * script cannot read); a second tab opened at a Story's address lands in the editor, not on sign-in; its token is
 * renewed before it runs out; signing out in one tab signs the other out.
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type AdminHarness, hasChromium, startAdmin, TOKEN_KEY, until, warnNoChromium } from './helpers'

setDefaultTimeout(120_000)
warnNoChromium('the admin app’s shared sign-in tests')

const PASSWORD = 'correct horse battery staple'

let h: AdminHarness
let owner: { token: string; user: { id: number; email: string; name: string } }
let space = ''
let storyUrl = ''

describe.skipIf(!hasChromium)('signing in across tabs in Chromium', () => {
  beforeAll(async () => {
    h = await startAdmin()
    owner = await h.t.register({ name: 'Tab Owner' })
    space = (await h.t.createSpace(owner.token, { name: 'Tabs' })).slug
    const story = await h.call('POST', `/v1/spaces/${space}/stories`, owner.token, { name: 'Opened in a new tab', slug: 'new-tab' })
    expect(story.status).toBe(201)
    storyUrl = `/admin/spaces/${space}/stories/${story.body.data.uuid}`
  }, 240_000)

  afterAll(async () => {
    await h?.close()
  })

  test('sign in once: a second tab at a Story lands in its editor; sign out in one, and the other must sign in', async () => {
    const context = await h.browser.newContext({ baseURL: h.origin, viewport: { width: 1280, height: 900 } })
    const errors: string[] = []
    const first = await context.newPage()
    first.on('pageerror', (e) => errors.push(String(e)))
    await first.goto('/admin/')
    await first.getByRole('heading', { name: 'Sign in' }).waitFor()
    await first.getByLabel('E-mail').fill(owner.user.email)
    await first.getByLabel('Password').fill(PASSWORD)
    await first.getByRole('button', { name: 'Sign in' }).click()
    await first.getByRole('heading', { name: 'Spaces', level: 1 }).waitFor()

    // The session's cookie: HttpOnly, SameSite=Strict, only for the admin-session routes; script cannot read it.
    const cookies = await context.cookies()
    const session = cookies.find((c) => c.name === 'cs_admin_session')
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/v1/auth/admin-session' })
    expect(await first.evaluate(() => document.cookie)).not.toContain('cs_admin_session')

    // A second tab (as Ctrl+click opens one): no token in its sessionStorage, yet it lands in the editor.
    const second = await context.newPage()
    second.on('pageerror', (e) => errors.push(String(e)))
    await second.goto(storyUrl)
    await second.getByRole('heading', { name: 'Opened in a new tab', level: 1 }).waitFor()
    expect(new URL(second.url()).pathname).toBe(storyUrl)
    const secondToken = await second.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)
    const firstToken = await first.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)
    expect(secondToken).toBeTruthy()
    expect(secondToken).not.toBe(firstToken)
    // The second tab's token is short-lived (15 minutes).
    const me = await h.call('GET', '/v1/auth/me', secondToken)
    expect(me.status).toBe(200)
    const lifetime = Date.parse(me.body.data.token.expires_at) - Date.now()
    expect(lifetime).toBeGreaterThan(10 * 60_000)
    expect(lifetime).toBeLessThanOrEqual(15 * 60_000)

    // Renewed before it runs out: with a minute and a second left, the tab trades the cookie again.
    await second.evaluate(() => sessionStorage.setItem('content-service.token-expires', String(Date.now() + 61_000)))
    await second.reload()
    await second.getByRole('heading', { name: 'Opened in a new tab', level: 1 }).waitFor()
    await until(async () => (await second.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)) !== secondToken, true)
    const renewed = await second.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)
    expect((await h.call('GET', '/v1/auth/me', renewed)).status).toBe(200)

    // Sign out in the first tab: the session ends, the cookie goes, the second tab's token is revoked with it.
    await first.getByRole('button', { name: 'Sign out' }).click()
    await first.getByRole('heading', { name: 'Sign in' }).waitFor()
    expect((await context.cookies()).find((c) => c.name === 'cs_admin_session')).toBeUndefined()
    expect((await h.call('GET', '/v1/auth/me', renewed)).status).toBe(401)
    expect((await h.call('GET', '/v1/auth/me', firstToken)).status).toBe(401)
    // The second tab's next load needs sign-in, and a third tab too.
    await second.reload()
    await second.waitForURL(/\/admin\/sign-in\?redirect=/)
    await second.getByRole('heading', { name: 'Sign in' }).waitFor()
    const third = await context.newPage()
    await third.goto(storyUrl)
    await third.waitForURL(/\/admin\/sign-in\?redirect=/)
    await third.getByRole('heading', { name: 'Sign in' }).waitFor()
    expect(errors).toEqual([])
    await context.close()
  })

  test('another browser (a fresh context) shares nothing: it signs in on its own', async () => {
    const context = await h.browser.newContext({ baseURL: h.origin })
    const page = await context.newPage()
    await page.goto(storyUrl)
    await page.waitForURL(/\/admin\/sign-in\?redirect=/)
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await context.close()
  })
})
