#!/usr/bin/env bun
/**
 * Screenshots of the admin app's main screens for the docs: `bun scripts/admin-screenshots.ts [out folder]`
 * (default docs/images). Starts the service in this process on a temporary data folder (embedded database), seeds
 * a small blog through the API (a Space, component blueprints, an image, folders and Stories in every state), and
 * drives Debian's Chromium (playwright-core, as the browser tests do) through sign-in, Spaces, the Story tree, the
 * Story editor, the components, the settings and operations screens (members, tokens, settings, webhooks, AI jobs,
 * billing, account) and the Story editor in the dark theme, writing `admin-<screen>.png` at 1280×800 (docs/admin.md
 * shows them). A webhook receiver and an OpenAI-compatible AI provider run in this process on 127.0.0.1 (the provider
 * "translates" from a small table). The temporary folder is removed after.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chromium } from 'playwright-core'
import { createRuntime } from '../src/app'
import { loadConfig } from '../src/config'
import { createKernel } from '../src/kernel/kernel'
import { encodePng } from '../src/modules/assets/pixels'

const OUT = resolve(process.argv[2] ?? join(import.meta.dir, '..', 'docs', 'images'))
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const EMAIL = 'ada@northwind.example'
const PASSWORD = 'correct horse battery staple'

/** German for the texts the AI job translates (anything else comes back as it was). */
const GERMAN: Record<string, string> = {
  'A morning on the fjord': 'Ein Morgen am Fjord',
  'The ferry leaves at six. By seven the mist has lifted and the water is a mirror for the hills.':
    'Die Fähre legt um sechs ab. Um sieben hat sich der Nebel gehoben, und das Wasser spiegelt die Hügel.',
  'We arrived the evening before, when the light **never quite leaves** the sky.': 'Wir kamen am Abend davor an, wenn das Licht den Himmel **nie ganz verlässt**.',
  'The north teaches patience, and rewards it.': 'Der Norden lehrt Geduld und belohnt sie.',
  'A fisherman in Ålesund': 'Ein Fischer in Ålesund',
}
/** An OpenAI-compatible chat endpoint: the service sends the texts as JSON between <data> tags. */
const ai = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(request) {
    const body = (await request.json()) as { model: string; messages: { content: string | { type: string; text?: string }[] }[] }
    const c = body.messages.at(-1)?.content ?? ''
    const text = typeof c === 'string' ? c : (c.find((p) => p.type === 'text')?.text ?? '')
    const data = /<data>\n([\s\S]*?)\n<\/data>/.exec(text)
    const fields = data ? (JSON.parse(data[1]!) as Record<string, string>) : {}
    const answer = JSON.stringify(Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, GERMAN[v] ?? v])))
    return Response.json({
      id: 'chatcmpl-screenshots',
      object: 'chat.completion',
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 412, completion_tokens: 188, total_tokens: 600 },
    })
  },
})
/** A site's build hook: answers every webhook delivery with 204. */
const receiver = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(null, { status: 204 }) })

const dataDir = mkdtempSync(join(tmpdir(), 'cs-screenshots-'))
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: 'error',
  REGISTRATION: 'open',
  // The receiver and the provider listen on 127.0.0.1.
  SERVICE_OUTBOUND_ALLOW_PRIVATE: 'true',
  AI_BASE_URL: `http://127.0.0.1:${ai.port}/v1`,
  AI_API_KEY: 'sk-screenshots',
  AI_MODEL: 'gpt-4o-mini',
  AI_MONTHLY_TOKENS: '200000',
  BILLING_SELF_SERVE: 'true',
  // Invitations are mailed with a link built from it (no mail is sent: no SMTP is configured).
  PUBLIC_URL: 'https://cms.northwind.example',
})
const kernel = await createKernel(config)
const runtime = createRuntime(kernel)
const server = runtime.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 20 << 20, idleTimeout: 30 })
await runtime.start()
const origin = `http://127.0.0.1:${server.port}`

async function call(method: string, path: string, token: string | null, body?: unknown) {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text ? JSON.parse(text).data : null
}

/** A soft landscape-like gradient, as a PNG: the blog's cover image. */
function cover(width: number, height: number): Uint8Array {
  const data = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4
      const hill = y > height * (0.6 + 0.08 * Math.sin(x / 70)) ? 1 : 0
      data[i] = hill ? 40 + y / 20 : 150 + y / 6
      data[i + 1] = hill ? 90 + y / 12 : 190 + y / 10
      data[i + 2] = hill ? 70 : 240
      data[i + 3] = 255
    }
  }
  return encodePng({ data, width, height }, 6)
}

