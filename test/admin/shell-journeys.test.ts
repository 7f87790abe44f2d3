/**
 * The shell's journeys in Chromium against a real server: the sidebar by section and role, the command palette
 * (Ctrl+K: a screen, a Story by name, New Story), the shortcuts dialog (?), the Account screen (language and theme
 * stored per user: German after a change, in a fresh browser too), Space settings (add, reorder, change the fallback of
 * and remove a locale, keyed errors as sentences), Members and Tokens (skeleton, Try again), the getting-started
 * panel, the slug derived from a Space's name, and the small-screen layout at 390×844.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { de } from '../../admin/src/i18n/de'
import { en, type MessageKey } from '../../admin/src/i18n/en'
import { type AdminHarness, axeViolations, featureCatalogs, hasChromium, memberNamed, startAdmin, until, warnNoChromium } from './helpers'

setDefaultTimeout(180_000)
warnNoChromium('the admin app’s shell journeys')

let h: AdminHarness
let owner: { token: string; tenant: { id: number } }
let space = ''
let storyUuid = ''

/**
 * The English catalog texts a German page must not show: those that differ from their German text (a word that is
 * the same in both, such as "Link", is no finding). A text with `{placeholders}` is matched by its opening words.
 */
/** The main catalogs and every screen's own (features/<feature>/messages.ts), as pairs of English and German. */
const PAIRS: [string, string, string][] = [
  ...(Object.keys(en) as MessageKey[]).map((k): [string, string, string] => [k, en[k], de[k]]),
  ...(await featureCatalogs()).flatMap((c) => Object.keys(c.en).map((k): [string, string, string] => [k, c.en[k]!, c.de[k]!])),
]
const GERMAN = new Set(PAIRS.map((p) => p[2]))
const ENGLISH = PAIRS.filter(([, e, d]) => e !== d && !GERMAN.has(e))
  .map(([k, e]) => {
    const head = e.split('{')[0]!.trim()
    return { key: k, text: e.includes('{') ? head : e.trim(), exact: !e.includes('{') }
  })
  .filter((e) => e.text.length >= 4)

/** Every text a person meets on the page (text nodes, labels, titles, placeholders, alt texts), open dialogs included. */
async function pageTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = []
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement
      if (!el || el.closest('script, style, dialog:not([open]), [hidden]')) continue
      const text = n.textContent?.trim()
      if (text) out.push(text)
    }
    for (const el of document.querySelectorAll('[aria-label], [title], [placeholder], img[alt]')) {
      if (el.closest('dialog:not([open]), [hidden]')) continue
      for (const a of ['aria-label', 'title', 'placeholder', 'alt']) {
        const v = el.getAttribute(a)?.trim()
        if (v) out.push(v)
      }
    }
    out.push(document.title)
    return out
  })
}

