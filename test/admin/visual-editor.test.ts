/**
 * The visual editor in Chromium (docs/in-page-editing.md, "The visual editor"): the admin app on one origin, the
 * example site of examples/visual-editor/ on another (both real listening servers). Typing in the form changes the
 * marked element in the frame without saving (tier 1); the bridge's draft event carries the unsaved Story (tier 2);
 * a server-rendered page reloads and shows the typed text from the draft snapshot while the public read keeps the
 * published text (tier 3); a click on a heading in the frame focuses its field; forged messages change nothing.
 *
 * CI installs Chromium (`apt-get install -y chromium`); where it cannot be installed these tests skip, loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Frame, Page } from 'playwright-core'
import { type ExampleSite, startExampleSite } from '../../examples/visual-editor/server'
import { type AdminHarness, axeViolations, hasChromium, memberNamed, startAdmin, warnNoChromium } from './helpers'

setDefaultTimeout(90_000)

warnNoChromium('the visual editor browser tests')

let h: AdminHarness
let site: ExampleSite
let owner: string
let tenantId: number
let space: string
let uuid: string
let otherUuid: string

const doc = (...blocks: Record<string, unknown>[]) => ({ type: 'doc', blocks })
const txt = (text: string, ...marks: Record<string, unknown>[]) => ({ type: 'text', text, ...(marks.length ? { marks } : {}) })
/** A rich-text field with marks, a heading, a list and two links: one safe, one not (it must get no href in the frame). */
const richBody = {
  type: 'doc',
  content: [
    { type: 'heading', attrs: { level: 3 }, content: [txt('Rich heading')] },
    { type: 'paragraph', content: [txt('Some '), txt('bold words', { type: 'bold' }), txt(' and '), txt('<img src=x onerror=alert(1)>', { type: 'italic' })] },
    {
      type: 'bullet_list',
      content: [
        { type: 'list_item', content: [{ type: 'paragraph', content: [txt('safe link', { type: 'link', attrs: { href: 'https://example.com/' } })] }] },
        { type: 'list_item', content: [{ type: 'paragraph', content: [txt('unsafe link', { type: 'link', attrs: { href: 'java\tscript:alert(1)' } })] }] },
      ],
    },
  ],
}

async function until<T>(probe: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms
  let last: unknown
  while (Date.now() < end) {
    try {
      const v = await probe()
      if (v) return v
    } catch (e) {
      last = e
    }
    await Bun.sleep(50)
  }
  throw new Error(`condition not met in time${last ? `: ${last}` : ''}`)
}

const siteFrame = (page: Page) => page.frames().find((f) => f.url().startsWith(site.url)) ?? null

const textIn = (frame: Frame, selector: string) => frame.evaluate((s) => document.querySelector(s)?.textContent ?? null, selector)

async function setPreviewUrl(url: string) {
  const r = await h.call('PATCH', `/v1/spaces/${space}`, owner, { preview_url: url })
  expect(r.status).toBe(200)
}

/** The Story editor with the visual editor open and the site connected; returns the page and the site's frame. */
async function openEditor(storyUuid = uuid) {
  const { page, errors } = await h.signedIn(owner)
  await page.goto(`/admin/spaces/${space}/stories/${storyUuid}`)
  await page.getByTestId('visual-editor-toggle').click()
  await until(async () => ((await page.getByTestId('visual-status').textContent()) ?? '').startsWith('Live:'))
  const frame = await until(async () => siteFrame(page))
  return { page, errors, frame }
}

const headlineInput = (page: Page) => page.locator('[data-field-path="blocks/0/headline"] input')

