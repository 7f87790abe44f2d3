/**
 * The operations screens in Chromium against a listening service: Webhooks and Plugins (the resource screen generated
 * from the routes' `x-admin`), AI jobs and Billing. A webhook created in the browser (its 422s as sentences, its secret
 * shown once) pings a failing receiver (a real HTTP server on 127.0.0.1): the failure shows in the delivery log, and a
 * redelivery once the receiver works is delivered. An AI translation (a fake OpenAI-compatible provider) is reviewed
 * against the Story and approved: it becomes a version of the target locale. A viewer finds no write control on these
 * screens; axe-core finds no serious or critical violation on them in either theme.
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { ADMIN_MANIFEST } from '../../admin/src/api/admin-manifest'
import { type FakeAi, startFakeAi } from '../helpers/fake-ai'
import { type Receiver, startReceiver } from '../helpers/receiver'
import { type AdminHarness, axeViolations, hasChromium, memberNamed, startAdmin, until, warnNoChromium } from './helpers'

setDefaultTimeout(120_000)
warnNoChromium('the admin app’s operations tests')

let h: AdminHarness
let receiver: Receiver
let fake: FakeAi
let owner: { token: string; user: { id: number }; tenant: { id: number } }
let editor: { token: string }
let viewer: { token: string }
let space = ''
let story = ''

/** The translation answer: every text prefixed "DE:" (the service sends the texts as JSON between <data> tags). */
function translator() {
  fake.respond((call) => {
    const messages = call.body.messages as { content: string | { type: string; text?: string }[] }[]
    const system = String(messages[0]!.content)
    if (!system.startsWith('You translate')) return { kind: 'json', text: 'plain answer' }
    const c = messages[1]!.content
    const text = typeof c === 'string' ? c : (c.find((p) => p.type === 'text')?.text ?? '')
    const data = JSON.parse(/<data>\n([\s\S]*?)\n<\/data>/.exec(text)![1]!) as Record<string, string>
    return { kind: 'json', text: JSON.stringify(Object.fromEntries(Object.entries(data).map(([k, v]) => [k, `DE:${v}`]))) }
  })
}

