/**
 * The Story editor with more than one person on it, in Chromium: two browser contexts (two users) on the same Story —
 * the 409 dialog with what the other saved, reload and overwrite; presence (avatars, the focused block) and comments
 * arriving live over the `/live` stream; keyboard-only and pointer reordering of blocks, announced; duplicate with new
 * `_uid`s; the diff of two versions; the locale fallback hints; a Story of 500 blocks staying responsive (typing
 * latency measured in the page); axe-core finding no serious or critical violation.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { type AdminHarness, axeViolations, hasChromium, memberNamed, shot, startAdmin, until, warnNoChromium } from './helpers'

setDefaultTimeout(120_000)
warnNoChromium('the Story editor collaboration tests')

let h: AdminHarness
let ada: { token: string; id: number }
let bob: { token: string; id: number }
let space = ''
let uuid = ''

const editorUrl = (u = uuid, q = '') => `/admin/spaces/${space}/stories/${u}${q}`
const titleBox = (p: Page) => p.locator('[data-field-path="blocks/0/title"]').getByRole('textbox')
const introBox = (p: Page) => p.locator('[data-field-path="blocks/0/intro"]').getByRole('textbox')
/** The headlines of the page's teasers (not their nested blocks), in order. */
const teaserHeadlines = (p: Page) =>
  p
    .locator('li[data-block-path]')
    .evaluateAll((lis) =>
      lis.filter((li) => /^blocks\/0\/body\/\d+$/.test((li as HTMLElement).dataset.blockPath ?? '')).map((li) => (li.querySelector('input') as HTMLInputElement).value),
    )

/**
 * Leave the editor (its presence session ends on pagehide, by a keepalive DELETE), wait for the server to have heard
 * it, then close the browser context. A page with unsaved changes asks before unloading (refused here): its session
 * then just goes stale.
 */
async function leave(c: { context: { close(): Promise<void> }; page: Page }, userId: number) {
  const left = await c.page.goto('about:blank').then(
    () => true,
    () => false,
  )
  for (let i = 0; left && i < 100; i++) {
    const active = (await h.call('GET', `/v1/spaces/${space}/stories/${uuid}/presence`, ada.token)).body.data as { user_id: number }[]
    if (!active.some((s) => s.user_id === userId)) break
    await Bun.sleep(50)
  }
  await c.context.close()
}

async function openEditor(p: Page, u = uuid, q = '') {
  await p.goto(editorUrl(u, q))
  await p.getByRole('heading', { name: 'Home' }).waitFor()
}

