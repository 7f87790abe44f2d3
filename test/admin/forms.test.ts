/**
 * The Audience screens in Chromium against a listening service: Forms and Subscribers. A contact form with an e-mail
 * action is built in the browser (the API's refusals shown at their fields as sentences, the preview following each
 * change, the action chosen by keyboard), its embed snippet is copied from the screen into a page on another origin (a
 * second Bun.serve) and submitted there: the submission appears in the screen, the mail arrives at a real SMTP sink,
 * the CSV downloaded from the screen holds it, and a spammy one lands in the spam view. Subscribers (signed up through
 * the public route, one confirmed through the mailed link) are filtered by status and search, unsubscribed, erased for
 * good after the typed confirmation, exported; the newsletter redirect is set. Editors and viewers meet only what their
 * role may do; axe-core finds no serious or critical violation on these screens in either theme.
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFile } from 'node:fs/promises'
import type { Server } from 'bun'
import type { Page } from 'playwright-core'
import { type SmtpSink, startSmtpSink } from '../helpers/smtp'
import { type AdminHarness, axeViolations, hasChromium, memberNamed, startAdmin, until, warnNoChromium } from './helpers'

setDefaultTimeout(180_000)
warnNoChromium('the admin app’s forms and subscribers tests')

let h: AdminHarness
let sink: SmtpSink
let site: Server<undefined>
let siteOrigin = ''
let owner: { token: string; user: { id: number }; tenant: { id: number } }
let editor: { token: string }
let viewer: { token: string }
let space = ''
let formUuid = ''
const pages = new Map<string, string>()

const settled = (page: Page) => until(() => page.getByTestId('skeleton').count(), 0)

describe.skipIf(!hasChromium)('forms and subscribers screens in Chromium', () => {
  beforeAll(async () => {
    sink = await startSmtpSink()
    // Webhook URLs on 127.0.0.1 pass the outbound policy (nothing is delivered to them here).
    h = await startAdmin({ env: { SMTP_URL: sink.url }, publicUrl: true, config: { outboundAllowPrivate: true } })
    owner = await h.t.register({ name: 'Olga Owner' })
    space = (await h.t.createSpace(owner.token, { name: 'Harbour Site' })).slug
    editor = await memberNamed(h.t, owner.tenant.id, space, 'editor', 'Eda Editor')
    viewer = await memberNamed(h.t, owner.tenant.id, space, 'viewer', 'Vic Viewer')
    expect((await h.call('POST', `/v1/spaces/${space}/locales`, owner.token, { code: 'de' })).status).toBe(201)
    // The customer's site: another origin (another port), serving the pages the test registers.
    site = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      development: false,
      fetch: (request) => {
        const html = pages.get(new URL(request.url).pathname)
        // A strict CSP, as careful sites send: no inline script, scripts and requests to the service only.
        const csp = `default-src 'self'; script-src ${h.origin}; connect-src ${h.origin}`
        return html ? new Response(html, { headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': csp } }) : new Response('not found', { status: 404 })
      },
    })
    siteOrigin = `http://127.0.0.1:${site.port}`
  }, 240_000)

  afterAll(async () => {
    await h?.close()
    await sink?.stop()
    site?.stop(true)
  })

  test('build a contact form with an e-mail action: refusals at their fields, the preview follows, the action by keyboard', async () => {
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}`)
    // The sidebar's Audience section leads to the screen.
    await page.getByRole('navigation', { name: 'Space switcher' }).getByRole('link', { name: 'Forms' }).click()
    await page.getByRole('heading', { name: 'Forms', level: 1 }).waitFor()
    await page.getByRole('heading', { name: 'No forms yet' }).waitFor()
    await page.getByRole('link', { name: 'New form' }).click()
    await page.getByRole('heading', { name: 'New form', level: 1 }).waitFor()
    const preview = page.getByTestId('form-preview')

    await page.getByLabel('Name', { exact: true }).fill('Contact us')
    expect(await page.getByLabel('Slug', { exact: true }).inputValue()).toBe('contact-us')
    const field = (n: number) => page.getByRole('group', { name: new RegExp(`^Field ${n}:`) })
    await field(1).getByLabel('Label', { exact: true }).fill('Your name')
    await field(1).getByLabel('Required').check()
    expect(await field(1).getByLabel('Key', { exact: true }).inputValue()).toBe('your_name')
    await preview.getByLabel(/^Your name/).waitFor()

    await page.getByRole('button', { name: 'Add a field' }).click()
    await field(2).getByLabel('Type').selectOption('email')
    await field(2).getByLabel('Label', { exact: true }).fill('E-mail')
    await field(2).getByLabel('Required').check()
    await page.getByRole('button', { name: 'Add a field' }).click()
    await field(3).getByLabel('Type').selectOption('textarea')
    await field(3).getByLabel('Label', { exact: true }).fill('Message')
    await field(3).getByLabel('Maximum length (characters)').fill('2000')
    await page.getByRole('button', { name: 'Add a field' }).click()
    await field(4).getByLabel('Type').selectOption('consent')
    await field(4).getByLabel('Consent text (what the person agrees to)').fill('I agree to be contacted')
    await field(4).getByLabel('Must be checked').check()
    await field(4).getByLabel('Key', { exact: true }).fill('consent')
    // The preview draws every field as the visitor will see it.
    expect(await preview.getByLabel('Message').getAttribute('maxlength')).toBe('2000')
    await preview.getByLabel(/^I agree to be contacted/).waitFor()
    expect(await preview.getByRole('textbox').count()).toBe(3)

    // A key the API refuses: the sentence at that field, nothing saved.
    await field(2).getByLabel('Key', { exact: true }).fill('E mail')
    await page.getByRole('button', { name: 'Create form' }).click()
    await field(2).getByText('Use lower-case letters, digits and _, starting with a letter (at most 64).').waitFor()
    expect(await field(2).getByLabel('Key', { exact: true }).getAttribute('aria-invalid')).toBe('true')
    await page.getByText('The form was not saved: see the notes at the fields.').waitFor()
    await field(2).getByLabel('Key', { exact: true }).fill('email')

    // The action by keyboard: from Store, ↓ moves to "Store and e-mail"; without an address the API refuses at the field.
    await page.getByRole('radio', { name: 'Store', exact: true }).focus()
    await page.keyboard.press('ArrowDown')
    expect(await page.getByRole('radio', { name: 'Store and e-mail', exact: true }).isChecked()).toBe(true)
    await page.getByRole('button', { name: 'Create form' }).click()
    await page.getByText('Give the address the submissions are mailed to.').waitFor()
    await page.getByLabel('Send submissions to (e-mail address)').fill('team@harbour.test')
    await page.getByLabel('Success message (en)').fill('Thanks, we will answer soon.')
    await page.getByLabel('Success message (de)').fill('Danke, wir antworten bald.')
    // The preview shows the success message of the language being edited.
    await preview.getByRole('button', { name: 'Send' }).click()
    await preview.getByText('Danke, wir antworten bald.').waitFor()
    // Enter in a text field saves (the builder is a form).
    await page.getByLabel('Success message (en)').focus()
    await page.getByLabel('Send submissions to (e-mail address)').press('Enter')
    await page.getByRole('heading', { name: 'Contact us', level: 1 }).waitFor()
    const list = await h.call('GET', `/v1/spaces/${space}/forms`, owner.token)
    expect(list.body.data).toHaveLength(1)
    const form = list.body.data[0]
    formUuid = form.uuid
    expect(page.url()).toContain(`/forms/${form.uuid}`)
    expect(form).toMatchObject({
      slug: 'contact-us',
      submit_action: 'email',
      notification_email: 'team@harbour.test',
      success_message: { en: 'Thanks, we will answer soon.', de: 'Danke, wir antworten bald.' },
      fields: [
        { key: 'your_name', type: 'text', label: 'Your name', required: true },
        { key: 'email', type: 'email', label: 'E-mail', required: true },
        { key: 'message', type: 'textarea', label: 'Message', required: false, max_length: 2000 },
        { key: 'consent', type: 'consent', label: 'I agree to be contacted', required: true },
      ],
    })
    // Moving a field changes the order that is saved.
    await field(3).getByRole('button', { name: 'Move Message up' }).click()
    expect(await field(2).getByLabel('Label', { exact: true }).inputValue()).toBe('Message')
    await field(2).getByRole('button', { name: 'Move Message down' }).click()
    expect(await field(3).getByLabel('Label', { exact: true }).inputValue()).toBe('Message')
    expect(errors).toEqual([])
  })

  test('the embed snippet on a page of another origin sends it: the submission appears, the mail arrives, the CSV holds it, spam lands in the spam view', async () => {
    expect(formUuid).not.toBe('')
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}/forms/${formUuid}`)
    await page.getByRole('heading', { name: 'Contact us', level: 1 }).waitFor()
    await page.getByRole('link', { name: 'Embed' }).click()
    const snippet = await page.getByTestId('embed-snippet').inputValue()
    expect(snippet).toContain(`${h.origin}/embed.js`)
    expect(snippet).toMatch(/integrity="sha384-/)

    // The customer's page, on another origin, holds the snippet as copied.
    pages.set('/contact', `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Contact</title></head><body><h1>Contact</h1>${snippet}</body></html>`)
    const sitePage = await page.context().newPage()
    const pageErrors: string[] = []
    sitePage.on('pageerror', (e) => pageErrors.push(String(e)))
    await sitePage.goto(`${siteOrigin}/contact`, { waitUntil: 'load' })
    await sitePage.waitForFunction(() => Boolean((window as unknown as { ContentService?: { embed?: unknown } }).ContentService?.embed))
    // Without the consent the API refuses, and the snippet shows it at the field.
    await sitePage.getByLabel('Your name').fill('Ada Lovelace')
    await sitePage.getByLabel('E-mail').fill('ada@example.com')
    await sitePage.getByLabel('Message').fill('Please call me about the harbour tour.')
    await sitePage.getByRole('button', { name: 'Send' }).click()
    await until(async () => ((await sitePage.locator('[data-error-for="consent"]').textContent()) ?? '').length > 0, true)
    await sitePage.getByLabel('I agree to be contacted').check()
    await sitePage.getByRole('button', { name: 'Send' }).click()
    await sitePage.getByText('Thanks, we will answer soon.').waitFor()
    // A spammy one: links and markup.
    await sitePage.getByLabel('Your name').fill('Cheap Pills')
    await sitePage.getByLabel('E-mail').fill('bot@example.com')
    await sitePage.getByLabel('Message').fill('<a href="https://x.example">cheap</a> https://y.example https://z.example')
    await sitePage.getByLabel('I agree to be contacted').check()
    await sitePage.getByRole('button', { name: 'Send' }).click()
    const stored = async () =>
      (await h.t.kernel.db.query<{ n: number }>('select count(*)::int as n from form_submissions s join forms f on f.id = s.form_id where f.uuid = $1', [formUuid])).at(0)?.n
    await until(stored, 2)
    expect(pageErrors).toEqual([])

    // The e-mail action runs as a durable job: the mail reaches the SMTP sink, for the clean submission only.
    await h.t.kernel.jobs.runDueJobs()
    const [mail] = await sink.waitFor(1)
    expect(mail!.to).toEqual(['team@harbour.test'])
    expect(mail!.parsed.subject).toBe('New submission: Contact us')
    expect(mail!.parsed.text).toContain('Ada Lovelace')
    expect(mail!.parsed.text).toContain('Please call me about the harbour tour.')
    await h.t.kernel.jobs.runDueJobs()
    expect(sink.mails).toHaveLength(1)

    // The submission in the screen, newest first; the spam one is not among them.
    await page.getByRole('link', { name: 'Submissions' }).click()
    await page.getByRole('heading', { name: 'Submissions', level: 2 }).waitFor()
    await settled(page)
    const rows = page.locator('tr[data-submission]')
    await until(() => rows.count(), 1)
    expect(await rows.first().textContent()).toContain('Ada Lovelace')
    await rows.first().getByRole('button', { name: /^Details/ }).click()
    const detail = page.getByTestId('submission-detail')
    await detail.waitFor()
    expect(await detail.textContent()).toContain('yes (I agree to be contacted)')
    expect(await detail.textContent()).toContain('127.0.0.1')
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click()

    // Search: the values, case-insensitive.
    await page.getByLabel('Search the submissions').fill('LOVELACE')
    await page.getByLabel('Search the submissions').press('Enter')
    await until(() => rows.count(), 1)
    await page.getByLabel('Search the submissions').fill('nobody')
    await page.getByRole('button', { name: 'Search', exact: true }).click()
    await page.getByRole('heading', { name: 'No submission matches' }).waitFor()
    await page.getByLabel('Search the submissions').fill('')
    await page.getByRole('button', { name: 'Search', exact: true }).click()

    // The spam view holds the spammy one; "Not spam" moves it back.
    await page.getByLabel('Spam only').check()
    await until(async () => (await rows.count()) === 1 && ((await rows.first().textContent()) ?? '').includes('Cheap Pills'), true)
    expect(await axeViolations(page)).toEqual([])
    await rows.first().getByRole('button', { name: /^Details/ }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Not spam' }).click()
    await page.getByRole('heading', { name: 'No spam' }).waitFor()
    await page.getByLabel('Spam only').uncheck()
    await until(() => rows.count(), 2)
    // …and back into spam, so the CSV leaves it out.
    await page.locator('tr[data-submission]', { hasText: 'Cheap Pills' }).getByRole('button', { name: /^Details/ }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Mark as spam' }).click()
    await until(() => rows.count(), 1)

    // The CSV, downloaded through the API with the bearer token.
    const download = page.waitForEvent('download')
    await page.getByRole('button', { name: 'Export CSV' }).click()
    const file = await download
    expect(file.suggestedFilename()).toBe('contact-us-submissions.csv')
    const csv = await readFile((await file.path())!, 'utf8')
    const lines = csv.replace(/^\uFEFF/, '').trim().split('\r\n')
    expect(lines[0]).toBe('your_name,email,message,consent,submitted_at,uuid,spam_score')
    expect(lines).toHaveLength(2)
    expect(lines[1]).toStartWith('Ada Lovelace,ada@example.com,Please call me about the harbour tour.,true,')
    expect(errors).toEqual([])
  })

  test('roles: an editor edits the form but sees no submissions; a viewer reads it with every control disabled', async () => {
    expect(formUuid).not.toBe('')
    const ed = await h.signedIn(editor.token)
    await ed.page.goto(`/admin/spaces/${space}/forms/${formUuid}`)
    await ed.page.getByRole('heading', { name: 'Contact us', level: 1 }).waitFor()
    await settled(ed.page)
    await ed.page.getByRole('button', { name: 'Save form' }).waitFor()
    expect(await ed.page.getByRole('link', { name: 'Embed' }).count()).toBe(1)
    expect(await ed.page.getByRole('link', { name: 'Submissions' }).count()).toBe(0)
    const nav = ed.page.getByRole('navigation', { name: 'Space switcher' })
    await nav.getByRole('link', { name: 'Forms' }).waitFor()
    expect(await nav.getByRole('link', { name: 'Subscribers' }).count()).toBe(0)
    expect(ed.errors).toEqual([])

    const vw = await h.signedIn(viewer.token)
    await vw.page.goto(`/admin/spaces/${space}/forms`)
    await vw.page.getByRole('heading', { name: 'Forms', level: 1 }).waitFor()
    await vw.page.getByRole('link', { name: 'Contact us' }).click()
    await vw.page.getByRole('heading', { name: 'Contact us', level: 1 }).waitFor()
    await settled(vw.page)
    // The sidebar lists Forms once the role is known (whoami): from then on, the controls' absence means something.
    await vw.page.getByRole('navigation', { name: 'Space switcher' }).getByRole('link', { name: 'Forms' }).waitFor()
    expect(await vw.page.getByRole('link', { name: 'New form' }).count()).toBe(0)
    expect(await vw.page.getByRole('button', { name: 'Save form' }).count()).toBe(0)
    expect(await vw.page.getByRole('button', { name: 'Archive form' }).count()).toBe(0)
    expect(await vw.page.getByLabel('Name', { exact: true }).isDisabled()).toBe(true)
    expect(vw.errors).toEqual([])
  })

  test('a webhook form: the signing secret is shown once after saving, a new one on demand', async () => {
    expect(formUuid).not.toBe('')
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}/forms/${formUuid}`)
    await page.getByRole('heading', { name: 'Contact us', level: 1 }).waitFor()
    await settled(page)
    expect(await page.getByRole('button', { name: 'New signing secret' }).count()).toBe(0)
    await page.getByRole('radio', { name: 'Store and send to a webhook', exact: true }).check()
    await page.getByRole('button', { name: 'Save form' }).click()
    await page.getByText('Give the URL the submissions are sent to.').waitFor()
    await page.getByLabel('Webhook URL').fill('http://127.0.0.1:9/hook')
    await page.getByRole('button', { name: 'Save form' }).click()
    const dialog = page.getByRole('dialog', { name: 'The webhook signing secret' })
    await dialog.waitFor()
    const first = (await dialog.getByTestId('form-secret').textContent()) ?? ''
    expect(first).toMatch(/^whsec_/)
    await dialog.getByRole('button', { name: 'I have copied it' }).click()
    await dialog.waitFor({ state: 'hidden' })
    expect((await h.call('GET', `/v1/spaces/${space}/forms/${formUuid}`, owner.token)).body.data).toMatchObject({ submit_action: 'webhook', webhook_url: 'http://127.0.0.1:9/hook', has_webhook_secret: true })
    await page.getByRole('button', { name: 'New signing secret' }).click()
    await dialog.waitFor()
    const second = (await dialog.getByTestId('form-secret').textContent()) ?? ''
    expect(second).toMatch(/^whsec_/)
    expect(second).not.toBe(first)
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'hidden' })
    expect(errors).toEqual([])
  })

  test('subscribers: status filter and search, unsubscribe, erase after typing the address, CSV, the newsletter redirect, pages past 25', async () => {
    sink.clear()
    for (const [email, name] of [
      ['ann@example.com', 'Ann Archer'],
      ['ben@example.com', 'Ben Baker'],
      ['cat@example.com', 'Cat Cooper'],
    ]) {
      const r = await fetch(`${h.origin}/v1/cdn/${space}/subscribe`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email, name }) })
      expect(r.status).toBe(202)
    }
    // The confirmation mails go out as durable jobs.
    await h.t.kernel.jobs.runDueJobs()
    const mails = await sink.waitFor(3)
    // Ben confirms through the link mailed to him (its page's button POSTs to the same address).
    const benMail = mails.find((m) => m.to.includes('ben@example.com'))!
    const link = /https?:\/\/\S+\/subscribe\/confirm\/[A-Za-z0-9_-]{43}/.exec(benMail.parsed.text ?? '')![0]
    expect((await fetch(link, { method: 'POST' })).status).toBe(200)

    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('navigation', { name: 'Space switcher' }).getByRole('link', { name: 'Subscribers' }).click()
    await page.getByRole('heading', { name: 'Subscribers', level: 1 }).waitFor()
    await settled(page)
    const rows = page.locator('tr[data-subscriber]')
    await until(() => rows.count(), 3)
    await page.getByLabel('Status').selectOption('confirmed')
    await until(async () => (await rows.count()) === 1 && (await rows.first().getAttribute('data-subscriber')) === 'ben@example.com', true)
    await page.getByLabel('Status').selectOption('pending')
    await until(() => rows.count(), 2)
    await page.getByLabel('Status').selectOption('')
    await page.getByLabel('Search by e-mail or name').fill('cooper')
    await page.getByLabel('Search by e-mail or name').press('Enter')
    await until(async () => (await rows.count()) === 1 && (await rows.first().getAttribute('data-subscriber')) === 'cat@example.com', true)

    // Unsubscribe Cat.
    await page.getByRole('button', { name: 'Unsubscribe cat@example.com' }).click()
    await page.getByText('cat@example.com is unsubscribed.').waitFor()
    expect(await rows.first().textContent()).toContain('unsubscribed')
    await page.getByLabel('Search by e-mail or name').fill('')
    await page.getByLabel('Search by e-mail or name').press('Enter')
    await until(() => rows.count(), 3)

    // Erase Ann: the button stays disabled until her address is typed; then she is gone, in the database too.
    await page.getByRole('button', { name: 'Erase ann@example.com' }).click()
    const dialog = page.getByRole('dialog', { name: 'Erase ann@example.com?' })
    await dialog.waitFor()
    expect(await dialog.getByRole('button', { name: 'Erase for good' }).isDisabled()).toBe(true)
    await dialog.getByLabel('Type ann@example.com to confirm').fill('ann@example')
    expect(await dialog.getByRole('button', { name: 'Erase for good' }).isDisabled()).toBe(true)
    await dialog.getByLabel('Type ann@example.com to confirm').fill('ann@example.com')
    await dialog.getByLabel('Type ann@example.com to confirm').press('Enter')
    await page.getByText('ann@example.com was erased.').waitFor()
    await until(() => rows.count(), 2)
    const left = await h.t.kernel.db.query<{ n: number }>(
      `select count(*)::int as n from subscribers s join spaces sp on sp.id = s.space_id where sp.slug = $1 and s.email = 'ann@example.com'`,
      [space],
    )
    expect(left[0]!.n).toBe(0)

    // The CSV with the list's filter.
    await page.getByLabel('Status').selectOption('confirmed')
    await until(() => rows.count(), 1)
    const download = page.waitForEvent('download')
    await page.getByRole('button', { name: 'Export CSV' }).click()
    const csv = await readFile((await (await download).path())!, 'utf8')
    const lines = csv.replace(/^\uFEFF/, '').trim().split('\r\n')
    expect(lines).toHaveLength(2)
    expect(lines[1]).toStartWith('ben@example.com,Ben Baker,')

    // The newsletter redirect: a refused address at its field, then a good one saved.
    const redirect = page.getByLabel('Redirect address')
    await redirect.fill('not a url')
    await page.getByRole('button', { name: 'Save address' }).click()
    await page.getByText('Use a full http(s) address, or leave it empty.').waitFor()
    await redirect.fill('https://harbour.example/newsletter')
    await page.getByRole('button', { name: 'Save address' }).click()
    await page.getByText('The redirect address was saved.').waitFor()
    expect((await h.call('GET', `/v1/spaces/${space}/newsletter`, owner.token)).body.data.newsletter_redirect_url).toBe('https://harbour.example/newsletter')

    // Past 25 the list has pages: Next and Previous, where the reader is; a new filter starts on page 1 again.
    await h.t.kernel.db.query(
      `insert into subscribers (space_id, email, status, source, created_at, updated_at)
       select sp.id, 'reader' || n || '@example.com', 'pending', 'admin', now(), now() from spaces sp, generate_series(1, 26) n where sp.slug = $1`,
      [space],
    )
    await page.reload()
    await page.getByRole('heading', { name: 'Subscribers', level: 1 }).waitFor()
    const pager = page.getByRole('navigation', { name: 'Pages' })
    await until(() => rows.count(), 25)
    expect(await pager.textContent()).toContain('Page 1 of 2')
    expect(await pager.getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true)
    await pager.getByRole('button', { name: 'Next' }).click()
    await until(() => rows.count(), 3)
    expect(await pager.textContent()).toContain('Page 2 of 2')
    expect(await pager.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true)
    await page.getByLabel('Status').selectOption('pending')
    await until(() => rows.count(), 25)
    expect(await pager.textContent()).toContain('Page 1 of 2')
    await page.getByLabel('Status').selectOption('confirmed')
    await until(() => rows.count(), 1)
    expect(await pager.count()).toBe(0)
    expect(errors).toEqual([])
  })

  test('at 390×844 the builder and its preview fit the screen', async () => {
    expect(formUuid).not.toBe('')
    const { page, errors } = await h.signedIn(owner.token)
    await page.setViewportSize({ width: 390, height: 844 })
    for (const [path, heading] of [
      ['forms/new', 'New form'],
      [`forms/${formUuid}`, 'Contact us'],
    ] as const) {
      await page.goto(`/admin/spaces/${space}/${path}`)
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
      await settled(page)
      await page.getByTestId('form-preview').waitFor()
      const wide = await page.evaluate(() =>
        [...document.querySelectorAll('body *')]
          .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5 && !el.closest('dialog:not([open])') && getComputedStyle(el).position !== 'fixed')
          .slice(0, 5)
          .map((el) => `${el.tagName.toLowerCase()}.${String(el.className).slice(0, 60)}`),
      )
      expect({ path, wide, width: await page.evaluate(() => document.documentElement.scrollWidth) }).toEqual({ path, wide: [], width: 390 })
    }
    expect(errors).toEqual([])
  })

  test('axe is clean on the forms and subscribers screens in both themes', async () => {
    expect(formUuid).not.toBe('')
    const { page, errors } = await h.signedIn(owner.token)
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      for (const [path, heading] of [
        ['forms', 'Forms'],
        ['forms/new', 'New form'],
        [`forms/${formUuid}`, 'Contact us'],
        [`forms/${formUuid}?tab=embed`, 'Contact us'],
        [`forms/${formUuid}?tab=submissions`, 'Contact us'],
        ['subscribers', 'Subscribers'],
      ] as const) {
        await page.goto(`/admin/spaces/${space}/${path}`)
        await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
        await settled(page)
        expect({ path, scheme, violations: await axeViolations(page) }).toEqual({ path, scheme, violations: [] })
      }
    }
    // The erase dialog, open.
    await page.getByRole('button', { name: /^Erase / }).first().click()
    await page.getByRole('dialog').waitFor()
    expect(await axeViolations(page)).toEqual([])
    expect(errors).toEqual([])
  })
})