const doc = (...blocks: Record<string, unknown>[]) => ({ type: 'doc', blocks })
let uid = 0
const block = (component: string, fields: Record<string, unknown>) => ({ component, _uid: `s${++uid}`, ...fields })

try {
  // ---- content ----
  const { token } = await call('POST', '/v1/auth/register', null, { email: EMAIL, password: PASSWORD, name: 'Ada Lindqvist' })
  const space = 'journal'
  await call('POST', '/v1/spaces', token, { slug: space, name: 'Northwind Journal', default_lang: 'en', locales: ['en', 'de'] })
  await call('POST', '/v1/spaces', token, { slug: 'northwind-shop', name: 'Northwind Shop', default_lang: 'en' })
  const components = [
    {
      name: 'article',
      display_name: 'Article',
      is_root: true,
      is_nestable: false,
      schema: {
        title: { type: 'text', required: true },
        teaser: { type: 'textarea' },
        cover: { type: 'asset' },
        published_on: { type: 'datetime' },
        tags: { type: 'tags' },
        body: { type: 'blocks', component_whitelist: ['paragraph', 'quote'] },
      },
    },
    { name: 'page', display_name: 'Page', is_root: true, is_nestable: false, schema: { title: { type: 'text', required: true }, body: { type: 'blocks' } } },
    { name: 'paragraph', display_name: 'Paragraph', is_root: false, is_nestable: true, schema: { text: { type: 'markdown' } } },
    { name: 'quote', display_name: 'Quote', is_root: false, is_nestable: true, schema: { quote: { type: 'textarea', required: true }, author: { type: 'text' } } },
  ]
  // Nestable blueprints first: the API refuses a whitelist naming a blueprint the Space does not have yet.
  for (const c of components.toSorted((a, b) => Number(a.is_root) - Number(b.is_root))) await call('POST', `/v1/spaces/${space}/components`, token, c)

  const form = new FormData()
  form.append('file', new Blob([cover(960, 540) as Uint8Array<ArrayBuffer>], { type: 'image/png' }), 'fjord-morning.png')
  form.append('alt', JSON.stringify({ en: 'Morning light over the fjord', de: 'Morgenlicht über dem Fjord' }))
  const up = await fetch(`${origin}/v1/spaces/${space}/assets`, { method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: form })
  if (up.status !== 201) throw new Error(`asset upload: ${up.status} ${await up.text()}`)
  const image = (await up.json()).data

  const story = (body: Record<string, unknown>) => call('POST', `/v1/spaces/${space}/stories`, token, body)
  const publish = (uuid: string) => call('POST', `/v1/spaces/${space}/stories/${uuid}/publish`, token)
  const home = await story({ name: 'Home', slug: 'home', content: doc(block('page', { title: 'Northwind Journal', body: [block('paragraph', { text: 'Notes from the north.' })] })) })
  await publish(home.uuid)
  const about = await story({ name: 'About us', slug: 'about', content: doc(block('page', { title: 'About us', body: [] })) })
  await publish(about.uuid)
  const blog = await story({ name: 'Blog', slug: 'blog', is_folder: true })
  await story({ name: 'Guides', slug: 'guides', is_folder: true, parent_uuid: blog.uuid })
  const posts = [
    { name: 'A morning on the fjord', slug: 'a-morning-on-the-fjord', publish: true, change: true },
    { name: 'Packing for the long light', slug: 'packing-for-the-long-light', publish: true, change: false },
    { name: 'Ten quiet harbours', slug: 'ten-quiet-harbours', publish: false, change: false },
  ]
  let featured = ''
  for (const p of posts) {
    const s = await story({
      name: p.name,
      slug: p.slug,
      parent_uuid: blog.uuid,
      content: doc(
        block('article', {
          title: p.name,
          teaser: 'The ferry leaves at six. By seven the mist has lifted and the water is a mirror for the hills.',
          cover: { uuid: image.uuid },
          published_on: '2026-06-21T06:00:00.000Z',
          tags: ['travel', 'norway', 'slow living'],
          body: [
            block('paragraph', { text: 'We arrived the evening before, when the light **never quite leaves** the sky.' }),
            block('quote', { quote: 'The north teaches patience, and rewards it.', author: 'A fisherman in Ålesund' }),
          ],
        }),
      ),
    })
    if (p.publish) await publish(s.uuid)
    if (p.change) {
      await call('PUT', `/v1/spaces/${space}/stories/${s.uuid}`, token, { name: p.name, expected_version_no: s.version_no })
    }
    if (!featured) featured = s.uuid
  }
  const old = await story({ name: 'Winter opening hours', slug: 'winter-opening-hours', content: doc(block('page', { title: 'Winter opening hours', body: [] })) })
  await call('POST', `/v1/spaces/${space}/stories/${old.uuid}/archive`, token)

  // ---- people and operations ----
  await call('POST', `/v1/spaces/${space}/invitations`, token, { email: 'bjorn@northwind.example', role: 'editor' })
  await call('POST', `/v1/spaces/${space}/invitations`, token, { email: 'freelance@example.com', role: 'viewer' })
  await call('POST', `/v1/spaces/${space}/tokens`, token, { name: 'Website build', role: 'viewer' })
  await call('POST', `/v1/spaces/${space}/tokens`, token, { name: 'Import script', role: 'editor', expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString() })
  const hook = await call('POST', `/v1/spaces/${space}/webhooks`, token, {
    label: 'Site rebuild',
    url: `http://127.0.0.1:${receiver.port}/rebuild`,
    events: ['story.published', 'story.unpublished'],
  })
  await call('POST', `/v1/spaces/${space}/webhooks`, token, { label: 'Search index', url: `http://127.0.0.1:${receiver.port}/index`, events: ['story.published'], active: false })
  await call('POST', `/v1/spaces/${space}/webhooks/${hook.id}/ping`, token)
  // A translation for review, and the ping's delivery: run the due jobs now rather than wait for the worker's poll.
  const job = await call('POST', `/v1/spaces/${space}/ai/translate`, token, { story_uuid: featured, target_lang: 'de' })
  await kernel.jobs.runDueJobs()
  const { status } = await call('GET', `/v1/spaces/${space}/ai-jobs/${job.uuid}`, token)
  if (status !== 'awaiting_review') throw new Error(`the AI job did not reach review: ${status}`)

  // ---- screens ----
  mkdirSync(OUT, { recursive: true })
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--hide-scrollbars'] })
  const page = await (await browser.newContext({ baseURL: origin, viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 })).newPage()
  const shots: string[] = []
  const shot = async (name: string) => {
    // Not 'networkidle': the Story editor keeps its live stream open. The screens settle within a second.
    await page.waitForLoadState('load')
    await Bun.sleep(1500)
    const path = join(OUT, `admin-${name}.png`)
    await page.screenshot({ path, type: 'png' })
    shots.push(`${path} (${Math.round(statSync(path).size / 1024)} KB)`)
  }

  await page.goto('/admin/sign-in')
  await page.getByRole('heading', { name: 'Sign in' }).waitFor()
  await page.getByLabel('E-mail').fill(EMAIL)
  await shot('sign-in')
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByText('Northwind Journal').first().waitFor()
  await shot('spaces')

  await page.goto(`/admin/spaces/${space}`)
  await page.getByText('Packing for the long light').waitFor()
  await shot('stories')

  await page.goto(`/admin/spaces/${space}/stories/${featured}`)
  await page.getByRole('heading', { name: 'A morning on the fjord' }).waitFor()
  await shot('story-editor')

  await page.goto(`/admin/spaces/${space}/components`)
  await page.getByText('Quote').first().waitFor()
  await shot('components')

  await page.goto(`/admin/spaces/${space}/settings`)
  await page.getByRole('heading', { name: 'Space settings', level: 1 }).waitFor()
  await page.locator('tr[data-locale]').first().waitFor()
  await shot('settings')

  // The command palette over the Story tree, searching Stories by name.
  await page.goto(`/admin/spaces/${space}`)
  await page.getByRole('heading', { name: 'Stories', level: 1 }).waitFor()
  await page.keyboard.press('Control+k')
  await page.getByRole('dialog').waitFor()
  await page.keyboard.type('fjord')
  await page.getByRole('option', { name: /A morning on the fjord/ }).waitFor()
  await shot('palette')
  await page.keyboard.press('Escape')

  // People and operations.
  await page.goto(`/admin/spaces/${space}/members`)
  await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor()
  await page.getByText('bjorn@northwind.example').first().waitFor()
  await shot('members')

  await page.goto(`/admin/spaces/${space}/tokens`)
  await page.getByRole('heading', { name: 'Space tokens', level: 1 }).waitFor()
  await page.getByText('Import script').first().waitFor()
  await shot('tokens')

  await page.goto(`/admin/spaces/${space}/webhooks`)
  await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor()
  await page.getByText('Site rebuild').first().waitFor()
  // The delivery log of the webhook that was pinged.
  await page.getByRole('button', { name: 'Deliveries: Site rebuild' }).click()
  await page.getByText('ping').first().waitFor()
  await shot('webhooks')

  await page.goto(`/admin/spaces/${space}/ai`)
  await page.getByRole('heading', { name: 'AI', level: 1 }).waitFor()
  await page.locator('[data-job]').first().waitFor()
  await page.getByTestId('ai-status').getByText('gpt-4o-mini').waitFor()
  // The translation's review: what it changes, against the Story.
  await page.getByRole('button', { name: 'Review' }).first().click()
  await page.getByTestId('ai-review').getByText('Ein Morgen am Fjord').first().waitFor()
  await shot('ai')

  await page.goto(`/admin/spaces/${space}/billing`)
  await page.getByRole('heading', { name: 'Billing', level: 1 }).waitFor()
  await page.locator('[data-limit]').first().waitFor()
  await shot('billing')

  await page.goto('/admin/account')
  await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor()
  await page.getByLabel('Your name').waitFor()
  await shot('account')

  // The dark theme (the system's preference, which the app follows unless a theme was picked).
  await page.emulateMedia({ colorScheme: 'dark' })
  await page.goto(`/admin/spaces/${space}/stories/${featured}`)
  await page.getByRole('heading', { name: 'A morning on the fjord' }).waitFor()
  await shot('story-editor-dark')
  await page.emulateMedia({ colorScheme: 'light' })

  // The in-page editing bridge on a site of another origin, opened as the Preview button opens it.
  const fjord = await call('GET', `/v1/cdn/${space}/stories/blog/a-morning-on-the-fjord`, null)
  const site = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () =>
      new Response(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Northwind Journal</title><style>
          body{margin:0;font:17px/1.6 Georgia,serif;color:#1f2937;background:#fffdf8}
          header{padding:18px 48px;border-bottom:1px solid #e5e7eb;font:600 20px system-ui}
          main{max-width:760px;margin:40px auto;padding:0 24px} h1{font-size:40px;line-height:1.2;margin:0 0 12px}
          img{width:100%;border-radius:8px;margin:16px 0} .teaser{font-size:20px;color:#4b5563}
          aside{margin-top:40px;padding:16px 20px;background:#f3f4f6;border-radius:8px}</style></head><body>
          <header>Northwind Journal</header>
          <main><article data-story-uuid="${fjord.uuid}" data-story-path="/blog/a-morning-on-the-fjord">
            <h1 data-story-field="content/blocks/0/title">${fjord.content.blocks[0].title}</h1>
            <p class="teaser" data-story-field="content/blocks/0/teaser">${fjord.content.blocks[0].teaser}</p>
            <img src="${fjord.content.blocks[0].cover.url}" alt="">
          </article>
          <aside data-story-uuid="${about.uuid}"><strong>About us.</strong> A small team writing about the north.</aside></main>
          <script src="${origin}/service-admin.js" data-space="${space}"></script></body></html>`,
        { headers: { 'Content-Type': 'text/html; charset=utf-8' } },
      ),
  })
  await call('PATCH', `/v1/spaces/${space}`, token, { preview_url: `http://127.0.0.1:${site.port}/` })
  await call('PUT', `/v1/spaces/${space}/stories/${featured}`, token, {
    content: doc(block('article', { ...fjord.content.blocks[0], cover: { uuid: image.uuid }, title: 'A morning on the fjord (draft: new title)' })),
  })
  const minted = await call('POST', `/v1/spaces/${space}/preview-tokens`, token, { path: '/blog/a-morning-on-the-fjord' })
  await page.goto(minted.url)
  await page.getByText('draft: new title').waitFor()
  await shot('preview')
  site.stop(true)

  await browser.close()
  console.log(`wrote:\n  ${shots.join('\n  ')}`)
} finally {
  ai.stop(true)
  receiver.stop(true)
  server.stop(true)
  await runtime.close()
  rmSync(dataDir, { recursive: true, force: true })
}