describe.skipIf(!hasChromium)('the Story editor, together', () => {
  beforeAll(async () => {
    h = await startAdmin()
    const owner = await h.t.register({ name: 'Ada Lovelace' })
    ada = { token: owner.token, id: owner.user.id }
    space = (await h.t.createSpace(ada.token)).slug
    bob = await memberNamed(h.t, owner.tenant.id, space, 'editor', 'Bob Builder')
    const bp = async (body: unknown) => expect((await h.call('POST', `/v1/spaces/${space}/components`, ada.token, body)).status).toBe(201)
    await bp({ name: 'page', display_name: 'Page', is_root: true, is_nestable: false, schema: { title: { type: 'text' }, intro: { type: 'textarea' }, body: { type: 'blocks' } } })
    await bp({ name: 'teaser', display_name: 'Teaser', is_root: false, is_nestable: true, schema: { headline: { type: 'text' }, items: { type: 'blocks' } } })
    await bp({ name: 'para', display_name: 'Paragraph', is_root: true, is_nestable: false, schema: { text: { type: 'text' } } })
    const created = await h.call('POST', `/v1/spaces/${space}/stories`, ada.token, {
      name: 'Home',
      slug: 'home',
      content: {
        type: 'doc',
        blocks: [
          {
            component: 'page',
            _uid: 'page-1',
            title: 'Hello',
            body: [
              { component: 'teaser', _uid: 'teaser-1', headline: 'One', items: [{ component: 'teaser', _uid: 'inner-1', headline: 'Inner' }] },
              { component: 'teaser', _uid: 'teaser-2', headline: 'Two' },
              { component: 'teaser', _uid: 'teaser-3', headline: 'Three' },
            ],
          },
        ],
      },
    })
    expect(created.status).toBe(201)
    uuid = created.body.data.uuid
  }, 120_000)

  afterAll(async () => {
    await h?.close()
  }, 60_000)

  test('a 409 between two browsers: the dialog shows what the other saved; overwrite, then reload, both work', async () => {
    const a = await h.signedIn(ada.token)
    const b = await h.signedIn(bob.token)
    await openEditor(a.page)
    await openEditor(b.page)
    // Both start from version 1. Bob edits first (unsaved), then Ada saves.
    await introBox(b.page).fill('Intro by Bob')
    await titleBox(a.page).fill('Title by Ada')
    await a.page.keyboard.press('Control+s')
    await a.page.getByText('Saved (version 2).').waitFor()
    // Bob hears of it over the live stream while he holds unsaved changes.
    await b.page.getByTestId('remote-version').getByText('Someone saved version 2').waitFor()
    await b.page.getByRole('button', { name: 'Save' }).click()
    const dialog = b.page.getByRole('dialog', { name: 'Someone saved this Story meanwhile' })
    await dialog.waitFor()
    const change = dialog.getByRole('list', { name: 'Their changes' }).locator('[data-change-path="blocks/0/title"]')
    await change.getByText('Changed', { exact: true }).waitFor()
    await change.getByText('Hello', { exact: true }).waitFor()
    await change.getByText('Title by Ada', { exact: true }).waitFor()
    expect(await dialog.getByText('version 2 was saved since').count()).toBe(1)
    await shot(b.page, 'conflict-diff')
    expect(await axeViolations(b.page)).toEqual([])
    // Overwrite: Bob's document (based on version 1) becomes version 3.
    await dialog.getByRole('button', { name: 'Overwrite with mine' }).click()
    await b.page.getByText('Saved (version 3).').waitFor()
    let saved = (await h.call('GET', `/v1/spaces/${space}/stories/${uuid}`, ada.token)).body.data
    expect(saved.version_no).toBe(3)
    expect(saved.content.blocks[0]).toMatchObject({ title: 'Hello', intro: 'Intro by Bob' })

    // Ada had no unsaved changes: the live stream brought version 3 into her editor.
    await a.page.getByText('/home · version 3').waitFor()
    await until(() => introBox(a.page).inputValue(), 'Intro by Bob')

    // Again, and this time Bob reloads theirs.
    await introBox(b.page).fill('Bob again')
    await titleBox(a.page).fill('Ada again')
    await a.page.getByRole('button', { name: 'Save' }).click()
    await a.page.getByText('Saved (version 4).').waitFor()
    await b.page.getByRole('button', { name: 'Save' }).click()
    await dialog.waitFor()
    await dialog.locator('[data-change-path="blocks/0/title"]').getByText('Ada again', { exact: true }).waitFor()
    await dialog.getByRole('button', { name: 'Reload theirs' }).click()
    await until(() => titleBox(b.page).inputValue(), 'Ada again')
    await until(() => introBox(b.page).inputValue(), 'Intro by Bob')
    await b.page.getByText('/home · version 4').waitFor()
    saved = (await h.call('GET', `/v1/spaces/${space}/stories/${uuid}`, ada.token)).body.data
    expect(saved.version_no).toBe(4)
    expect(a.errors).toEqual([])
    expect(b.errors).toEqual([])
    await leave(a, ada.id)
    await leave(b, bob.id)
  })

  test('presence and comments arrive live in the other browser: avatars, the focused block, threads, replies, resolve; no polling', async () => {
    const a = await h.signedIn(ada.token)
    const b = await h.signedIn(bob.token)
    const commentReads: string[] = []
    b.page.on('request', (r) => {
      if (r.method() === 'GET' && new URL(r.url()).pathname.endsWith('/comments')) commentReads.push(r.url())
    })
    await openEditor(a.page)
    await openEditor(b.page)
    await b.page.getByTestId('comments-panel').getByText('● live').waitFor()

    // Ada is on the Story: Bob sees her avatar, and then the block she focuses.
    await b.page.getByRole('group', { name: 'Also editing: Ada Lovelace' }).getByRole('img', { name: 'Ada Lovelace' }).waitFor()
    expect(await b.page.getByTestId('presence-bar').textContent()).toBe('AL')
    await a.page.locator('[data-field-path="blocks/0/body/1/headline"]').getByRole('textbox').focus()
    const second = b.page.locator('li[data-block-path="blocks/0/body/1"]')
    await second.getByTestId('block-presence').getByRole('img', { name: 'Ada Lovelace' }).waitFor()
    expect(await b.page.locator('li[data-block-path="blocks/0/body/0"]').getByTestId('block-presence').count()).toBe(0)
    // Only that block: not the page block around it (its own header).
    expect(await b.page.locator('li[data-block-path="blocks/0"] > div:first-child [data-testid="block-presence"]').count()).toBe(0)
    // And Ada sees Bob.
    await a.page.getByRole('group', { name: 'Also editing: Bob Builder' }).getByRole('img', { name: 'Bob Builder' }).waitFor()

    // Ada comments on the second teaser (markup stays text).
    const body = 'Is this <b>right</b>?'
    await a.page.locator('li[data-block-path="blocks/0/body/1"]').getByRole('button', { name: /^\d+ comments? on Teaser$/ }).first().click()
    await a.page.getByLabel('New comment on Teaser').fill(body)
    await a.page.getByRole('button', { name: 'Comment', exact: true }).click()
    // Bob sees the count on the block and the thread, without reloading.
    const bobCount = second.getByRole('button', { name: '1 comment on Teaser' }).first()
    await bobCount.waitFor()
    const bobThreads = b.page.getByRole('list', { name: 'Comment threads' })
    await bobThreads.getByText(body, { exact: true }).waitFor()
    expect(await b.page.locator('b').count()).toBe(0)
    await bobThreads.getByText('Ada Lovelace').waitFor()
    await shot(b.page, 'presence-comments')
    // Opening the comments from the block's header kept Ada on that block.
    await second.getByTestId('block-presence').getByRole('img', { name: 'Ada Lovelace' }).waitFor()

    // Bob replies; Ada sees the reply.
    await bobThreads.getByRole('button', { name: 'Reply' }).click()
    await b.page.getByLabel('Reply to Ada Lovelace').fill('Yes, it is.')
    await b.page.getByRole('button', { name: 'Send reply' }).click()
    await a.page.getByRole('list', { name: 'Replies' }).getByText('Yes, it is.').waitFor()
    await a.page.locator('li[data-block-path="blocks/0/body/1"]').getByRole('button', { name: '2 comments on Teaser' }).first().waitFor()

    // Bob deletes his reply (his own: he may; Ada's comment has no Delete for him); Ada sees it go.
    expect(await b.page.getByRole('button', { name: 'Delete the comment by Ada Lovelace' }).count()).toBe(0)
    await b.page.getByRole('button', { name: 'Delete the comment by Bob Builder' }).click()
    await b.page.getByRole('dialog', { name: 'Delete this comment?' }).getByRole('button', { name: 'Delete' }).click()
    await a.page.locator('li[data-block-path="blocks/0/body/1"]').getByRole('button', { name: '1 comment on Teaser' }).first().waitFor()
    await until(() => a.page.getByText('Yes, it is.').count(), 0)

    // The stream is up: nothing polls the comments (the reads so far followed events).
    const readsBefore = commentReads.length
    await Bun.sleep(11_000)
    expect(commentReads.length).toBe(readsBefore)

    // Ada resolves her thread: it leaves Bob's open list and the count goes to 0.
    await a.page.getByRole('list', { name: 'Comment threads' }).getByRole('button', { name: 'Resolve' }).click()
    await second.getByRole('button', { name: '0 comments on Teaser' }).first().waitFor()
    await b.page.getByText('No open comments.').waitFor()
    await b.page.getByLabel('Show resolved threads').check()
    await bobThreads.getByText('resolved', { exact: true }).waitFor()

    // Ada leaves: her avatar goes from Bob's editor.
    expect(a.errors).toEqual([])
    await leave(a, ada.id)
    await until(() => b.page.getByTestId('presence-bar').count(), 0)
    expect(await axeViolations(b.page)).toEqual([])
    expect(b.errors).toEqual([])
    await leave(b, bob.id)
  })

  test('without the live stream the comments panel says so and re-reads comments every 10 s', async () => {
    const b = await h.signedIn(bob.token)
    // The stream cannot be opened (a proxy that refuses it): the editor falls back to polling.
    await b.context.route('**/live', (route) => route.abort())
    await openEditor(b.page)
    const panel = b.page.getByTestId('comments-panel')
    await panel.getByText('○ refreshing every 10 s').waitFor()
    const posted = await h.call('POST', `/v1/spaces/${space}/stories/${uuid}/comments`, ada.token, { block_path: 'blocks/0/body/2', body: 'Polled in' })
    expect(posted.status).toBe(201)
    await panel.getByText('Polled in', { exact: true }).waitFor({ timeout: 25_000 })
    expect(await b.page.locator('li[data-block-path="blocks/0/body/2"]').getByRole('button', { name: '1 comment on Teaser' }).count()).toBe(1)
    // Resolved again, so the threads of the later tests start clean.
    expect((await h.call('POST', `/v1/spaces/${space}/stories/${uuid}/comments/${posted.body.data.id}/resolve`, ada.token)).status).toBe(200)
    expect(b.errors).toEqual([])
    await leave(b, bob.id)
  })

  test('the server ends the live stream after its lifetime: the editor reconnects and comments arrive live again', async () => {
    const b = await h.signedIn(bob.token)
    let opened = 0
    b.page.on('request', (r) => {
      if (new URL(r.url()).pathname.endsWith('/live')) opened++
    })
    await openEditor(b.page)
    const panel = b.page.getByTestId('comments-panel')
    await panel.getByText('● live').waitFor()
    await until(async () => opened, 1)
    // LIVE_STREAM_MAX_SECONDS pass on the server's clock: it sends `closing` (lifetime) and ends the stream.
    h.t.clock.advance(h.t.config.liveStreamMaxSeconds * 1000)
    await until(async () => opened, 2, 30_000)
    await panel.getByText('● live').waitFor()
    const posted = await h.call('POST', `/v1/spaces/${space}/stories/${uuid}/comments`, ada.token, { block_path: 'blocks/0/body/1', body: 'After the reconnect' })
    expect(posted.status).toBe(201)
    await panel.getByText('After the reconnect', { exact: true }).waitFor({ timeout: 25_000 })
    expect((await h.call('POST', `/v1/spaces/${space}/stories/${uuid}/comments/${posted.body.data.id}/resolve`, ada.token)).status).toBe(200)
    expect(b.errors).toEqual([])
    await leave(b, bob.id)
  })

  test('keyboard-only reordering is announced and keeps focus; drag and drop with the pointer; duplicate makes new _uids deep', async () => {
    const a = await h.signedIn(ada.token)
    const p = a.page
    await openEditor(p)
    expect(await teaserHeadlines(p)).toEqual(['One', 'Two', 'Three'])

    // Keyboard only: Tab to the first teaser's handle, Alt+↓ twice.
    const handle = p.locator('[data-block-handle="teaser-1"]')
    await p.locator('[data-field-path="blocks/0/intro"]').getByRole('textbox').focus()
    for (let i = 0; i < 40; i++) {
      await p.keyboard.press('Tab')
      if (await handle.evaluate((el) => el === document.activeElement)) break
    }
    expect(await handle.evaluate((el) => el === document.activeElement)).toBe(true)
    expect(await handle.getAttribute('aria-label')).toBe('Teaser, block 1 of 3. Alt+Arrow Up or Down moves it; or drag it.')
    await p.keyboard.press('Alt+ArrowDown')
    await until(async () => (await teaserHeadlines(p)).join(), 'Two,One,Three')
    await until(() => p.getByTestId('announcer').textContent(), 'Teaser moved to position 2 of 3.')
    await until(() => p.evaluate(() => document.activeElement?.getAttribute('data-block-handle') ?? ''), 'teaser-1')
    await p.keyboard.press('Alt+ArrowDown')
    await until(async () => (await teaserHeadlines(p)).join(), 'Two,Three,One')
    await until(() => p.getByTestId('announcer').textContent(), 'Teaser moved to position 3 of 3.')
    await p.keyboard.press('Alt+ArrowUp')
    await until(async () => (await teaserHeadlines(p)).join(), 'Two,One,Three')
    expect(await p.getByTestId('announcer').getAttribute('aria-live')).toBe('polite')

    // Pointer: drag the last teaser's handle above the first (all of it in the viewport).
    await p.setViewportSize({ width: 1280, height: 2000 })
    const from = (await p.locator('[data-block-handle="teaser-3"]').boundingBox())!
    const to = (await p.locator('li[data-block-uid="teaser-2"]').boundingBox())!
    await p.mouse.move(from.x + from.width / 2, from.y + from.height / 2)
    await p.mouse.down()
    await p.mouse.move(from.x + from.width / 2, from.y - 10, { steps: 4 })
    await p.mouse.move(to.x + 20, to.y + 5, { steps: 8 })
    await until(() => p.locator('li[data-block-uid="teaser-2"]').getAttribute('data-drop'), 'before')
    await p.mouse.up()
    await until(async () => (await teaserHeadlines(p)).join(), 'Three,Two,One')
    await until(() => p.getByTestId('announcer').textContent(), 'Teaser moved to position 1 of 3.')

    // Duplicate the teaser that holds a nested block: the copy and its inner block get new _uids.
    await p.locator('li[data-block-uid="teaser-1"]').getByRole('button', { name: 'Duplicate Teaser' }).first().click()
    await until(async () => (await teaserHeadlines(p)).filter((x) => x === 'One').length, 2)
    await until(() => p.getByTestId('announcer').textContent(), 'Teaser duplicated: the copy is block 4 of 4.')
    await p.keyboard.press('Control+s')
    await p.getByText(/^Saved \(version \d+\)\.$/).waitFor()
    const doc = (await h.call('GET', `/v1/spaces/${space}/stories/${uuid}`, ada.token)).body.data.content
    const body = doc.blocks[0].body
    expect(body.map((b: { headline: string }) => b.headline)).toEqual(['Three', 'Two', 'One', 'One'])
    expect(body[2]._uid).toBe('teaser-1')
    expect(body[3]._uid).not.toBe('teaser-1')
    expect(body[3].items[0]._uid).not.toBe('inner-1')
    expect(body[3].items[0].headline).toBe('Inner')
    const uids: string[] = []
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk)
      else if (v && typeof v === 'object') {
        if (typeof (v as { _uid?: unknown })._uid === 'string') uids.push((v as { _uid: string })._uid)
        Object.values(v).forEach(walk)
      }
    }
    walk(doc)
    expect(new Set(uids).size).toBe(uids.length)
    expect(a.errors).toEqual([])
    await leave(a, ada.id)
  })

  test('versions: the diff of two chosen versions shows a changed field as text, and restore stays', async () => {
    const a = await h.signedIn(ada.token)
    const p = a.page
    const current = (await h.call('GET', `/v1/spaces/${space}/stories/${uuid}`, ada.token)).body.data
    const next = structuredClone(current.content)
    next.blocks[0].title = 'A <i>new</i> title'
    expect((await h.call('PUT', `/v1/spaces/${space}/stories/${uuid}`, ada.token, { content: next, expected_version_no: current.version_no })).status).toBe(200)
    await openEditor(p)
    // The editor shows the newest version (it may load it again when the live stream reports that save).
    await p.getByText(new RegExp(`version ${current.version_no + 1}$`)).first().waitFor()
    await p.getByText('Versions', { exact: true }).click()
    const compare = p.getByRole('region', { name: 'Compare versions' })
    await compare.getByLabel('Compare').selectOption(String(current.version_no))
    await compare.getByLabel('with').selectOption(String(current.version_no + 1))
    await compare.getByRole('button', { name: 'Show differences' }).click()
    const list = compare.getByRole('list', { name: `Changes from version ${current.version_no} to version ${current.version_no + 1}` })
    const title = list.locator('[data-change-path="blocks/0/title"]')
    await title.getByText('Changed', { exact: true }).waitFor()
    await title.getByText('A <i>new</i> title', { exact: true }).waitFor()
    await title.getByText(current.content.blocks[0].title, { exact: true }).waitFor()
    expect(await list.locator('[data-change]').count()).toBe(1)
    await shot(p, 'version-diff')
    expect(await p.locator('i').count()).toBe(0)
    // Version 1 against the newest: the moves, the duplicate and the edits, by path.
    await compare.getByLabel('Compare').selectOption('1')
    await compare.getByRole('button', { name: 'Show differences' }).click()
    const all = compare.getByRole('list', { name: `Changes from version 1 to version ${current.version_no + 1}` })
    await all.locator('[data-change="added"][data-change-path="blocks/0/body/3"]').waitFor()
    await all.locator('[data-change="moved"][data-change-path="blocks/0/body/2"]').getByText('blocks/0/body/0').waitFor()
    await all.locator('[data-change="added"][data-change-path="blocks/0/body/3/items/0"]').waitFor()
    expect(await axeViolations(p)).toEqual([])
    // Restore is still there.
    await p.getByRole('list', { name: 'Versions' }).getByRole('button', { name: 'Restore version 1' }).click()
    await p.getByRole('dialog', { name: 'Restore version 1?' }).getByRole('button', { name: 'Restore' }).click()
    await until(() => titleBox(p).inputValue(), 'Hello')
    expect(a.errors).toEqual([])
    await leave(a, ada.id)
  })

  test('a locale without a translation shows, per field, that its value falls back and from which locale', async () => {
    expect((await h.call('POST', `/v1/spaces/${space}/locales`, ada.token, { code: 'de', fallback: 'en' })).status).toBe(201)
    expect((await h.call('POST', `/v1/spaces/${space}/locales`, ada.token, { code: 'de-AT', fallback: 'de' })).status).toBe(201)
    let en = (await h.call('GET', `/v1/spaces/${space}/stories/${uuid}`, ada.token)).body.data
    if (en.content.blocks[0].intro) {
      // The intro is empty once the versions test has restored version 1; this test needs an empty field, whatever ran before.
      const content = structuredClone(en.content)
      content.blocks[0].intro = ''
      const emptied = await h.call('PUT', `/v1/spaces/${space}/stories/${uuid}`, ada.token, { content, expected_version_no: en.version_no })
      expect(emptied.status).toBe(200)
      en = emptied.body.data
    }
    const de = structuredClone(en.content)
    de.blocks[0].title = 'Hallo'
    const put = await h.call('PUT', `/v1/spaces/${space}/stories/${uuid}`, ada.token, { content: de, lang: 'de', expected_version_no: en.version_no })
    expect(put.status).toBe(200)
    const a = await h.signedIn(ada.token)
    const p = a.page
    await p.goto(editorUrl(uuid, '?lang=de-AT'))
    await p.getByRole('heading', { name: 'No “de-AT” translation yet' }).waitFor()
    await p.getByText('de-AT → de → en').waitFor()
    expect(await p.getByLabel('Locale').locator('option[value="de-AT"]').textContent()).toBe('de-AT (no translation yet: shows de)')
    const preview = p.getByTestId('fallback-preview')
    const title = preview.locator('[data-field-path="blocks/0/title"]')
    expect(await title.getByRole('textbox').inputValue()).toBe('Hallo')
    expect(await title.locator('[data-fallback-from]').getAttribute('data-fallback-from')).toBe('de')
    await title.getByText('from de').waitFor()
    await shot(p, 'locale-fallback')
    // The hint describes the input.
    const describedBy = (await title.getByRole('textbox').getAttribute('aria-describedby')) ?? ''
    expect(describedBy.split(' ')).toContain((await title.locator('[data-fallback-from]').getAttribute('id')) ?? 'no id')
    expect(await title.getByRole('textbox').isDisabled()).toBe(true)
    // Nested fields say so too; an empty field has nothing to fall back to: no hint.
    expect(await preview.locator('[data-field-path="blocks/0/body/0/headline"] [data-fallback-from="de"]').count()).toBe(1)
    expect(await preview.locator('[data-field-path="blocks/0/intro"] [data-fallback-from]').count()).toBe(0)
    expect(await axeViolations(p)).toEqual([])
    // Starting the translation copies the de content.
    await p.getByRole('button', { name: 'Start from de' }).click()
    await until(() => titleBox(p).inputValue(), 'Hallo')
    await titleBox(p).fill('Servus')
    await p.getByRole('button', { name: 'Save' }).click()
    await p.getByText(/^Saved \(version \d+\)\.$/).waitFor()
    const at = (await h.call('GET', `/v1/spaces/${space}/stories/${uuid}?lang=de-AT`, ada.token)).body.data
    expect(at.content.blocks[0].title).toBe('Servus')
    expect(a.errors).toEqual([])
    await leave(a, ada.id)
  })

  test('a Story of 500 blocks stays responsive: typing latency (keydown → next paint) measured in the page', async () => {
    const blocks = Array.from({ length: 500 }, (_, i) => ({ component: 'para', _uid: `para-${i}`, text: `Paragraph ${i}` }))
    const created = await h.call('POST', `/v1/spaces/${space}/stories`, ada.token, { name: 'Long', slug: 'long', content: { type: 'doc', blocks } })
    expect(created.status).toBe(201)
    const a = await h.signedIn(ada.token)
    const p = a.page
    await p.goto(editorUrl(created.body.data.uuid))
    await p.getByRole('heading', { name: 'Long' }).waitFor()
    await until(() => p.locator('li[data-block-uid]').count(), 500)
    const input = p.locator('[data-field-path="blocks/250/text"]').getByRole('textbox')
    await input.focus()
    await p.keyboard.press('End')
    // keydown → the frame after the update: a rAF callback, then a task queued from it runs once that frame painted.
    await p.evaluate(() => {
      const w = window as unknown as { __lat: number[] }
      w.__lat = []
      document.addEventListener(
        'keydown',
        () => {
          const t0 = performance.now()
          requestAnimationFrame(() => {
            const ch = new MessageChannel()
            ch.port1.onmessage = () => w.__lat.push(performance.now() - t0)
            ch.port2.postMessage(null)
          })
        },
        true,
      )
    })
    // Five keystrokes first, not measured: the first marks the Story changed (the header and the panels re-render once).
    for (const k of 'vwxyz') {
      await p.keyboard.press(k)
      await Bun.sleep(30)
    }
    await until(() => p.evaluate(() => (window as unknown as { __lat: number[] }).__lat.length), 5)
    await p.evaluate(() => {
      ;(window as unknown as { __lat: number[] }).__lat = []
    })
    const KEYS = 30
    for (let i = 0; i < KEYS; i++) {
      await p.keyboard.press(String.fromCharCode(97 + (i % 26)))
      await Bun.sleep(30)
    }
    await until(() => p.evaluate(() => (window as unknown as { __lat: number[] }).__lat.length), KEYS)
    expect(await input.inputValue()).toBe(`Paragraph 250vwxyz${'abcdefghijklmnopqrstuvwxyz'}abcd`)
    const lat = (await p.evaluate(() => (window as unknown as { __lat: number[] }).__lat)).sort((x, y) => x - y)
    const median = lat[Math.floor(lat.length / 2)]
    const p95 = lat[Math.min(lat.length - 1, Math.ceil(lat.length * 0.95) - 1)]
    console.log(`typing latency, 500 blocks, ${KEYS} keystrokes: median ${median.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, max ${lat[lat.length - 1].toFixed(1)} ms`)
    // Generous on a loaded machine; the figure is reported above.
    expect(median).toBeLessThan(50)
    expect(a.errors).toEqual([])
    await leave(a, ada.id)
  }, 240_000)
})
