/**
 * AI inside the Story editor's fields, in Chromium against a listening service and a fake OpenAI-compatible provider
 * (real HTTP, test/helpers/fake-ai.ts): "Shorten" streams the model's answer into a text field token by token, the
 * editor shows it as an unsaved change, and Save makes a version holding it; a rich-text field gets the answer as
 * paragraphs; Stop cancels the provider's request (the text so far stays) and Undo puts the field back. The asset
 * dialog's alt-text suggestion fills the input unsaved (an AI job awaiting review), and saving it approves the job.
 * SEO title and description and an internal link are inserted into the page as unsaved edits, and Save makes a version.
 * A viewer finds no AI control; axe-core finds no serious or critical violation with the actions open, in both themes.
 * (With AI off, the editor shows no AI control: test/admin/editing.test.ts.)
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type FakeAi, startFakeAi } from '../helpers/fake-ai'
import { jpegOf, photo } from '../helpers/images'
import { en as aiEn } from '../../admin/src/features/ai/messages'
import { type AdminHarness, axeViolations, hasChromium, memberNamed, startAdmin, until, warnNoChromium } from './helpers'

setDefaultTimeout(120_000)
warnNoChromium('the admin app’s AI field tests')

let h: AdminHarness
let fake: FakeAi
let owner: { token: string; user: { id: number }; tenant: { id: number } }
let editor: { token: string }
let viewer: { token: string }
let space = ''
let story = ''
const LONG = 'Welcome to the harbour guide, where we walk you through every pier, every boat and every café along the water.'

/** The user message of a recorded provider call. */
const userText = (i: number) => String((fake.calls[i]!.body.messages as { role: string; content: string }[]).find((m) => m.role === 'user')!.content)