describe.skipIf(!hasChromium)('the visual editor in Chromium (admin and site on two origins)', () => {
  beforeAll(async () => {
    h = await startAdmin()
    const registered = await h.t.register({ name: 'Olga Owner' })
    owner = registered.token
    tenantId = registered.tenant.id
    space = (await h.t.createSpace(owner, { name: 'Visual', default_lang: 'en' })).slug
    expect((await h.call('POST', `/v1/spaces/${space}/components`, owner, { name: 'hero', display_name: 'Hero', schema: { headline: { type: 'text' }, text: { type: 'text' }, body: { type: 'richtext' } } })).status).toBe(201)
    const s = await h.call('POST', `/v1/spaces/${space}/stories`, owner, {
      name: 'Hello',
      slug: 'hello',
      content: doc({ component: 'hero', _uid: 'h1', headline: 'Published headline', text: 'Published text', body: richBody }),
    })
    expect(s.status).toBe(201)
    uuid = s.body.data.uuid
    expect((await h.call('POST', `/v1/spaces/${space}/stories/${uuid}/publish`, owner)).status).toBe(200)
    const o = await h.call('POST', `/v1/spaces/${space}/stories`, owner, { name: 'Other', slug: 'other', content: doc({ component: 'hero', _uid: 'o1', headline: 'Other' }) })
    otherUuid = o.body.data.uuid
    site = startExampleSite({ service: h.origin, space, adminOrigin: h.origin })
    await setPreviewUrl(`${site.url}/`)
  }, 240_000)

  afterAll(async () => {
    site?.stop()
    await h?.close()
  })

  test("the admin's CSP frames only the Space's preview origin; a preview URL on the admin's own origin is 422", async () => {
    const res = await fetch(`${h.origin}/admin/spaces/${space}/stories/${uuid}`)
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain(`frame-src ${site.url}`)
    expect(csp).toContain("frame-ancestors 'none'")
    const elsewhere = (await fetch(`${h.origin}/admin/spaces`)).headers.get('content-security-policy') ?? ''
    expect(elsewhere).not.toContain('frame-src')
    const own = await h.call('PATCH', `/v1/spaces/${space}`, owner, { preview_url: `${h.origin}/site/` })
    expect(own.status).toBe(422)
    expect(Object.keys(own.body.errors)).toEqual(['preview_url'])
  })

  test('tier 1 and 2: typing changes the marked element in the frame at once, and the draft event carries the unsaved Story; nothing is saved', async () => {
    const { page, errors, frame } = await openEditor()
    await until(async () => (await textIn(frame, '[data-story-field="h1.headline"]')) === 'Published headline')
    await frame.evaluate(() => {
      ;(window as any).__drafts = []
      document.addEventListener('service-admin:draft', (e) => (window as any).__drafts.push((e as CustomEvent).detail))
      ;(window as any).ServiceAdmin.onDraft((story: unknown) => ((window as any).__viaHelper = story))
    })
    const input = headlineInput(page)
    await input.fill('Typed live')
    await until(async () => (await textIn(frame, '[data-story-field="h1.headline"]')) === 'Typed live')
    const drafts = await frame.evaluate(() => (window as any).__drafts as { story: any; unsaved: boolean }[])
    const last = drafts.at(-1)!
    expect(last.unsaved).toBe(true)
    expect(last.story.uuid).toBe(uuid)
    expect(last.story.content.blocks[0]).toMatchObject({ _uid: 'h1', component: 'hero', headline: 'Typed live', text: 'Published text' })
    // The documented helper hands over the same Story.
    expect(await frame.evaluate(() => (window as any).__viaHelper)).toEqual(last.story)
    // Not saved: the stored draft and the public read are unchanged, and the form still holds unsaved changes.
    const stored = await h.call('GET', `/v1/spaces/${space}/stories/${uuid}`, owner)
    expect(stored.body.data.content.blocks[0].headline).toBe('Published headline')
    expect((await h.call('GET', `/v1/cdn/${space}/stories/hello`, null)).body.data.content.blocks[0].headline).toBe('Published headline')
    expect(await page.getByRole('button', { name: 'Save' }).isEnabled()).toBe(true)
    expect(errors).toEqual([])
    await page.close()
  })

  test('tier 1, rich text: a richtext field is drawn as elements in the frame (never parsed as HTML, an unsafe link without href) and typing in it shows at once', async () => {
    const { page, errors, frame } = await openEditor()
    const body = '[data-story-field="h1.body"]'
    // Tier 2 off in this frame (the example site re-renders from the draft event): what changes now is tier 1 alone.
    await frame.evaluate(() => window.addEventListener('service-admin:draft', (e) => e.stopPropagation(), true))
    await headlineInput(page).fill('Rich text headline')
    await until(async () => (await textIn(frame, '[data-story-field="h1.headline"]')) === 'Rich text headline')
    await until(async () => (await frame.evaluate((sel) => document.querySelector(`${sel} strong`)?.textContent ?? null, body)) === 'bold words')
    const drawn = await frame.evaluate((sel) => {
      const el = document.querySelector(sel)!
      return {
        heading: el.querySelector('h3')?.textContent ?? null,
        italic: el.querySelector('em')?.textContent ?? null,
        images: el.querySelectorAll('img').length,
        items: el.querySelectorAll('ul > li').length,
        links: [...el.querySelectorAll('a')].map((a) => [a.textContent, a.getAttribute('href')]),
      }
    }, body)
    expect(drawn).toEqual({
      heading: 'Rich heading',
      italic: '<img src=x onerror=alert(1)>',
      images: 0,
      items: 2,
      links: [
        ['safe link', 'https://example.com/'],
        ['unsafe link', null],
      ],
    })
    // Typing bold text at the end of the rich-text field: the frame shows it as a <strong> before anything is saved.
    const editor = page.locator('[data-field-path="blocks/0/body"] [contenteditable="true"]')
    await editor.waitFor()
    await editor.click()
    await page.keyboard.press('Control+End')
    await page.keyboard.press('Enter')
    await page.keyboard.press('Control+b')
    await page.keyboard.type('Typed strongly')
    await until(async () => (await frame.evaluate((sel) => [...document.querySelectorAll(`${sel} strong`)].map((e) => e.textContent), body)).includes('Typed strongly'))
    const saved = await h.call('GET', `/v1/spaces/${space}/stories/${uuid}`, owner)
    expect(JSON.stringify(saved.body.data.content)).not.toContain('Typed strongly')
    // Tier 2's helper for a page without a renderer of its own: the same elements, no HTML parsed.
    const helper = await frame.evaluate(() => {
      const box = document.createElement('div')
      const w = window as unknown as { ServiceAdmin: { richText(v: unknown): Node } }
      box.appendChild(w.ServiceAdmin.richText({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: '<b>x</b>', marks: [{ type: 'link', attrs: { href: 'javascript:x' } }] }] }] }))
      return box.innerHTML
    })
    expect(helper).toBe('<p><a>&lt;b&gt;x&lt;/b&gt;</a></p>')
    expect(errors).toEqual([])
    await page.close()
  })

  test('tier 1 within 500 ms: keystroke in the form → the marked element changed in the frame, timed in the browser', async () => {
    const { page, errors, frame } = await openEditor()
    await until(async () => (await textIn(frame, '[data-story-field="h1.headline"]')) === 'Published headline')
    // Both documents stamp the wall clock of the same machine (performance.timeOrigin + now): the input event in the
    // form, the mutation in the frame. Three rounds; the median is held to the bound (the figures are reported).
    const delays: number[] = []
    for (const word of ['One', 'Two', 'Three']) {
      // The whole page is observed: the example site re-renders from the draft event too (tier 2), replacing the
      // element, so an observer on one element could miss the change.
      await frame.evaluate((w) => {
        ;(window as any).__changed = null
        new MutationObserver((_, o) => {
          if (document.querySelector('[data-story-field="h1.headline"]')?.textContent === w) {
            ;(window as any).__changed = performance.timeOrigin + performance.now()
            o.disconnect()
          }
        }).observe(document.body, { childList: true, characterData: true, subtree: true })
      }, word)
      await page.evaluate(() => {
        ;(window as any).__typed = null
        document.addEventListener('input', () => ((window as any).__typed ??= performance.timeOrigin + performance.now()), { capture: true, once: true })
      })
      await headlineInput(page).fill(word)
      const changed = await until(() => frame.evaluate(() => (window as any).__changed as number | null))
      const typed = await page.evaluate(() => (window as any).__typed as number)
      delays.push(changed - typed)
    }
    delays.sort((a, b) => a - b)
    console.log(`tier 1: keystroke → frame updated: ${delays.map((d) => d.toFixed(0)).join(', ')} ms`)
    expect(delays[1]).toBeLessThan(500)
    expect(errors).toEqual([])
    await page.close()
  })

  test('a save refreshes the site, which then shows the saved text', async () => {
    const { page, errors, frame } = await openEditor()
    await until(async () => (await textIn(frame, '[data-story-field="h1.text"]')) === 'Published text')
    await page.locator('[data-field-path="blocks/0/text"] input').fill('Saved text')
    await until(async () => (await textIn(frame, '[data-story-field="h1.text"]')) === 'Saved text')
    const loads = site.hits.get('/hello') ?? 0
    await page.getByRole('button', { name: 'Save' }).click()
    await until(async () => (site.hits.get('/hello') ?? 0) > loads)
    const again = await until(async () => {
      const f = siteFrame(page)
      return f && (await textIn(f, '[data-story-field="h1.text"]')) === 'Saved text' ? f : null
    })
    expect(again).toBeTruthy()
    const stored = await h.call('GET', `/v1/spaces/${space}/stories/${uuid}`, owner)
    expect(stored.body.data.content.blocks[0].text).toBe('Saved text')
    // Back to the published text for the tests after this one.
    expect(
      (
        await h.call('PUT', `/v1/spaces/${space}/stories/${uuid}`, owner, {
          content: doc({ component: 'hero', _uid: 'h1', headline: 'Published headline', text: 'Published text' }),
          expected_version_no: stored.body.data.version_no,
        })
      ).status,
    ).toBe(200)
    expect(errors).toEqual([])
    await page.close()
  })

  test('clicking a heading in the frame focuses its field in the form', async () => {
    const { page, errors, frame } = await openEditor()
    await until(async () => (await textIn(frame, '[data-story-field="h1.text"]')) === 'Published text')
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur())
    await frame.click('[data-story-field="h1.headline"]')
    await until(async () => page.evaluate(() => !!document.activeElement?.closest('[data-field-path="blocks/0/headline"]')))
    await frame.click('[data-story-field="h1.text"]')
    await until(async () => page.evaluate(() => !!document.activeElement?.closest('[data-field-path="blocks/0/text"]')))
    // The click selected; it did not navigate the site.
    expect(new URL(frame.url()).pathname).toBe('/hello')
    // The split view is keyboard-usable and axe-clean: the divider moves with the arrow keys; device widths apply.
    const divider = page.getByRole('separator', { name: /Resize/ })
    const before = Number(await divider.getAttribute('aria-valuenow'))
    await divider.focus()
    await page.keyboard.press('ArrowLeft')
    expect(Number(await divider.getAttribute('aria-valuenow'))).toBe(before + 32)
    await page.getByRole('button', { name: '390 px' }).click()
    expect(await page.getByTestId('visual-frame').evaluate((f) => (f as HTMLIFrameElement).getBoundingClientRect().width)).toBe(390)
    expect(await axeViolations(page)).toEqual([])
    expect(errors).toEqual([])
    await page.close()
  })

  test('forged messages change nothing: wrong window or origin, wrong channel or version, malformed', async () => {
    const { page, errors, frame } = await openEditor()
    await until(async () => (await textIn(frame, '[data-story-field="h1.headline"]')) === 'Published headline')
    const editorUrl = page.url()
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur())
    // To the admin: the admin window itself (not the frame) with a well-formed select of another Story; from the
    // site's frame, messages of another channel or version, or malformed.
    await page.evaluate((other) => window.postMessage({ channel: 'content-service', v: 1, type: 'select', story_uuid: other, uid: 'o1', field: 'headline' }, '*'), otherUuid)
    await frame.evaluate(([other, own]) => {
      const forged: unknown[] = [
        { channel: 'content-service', v: 2, type: 'select', story_uuid: other, uid: 'h1', field: 'headline' },
        { channel: 'other', v: 1, type: 'select', story_uuid: other },
        { channel: 'content-service', v: 1, type: 'select', story_uuid: 'not-a-uuid', uid: 'h1', field: 'headline' },
        { channel: 'content-service', v: 1, type: 'select', story_uuid: own, uid: '<img src=x>', field: '../../x' },
        { channel: 'content-service', v: 1, type: 'select', story_uuid: own, uid: 'no-such-block', field: 'headline' },
        { channel: 'content-service', v: 1, type: 'navigated', path: 'javascript:alert(1)' },
        'select',
        null,
      ]
      for (const m of forged) parent.postMessage(m, '*')
    }, [otherUuid, uuid])
    // To the site: a draft and a refresh posted by the page itself (not its parent, not the admin origin); a sentinel
    // posted after them arrives after the bridge handled them (messages of one sender keep their order).
    const after = await frame.evaluate(
      (u) =>
        new Promise<string | null>((resolve) => {
          window.postMessage({ channel: 'content-service', v: 1, type: 'draft', story: { uuid: u, content: { type: 'doc', blocks: [{ _uid: 'h1', component: 'hero', headline: 'FORGED' }] } } }, '*')
          window.postMessage({ channel: 'content-service', v: 1, type: 'refresh' }, '*')
          window.addEventListener('message', (e) => {
            if (e.data === 'sentinel') resolve(document.querySelector('[data-story-field="h1.headline"]')!.textContent)
          })
          window.postMessage('sentinel', '*')
        }),
      uuid,
    )
    expect(after).toBe('Published headline')
    // The frame's own select after the forged ones (a real one) is followed: so the forged ones were read, and ignored.
    await frame.click('[data-story-field="h1.text"]')
    await until(async () => page.evaluate(() => !!document.activeElement?.closest('[data-field-path="blocks/0/text"]')))
    await headlineInput(page).fill('After the forgeries')
    await until(async () => (await textIn(frame, '[data-story-field="h1.headline"]')) === 'After the forgeries')
    expect(page.url()).toBe(editorUrl)
    expect(await frame.evaluate(() => (window as any).__pwned ?? null)).toBeNull()
    expect(errors).toEqual([])
    await page.close()
  })

  test("another editor's block is outlined in the frame in their colour, with their name", async () => {
    const bob = await memberNamed(h.t, tenantId, space, 'editor', 'Bob Builder')
    const { page, errors, frame } = await openEditor()
    await until(async () => (await textIn(frame, '[data-story-field="h1.headline"]')) === 'Published headline')
    const beat = await h.call('POST', `/v1/spaces/${space}/stories/${uuid}/presence`, bob.token, {
      session_id: crypto.randomUUID(),
      block_path: 'blocks/0',
      selection: { anchor: 0, head: 0 },
    })
    expect(beat.status).toBeLessThan(300)
    // Bob's outline (an earlier test's page of the owner may still be present on the block until its presence ends).
    const outline = await until(async () =>
      frame.evaluate(() => {
        const all = [...document.querySelectorAll('[data-service-admin-presence="h1"]')] as HTMLElement[]
        const el = all.find((e) => e.textContent === 'Bob Builder')
        return el ? { name: el.textContent, color: el.style.getPropertyValue('outline-color') || el.style.outline } : null
      }),
    )
    expect(outline.name).toBe('Bob Builder')
    expect(outline.color).toContain('rgb(')
    expect(errors).toEqual([])
    await page.close()
  })

  test('navigating in the frame opens the Story of that page in the form', async () => {
    const { page, errors, frame } = await openEditor()
    await until(async () => (await textIn(frame, '[data-story-field="h1.headline"]')) === 'Published headline')
    await frame.evaluate(() => {
      location.href = '/other'
    })
    await page.waitForURL(new RegExp(`/stories/${otherUuid}`))
    await until(async () => (await headlineInput(page).inputValue()) === 'Other')
    // The frame follows too: a new token for that Story's page.
    await until(async () => ((await page.getByTestId('visual-status').textContent()) ?? '') === 'Live: /other')
    expect(errors).toEqual([])
    await page.close()
  })

  test('a site that forbids framing: the editor says what the site must allow', async () => {
    const closed = startExampleSite({ service: h.origin, space, adminOrigin: null })
    try {
      await setPreviewUrl(`${closed.url}/`)
      const { page, errors } = await h.signedIn(owner)
      await page.goto(`/admin/spaces/${space}/stories/${uuid}`)
      await page.getByTestId('visual-editor-toggle').click()
      const alert = page.getByTestId('visual-silent')
      await alert.waitFor({ timeout: 20_000 })
      const text = (await alert.textContent()) ?? ''
      expect(text).toContain(`frame-ancestors 'self' ${h.origin}`)
      expect(text).toContain(`data-space="${space}"`)
      // The harness's sign-in script (sessionStorage) also runs in the blocked frame's error page, an opaque origin.
      expect(errors.filter((e) => !e.includes("'sessionStorage'"))).toEqual([])
      await page.close()
    } finally {
      closed.stop()
      await setPreviewUrl(`${site.url}/`)
    }
  })

  test('typing stays fast with the frame open on a 500-block Story (keydown → next paint, measured in the page), and the frame follows', async () => {
    const blocks = Array.from({ length: 500 }, (_, i) => ({ component: 'hero', _uid: `b${i}`, headline: `Block ${i}` }))
    const created = await h.call('POST', `/v1/spaces/${space}/stories`, owner, { name: 'Long', slug: 'long', content: { type: 'doc', blocks } })
    expect(created.status).toBe(201)
    expect((await h.call('POST', `/v1/spaces/${space}/stories/${created.body.data.uuid}/publish`, owner)).status).toBe(200)
    const { page: p, errors, frame } = await openEditor(created.body.data.uuid)
    await until(async () => (await textIn(frame, '[data-story-field="b250.headline"]')) === 'Block 250')
    await until(async () => (await p.locator('li[data-block-uid]').count()) === 500)
    const input = p.locator('[data-field-path="blocks/250/headline"] input')
    await input.focus()
    await p.keyboard.press('End')
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
    // Five keystrokes first, not measured: the first marks the Story changed (the header re-renders once).
    for (const k of 'vwxyz') {
      await p.keyboard.press(k)
      await Bun.sleep(30)
    }
    await until(() => p.evaluate(() => (window as unknown as { __lat: number[] }).__lat.length >= 5))
    await p.evaluate(() => {
      ;(window as unknown as { __lat: number[] }).__lat = []
    })
    const KEYS = 30
    for (let i = 0; i < KEYS; i++) {
      await p.keyboard.press(String.fromCharCode(97 + (i % 26)))
      await Bun.sleep(30)
    }
    await until(() => p.evaluate((n) => (window as unknown as { __lat: number[] }).__lat.length >= n, KEYS))
    const typed = `Block 250vwxyz${'abcdefghijklmnopqrstuvwxyz'}abcd`
    expect(await input.inputValue()).toBe(typed)
    const lat = (await p.evaluate(() => (window as unknown as { __lat: number[] }).__lat)).sort((x, y) => x - y)
    const median = lat[Math.floor(lat.length / 2)]
    console.log(`typing latency with the frame open, 500 blocks, ${KEYS} keystrokes: median ${median.toFixed(1)} ms, max ${lat[lat.length - 1].toFixed(1)} ms`)
    // Generous on a loaded machine; the figure is reported above.
    expect(median).toBeLessThan(50)
    await until(async () => (await textIn(frame, '[data-story-field="b250.headline"]')) === typed)
    expect(errors).toEqual([])
    await p.close()
  }, 240_000)

  test('tier 3: a server-rendered page reloads after the pause and shows the typed text from the draft snapshot; the public read keeps the published text', async () => {
    await setPreviewUrl(`${site.url}/ssr/`)
    const { page, errors, frame } = await openEditor()
    expect(frame.url()).toStartWith(`${site.url}/ssr/hello`)
    await until(async () => (await textIn(frame, '[data-story-field="content/blocks/0/headline"]')) === 'Published headline')
    const before = site.hits.get('/ssr/hello') ?? 0
    const version = (await h.call('GET', `/v1/spaces/${space}/stories/${uuid}`, owner)).body.data.version_no
    await headlineInput(page).fill('Typed for the server')
    const shown = await until(async () => {
      const f = siteFrame(page)
      return f && (await textIn(f, '[data-story-field="content/blocks/0/headline"]')) === 'Typed for the server' ? f : null
    })
    // It reloaded (the server rendered the page again) and the server's own rendering is still the published one.
    expect(site.hits.get('/ssr/hello') ?? 0).toBeGreaterThan(before)
    const served = await (await fetch(`${site.url}/ssr/hello`)).text()
    expect(served).toContain('Published headline')
    expect(served).not.toContain('Typed for the server')
    expect(await textIn(shown, '[data-story-field="content/blocks/0/text"]')).toBe('Published text')
    // Never saved, never published: the public read, the stored draft and its version are unchanged.
    expect((await h.call('GET', `/v1/cdn/${space}/stories/hello`, null)).body.data.content.blocks[0].headline).toBe('Published headline')
    const stored = (await h.call('GET', `/v1/spaces/${space}/stories/${uuid}`, owner)).body.data
    expect(stored.version_no).toBe(version)
    expect(stored.content.blocks[0].headline).toBe('Published headline')
    expect(errors).toEqual([])
    await page.close()
    await setPreviewUrl(`${site.url}/`)
  })
})