function englishIn(texts: string[]): string[] {
  const found = new Set<string>()
  for (const text of texts)
    for (const e of ENGLISH) if (e.exact ? text === e.text : text.startsWith(e.text)) found.add(`${e.key}: ${text.slice(0, 80)}`)
  return [...found]
}

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
    await palette.getByRole('option', { name: /^New Story/, selected: true }).waitFor()
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
    await page.getByLabel('Fallback', { exact: true }).selectOption('en')
    await page.getByRole('button', { name: 'Add locale' }).click()
    await page.getByTestId('toast').filter({ hasText: 'Locale fr added.' }).waitFor()
    const row = page.locator('tr[data-locale="fr"]')
    await row.waitFor()
    expect(await row.textContent()).toContain('en')
    const api = await h.call('GET', `/v1/spaces/${space}/locales`, owner.token)
    expect(api.body.data.find((l: { code: string }) => l.code === 'fr')).toMatchObject({ fallback: 'en' })
    expect(await axeViolations(page)).toEqual([])
    // Reorder by keyboard: fr (last) moves up one place, and the keyboard stays on fr's row.
    const before: string[] = (await h.call('GET', `/v1/spaces/${space}/locales`, owner.token)).body.data.map((l: { code: string }) => l.code)
    expect(before.at(-1)).toBe('fr')
    await page.getByRole('button', { name: 'Move fr up' }).focus()
    await page.keyboard.press('Enter')
    await page.getByTestId('toast').filter({ hasText: `fr is now locale ${before.length - 1}.` }).waitFor()
    const moved: string[] = (await h.call('GET', `/v1/spaces/${space}/locales`, owner.token)).body.data.map((l: { code: string }) => l.code)
    expect(moved).toEqual([...before.slice(0, -2), 'fr', before.at(-2)!])
    await until(() => page.evaluate(() => document.activeElement?.closest('tr')?.getAttribute('data-locale') ?? null), 'fr')
    await until(async () => (await page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-locale')))).join(), moved.join())
    // en cannot fall back to fr (fr falls back to en: a cycle), so that choice is disabled; fr's fallback goes back to automatic.
    expect(await page.getByLabel('Fallback of en').locator('option[value="fr"]').isDisabled()).toBe(true)
    await page.getByLabel('Fallback of fr').selectOption('')
    await page.getByTestId('toast').filter({ hasText: 'Fallback of fr changed.' }).waitFor()
    expect((await h.call('GET', `/v1/spaces/${space}/locales`, owner.token)).body.data.find((l: { code: string }) => l.code === 'fr').fallback).toBeNull()
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

  test('Members and Tokens: a skeleton while loading, and a failed load offers Try again', async () => {
    const { context, page, errors } = await h.signedIn(owner.token)
    for (const [screen, heading, apiPath, loaded] of [
      ['members', 'Members', `/v1/spaces/${space}/members`, () => page.locator('table').getByText('Palette Owner').first()],
      ['tokens', 'Space tokens', `/v1/spaces/${space}/tokens`, () => page.getByText('No Space token yet.').or(page.getByRole('table', { name: 'Space tokens' }))],
    ] as const) {
      // The list request waits until the skeleton was seen, then fails (500) until the route is lifted.
      let release!: () => void
      const gate = new Promise<void>((r) => (release = r))
      let failed = 0
      const matches = (url: URL) => url.pathname === apiPath
      const handler = async (route: import('playwright-core').Route) => {
        await gate
        failed++
        await route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ error: 'internal_error', message: 'Something went wrong on our side.' }) })
      }
      await context.route(matches, handler)
      await page.goto(`/admin/spaces/${space}/${screen}`)
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
      await page.getByTestId('skeleton').first().waitFor()
      release()
      const retry = page.getByRole('button', { name: 'Try again' })
      await retry.first().waitFor()
      expect(failed).toBeGreaterThan(0)
      await context.unroute(matches, handler)
      await retry.first().click()
      await loaded().waitFor()
      expect(await page.getByRole('alert').filter({ hasText: 'Try again' }).count()).toBe(0)
    }
    expect(errors).toEqual([])
    await context.close()
  })

  test('getting started: a new Space’s tree shows the steps, ticks them from the Space, hides when dismissed or done', async () => {
    const fresh = (await h.t.createSpace(owner.token, { name: 'First Run' })).slug
    const { context, page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${fresh}`)
    const panel = page.getByRole('region', { name: 'Getting started' })
    await panel.waitFor()
    const done = (step: string) => panel.locator(`li[data-step="${step}"]`).getAttribute('data-done')
    expect([await done('blueprint'), await done('invite'), await done('connect')]).toEqual(['false', 'false', 'false'])
    expect(await panel.locator('pre').textContent()).toContain(`space: '${fresh}'`)
    await panel.getByText(`/v1/cdn/${fresh}/stories`).waitFor()
    expect(await axeViolations(page)).toEqual([])
    // Each step is ticked from the Space's own state.
    expect((await h.call('POST', `/v1/spaces/${fresh}/components`, owner.token, { name: 'page', schema: { title: { type: 'text' } } })).status).toBe(201)
    expect((await h.call('POST', `/v1/spaces/${fresh}/tokens`, owner.token, { name: 'site', role: 'viewer' })).status).toBe(201)
    await page.reload()
    await panel.waitFor()
    expect([await done('blueprint'), await done('invite'), await done('connect')]).toEqual(['true', 'false', 'true'])
    // Dismissed: gone, after a reload too, for this Space only.
    await panel.getByRole('button', { name: 'Hide this' }).click()
    await until(() => panel.count(), 0)
    await page.reload()
    await page.getByRole('heading', { name: 'Stories', level: 1 }).waitFor()
    expect(await panel.count()).toBe(0)
    // Done: a Space with a blueprint, a second member and a preview URL shows no panel.
    const other = (await h.t.createSpace(owner.token, { name: 'All Set' })).slug
    expect((await h.call('POST', `/v1/spaces/${other}/components`, owner.token, { name: 'page', schema: { title: { type: 'text' } } })).status).toBe(201)
    expect((await h.call('PATCH', `/v1/spaces/${other}`, owner.token, { preview_url: 'https://site.example.com' })).status).toBe(200)
    await page.goto(`/admin/spaces/${other}`)
    await panel.waitFor()
    expect(await done('invite')).toBe('false')
    await memberNamed(h.t, owner.tenant.id, other, 'editor', 'Second Person')
    await page.reload()
    await page.getByRole('heading', { name: 'Stories', level: 1 }).waitFor()
    // Every answer the panel waits for is in (no request in flight), and it is not shown.
    await page.waitForLoadState('networkidle')
    expect(await panel.count()).toBe(0)
    expect(errors).toEqual([])
    await context.close()
  })

  test('keyboard alone: the palette opens Space settings, a locale is added and its toast read out', async () => {
    const { context, page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('heading', { name: 'Stories', level: 1 }).waitFor()
    await page.keyboard.press('Control+k')
    await page.getByRole('dialog', { name: 'Go to, find, do' }).waitFor()
    await page.keyboard.type('locales')
    // Enter runs the highlighted entry: wait until it is Space settings (the entries a role may use come with its role).
    await page.getByRole('option', { name: /^Space settings/, selected: true }).waitFor()
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Space settings', level: 1 }).waitFor()
    await until(() => page.evaluate(() => document.activeElement?.tagName + ':' + document.activeElement?.textContent), 'H1:Space settings')
    /** Tab on until the focused control has this accessible label (at most 40 stops). */
    const tabTo = async (label: string) => {
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press('Tab')
        const here = await page.evaluate(() => {
          const el = document.activeElement as HTMLElement | null
          if (!el) return ''
          const id = el.id
          const byFor = id ? document.querySelector(`label[for="${CSS.escape(id)}"]`)?.textContent : null
          return (el.getAttribute('aria-label') ?? byFor ?? el.textContent ?? '').trim()
        })
        if (here === label) return
      }
      throw new Error(`Tab never reached ${label}`)
    }
    await tabTo('New locale')
    await page.keyboard.type('it')
    await tabTo('Add locale')
    await page.keyboard.press('Enter')
    await page.getByRole('status').filter({ hasText: 'Locale it added.' }).waitFor()
    await page.locator('tr[data-locale="it"]').waitFor()
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

  test('the whole app in German shows no English text from the catalogs, on every screen and in its dialogs', async () => {
    // A user whose profile says German, in a browser that prefers English: the profile wins.
    const user = await h.t.register({ name: 'Greta Deutsch' })
    await h.call('PATCH', '/v1/auth/me', user.token, { ui_language: 'de' })
    const mine = (await h.t.createSpace(user.token, { name: 'Greta Site' })).slug
    await h.call('POST', `/v1/spaces/${mine}/components`, user.token, { name: 'page', schema: { title: { type: 'text' }, body: { type: 'blocks' } }, is_root: true })
    await h.call('POST', `/v1/spaces/${mine}/components`, user.token, { name: 'teaser', schema: { headline: { type: 'text' } }, is_root: false, is_nestable: true })
    const story = await h.call('POST', `/v1/spaces/${mine}/stories`, user.token, {
      name: 'Startseite',
      slug: 'start',
      content: { type: 'doc', blocks: [{ component: 'page', _uid: 'p1', title: 'Hallo', body: [{ component: 'teaser', _uid: 't1', headline: 'Neu' }] }] },
    })
    expect(story.status).toBe(201)
    await h.call('PUT', `/v1/spaces/${mine}/stories/${story.body.data.uuid}`, user.token, {
      content: { type: 'doc', blocks: [{ component: 'page', _uid: 'p1', title: 'Hallo Welt', body: [{ component: 'teaser', _uid: 't1', headline: 'Neu' }] }] },
    })
    await h.call('POST', `/v1/spaces/${mine}/stories`, user.token, { name: 'Ordner', slug: 'ordner', is_folder: true })
    const kontakt = await h.call('POST', `/v1/spaces/${mine}/forms`, user.token, {
      slug: 'kontakt',
      label: 'Kontakt',
      fields: [
        { key: 'name', type: 'text', label: 'Ihr Name', required: true },
        { key: 'thema', type: 'select', label: 'Thema', options: ['Führung', 'Presse'] },
        { key: 'zustimmung', type: 'consent', label: 'Ich bin einverstanden', required: true },
      ],
    })
    expect(kontakt.status).toBe(201)
    // Site data: a push datasource (its page shows the push panel) and a segment (the editor shows its variants panel).
    expect((await h.call('POST', `/v1/spaces/${mine}/datasources`, user.token, { key: 'preise', label: 'Preise', type: 'webhook_push', config: {} })).status).toBe(201)
    expect((await h.call('POST', `/v1/spaces/${mine}/audience-segments`, user.token, { key: 'leser', label: 'Leser', priority: 1, rules: [{ type: 'language', operator: 'eq', value: 'de' }] })).status).toBe(201)
    expect((await h.call('POST', `/v1/spaces/${mine}/dom-overlays`, user.token, { name: 'Werbung aus', path_pattern: '/**', selector: '.werbung', action: 'hide' })).status).toBe(201)
    const { context, page, errors } = await h.signedIn(user.token)
    const found: Record<string, string[]> = {}
    const check = async (where: string) => {
      const english = englishIn(await pageTexts(page))
      if (english.length) found[where] = english
    }
    await page.goto('/admin')
    // The profile is read, the page reloads in German.
    await page.getByRole('button', { name: 'Befehle' }).waitFor()
    await page.getByRole('heading', { name: 'Spaces', level: 1 }).waitFor()
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('de')
    await check('spaces')
    const screens: [string, string][] = [
      [`/admin/spaces/${mine}`, 'Storys'],
      [`/admin/spaces/${mine}/stories/${story.body.data.uuid}`, 'Startseite'],
      [`/admin/spaces/${mine}/components`, 'Komponenten'],
      [`/admin/spaces/${mine}/assets`, 'Dateien'],
      [`/admin/spaces/${mine}/members`, 'Mitglieder'],
      [`/admin/spaces/${mine}/tokens`, 'Space-Tokens'],
      [`/admin/spaces/${mine}/settings`, 'Space-Einstellungen'],
      ['/admin/account', 'Konto'],
      [`/admin/spaces/${mine}/webhooks`, 'Webhooks'],
      [`/admin/spaces/${mine}/plugins`, 'Plugins'],
      [`/admin/spaces/${mine}/ai`, 'KI'],
      [`/admin/spaces/${mine}/billing`, 'Abrechnung'],
      [`/admin/spaces/${mine}/forms`, 'Formulare'],
      [`/admin/spaces/${mine}/forms/new`, 'Neues Formular'],
      [`/admin/spaces/${mine}/forms/${kontakt.body.data.uuid}`, 'Kontakt'],
      [`/admin/spaces/${mine}/forms/${kontakt.body.data.uuid}?tab=embed`, 'Kontakt'],
      [`/admin/spaces/${mine}/forms/${kontakt.body.data.uuid}?tab=submissions`, 'Kontakt'],
      [`/admin/spaces/${mine}/subscribers`, 'Abonnenten'],
      [`/admin/spaces/${mine}/datasources`, 'Datenquellen'],
      [`/admin/spaces/${mine}/datasources/preise`, 'Preise'],
      [`/admin/spaces/${mine}/segments`, 'Zielgruppen-Segmente'],
      [`/admin/spaces/${mine}/events`, 'Veranstaltungen'],
      [`/admin/spaces/${mine}/galleries`, 'Galerien'],
      [`/admin/spaces/${mine}/shop`, 'Shop'],
      [`/admin/spaces/${mine}/analytics`, 'Statistik'],
      [`/admin/spaces/${mine}/overlays`, 'DOM-Overlays'],
    ]
    for (const [path, heading] of screens) {
      await page.goto(path)
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
      await until(() => page.getByTestId('skeleton').count(), 0)
      await check(path)
      // The service's default plan is named `unlimited` (an identifier from the configuration, shown as data).
      if (path.endsWith('/billing') && found[path]) found[path] = found[path].filter((f) => f !== 'billing.unlimited: unlimited')
      if (found[path]?.length === 0) delete found[path]
    }
    // The editor's panels and dialogs: versions open, the publish confirmation, the palette, the shortcuts.
    await page.goto(`/admin/spaces/${mine}/stories/${story.body.data.uuid}`)
    await page.getByRole('heading', { name: 'Startseite', level: 1 }).waitFor()
    await page.getByText('Fassungen', { exact: true }).click()
    await page.getByRole('button', { name: 'Unterschiede zeigen' }).click()
    await page.getByText(/Von Fassung \d+ zu Fassung \d+/).waitFor()
    await check('editor: versions and diff')
    await page.getByRole('button', { name: 'Veröffentlichen' }).click()
    await page.getByRole('dialog').waitFor()
    await check('editor: publish dialog')
    await page.keyboard.press('Escape')
    await page.keyboard.press('Control+k')
    await page.getByRole('dialog', { name: 'Gehe zu, finde, tu' }).waitFor()
    await check('palette')
    await page.keyboard.press('Escape')
    await page.getByRole('heading', { name: 'Startseite', level: 1 }).click()
    await page.keyboard.press('?')
    await page.getByRole('dialog', { name: 'Tastenkürzel' }).waitFor()
    await check('shortcuts')
    await page.keyboard.press('Escape')
    // The tree's dialogs and the component form.
    await page.goto(`/admin/spaces/${mine}`)
    await page.getByRole('heading', { name: 'Storys', level: 1 }).waitFor()
    await page.getByRole('button', { name: 'Neue Story' }).click()
    await page.getByRole('dialog', { name: 'Neue Story' }).waitFor()
    await check('tree: new Story')
    await page.keyboard.press('Escape')
    await page.goto(`/admin/spaces/${mine}/components`)
    await page.getByRole('button', { name: 'Neue Komponente' }).click()
    await page.getByRole('form', { name: 'Neue Komponente' }).waitFor()
    await check('components: form')
    // Site data: the new-datasource form (its cron's next runs in words) and the segment's rule builder.
    await page.goto(`/admin/spaces/${mine}/datasources`)
    await page.getByRole('button', { name: 'Neue Datenquelle' }).click()
    await page.getByRole('dialog', { name: 'Neue Datenquelle' }).getByTestId('cron-runs').getByRole('listitem').first().waitFor()
    await check('datasources: new')
    await page.keyboard.press('Escape')
    await page.goto(`/admin/spaces/${mine}/segments`)
    await page.getByRole('button', { name: 'Leser bearbeiten' }).click()
    await page.getByRole('dialog', { name: 'Leser bearbeiten' }).getByTestId('rules').waitFor()
    await check('segments: rule builder')
    await page.keyboard.press('Escape')
    expect(found).toEqual({})
    expect(await axeViolations(page)).toEqual([])
    expect(errors).toEqual([])
    await context.close()
  })

  test('at 390×844 nothing is wider than the screen: the tree, the editor and settings', async () => {
    // A Story with what made the editor too wide: an asset field (Choose…), blocks (Remove), nested blocks.
    await h.call('POST', `/v1/spaces/${space}/components`, owner.token, { name: 'item', schema: { label: { type: 'text' } }, is_root: false, is_nestable: true })
    await h.call('POST', `/v1/spaces/${space}/components`, owner.token, {
      name: 'hero',
      schema: { image: { type: 'asset' }, items: { type: 'blocks' }, headline: { type: 'text' } },
      is_root: true,
      is_nestable: true,
    })
    const wide = await h.call('POST', `/v1/spaces/${space}/stories`, owner.token, {
      name: 'Small Screen',
      slug: 'small-screen',
      content: { type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline: 'A rather long headline for a narrow phone screen', items: [{ component: 'item', _uid: 'i1', label: 'One' }] }] },
    })
    expect(wide.status).toBe(201)
    const { context, page, errors } = await h.signedIn(owner.token)
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto(`/admin/spaces/${space}/stories/${wide.body.data.uuid}`)
    await page.getByRole('heading', { name: 'Small Screen', level: 1 }).waitFor()
    const buttons = page.getByRole('button', { name: /^(Archive|Remove .+|Choose an asset for .+|Publish|Save)$/ })
    await until(async () => (await buttons.count()) >= 6, true)
    for (const button of await buttons.all()) {
      const name = await button.getAttribute('aria-label') ?? await button.textContent()
      const box = await button.boundingBox()
      expect({ name, inside: !!box && box.x >= 0 && box.x + box.width <= 390 }).toEqual({ name, inside: true })
    }
    for (const [path, heading] of [
      [`/admin/spaces/${space}`, 'Stories'],
      [`/admin/spaces/${space}/stories/${wide.body.data.uuid}`, 'Small Screen'],
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
