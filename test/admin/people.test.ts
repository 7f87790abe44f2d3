/**
 * People and access in the admin app, in Chromium against a listening service with a real SMTP sink: an admin
 * invites an address by mail from the Members screen; the invitee follows the mailed link (`/invite/{token}`, which
 * the service redirects to the app), registers with the invited address and lands in the Space as editor; the last
 * admin cannot demote themselves (the 409 explained); a Space token is shown once, works, and answers 401 once
 * revoked; a viewer finds no write control. axe-core finds no serious or critical violation on the new screens.
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type SmtpSink, startSmtpSink } from '../helpers/smtp'
import { type AdminHarness, axeViolations, hasChromium, memberNamed, startAdmin, until, warnNoChromium } from './helpers'

setDefaultTimeout(120_000)
warnNoChromium('the admin app’s people and access tests')

const PASSWORD = 'correct horse battery staple'

let h: AdminHarness
let sink: SmtpSink
let owner: { token: string; user: { id: number; email: string; name: string }; tenant: { id: number } }
let space = ''

describe.skipIf(!hasChromium)('people and access in Chromium', () => {
  beforeAll(async () => {
    sink = await startSmtpSink()
    h = await startAdmin({ publicUrl: true, env: { SMTP_URL: sink.url } })
    owner = await h.t.register({ name: 'Ada Admin' })
    space = (await h.t.createSpace(owner.token, { name: 'Team Site' })).slug
  }, 240_000)

  afterAll(async () => {
    await h?.close()
    await sink?.stop()
  })

  test('an admin invites by mail; the invitee opens the link, registers and lands in the Space as editor', async () => {
    const invitee = `new-editor-${Math.random().toString(36).slice(2, 8)}@example.com`
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}`)
    // The admin's sections are there, read from whoami and the operations' minimum role.
    await page.getByRole('link', { name: 'Members' }).click()
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor()
    await page.locator(`[data-member="${owner.user.email}"]`).waitFor()
    expect(await axeViolations(page)).toEqual([])

    await page.getByLabel('E-mail address').fill(invitee)
    await page.getByLabel('Role', { exact: true }).selectOption('editor')
    await page.getByRole('button', { name: 'Send invitation' }).click()
    await page.getByRole('status').filter({ hasText: `Invitation mailed to ${invitee}.` }).waitFor()
    await page.locator(`[data-invitation="${invitee}"]`).waitFor()

    await h.t.kernel.jobs.runDueJobs()
    const mail = (await sink.waitFor(1)).find((m) => m.to.includes(invitee))!
    const link = new RegExp(`${h.origin.replace(/[.]/g, '\\.')}/invite/[A-Za-z0-9_-]{43}`).exec(mail.parsed.text ?? '')![0]

    // The invitee: another browser, not signed in.
    const context = await h.browser.newContext({ viewport: { width: 1280, height: 900 } })
    const guest = await context.newPage()
    const guestErrors: string[] = []
    guest.on('pageerror', (e) => guestErrors.push(String(e)))
    await guest.goto(link)
    await guest.getByTestId('invite-summary').waitFor()
    // The mailed path serves the app, which moves the address to its own page.
    expect(new URL(guest.url()).pathname).toBe(`/admin${new URL(link).pathname}`)
    expect(await guest.getByTestId('invite-summary').textContent()).toBe('Ada Admin invited you to the Space “Team Site” as Editor.')
    expect(await axeViolations(guest)).toEqual([])
    // No account for the address yet: the page offers registration first.
    expect(await guest.getByRole('radio', { name: 'I am new here' }).isChecked()).toBe(true)
    await guest.getByLabel('Your name').fill('Eddie Editor')
    await guest.getByLabel('E-mail (the invited address)').fill(invitee)
    await guest.getByLabel('Password').fill(PASSWORD)
    await guest.getByRole('button', { name: 'Create account and join' }).click()
    await guest.waitForURL((url) => url.pathname.replace(/\/$/, '') === `/admin/spaces/${space}`)
    await until(() => guest.getByTestId('role').textContent(), 'Your role: Editor')
    expect(guestErrors).toEqual([])

    // The service agrees; the admin's screen shows the new member and no pending invitation.
    const members = await h.call('GET', `/v1/spaces/${space}/members`, owner.token)
    expect(members.body.data.find((m: any) => m.user.email === invitee)?.role).toBe('editor')
    await page.reload()
    await page.locator(`[data-member="${invitee}"]`).waitFor()
    expect(await page.locator(`[data-invitation="${invitee}"]`).count()).toBe(0)
    expect(await page.getByText('No invitation is waiting for an answer.').isVisible()).toBe(true)
    // The editor has no people or token screens in the navigation.
    expect(await guest.getByRole('link', { name: 'Members' }).count()).toBe(0)
    expect(await guest.getByRole('link', { name: 'Tokens' }).count()).toBe(0)
    await context.close()
    expect(errors).toEqual([])
  })

  test('a link that was used, or never was, says so; decline spends a link', async () => {
    const context = await h.browser.newContext({ baseURL: h.origin })
    const guest = await context.newPage()
    await guest.goto(`/admin/invite/${'x'.repeat(43)}`)
    await guest.getByRole('alert').filter({ hasText: 'This invitation link is not valid any more' }).waitFor()
    // A fresh invitation, declined from its page.
    const invited = await h.call('POST', `/v1/spaces/${space}/invitations`, owner.token, { email: 'decliner@example.com', role: 'viewer' })
    expect(invited.status).toBe(201)
    await h.t.kernel.jobs.runDueJobs()
    const mail = (await sink.waitFor(2, 10_000)).find((m) => m.to.includes('decliner@example.com'))!
    const link = /http:\S+\/invite\/[A-Za-z0-9_-]{43}/.exec(mail.parsed.text ?? '')![0]
    await guest.goto(link)
    await guest.getByRole('button', { name: 'Decline' }).click()
    await guest.getByRole('status').filter({ hasText: 'You declined the invitation.' }).waitFor()
    expect((await h.call('GET', `/v1/invite/${link.split('/').pop()}`, null)).status).toBe(404)
    await context.close()
  })

  test('keyboard alone invites and changes a role', async () => {
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}/members`)
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor()
    // From the page's top, Tab reaches the invitation form's address field.
    let steps = 0
    while (!(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.type === 'email')) && steps++ < 40) await page.keyboard.press('Tab')
    await page.keyboard.type('keys@example.com')
    await page.keyboard.press('Tab')
    // The role select: from Editor (the default), one up is Viewer.
    await page.keyboard.press('ArrowUp')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Enter')
    await page.getByRole('status').filter({ hasText: 'Invitation mailed to keys@example.com.' }).waitFor()
    const invited = (await h.call('GET', `/v1/spaces/${space}/invitations`, owner.token)).body.data.find((i: any) => i.email === 'keys@example.com')
    expect(invited.role).toBe('viewer')

    const member = await memberNamed(h.t, owner.tenant.id, space, 'viewer', 'Kim Keys')
    await page.reload()
    const select = page.getByLabel('Role of Kim Keys')
    await select.waitFor()
    await select.focus()
    await page.keyboard.press('ArrowDown')
    await page.getByRole('status').filter({ hasText: 'Kim Keys is now Editor.' }).waitFor()
    const members = (await h.call('GET', `/v1/spaces/${space}/members`, owner.token)).body.data
    expect(members.find((m: any) => m.user.id === member.id).role).toBe('editor')
    expect(errors).toEqual([])
  })

  test('the last admin cannot demote themselves: the 409 is explained and the role stays', async () => {
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}/members`)
    const select = page.getByLabel('Role of Ada Admin')
    await select.waitFor()
    await select.selectOption('editor')
    await page.getByRole('alert').filter({ hasText: 'A Space needs at least one admin.' }).waitFor()
    await until(() => select.inputValue(), 'admin')
    expect((await h.call('GET', `/v1/spaces/${space}/members`, owner.token)).body.data.find((m: any) => m.user.id === owner.user.id).role).toBe('admin')
    expect(errors).toEqual([])
  })

  test('a Space token is shown once, works with fetch, and answers 401 once revoked', async () => {
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}/tokens`)
    await page.getByRole('heading', { name: 'Space tokens', level: 1 }).waitFor()
    await page.getByLabel('Name', { exact: true }).fill('Site build')
    await page.getByLabel('Role', { exact: true }).selectOption('viewer')
    await page.getByRole('button', { name: 'Create token' }).click()
    const field = page.getByTestId('token-secret')
    await field.waitFor()
    const secret = await field.inputValue()
    expect(secret.length).toBeGreaterThan(20)
    expect(await axeViolations(page)).toEqual([])

    const stories = () => fetch(`${h.origin}/v1/spaces/${space}/stories`, { headers: { Authorization: `Bearer ${secret}` } }).then((r) => r.status)
    expect(await stories()).toBe(200)

    // Shown once: gone from the page when the dialog closes, and not listed.
    await page.getByRole('button', { name: 'I have copied it' }).click()
    await page.locator('[data-token="Site build"]').waitFor()
    expect(await page.content()).not.toContain(secret)
    await page.reload()
    await page.locator('[data-token="Site build"]').waitFor()
    expect(await page.content()).not.toContain(secret)

    await page.getByRole('button', { name: 'Revoke Site build' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'The token “Site build” was revoked.' }).waitFor()
    await until(() => page.locator('[data-token="Site build"]').count(), 0)
    expect(await stories()).toBe(401)
    expect(errors).toEqual([])
  })

  test('German browsers get the German catalog on the new screens', async () => {
    const context = await h.browser.newContext({ baseURL: h.origin, locale: 'de-DE' })
    await context.addInitScript((token) => sessionStorage.setItem('content-service.token', token), owner.token)
    const page = await context.newPage()
    await page.goto(`/admin/spaces/${space}/members`)
    await page.getByRole('heading', { name: 'Mitglieder', level: 1 }).waitFor()
    expect(await page.getByRole('button', { name: 'Einladung senden' }).isVisible()).toBe(true)
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('de')
    await context.close()
  })

  test('a viewer finds no write control: not in the tree, the editor, components or assets, nor the admin sections', async () => {
    const viewer = await memberNamed(h.t, owner.tenant.id, space, 'viewer', 'Vera Viewer')
    const blueprint = await h.call('POST', `/v1/spaces/${space}/components`, owner.token, {
      name: 'page',
      is_root: true,
      schema: { title: { type: 'text' } },
    })
    expect(blueprint.status).toBe(201)
    const story = await h.call('POST', `/v1/spaces/${space}/stories`, owner.token, { name: 'Home', slug: 'home', content: { type: 'doc', blocks: [{ component: 'page', _uid: 'page-1', title: 'Hello' }] } })
    expect(story.status).toBe(201)
    const { page, errors } = await h.signedIn(viewer.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('link', { name: 'Home' }).first().waitFor()
    await page.getByText('your role (Viewer) cannot change it', { exact: false }).waitFor()
    const writes = /^(Save|Publish|Unpublish|Archive|New Story|New folder|New component|Edit .*|Delete.*|Rename.*|Restore.*|Move to…|Upload files|Comment|Reply|Resolve|Members|Tokens)$/
    const writeControls = async () =>
      (await page.getByRole('button', { name: writes }).count()) + (await page.getByRole('link', { name: writes }).count()) + (await page.locator('[data-tree-uuid] input[type=checkbox]').count())
    expect(await writeControls()).toBe(0)

    await page.goto(`/admin/spaces/${space}/stories/${story.body.data.uuid}`)
    await page.getByTestId('read-only').waitFor()
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor()
    expect(await writeControls()).toBe(0)
    // The form is there to read, its controls disabled.
    const enabledFields = await page.locator('section[aria-label="Content"] input:enabled, section[aria-label="Content"] textarea:enabled').count()
    expect(enabledFields).toBe(0)

    await page.goto(`/admin/spaces/${space}/components`)
    await page.getByRole('heading', { name: 'Components', level: 1 }).waitFor()
    await page.getByRole('list', { name: 'Components' }).waitFor()
    expect(await writeControls()).toBe(0)
    await page.goto(`/admin/spaces/${space}/assets`)
    await page.getByRole('heading', { name: 'Assets', level: 1 }).waitFor()
    expect(await writeControls()).toBe(0)
    expect(await page.locator('input[type=file]:enabled').count()).toBe(0)
    expect(await axeViolations(page)).toEqual([])
    expect(errors).toEqual([])
  })

  test('an editor deletes a Story from the tree after a confirmation; a folder with Stories inside says why not', async () => {
    const editor = await memberNamed(h.t, owner.tenant.id, space, 'editor', 'Ed Delete')
    const folder = await h.call('POST', `/v1/spaces/${space}/stories`, owner.token, { name: 'Blog', slug: 'blog', is_folder: true })
    expect(folder.status).toBe(201)
    const post = await h.call('POST', `/v1/spaces/${space}/stories`, owner.token, { name: 'Old post', slug: 'old-post', parent_uuid: folder.body.data.uuid })
    expect(post.status).toBe(201)
    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('button', { name: 'Delete Blog' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('dialog').getByRole('alert').filter({ hasText: 'This Story has Stories inside it' }).waitFor()
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click()

    await page.getByRole('button', { name: 'Delete Old post' }).click()
    expect(await page.getByRole('dialog').textContent()).toContain('This cannot be undone.')
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByText('“Old post” was deleted.').waitFor()
    await until(() => page.getByRole('button', { name: 'Delete Old post' }).count(), 0)
    expect((await h.call('GET', `/v1/spaces/${space}/stories/${post.body.data.uuid}`, owner.token)).status).toBe(404)
    expect(errors).toEqual([])
  })
})
