/**
 * What editors live in, in Chromium against a listening service: blueprint fields shown by their label and help
 * (not their key); "Allowed components" picked from the Space's blueprints; a blueprint's delete that says first how
 * many Stories use it; a publish scheduled in the editor, marked in the tree, run at its minute and cancellable;
 * bulk archive with a confirmation; a single Story deleted from its editor after a confirmation (none for a viewer); the version history of the locale on screen with its authors' names.
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type AdminHarness, axeViolations, hasChromium, memberNamed, startAdmin, until, warnNoChromium } from './helpers'

setDefaultTimeout(120_000)
warnNoChromium('the admin app’s editing tests')

let h: AdminHarness
let owner: { token: string; tenant: { id: number } }
let editor: { token: string; id: number }
let space = ''

const story = async (name: string, content?: unknown) => {
  const r = await h.call('POST', `/v1/spaces/${space}/stories`, editor.token, { name, slug: name.toLowerCase().replaceAll(' ', '-'), ...(content ? { content } : {}) })
  expect(r.status).toBe(201)
  return r.body.data as { uuid: string }
}

describe.skipIf(!hasChromium)('editing in Chromium', () => {
  beforeAll(async () => {
    h = await startAdmin()
    owner = await h.t.register({ name: 'Olga Owner' })
    space = (await h.t.createSpace(owner.token, { name: 'Editing', default_lang: 'en', locales: ['en', 'de'] })).slug
    editor = await memberNamed(h.t, owner.tenant.id, space, 'editor', 'Edda Editor')
    for (const body of [
      { name: 'card', display_name: 'Card', is_root: false, schema: { title: { type: 'text' } } },
      {
        name: 'page',
        display_name: 'Page',
        schema: {
          headline: { type: 'text', label: { en: 'Page headline', de: 'Seitentitel' }, help: { en: 'Shown large on top.', de: 'Steht groß oben.' } },
          cards: { type: 'blocks', component_whitelist: ['card'] },
        },
      },
    ]) {
      const r = await h.call('POST', `/v1/spaces/${space}/components`, editor.token, body)
      expect(r.status).toBe(201)
    }
  }, 240_000)

  afterAll(async () => {
    await h?.close()
  })

  test('the Story form shows a field’s label and help, not its key', async () => {
    const s = await story('Labelled', { type: 'doc', blocks: [{ component: 'page', _uid: 'p1', headline: 'Hi' }] })
    const { page, errors } = await h.signedIn(editor.token)
    const status = page.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/ai/status'))
    await page.goto(`/admin/spaces/${space}/stories/${s.uuid}`)
    const input = page.getByLabel('Page headline')
    await input.waitFor()
    expect(await input.inputValue()).toBe('Hi')
    // AI is off on this server: once the editor knows it, no field offers AI actions and no AI panel shows.
    expect(((await (await status).json()) as { data: { enabled: boolean } }).data.enabled).toBe(false)
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))))
    expect(await page.getByRole('button', { name: /^AI actions/ }).count()).toBe(0)
    expect(await page.getByRole('region', { name: 'SEO suggestions' }).count()).toBe(0)
    await page.getByTestId('field-help').filter({ hasText: 'Shown large on top.' }).waitFor()
    // The help text describes the input.
    const described = await input.getAttribute('aria-describedby')
    expect(described).toBeTruthy()
    expect(await page.locator(`[id="${described!.split(' ')[0]}"]`).textContent()).toContain('Shown large on top.')
    expect(await page.locator('label', { hasText: /^headline/ }).count()).toBe(0)
    expect(errors).toEqual([])
  })

  test('Allowed components are picked from the Space’s blueprints, and the blueprint is saved with them', async () => {
    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}/components`)
    await page.getByRole('button', { name: 'New component' }).click()
    const form = page.getByRole('form', { name: 'New component' })
    await form.getByLabel('Name', { exact: true }).fill('deck')
    await form.getByRole('button', { name: 'Add field' }).click()
    await form.getByLabel('Field name').fill('items')
    await form.getByLabel('Type').selectOption('blocks')
    const picker = form.getByTestId('component-picker')
    await picker.getByRole('checkbox', { name: /Card/ }).check()
    await form.getByLabel('Label (de)').fill('Karten')
    await form.getByRole('button', { name: 'Create component' }).click()
    await page.getByRole('list', { name: 'Components' }).locator('code', { hasText: /^deck$/ }).waitFor()
    const saved = (await h.call('GET', `/v1/spaces/${space}/components/deck`, editor.token)).body.data
    expect(saved.schema.items).toEqual({ type: 'blocks', component_whitelist: ['card'], label: { de: 'Karten' } })
    expect(errors).toEqual([])
  })

  test('deleting a blueprint says first how many Stories use it; an unused one is deleted', async () => {
    await story('Uses card', { type: 'doc', blocks: [{ component: 'page', _uid: 'p', cards: [{ component: 'card', _uid: 'c', title: 'x' }] }] })
    const { page } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}/components`)
    await page.getByRole('button', { name: 'Delete the component “Card”?' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete the component “card”?' })
    await dialog.getByText('Used by 1 Stories: it cannot be deleted until no Story uses it.').waitFor()
    await dialog.getByText('Allowed in: deck, page.').waitFor()
    expect(await dialog.getByRole('button', { name: 'Delete' }).isDisabled()).toBe(true)
    expect(await axeViolations(page)).toEqual([])
    await dialog.getByRole('button', { name: 'Cancel' }).click()

    await h.call('POST', `/v1/spaces/${space}/components`, editor.token, { name: 'spare', schema: {} })
    await page.reload()
    await page.getByRole('button', { name: 'Delete the component “spare”?' }).click()
    const spare = page.getByRole('dialog', { name: 'Delete the component “spare”?' })
    await spare.getByText('No Story uses it.').waitFor()
    await spare.getByRole('button', { name: 'Delete' }).click()
    await until(async () => (await h.call('GET', `/v1/spaces/${space}/components/spare`, editor.token)).status, 404)
  })

  test('a publish scheduled in the editor shows in the tree, runs at its minute, and a plan can be cancelled', async () => {
    const s = await story('Planned')
    const other = await story('Planned too')
    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}/stories/${s.uuid}`)
    const panel = page.getByTestId('schedule-panel')
    await panel.getByText('Nothing scheduled.').waitFor()
    // The browser's clock and the service's are the same wall clock: one hour ahead, at a whole minute.
    const at = new Date(Math.ceil((h.t.clock.ms() + 3_600_000) / 60_000) * 60_000)
    const pad = (n: number) => String(n).padStart(2, '0')
    const local = `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`
    await panel.getByLabel('When').fill(local)
    await panel.getByRole('button', { name: 'Schedule' }).click()
    await panel.locator('[data-plan="publish"]').getByText('scheduled by Edda Editor').waitFor()
    const plans = (await h.call('GET', `/v1/spaces/${space}/stories/${s.uuid}/schedules`, editor.token)).body.data
    expect(plans.map((p: { action: string; at: string }) => [p.action, p.at])).toEqual([['publish', at.toISOString()]])
    expect(await axeViolations(page)).toEqual([])

    await h.call('PUT', `/v1/spaces/${space}/stories/${other.uuid}/schedules/unpublish`, editor.token, { at: at.toISOString() })
    await page.goto(`/admin/spaces/${space}`)
    const tree = page.getByRole('list', { name: 'Story tree' })
    await tree.locator(`[data-tree-uuid="${s.uuid}"]`).getByTestId('schedule-mark').waitFor()
    await tree.locator(`[data-tree-uuid="${other.uuid}"]`).getByTestId('schedule-mark').waitFor()

    // Cancel the other Story's plan in its editor.
    await page.goto(`/admin/spaces/${space}/stories/${other.uuid}`)
    await page.getByRole('button', { name: 'Cancel schedule: unpublish' }).click()
    await page.getByTestId('schedule-panel').getByText('Nothing scheduled.').waitFor()

    // The minute comes: the job publishes; the editor's status follows on reload.
    h.t.clock.set(at.getTime())
    await h.t.kernel.jobs.runDueJobs()
    expect((await h.call('GET', `/v1/spaces/${space}/stories/${s.uuid}`, editor.token)).body.data.status).toBe('published')
    expect((await h.call('GET', `/v1/spaces/${space}/stories/${other.uuid}/schedules`, editor.token)).body.data).toEqual([])
    await page.goto(`/admin/spaces/${space}/stories/${s.uuid}`)
    await page.getByText('Published', { exact: true }).first().waitFor()
    expect(errors).toEqual([])
  })

  test('bulk archive asks first, then archives the selected Stories', async () => {
    const a = await story('Old one')
    const b = await story('Old two')
    const { page } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('checkbox', { name: 'Select Old one' }).check()
    await page.getByRole('checkbox', { name: 'Select Old two' }).check()
    const bar = page.getByRole('toolbar', { name: 'Selected Stories' })
    await bar.getByRole('button', { name: 'Archive', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Archive 2 Stories?' })
    await dialog.getByText('Archived Stories leave the public site at once; afterwards they can only be deleted.').waitFor()
    await dialog.getByRole('button', { name: 'Archive' }).click()
    await page.getByText('2 done, 0 failed.').waitFor()
    for (const s of [a, b]) expect((await h.call('GET', `/v1/spaces/${space}/stories/${s.uuid}`, editor.token)).body.data.status).toBe('archived')
  })

  test('a Story is deleted from its editor after a confirmation; a viewer has no Delete', async () => {
    const gone = await story('Short lived')
    const viewer = await memberNamed(h.t, owner.tenant.id, space, 'viewer', 'Vera Viewer')
    const seen = await h.signedIn(viewer.token)
    await seen.page.goto(`/admin/spaces/${space}/stories/${gone.uuid}`)
    await seen.page.getByRole('heading', { name: 'Short lived', level: 1 }).waitFor()
    await seen.page.getByTestId('read-only').waitFor()
    expect(await seen.page.getByRole('button', { name: 'Delete', exact: true }).count()).toBe(0)
    await seen.context.close()

    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}/stories/${gone.uuid}`)
    await page.getByRole('heading', { name: 'Short lived', level: 1 }).waitFor()
    await page.getByRole('button', { name: 'Delete', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete “Short lived”?' })
    await dialog.waitFor()
    // Cancel keeps it.
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await until(() => dialog.count(), 0)
    expect((await h.call('GET', `/v1/spaces/${space}/stories/${gone.uuid}`, editor.token)).status).toBe(200)
    await page.getByRole('button', { name: 'Delete', exact: true }).click()
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByTestId('toast').filter({ hasText: '“Short lived” was deleted.' }).waitFor()
    await page.getByRole('heading', { name: 'Stories', level: 1 }).waitFor()
    expect(new URL(page.url()).pathname).toBe(`/admin/spaces/${space}`)
    expect((await h.call('GET', `/v1/spaces/${space}/stories/${gone.uuid}`, editor.token)).status).toBe(404)
    expect(errors).toEqual([])
  })

  test('versions list the locale on screen with their authors’ names; a restore reloads the editor', async () => {
    const s = await story('History')
    await h.call('PUT', `/v1/spaces/${space}/stories/${s.uuid}`, editor.token, { lang: 'de', name: 'Geschichte', content: { type: 'doc', blocks: [] } })
    await h.call('PUT', `/v1/spaces/${space}/stories/${s.uuid}`, owner.token, { name: 'History 2' })
    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}/stories/${s.uuid}`)
    await page.getByText('Versions', { exact: true }).click()
    await page.getByText('Versions in en').waitFor()
    const list = page.getByRole('list', { name: 'Versions' })
    await list.locator('[data-version="3"]').getByText('Olga Owner').waitFor()
    await list.locator('[data-version="1"]').getByText('Edda Editor').waitFor()
    expect(await list.locator('[data-version="2"]').count()).toBe(0)
    await list.getByRole('button', { name: 'Restore version 1' }).click()
    await page.getByRole('dialog', { name: 'Restore version 1?' }).getByRole('button', { name: 'Restore' }).click()
    await page.getByText('Version 1 restored as version 4.').waitFor()
    await page.getByText(/version 4/).first().waitFor()
    const latest = (await h.call('GET', `/v1/spaces/${space}/stories/${s.uuid}`, editor.token)).body.data
    expect(latest).toMatchObject({ version_no: 4, name: 'History' })
    const de = (await h.call('GET', `/v1/spaces/${space}/stories/${s.uuid}?lang=de`, editor.token)).body.data
    expect(de.name).toBe('Geschichte')
    expect(errors).toEqual([])
  })
})