describe.skipIf(!hasChromium)('AI inside fields in Chromium', () => {
  beforeAll(async () => {
    fake = startFakeAi()
    h = await startAdmin({ env: { AI_BASE_URL: fake.url, AI_API_KEY: 'sk-test', AI_MODEL: 'fake-chat', AI_VISION_MODEL: 'fake-vision', AI_MONTHLY_TOKENS: '100000' } })
    owner = await h.t.register({ name: 'Olga Owner' })
    space = (await h.t.createSpace(owner.token, { name: 'AI Fields' })).slug
    editor = await memberNamed(h.t, owner.tenant.id, space, 'editor', 'Eda Editor')
    viewer = await memberNamed(h.t, owner.tenant.id, space, 'viewer', 'Vic Viewer')
    expect((await h.call('POST', `/v1/spaces/${space}/locales`, owner.token, { code: 'de' })).status).toBe(201)
    const page = await h.call('POST', `/v1/spaces/${space}/components`, owner.token, {
      name: 'page',
      is_root: true,
      schema: { title: { type: 'text', max_length: 80 }, intro: { type: 'textarea' }, body: { type: 'richtext' }, meta_description: { type: 'textarea' } },
    })
    expect(page.status).toBe(201)
    const s = await h.call('POST', `/v1/spaces/${space}/stories`, editor.token, {
      name: 'Harbour guide',
      slug: 'harbour',
      content: {
        type: 'doc',
        blocks: [
          {
            component: 'page',
            _uid: 'p1',
            title: LONG.slice(0, 80),
            intro: LONG,
            body: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: LONG }] }] },
          },
        ],
      },
    })
    expect(s.status).toBe(201)
    story = s.body.data.uuid
  }, 240_000)

  afterAll(async () => {
    await h?.close()
    await fake?.stop()
  })

  test('"Shorten" streams into a text field as an unsaved edit; Save makes a version with it; rich text gets paragraphs', async () => {
    // Three pieces, far apart: the field shows the first before the last has been sent.
    fake.respond((call) => (call.body?.stream ? { kind: 'stream', chunks: ['Harbour', ' guide:', ' piers and cafés.'], chunkDelayMs: 700 } : { kind: 'json', text: 'no' }))
    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}/stories/${story}`)
    const title = page.locator('[data-field-path="blocks/0/title"]')
    const input = title.getByRole('textbox', { name: 'title' })
    await input.waitFor()
    expect(await page.getByText('unsaved changes').count()).toBe(0)
    await title.getByRole('button', { name: 'AI actions for “title”' }).click()
    const calls = fake.calls.length
    await title.getByRole('button', { name: 'Shorten' }).click()
    // Streaming: a part of the answer is in the field before the whole.
    await page.waitForFunction(() => (document.querySelector('[data-field-path="blocks/0/title"] input[name="title"]') as HTMLInputElement | null)?.value === 'Harbour')
    await title.getByRole('button', { name: 'Stop' }).waitFor()
    await until(() => input.inputValue(), 'Harbour guide: piers and cafés.')
    await title.getByText('an unsaved change').waitFor()
    await page.getByText('unsaved changes').waitFor()
    // The provider got the field's text as data, and a streamed request.
    expect(fake.calls.length).toBe(calls + 1)
    expect(fake.calls[calls]!.body.stream).toBe(true)
    expect(userText(calls)).toContain('Shorten the text inside <data>')
    expect(userText(calls)).toContain(JSON.stringify({ text: LONG.slice(0, 80) }))
    // Nothing is saved until Save.
    expect((await h.call('GET', `/v1/spaces/${space}/stories/${story}`, editor.token)).body.data.version_no).toBe(1)

    // A rich-text field: the answer becomes paragraphs.
    fake.respond((call) => (call.body?.stream ? { kind: 'stream', chunks: ['Piers and boats.', '\n\nCafés', ' by the water.'] } : { kind: 'json', text: 'no' }))
    const body = page.locator('[data-field-path="blocks/0/body"]')
    await body.getByRole('button', { name: 'AI actions for “body”' }).click()
    await body.getByRole('button', { name: 'Shorten' }).click()
    await body.getByText('an unsaved change').waitFor()
    await until(() => body.locator('[data-richtext] p').count(), 2)
    expect(userText(fake.calls.length - 1)).toContain(JSON.stringify({ text: LONG }))

    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByText('Saved (version 2).').waitFor()
    const saved = (await h.call('GET', `/v1/spaces/${space}/stories/${story}`, editor.token)).body.data
    expect(saved.version_no).toBe(2)
    expect(saved.content.blocks[0].title).toBe('Harbour guide: piers and cafés.')
    expect(saved.content.blocks[0].intro).toBe(LONG)
    expect(saved.content.blocks[0].body).toEqual({
      type: 'doc',
      content: [
        { type: 'paragraph', content: [{ type: 'text', text: 'Piers and boats.' }] },
        { type: 'paragraph', content: [{ type: 'text', text: 'Cafés by the water.' }] },
      ],
    })
    const versions = (await h.call('GET', `/v1/spaces/${space}/stories/${story}/versions`, editor.token)).body.data
    expect(versions.length).toBe(2)
    expect(errors).toEqual([])
  })

  test('Stop cancels the provider’s request and keeps what was written; Undo puts the field back', async () => {
    fake.respond((call) => (call.body?.stream ? { kind: 'stream', chunks: Array.from({ length: 400 }, (_, i) => `w${i} `), chunkDelayMs: 50 } : { kind: 'json', text: 'no' }))
    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}/stories/${story}`)
    const intro = page.locator('[data-field-path="blocks/0/intro"]')
    const box = intro.getByRole('textbox', { name: 'intro' })
    await box.waitFor()
    const before = await box.inputValue()
    await intro.getByRole('button', { name: 'AI actions for “intro”' }).click()
    await intro.getByLabel('What to write').fill('A long list of words')
    const n = fake.calls.length
    await intro.getByRole('button', { name: 'Write', exact: true }).click()
    await page.waitForFunction(() => ((document.querySelector('[data-field-path="blocks/0/intro"] textarea') as HTMLTextAreaElement | null)?.value ?? '').startsWith('w0 w1'))
    await intro.getByRole('button', { name: 'Stop' }).click()
    await fake.waitFor(() => fake.calls[n]!.aborted)
    await intro.getByText('Stopped:').waitFor()
    const partial = await box.inputValue()
    expect(partial.startsWith('w0 w1')).toBe(true)
    expect(partial.includes('w399')).toBe(false)
    expect(userText(n)).toContain('The instruction: A long list of words')
    await page.getByText('unsaved changes').waitFor()
    await intro.getByRole('button', { name: 'Undo the AI change' }).click()
    expect(await box.inputValue()).toBe(before)
    expect(errors).toEqual([])
  })

  test('the asset dialog: "Suggest with AI" puts the vision model’s alt text in the input unsaved (an AI job in the review queue); Save writes it and approves the job', async () => {
    fake.respond((call) => (call.body?.model === 'fake-vision' ? { kind: 'json', text: '"A ferry at the pier at dusk."' } : { kind: 'json', text: 'no' }))
    const fd = new FormData()
    fd.append('file', new Blob([(await jpegOf(photo(320, 200))) as BlobPart], { type: 'image/jpeg' }), 'ferry.jpg')
    const up = await fetch(`${h.origin}/v1/spaces/${space}/assets`, { method: 'POST', headers: { Authorization: `Bearer ${editor.token}` }, body: fd })
    expect(up.status).toBe(201)
    const asset = ((await up.json()) as { data: { uuid: string } }).data.uuid

    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}/assets`)
    await page.getByRole('button', { name: 'Details of ferry.jpg' }).click()
    const details = page.getByRole('region', { name: 'ferry.jpg' })
    const input = details.getByLabel('Alt text (de)', { exact: true })
    await input.waitFor()
    const n = fake.calls.length
    await details.getByRole('button', { name: 'Suggest with AI: the de alt text' }).click()
    await until(() => input.inputValue(), 'A ferry at the pier at dusk.')
    await details.getByTestId('alt-ai-status').getByRole('link', { name: 'AI review queue' }).waitFor()
    // The image went to the vision model; nothing is written yet: the job awaits review, the asset has no German alt.
    expect(fake.calls[n]!.body.model).toBe('fake-vision')
    const jobs = (await h.call('GET', `/v1/spaces/${space}/ai-jobs?kind=alt_text`, editor.token)).body.data
    expect(jobs.length).toBe(1)
    expect(jobs[0]).toMatchObject({ status: 'awaiting_review', target: { asset_uuid: asset, lang: 'de' } })
    expect((await h.call('GET', `/v1/spaces/${space}/assets/${asset}`, editor.token)).body.data.alt.de).toBeUndefined()

    await details.getByRole('button', { name: 'Save alt text' }).click()
    await details.getByRole('status').getByText('Alt text saved.').waitFor()
    expect((await h.call('GET', `/v1/spaces/${space}/assets/${asset}`, editor.token)).body.data.alt.de).toBe('A ferry at the pier at dusk.')
    await until(async () => (await h.call('GET', `/v1/spaces/${space}/ai-jobs/${jobs[0].uuid}`, editor.token)).body.data.status, 'approved')
    expect(await axeViolations(page)).toEqual([])
    expect(errors).toEqual([])
  })

  test('SEO suggestions: the model’s title and description are inserted into the page’s fields as unsaved edits; Save makes a version', async () => {
    const seo = { title: 'Harbour guide: piers, boats and cafés', description: 'Walk every pier of the harbour, meet the boats and find the best café by the water.' }
    fake.respond((call) => (String(call.body?.messages?.[0]?.content).startsWith('You write search-engine') ? { kind: 'json', text: JSON.stringify(seo) } : { kind: 'json', text: 'no' }))
    const before = (await h.call('GET', `/v1/spaces/${space}/stories/${story}`, editor.token)).body.data.version_no
    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}/stories/${story}`)
    const panel = page.getByRole('region', { name: 'SEO suggestions' })
    await panel.getByRole('button', { name: 'Suggest a title and description' }).click()
    await until(() => panel.getByTestId('seo-description').textContent(), seo.description)
    expect(await panel.getByTestId('seo-title').textContent()).toBe(seo.title)
    // The fields picked by their names: "title" for the title, "meta_description" for the description.
    expect(await panel.getByLabel('Into the field').first().inputValue()).toBe('title')
    expect(await panel.getByLabel('Into the field').nth(1).inputValue()).toBe('meta_description')
    expect(await page.getByText('unsaved changes').count()).toBe(0)
    await panel.getByRole('button', { name: 'Insert the SEO description' }).click()
    await panel.getByRole('button', { name: 'Insert the SEO title' }).click()
    await page.getByText('unsaved changes').waitFor()
    expect(await page.locator('[data-field-path="blocks/0/meta_description"] textarea').inputValue()).toBe(seo.description)
    expect(await page.locator('[data-field-path="blocks/0/title"] input[name="title"]').inputValue()).toBe(seo.title)
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByText(`Saved (version ${before + 1}).`).waitFor()
    const saved = (await h.call('GET', `/v1/spaces/${space}/stories/${story}`, editor.token)).body.data
    expect(saved.content.blocks[0]).toMatchObject({ title: seo.title, meta_description: seo.description })
    expect(await axeViolations(page)).toEqual([])
    expect(errors).toEqual([])
  })

  test('internal links: a suggested link is inserted on its phrase in the rich text as an unsaved edit; Save makes a version', async () => {
    const other = await h.call('POST', `/v1/spaces/${space}/stories`, editor.token, {
      name: 'Harbour piers at night',
      slug: 'piers',
      content: { type: 'doc', blocks: [{ component: 'page', _uid: 'o1', title: 'Harbour piers and boats at night' }] },
    })
    expect(other.status).toBe(201)
    expect((await h.call('POST', `/v1/spaces/${space}/stories/${other.body.data.uuid}/publish`, editor.token)).status).toBe(200)
    fake.respond((call) => {
      const messages = call.body?.messages as { content: string }[]
      if (!String(messages?.[0]?.content).startsWith('You suggest internal links')) return { kind: 'json', text: 'no' }
      const d = JSON.parse(/<data>\n([\s\S]*?)\n<\/data>/.exec(String(messages[1]!.content))![1]!) as { candidates: { id: number; path: string }[] }
      const id = d.candidates.find((c) => c.path === '/piers')!.id
      return { kind: 'json', text: JSON.stringify([{ id, text: 'Piers', score: 0.9 }]) }
    })
    const before = (await h.call('GET', `/v1/spaces/${space}/stories/${story}`, editor.token)).body.data
    const { page, errors } = await h.signedIn(editor.token)
    await page.goto(`/admin/spaces/${space}/stories/${story}`)
    const panel = page.getByRole('region', { name: 'Internal links' })
    await panel.getByRole('button', { name: 'Suggest internal links' }).click()
    const item = panel.locator('[data-link="/piers"]')
    await item.waitFor()
    expect(await item.textContent()).toContain('“Piers” → /piers (90%)')
    await item.getByRole('button', { name: 'Insert the link on “Piers”' }).click()
    await panel.getByText('“Piers” now links to /piers in “body”').waitFor()
    await page.getByText('unsaved changes').waitFor()
    await until(() => page.locator('[data-field-path="blocks/0/body"] [data-richtext] a').textContent(), 'Piers')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByText(`Saved (version ${before.version_no + 1}).`).waitFor()
    const saved = (await h.call('GET', `/v1/spaces/${space}/stories/${story}`, editor.token)).body.data
    expect(saved.content.blocks[0].body.content[0]).toEqual({
      type: 'paragraph',
      content: [
        { type: 'text', text: 'Piers', marks: [{ type: 'link', attrs: { href: '/piers', title: null } }] },
        { type: 'text', text: ' and boats.' },
      ],
    })
    expect(saved.content.blocks[0].body.content[1]).toEqual(before.content.blocks[0].body.content[1])
    expect(await axeViolations(page)).toEqual([])
    expect(errors).toEqual([])
  })

  test('axe is clean with the AI actions open, in both themes; a viewer finds no AI control', async () => {
    const { page, errors } = await h.signedIn(editor.token)
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      await page.goto(`/admin/spaces/${space}/stories/${story}`)
      const title = page.locator('[data-field-path="blocks/0/title"]')
      await title.getByRole('button', { name: 'AI actions for “title”' }).click()
      await title.getByRole('group', { name: 'AI actions for “title”' }).waitFor()
      // Translate offers the Space's locales.
      expect(await title.getByLabel('Translate into').locator('option').allTextContents()).toEqual(['en', 'de'])
      expect({ scheme, violations: await axeViolations(page) }).toEqual({ scheme, violations: [] })
    }
    expect(errors).toEqual([])

    const seen = await h.signedIn(viewer.token)
    await seen.page.goto(`/admin/spaces/${space}/stories/${story}`)
    await seen.page.getByTestId('read-only').waitFor()
    await seen.page.locator('[data-field-path="blocks/0/title"]').waitFor()
    expect(await seen.page.getByRole('button', { name: /^AI actions/ }).count()).toBe(0)
  })

  test('in German the AI controls speak German: no English text of the AI catalog on the editor with the actions open', async () => {
    const greta = await memberNamed(h.t, owner.tenant.id, space, 'editor', 'Greta Deutsch')
    expect((await h.call('PATCH', '/v1/auth/me', greta.token, { ui_language: 'de' })).status).toBe(200)
    const { page, errors } = await h.signedIn(greta.token)
    await page.goto(`/admin/spaces/${space}/stories/${story}`)
    const title = page.locator('[data-field-path="blocks/0/title"]')
    await title.getByRole('button', { name: 'KI-Aktionen für „title“' }).click()
    await title.getByRole('button', { name: 'Kürzen' }).waitFor()
    await page.getByRole('region', { name: 'SEO-Vorschläge' }).waitFor()
    await page.getByRole('region', { name: 'Interne Links' }).waitFor()
    const shown = (await page.evaluate(() => document.body.innerText)) as string
    const english = Object.values(aiEn)
      .map((e) => e.split('{')[0]!.trim())
      .filter((e) => e.length >= 6)
      .filter((e) => shown.includes(e))
    expect(english).toEqual([])
    expect(errors).toEqual([])
  })
})