describe.skipIf(!hasChromium)('operations screens in Chromium', () => {
  beforeAll(async () => {
    receiver = startReceiver(() => new Response('receiver down', { status: 500 }))
    fake = startFakeAi()
    translator()
    h = await startAdmin({
      config: { outboundAllowPrivate: true },
      env: {
        AI_BASE_URL: fake.url,
        AI_API_KEY: 'sk-test',
        AI_MODEL: 'fake-chat',
        AI_MONTHLY_TOKENS: '100000',
        BILLING_SELF_SERVE: 'true',
        // A plan whose monthly requests are used up at once: every write past it is 402 plan_limit.
        PLANS: JSON.stringify({ spent: { spaces: null, stories_per_space: null, asset_bytes: null, members_per_space: null, requests_per_month: 1 } }),
      },
    })
    owner = await h.t.register({ name: 'Olga Owner' })
    space = (await h.t.createSpace(owner.token, { name: 'Ops Site' })).slug
    editor = await memberNamed(h.t, owner.tenant.id, space, 'editor', 'Eda Editor')
    viewer = await memberNamed(h.t, owner.tenant.id, space, 'viewer', 'Vic Viewer')
    expect((await h.call('POST', `/v1/spaces/${space}/locales`, owner.token, { code: 'de' })).status).toBe(201)
    const page = await h.call('POST', `/v1/spaces/${space}/components`, owner.token, { name: 'page', is_root: true, schema: { title: { type: 'text' } } })
    expect(page.status).toBe(201)
    const s = await h.call('POST', `/v1/spaces/${space}/stories`, editor.token, {
      name: 'Harbour guide',
      slug: 'harbour',
      content: { type: 'doc', blocks: [{ component: 'page', _uid: 'p1', title: 'Hello harbour' }] },
    })
    expect(s.status).toBe(201)
    story = s.body.data.uuid
  }, 240_000)

  afterAll(async () => {
    await h?.close()
    await receiver?.stop()
    await fake?.stop()
  })

  test('a webhook made in the browser pings a failing receiver; the log shows it; a redelivery after the fix is delivered', async () => {
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('link', { name: 'Webhooks' }).click()
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor()
    await page.getByText('No webhook yet').waitFor()

    // The form is the body's JSON Schema; a refusal reads as a sentence at its field.
    await page.getByRole('button', { name: 'New webhook' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByLabel('Label').fill('Site rebuild')
    await dialog.getByRole('checkbox', { name: 'story.published' }).check()
    await dialog.getByRole('button', { name: 'New webhook' }).click()
    await dialog.getByText('URL is required.').waitFor()
    expect(await dialog.getByText('Some fields need a change').count()).toBe(1)
    await dialog.getByLabel('URL').fill(receiver.url)
    await dialog.getByRole('button', { name: 'New webhook' }).click()

    // The secret, this once.
    const secret = await page.getByTestId('secret-once').inputValue()
    const [hook] = (await h.call('GET', `/v1/spaces/${space}/webhooks`, owner.token)).body.data
    expect(hook).toMatchObject({ label: 'Site rebuild', url: receiver.url, events: ['story.published'], active: true })
    expect(secret.length).toBeGreaterThan(20)
    expect(JSON.stringify(hook)).not.toContain(secret)
    await page.getByRole('button', { name: 'I have copied it' }).click()
    await page.locator('[data-row="Site rebuild"]').waitFor()

    // Ping: the receiver answers 500.
    await page.getByRole('button', { name: 'Ping: Site rebuild' }).click()
    await page.getByRole('status').filter({ hasText: 'Ping “Site rebuild”: done.' }).waitFor()
    await h.t.kernel.jobs.runDueJobs()
    await receiver.waitFor(1)
    expect(receiver.requests[0]!.headers['x-service-event']).toBe('ping')

    await page.getByRole('button', { name: 'Deliveries: Site rebuild' }).click()
    const log = page.locator('[data-log="Site rebuild"]')
    const failed = log.locator('[data-entry="failed"]')
    await failed.first().waitFor()
    expect(await failed.first().textContent()).toContain('500')
    expect(await failed.first().textContent()).toContain('receiver down')
    expect(await log.locator('[data-entry="delivered"]').count()).toBe(0)
    expect(await axeViolations(page)).toEqual([])

    // The receiver is fixed; the failed delivery is sent again and arrives.
    receiver.respond(() => new Response('thanks'))
    await failed.first().getByRole('button', { name: 'Redeliver' }).click()
    await page.getByRole('status').filter({ hasText: 'Redeliver: done.' }).waitFor()
    await h.t.kernel.jobs.runDueJobs()
    await receiver.waitFor(2)
    expect(receiver.requests[1]!.headers['x-service-event']).toBe('ping')
    await log.getByRole('button', { name: 'Refresh' }).click()
    await log.locator('[data-entry="delivered"]').first().waitFor()
    expect(await log.locator('[data-entry="delivered"]').first().textContent()).toContain('thanks')
    expect(errors).toEqual([])
  })

  test('plugins: listed in call order, moved by keyboard, switched off and on', async () => {
    for (const name of ['First check', 'Second check'])
      expect((await h.call('POST', `/v1/spaces/${space}/plugins`, owner.token, { name, url: receiver.url, hooks: [plugHook()] })).status).toBe(201)
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}/plugins`)
    await page.getByRole('heading', { name: 'Plugins', level: 1 }).waitFor()
    const names = () => page.locator('tr[data-row]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-row')).join(','))
    await until(names, 'First check,Second check')
    // Up by keyboard: focus the button, press Enter.
    await page.getByRole('button', { name: 'Move Second check up (runs earlier)' }).focus()
    await page.keyboard.press('Enter')
    await until(names, 'Second check,First check')
    const order = (await h.call('GET', `/v1/spaces/${space}/plugins`, owner.token)).body.data.map((p: { name: string }) => p.name)
    expect(order).toEqual(['Second check', 'First check'])
    await page.getByRole('button', { name: 'Deactivate: First check' }).click()
    await page.getByRole('button', { name: 'Activate: First check', exact: true }).waitFor()
    const first = (await h.call('GET', `/v1/spaces/${space}/plugins`, owner.token)).body.data.find((p: { name: string }) => p.name === 'First check')
    expect(first.active).toBe(false)
    expect(errors).toEqual([])
  })

  test('an AI translation is reviewed against the Story and approved: it becomes a version of the target locale', async () => {
    const queued = await h.call('POST', `/v1/spaces/${space}/ai/translate`, editor.token, { story_uuid: story, target_lang: 'de' })
    expect(queued.status).toBe(202)
    await h.t.kernel.jobs.runDueJobs()
    const before = (await h.call('GET', `/v1/spaces/${space}/stories/${story}/versions`, editor.token)).body.data.length

    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByRole('link', { name: 'AI', exact: true }).click()
    await page.getByRole('heading', { name: 'AI', level: 1 }).waitFor()
    // The status: on, the model, this month's use against the budget.
    const status = page.getByTestId('ai-status')
    await status.getByText('fake-chat').waitFor()
    expect(await status.textContent()).toContain('of 100,000 tokens')
    const row = page.locator(`[data-job="${queued.body.data.uuid}"]`)
    await row.waitFor()
    expect(await row.textContent()).toContain('awaiting review')
    await row.getByRole('button', { name: 'Review' }).click()
    const review = page.getByTestId('ai-review')
    // No German version yet: everything the job proposes is new.
    await review.getByText('DE:Hello harbour').waitFor()
    expect(await review.textContent()).toContain('has no de version yet')
    expect(await review.textContent()).toContain('DE:Harbour guide')
    expect(await axeViolations(page)).toEqual([])
    await review.getByRole('button', { name: 'Approve' }).click()
    await page.getByRole('status').filter({ hasText: 'Approved: the result was saved.' }).waitFor()

    const job = (await h.call('GET', `/v1/spaces/${space}/ai-jobs/${queued.body.data.uuid}`, editor.token)).body.data
    expect(job.status).toBe('approved')
    const versions = (await h.call('GET', `/v1/spaces/${space}/stories/${story}/versions`, editor.token)).body.data
    expect(versions.length).toBe(before + 1)
    const de = (await h.call('GET', `/v1/spaces/${space}/stories/${story}?lang=de`, editor.token)).body.data
    expect(de.content.blocks[0].title).toBe('DE:Hello harbour')

    // A second decision on the same job: the API's conflict answer, as a sentence.
    const again = await h.call('POST', `/v1/spaces/${space}/ai/translate`, editor.token, { story_uuid: story, target_lang: 'de' })
    await h.t.kernel.jobs.runDueJobs()
    await page.getByRole('button', { name: 'Refresh' }).click()
    await page.locator(`[data-job="${again.body.data.uuid}"]`).getByRole('button', { name: 'Review' }).click()
    await page.getByTestId('ai-review').getByRole('button', { name: 'Reject' }).waitFor()
    expect((await h.call('POST', `/v1/spaces/${space}/ai-jobs/${again.body.data.uuid}/reject`, owner.token)).status).toBe(200)
    await page.getByTestId('ai-review').getByRole('button', { name: 'Approve' }).click()
    await page.getByText('This job is no longer awaiting review').waitFor()
    expect(errors).toEqual([])
  })

  test('a viewer finds no write control on the operations screens', async () => {
    // A job awaiting review: the one decision a viewer must not be offered.
    expect((await h.call('POST', `/v1/spaces/${space}/ai/translate`, editor.token, { story_uuid: story, target_lang: 'de' })).status).toBe(202)
    await h.t.kernel.jobs.runDueJobs()
    const { page, errors } = await h.signedIn(viewer.token)
    await page.goto(`/admin/spaces/${space}`)
    await page.getByTestId('role').waitFor()
    // Sections by role: the viewer may read AI jobs, nothing else here.
    await page.getByRole('link', { name: 'AI', exact: true }).waitFor()
    for (const name of ['Webhooks', 'Plugins', 'Billing']) expect(await page.getByRole('link', { name, exact: true }).count()).toBe(0)
    await page.getByRole('link', { name: 'AI', exact: true }).click()
    await page.locator('[data-job]').first().waitFor()
    await page.locator('[data-job]').first().getByRole('button', { name: 'Review' }).click()
    await page.getByTestId('ai-review').waitFor()
    const writes = /^(Approve|Reject|New webhook|New plugin|Ping|Redeliver|Rotate secret|Delete|Edit|Activate|Deactivate|Change plan)/
    expect(await page.getByRole('button', { name: writes }).count()).toBe(0)
    // Typed addresses: the API's 403 in words, and still no control.
    for (const screen of ['webhooks', 'plugins', 'billing']) {
      await page.goto(`/admin/spaces/${space}/${screen}`)
      await page.getByText('Your role does not allow this.').waitFor()
      expect(await page.getByRole('button', { name: writes }).count()).toBe(0)
    }
    expect(errors).toEqual([])
  })

  test('billing shows the plan and each usage against its limit; axe is clean on every operations screen in both themes', async () => {
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}/billing`)
    await page.getByRole('heading', { name: 'Billing', level: 1 }).waitFor()
    await page.getByTestId('plan').waitFor()
    expect(await page.getByTestId('plan').textContent()).toContain((await h.call('GET', `/v1/spaces/${space}/billing`, owner.token)).body.data.plan)
    const usage = (await h.call('GET', `/v1/spaces/${space}/billing`, owner.token)).body.data.usage
    expect(await page.locator('[data-limit="members_per_space"]').textContent()).toContain(`Members of this Space${usage.members_per_space}unlimited`)
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      for (const [screen, heading] of [
        ['webhooks', 'Webhooks'],
        ['plugins', 'Plugins'],
        ['ai', 'AI'],
        ['billing', 'Billing'],
      ] as const) {
        await page.goto(`/admin/spaces/${space}/${screen}`)
        await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
        await settled(page)
        expect({ screen, scheme, violations: await axeViolations(page) }).toEqual({ screen, scheme, violations: [] })
      }
    }
    expect(errors).toEqual([])
  })

  test('a 402 names the limit that was reached and links to Billing, where the plan is changed', async () => {
    expect((await h.call('PATCH', `/v1/spaces/${space}/billing`, owner.token, { plan: 'spent' })).status).toBe(200)
    const { page, errors } = await h.signedIn(owner.token)
    await page.goto(`/admin/spaces/${space}/webhooks`)
    await page.locator('[data-row="Site rebuild"]').waitFor()
    await page.getByRole('button', { name: 'Ping: Site rebuild' }).click()
    const refusal = page.locator('[data-error="plan_limit"]')
    await refusal.waitFor()
    expect(await refusal.textContent()).toContain('The plan’s limit is reached: API requests this month.')
    await refusal.getByRole('link', { name: 'See the plan and its limits' }).click()
    await page.getByRole('heading', { name: 'Billing', level: 1 }).waitFor()
    expect(await page.getByTestId('plan').textContent()).toContain('spent')
    await page.getByLabel('Plan', { exact: true }).selectOption('unlimited')
    await page.getByRole('button', { name: 'Change plan' }).click()
    await page.getByRole('status').filter({ hasText: 'The plan is now “unlimited”.' }).waitFor()
    expect((await h.call('GET', `/v1/spaces/${space}/billing`, owner.token)).body.data.plan).toBe('unlimited')
    expect(errors).toEqual([])
  })
})

/** A filter hook the plugins may name (the first of the body's enum, as the generated manifest carries it). */
const plugHook = () => ADMIN_MANIFEST.plugins.create.fields.find((f) => f.name === 'hooks')!.options![0]!

/** Waits until no skeleton ("Loading…") is on screen. */
async function settled(page: Page) {
  await until(() => page.getByText('Loading…').count(), 0)
}
