/**
 * The gate every route passes: hostile bodies, path parameters and query values, generated for every route the app
 * registers (and every property its body schema declares), never get a 5xx, a stack, a stall, or a body outside the
 * one error shape — and never reach the database as a value it refuses (the last-line-of-defence warning must stay
 * silent: it means a boundary check is missing).
 *
 * A new module's routes are fuzzed without any change here. Give a route a valid base body in VALID_BODIES when the
 * hostile values should reach its service rather than stop at the first missing required field.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createLogger } from '../src/kernel/logger'
import { type TestApp, testApp } from './helpers/app'
import { type FakeAi, startFakeAi } from './helpers/fake-ai'
import { cpuTimer } from './helpers/cpu'
import { av1Parts, box, craftAvif, ispe } from './helpers/avif'
import { photo, pngOf } from './helpers/images'

setDefaultTimeout(60_000)

let t: TestApp
let doc: any
const logged: { level: string; line: string }[] = []

interface World {
  token: string
  space: string
  story: { uuid: string; path: string }
  webhookId: number
  tokenId: string
  /** The public half of a preview token of the Space (the draft snapshot route). */
  previewTokenId: string
  form: { uuid: string; slug: string; submissionUuid: string }
  subscriberId: number
  shop: { productId: string; productSlug: string; cartUuid: string; itemId: number; orderId: string }
  /** An image asset (its focal point and crop are fuzzed through PATCH). */
  assetUuid: string
}
let world: World
let fakeAi: FakeAi

const PARAM_HOSTILE = [
  '%00',
  'a%00b',
  '%ED%A0%80', // a UTF-16 surrogate encoded as UTF-8: not valid UTF-8
  '%C0%AF', // an overlong encoding
  '%F0%9F%98%80',
  '1.5',
  '1e300',
  '-1',
  '0',
  '%20',
  'NaN',
  'Infinity',
  '9'.repeat(40),
  '%25',
  '%2e%2e',
  '__proto__',
  'constructor',
  "'%3B drop table users%3B --",
  'x'.repeat(3000),
]

const QUERY_HOSTILE = ['0', '-1', '1.5', 'Infinity', 'NaN', '1e300', 'abc', '', '%00', 'a%00b', '%ED%A0%80', 'x'.repeat(5000), '[]', '%7B%7D', '9'.repeat(40)]

/** JSON texts for a property's value (raw, so lone surrogates and NUL escapes reach the parser as clients send them). */
const VALUE_HOSTILE = [
  '"\\u0000"',
  '"a\\u0000b"',
  '"\\ud800"',
  '"\\udc00x"',
  '""',
  '" "',
  `"${'x'.repeat(100_000)}"`,
  '1e300',
  '-1',
  '0',
  '1.5',
  '"1"',
  'true',
  'null',
  '[]',
  '{}',
  '[[[[[[[[[[]]]]]]]]]]',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  `${'['.repeat(5000)}${']'.repeat(5000)}`,
]

const BODY_HOSTILE: (string | Uint8Array)[] = [
  '[]',
  '"s"',
  '123',
  'true',
  'null',
  '{',
  '{"a":',
  '{"a":1}}',
  '\u0000',
  `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
  `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`,
  '{"__proto__":{"admin":true}}',
  '{"unknown_field_for_fuzzing":1}',
  new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), // {"a":"<invalid UTF-8>"}
]

/** Valid bodies per route (method + Elysia path), so single-property mutations reach the service. */
function validBodies(w: World): Record<string, () => Record<string, unknown>> {
  const uniq = () => Math.random().toString(36).slice(2, 8)
  return {
    'POST /v1/auth/register': () => ({ email: `f-${uniq()}@example.com`, password: 'fuzzing password', name: 'Fuzz' }),
    'POST /v1/auth/login': () => ({ email: 'nobody@example.com', password: 'wrong password' }),
    // POST /v1/auth/password has no base body on purpose: a valid one costs an argon2 verification per probe, which
    // on a busy machine crosses the stall bound; its hostile values stop at validation either way.
    'PATCH /v1/auth/me': () => ({ name: 'Fuzz', ui_language: 'de', ui_theme: 'dark' }),
    'POST /v1/auth/password-reset': () => ({ email: 'nobody@example.com' }),
    'POST /v1/auth/password-reset/confirm': () => ({ token: 'A'.repeat(43), new_password: 'fuzzing new password' }),
    'POST /v1/auth/register/confirm': () => ({ token: 'A'.repeat(43) }),
    'POST /v1/pitch/claim': () => ({ token: 'A'.repeat(43), password: 'fuzzing password' }),
    'POST /v1/spaces/': () => ({ slug: `fz-${uniq()}`, name: 'Fuzz space', default_lang: 'en', locales: ['en', 'de'] }),
    'PATCH /v1/spaces/:space': () => ({ name: 'Renamed by fuzz' }),
    'PATCH /v1/spaces/:space/billing': () => ({ plan: 'pro' }),
    'POST /v1/spaces/:space/tokens': () => ({ name: 'fuzz token', role: 'viewer' }),
    'POST /v1/spaces/:space/locales': () => ({ code: 'fr', fallback: 'en' }),
    'PATCH /v1/spaces/:space/locales/:code': () => ({ fallback: 'en', position: 0 }),
    'POST /v1/spaces/:space/stories/': () => ({
      name: 'Fuzz story',
      slug: `fz-${uniq()}`,
      content: { type: 'doc', blocks: [{ component: 'hero', _uid: `u${uniq()}`, headline: 'Hi' }] },
    }),
    'PUT /v1/spaces/:space/preview-tokens/:token/draft': () => ({
      story_uuid: w.story.uuid,
      lang: 'en',
      name: 'Fuzzed',
      content: { type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline: 'Hi', items: [{ component: 'hero', _uid: 'h2' }] }] },
    }),
    'PUT /v1/spaces/:space/stories/:uuid': () => ({ name: 'Fuzzed', content: { type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline: 'Hi' }] } }),
    'POST /v1/spaces/:space/stories/bulk': () => ({ action: 'unpublish', uuids: [w.story.uuid] }),
    'PUT /v1/spaces/:space/stories/:uuid/schedules/:action': () => ({ at: new Date(t.clock.ms() + 3_600_000).toISOString() }),
    'POST /v1/spaces/:space/components/': () => ({ name: `fz_${uniq()}`, schema: { title: { type: 'text' } } }),
    'PUT /v1/spaces/:space/components/:name': () => ({ display_name: 'Hero', schema: { headline: { type: 'text' } } }),
    'POST /v1/spaces/:space/webhooks/': () => ({ label: 'Fuzz hook', url: 'http://127.0.0.1:9/hook', events: ['story.published'] }),
    'PATCH /v1/spaces/:space/webhooks/:id': () => ({ label: 'Fuzz hook 2' }),
    'POST /v1/graphql': () => ({
      query: `query ($p: Int) { story(space: "${w.space}", path: "${w.story.path}") { uuid content } stories(space: "${w.space}", perPage: $p) { total } }`,
      variables: { p: 10 },
    }),
    'POST /v1/spaces/:space/forms': () => ({ slug: `fz-${uniq()}`, label: 'Fuzz form', fields: FUZZ_FORM_FIELDS }),
    'PUT /v1/spaces/:space/forms/:uuid': () => ({ slug: w.form.slug, label: 'Fuzz form', fields: FUZZ_FORM_FIELDS, rate_limit_per_ip: 10_000 }),
    'POST /v1/cdn/:space/forms/:slug': () => ({ data: { name: 'Fuzz', email: 'fuzz@example.com', age: 3, ok: true } }),
    'POST /v1/cdn/:space/subscribe': () => ({ email: `fz-${uniq()}@example.com` }),
    'PATCH /v1/spaces/:space/subscribers/:id': () => ({ name: 'Fuzz' }),
    'PUT /v1/spaces/:space/newsletter': () => ({ newsletter_redirect_url: null }),
    'POST /v1/onboard': () => ({
      email: `fz-${uniq()}@example.com`,
      password: 'fuzzing password',
      name: 'Fuzz',
      space: { slug: `fz-${uniq()}`, name: 'Fuzz onboard', default_lang: 'en', locales: ['en', 'de'] },
    }),
    // AI actions reach a fake OpenAI-compatible server (answers at once), so their bodies get past configuration.
    'POST /v1/spaces/:space/ai/text': () => ({ prompt: 'Write a line', context: { story_uuid: w.story.uuid, lang: 'en' } }),
    'POST /v1/spaces/:space/ai/stream-text': () => ({ prompt: 'Write a line' }),
    'POST /v1/spaces/:space/ai/seo-meta': () => ({ story_uuid: w.story.uuid, lang: 'en' }),
    'POST /v1/spaces/:space/ai/internal-links': () => ({ story_uuid: w.story.uuid, lang: 'en' }),
    'POST /v1/spaces/:space/ai/story-insights': () => ({ story_uuid: w.story.uuid }),
    'POST /v1/spaces/:space/ai/translate': () => ({ story_uuid: w.story.uuid, target_lang: 'de' }),
    'POST /v1/spaces/:space/ai/alt-text': () => ({ asset_uuid: crypto.randomUUID(), lang: 'en' }),
    'POST /v1/spaces/:space/products': () => ({ slug: `fz-${uniq()}`, name: { en: 'Fuzz' }, price: 100, currency: 'EUR', stock: 1000 }),
    'PATCH /v1/spaces/:space/products/:id': () => ({ price: 200 }),
    'PATCH /v1/spaces/:space/orders/:id': () => ({ status: 'paid' }),
    'PATCH /v1/spaces/:space/shop': () => ({ success_url: 'https://shop.example/thanks' }),
    'PATCH /v1/spaces/:space/assets/:asset': () => ({ focus: { x: 0.5, y: 0.5 }, crop: { x: 0, y: 0, width: 1, height: 1 } }),
    'POST /v1/cdn/:space/carts/:uuid/items': () => ({ product: w.shop.productSlug, quantity: 1 }),
    'POST /v1/cdn/:space/carts/:uuid/checkout': () => ({ email: 'fuzz@example.com', name: 'Fuzz' }),
    'POST /v1/spaces/:space/datasources/cron-preview': () => ({ cron: '0 * * * *', count: 3 }),
    'POST /v1/spaces/:space/dom-overlays/test': () => ({ path: '/blog/post', html: '<main><h1 class="t">Title</h1><p>Text</p></main>', lang: 'en' }),
    'POST /v1/spaces/:space/audience-segments/check-rules': () => ({ rules: [{ type: 'referrer', operator: 'regex', value: '^https://a' }] }),
    'POST /v1/pitch-invitees': () => ({ slug: `fz-${uniq()}`, name: 'Fuzz prospect', email: `fz-${uniq()}@example.com` }),
  }
}

const FUZZ_FORM_FIELDS = [
  { key: 'name', type: 'text', label: 'Name', required: true },
  { key: 'email', type: 'email', label: 'E-mail' },
  { key: 'age', type: 'number', label: 'Age' },
  { key: 'ok', type: 'consent', label: 'OK' },
]

/** A valid value for each path parameter name. */
function validParam(name: string, path: string, w: World): string {
  switch (name) {
    case 'space':
      return w.space
    case 'uuid':
      return path.includes('/forms/') ? w.form.uuid : path.includes('/carts/') ? w.shop.cartUuid : w.story.uuid
    case 'slug':
      return path.includes('/forms/') ? w.form.slug : path.includes('/products/') ? w.shop.productSlug : 'x'
    case 'itemId':
      return String(w.shop.itemId)
    case 'submissionUuid':
      return w.form.submissionUuid
    case 'asset':
      return w.assetUuid
    case 'token':
      return path.includes('/preview-tokens/') ? w.previewTokenId : 'A'.repeat(43)
    case 'version_no':
      return '1'
    case 'action':
      return 'unpublish'
    case 'name':
      return 'hero'
    case 'code':
      return 'de'
    case 'deliveryId':
    case 'aiJob':
      return crypto.randomUUID()
    case 'id':
      if (path.includes('/products/')) return w.shop.productId
      if (path.includes('/orders/')) return w.shop.orderId
      return path.includes('/webhooks/') ? String(w.webhookId) : path.includes('/subscribers/') ? String(w.subscriberId) : w.tokenId
    case '*':
      return w.story.path
    default:
      return 'x'
  }
}

async function buildWorld(): Promise<World> {
  const owner = await t.register()
  const space = (await t.createSpace(owner.token, { default_lang: 'en', locales: ['en', 'de'] })).slug
  const c = await t.request('POST', `/v1/spaces/${space}/components`, {
    token: owner.token,
    body: { name: 'hero', schema: { headline: { type: 'text' }, items: { type: 'blocks' }, tags: { type: 'tags' } } },
  })
  if (c.status !== 201) throw new Error(`component: ${c.status} ${c.text}`)
  const s = await t.request('POST', `/v1/spaces/${space}/stories`, {
    token: owner.token,
    body: { name: 'Home', slug: 'home', content: { type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline: 'Home' }] } },
  })
  if (s.status !== 201) throw new Error(`story: ${s.status} ${s.text}`)
  await t.request('POST', `/v1/spaces/${space}/stories/${s.body.data.uuid}/publish`, { token: owner.token })
  const hook = await t.request('POST', `/v1/spaces/${space}/webhooks`, {
    token: owner.token,
    body: { label: 'hook', url: 'http://127.0.0.1:9/hook', events: ['story.published'] },
  })
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${hook.text}`)
  const tok = await t.spaceToken(owner.token, space, 'viewer')
  const form = await t.request('POST', `/v1/spaces/${space}/forms`, {
    token: owner.token,
    body: { slug: 'fuzz-form', label: 'Fuzz', fields: FUZZ_FORM_FIELDS, rate_limit_per_ip: 10_000 },
  })
  if (form.status !== 201) throw new Error(`form: ${form.status} ${form.text}`)
  const sub = await t.request('POST', `/v1/cdn/${space}/forms/fuzz-form`, { body: { data: { name: 'Seed', email: 'seed@example.com' } } })
  if (sub.status !== 201) throw new Error(`submission: ${sub.status} ${sub.text}`)
  await t.request('POST', `/v1/cdn/${space}/subscribe`, { body: { email: 'seed@example.com' } })
  const subs = await t.request('GET', `/v1/spaces/${space}/subscribers`, { token: owner.token })
  const product = await t.request('POST', `/v1/spaces/${space}/products`, {
    token: owner.token,
    body: { slug: 'fuzz-product', name: { en: 'Fuzz' }, price: 100, currency: 'EUR', stock: 100_000 },
  })
  if (product.status !== 201) throw new Error(`product: ${product.status} ${product.text}`)
  const bought = (await t.request('POST', `/v1/cdn/${space}/carts`)).body.data.uuid
  await t.request('POST', `/v1/cdn/${space}/carts/${bought}/items`, { body: { product: 'fuzz-product', quantity: 1 } })
  const order = await t.request('POST', `/v1/cdn/${space}/carts/${bought}/checkout`, { body: { email: 'seed@example.com', name: 'Seed' } })
  if (order.status !== 201) throw new Error(`order: ${order.status} ${order.text}`)
  const cart = (await t.request('POST', `/v1/cdn/${space}/carts`)).body.data.uuid
  const item = await t.request('POST', `/v1/cdn/${space}/carts/${cart}/items`, { body: { product: 'fuzz-product', quantity: 1 } })
  const preview = await t.request('POST', `/v1/spaces/${space}/preview-tokens`, { token: owner.token, body: {} })
  if (preview.status !== 201) throw new Error(`preview token: ${preview.status} ${preview.text}`)
  const fd = new FormData()
  fd.append('file', new Blob([pngOf(photo(40, 30)) as BlobPart], { type: 'image/png' }), 'fuzz.png')
  const asset = await t.request('POST', `/v1/spaces/${space}/assets`, { token: owner.token, raw: fd })
  if (asset.status !== 201) throw new Error(`asset: ${asset.status} ${asset.text}`)
  return {
    assetUuid: asset.body.data.uuid,
    previewTokenId: preview.body.data.token.split('.')[0],
    shop: { productId: product.body.data.id, productSlug: 'fuzz-product', cartUuid: cart, itemId: item.body.data.items[0].id, orderId: order.body.data.id },
    token: owner.token,
    space,
    story: { uuid: s.body.data.uuid, path: 'home' },
    webhookId: hook.body.data.id,
    tokenId: tok.id,
    form: { uuid: form.body.data.uuid, slug: 'fuzz-form', submissionUuid: sub.body.data.submission_uuid },
    subscriberId: subs.body.data[0].id,
  }
}

/** Keeps the world usable: a fuzzed logout, archive or delete may have taken the token, Space or Story away. */
async function ensureWorld() {
  const me = await t.request('GET', '/v1/auth/me', { token: world.token })
  const space = me.status === 200 ? await t.request('GET', `/v1/spaces/${world.space}`, { token: world.token }) : null
  const story = space?.status === 200 ? await t.request('GET', `/v1/spaces/${world.space}/stories/${world.story.uuid}`, { token: world.token }) : null
  if (me.status !== 200 || space?.status !== 200 || space.body.data.archived || story?.status !== 200 || story.body.data.status === 'archived') {
    world = await buildWorld()
  }
}

interface Probe {
  method: string
  path: string
  raw?: string | Uint8Array
  contentType?: string
  token?: string
  /** More request headers (a Cookie, X-Admin-Session). */
  headers?: Record<string, string>
  what: string
}

const failures: string[] = []
let sent = 0
/** CPU time one hostile request may cost (a password hash is the dearest honest work, ~0.1 s). */
const CPU_BUDGET_MS = 2000
/** A bound on waiting for an answer at all (a stall that burns no CPU): generous, the machine may be loaded. */
const NO_ANSWER_MS = 30_000

async function probe(p: Probe): Promise<number | undefined> {
  const headers: Record<string, string> = { 'X-Forwarded-For': `10.${(sent >> 16) & 255}.${(sent >> 8) & 255}.${sent & 255}` }
  sent++
  if (p.token) headers.Authorization = `Bearer ${p.token}`
  Object.assign(headers, p.headers)
  if (p.raw !== undefined) headers['Content-Type'] = p.contentType ?? 'application/json'
  // "No stall" is judged on CPU time (a catastrophic regex, a quadratic parse), not wall time: on a loaded machine a
  // cheap request (a password hash) can wait seconds for a core. A request that never answers fails on NO_ANSWER_MS.
  const cpu = cpuTimer()
  let res: Response
  try {
    const answer = t.app.handle(new Request(`http://localhost${p.path}`, { method: p.method, headers, body: p.raw as RequestInit['body'] }))
    const first = await Promise.race([answer, Bun.sleep(NO_ANSWER_MS).then(() => null)])
    if (first === null) {
      failures.push(`${p.method} ${p.path.slice(0, 120)} [${p.what}]: no answer within ${NO_ANSWER_MS} ms`)
      return
    }
    res = first
  } catch (err) {
    // The Request constructor refusing a URL is the client's problem, not the server's.
    if (err instanceof TypeError && /URL|header/i.test(String(err))) return
    failures.push(`${p.method} ${p.path.slice(0, 120)} [${p.what}]: threw ${String(err).slice(0, 200)}`)
    return
  }
  // An event stream that opened stays open: its status and headers are the answer; stop reading.
  if (res.status < 400 && (res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await res.body?.cancel()
    const ms = cpu.ms()
    if (ms > CPU_BUDGET_MS) failures.push(`${p.method} ${p.path.slice(0, 120)} [${p.what}]: took ${Math.round(ms)} ms of CPU`)
    return
  }
  const text = await res.text()
  const where = `${p.method} ${p.path.slice(0, 120)} [${p.what}]`
  if (res.status >= 500) failures.push(`${where}: ${res.status} ${text.slice(0, 200)}`)
  else if (res.status >= 400) {
    let body: any = null
    try {
      body = JSON.parse(text)
    } catch {}
    if (!body || typeof body.error !== 'string' || typeof body.message !== 'string') failures.push(`${where}: ${res.status} not the error shape: ${text.slice(0, 120)}`)
    if (text.includes('    at ') || text.includes('/$bunfs/') || text.includes('node_modules')) failures.push(`${where}: leaks internals`)
  }
  const ms = cpu.ms()
  if (ms > CPU_BUDGET_MS) failures.push(`${where}: took ${Math.round(ms)} ms of CPU`)
  return res.status
}

beforeAll(async () => {
  const logger = createLogger('warn', (line, level) => void logged.push({ level, line }))
  fakeAi = startFakeAi()
  // PUBLIC_URL set: routes that mail links (subscribe, invitations) reach their services instead of answering 403.
  t = await testApp({ outboundAllowPrivate: true, publicUrl: 'https://cms.example.com' }, { AI_BASE_URL: fakeAi.url, AI_MODEL: 'fuzz-model', AI_VISION_MODEL: 'fuzz-vision' }, { logger })
  world = await buildWorld()
  doc = (await t.request('GET', '/v1/openapi.json')).body
  // Run from source, the admin app is bundled on its first request (once per process; the executable embeds it):
  // that one-time build is not a request's cost.
  await t.request('GET', '/admin')
}, 60_000)

afterAll(async () => {
  await t?.close()
  await fakeAi?.stop()
})

/** The document's operation for an Elysia route. */
function operationOf(method: string, path: string): any {
  let p = path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
  if (p.length > 1) p = p.replace(/\/$/, '')
  if (p.endsWith('/*')) p = `${p.slice(0, -2)}/{path}`
  return doc.paths[p]?.[method.toLowerCase()]
}

function routes(): { method: string; path: string }[] {
  const list = (t.app.app.routes as { method: string; path: string }[]).filter((r) => r.method !== 'OPTIONS' && r.method !== 'ALL')
  // Destructive routes last, so the world is intact for the others.
  const destructive = (r: { method: string; path: string }) => r.method === 'DELETE' || /logout|archive/.test(r.path)
  return [...list.filter((r) => !destructive(r)), ...list.filter(destructive)]
}

function fill(path: string, override?: { name: string; value: string }) {
  return path.replace(/:([A-Za-z0-9_]+)|\*$/g, (m, name: string | undefined) => {
    const n = name ?? '*'
    return override && override.name === n ? override.value : validParam(n, path, world)
  })
}

describe('every route against hostile input', () => {
  test(
    'no 5xx, no stack, no stall, always the error shape; nothing refused by the database',
    async () => {
      const bodies = validBodies(world)
      for (const r of routes()) {
        await ensureWorld()
        const op = operationOf(r.method, r.path)
        const names = [...r.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]).concat(r.path.endsWith('*') ? ['*'] : [])
        const hasBody = op?.requestBody !== undefined
        const base = bodies[`${r.method} ${r.path}`]?.() ?? {}
        const baseRaw = hasBody ? JSON.stringify(base) : undefined

        // Path parameters.
        for (const name of names) {
          for (const value of PARAM_HOSTILE) {
            await probe({ method: r.method, path: fill(r.path, { name, value }), raw: baseRaw, token: world.token, what: `param ${name}` })
          }
        }
        const path = fill(r.path)
        // Query values, for every query parameter the route declares (and one it does not).
        const queryNames = ((op?.parameters ?? []) as { name: string; in: string }[]).filter((p) => p.in === 'query').map((p) => p.name)
        for (const name of [...queryNames, 'unknown_param']) {
          for (const value of QUERY_HOSTILE) {
            await probe({ method: r.method, path: `${path}?${name}=${value}`, raw: baseRaw, token: world.token, what: `query ${name}` })
          }
          await probe({ method: r.method, path: `${path}?${name}=1&${name}=2`, raw: baseRaw, token: world.token, what: `query ${name} twice` })
        }
        // Whole bodies, on every route (a body where none is expected must not break it either).
        for (const raw of BODY_HOSTILE) {
          await probe({ method: r.method, path, raw, token: world.token, what: `body ${typeof raw === 'string' ? raw.slice(0, 20) : 'bytes'}` })
        }
        await probe({ method: r.method, path, raw: baseRaw ?? '{}', contentType: 'text/plain', token: world.token, what: 'text/plain body' })
        // A route that takes JSON refuses its valid body in any other media type (415), never reads it as `{}`.
        const types = Object.keys(op?.requestBody?.content ?? {})
        if (hasBody && types.length === 1 && types[0] === 'application/json') {
          const fields = Object.fromEntries(Object.entries(base).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]))
          const form = Object.entries(fields)
            .map(([k, v]) => `--FUZZ\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
            .join('')
          for (const [contentType, raw] of [
            ['multipart/form-data; boundary=FUZZ', `${form}--FUZZ--\r\n`],
            ['application/x-www-form-urlencoded', new URLSearchParams(fields).toString()],
          ]) {
            const status = await probe({ method: r.method, path, raw, contentType, token: world.token, what: contentType })
            if (status !== 415) failures.push(`${r.method} ${path} [${contentType}]: ${status}, not 415`)
          }
        }
        await probe({ method: r.method, path, raw: baseRaw ?? '{}', token: 'u_AAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', what: 'unknown token' })
        await probe({ method: r.method, path, raw: baseRaw ?? '{}', what: 'anonymous' })
        // One property at a time, the rest of a valid body kept.
        if (hasBody) {
          const schema = op.requestBody.content?.['application/json']?.schema ?? {}
          const props = Object.keys(schema.properties ?? {})
          for (const prop of [...props, '__proto__', 'constructor', 'unknown_field']) {
            for (const value of VALUE_HOSTILE) {
              const rest = JSON.stringify({ ...base, [prop]: undefined })
              const raw = rest === '{}' ? `{${JSON.stringify(prop)}:${value}}` : `${rest.slice(0, -1)},${JSON.stringify(prop)}:${value}}`
              await probe({ method: r.method, path, raw, token: world.token, what: `body ${prop}=${value.slice(0, 20)}` })
            }
          }
        }
      }
      const refused = logged.filter((l) => l.line.includes('boundary check is missing') || l.level === 'error')
      expect(refused.map((l) => l.line.slice(0, 400))).toEqual([])
      expect(failures).toEqual([])
      expect(sent).toBeGreaterThan(2000)
    },
    600_000,
  )

  test('the admin-session routes against hostile cookies and headers: 401/403 in the error shape, never accepted', async () => {
    const before = failures.length
    const secret = 'A'.repeat(43)
    const cookies = [
      '',
      'cs_admin_session=',
      'cs_admin_session',
      `cs_admin_session=as_AAAAAAAAAAAA.${secret}`,
      `cs_admin_session=as_AAAAAAAAAAAA.${secret}; cs_admin_session=as_BBBBBBBBBBBB.${secret}`,
      'cs_admin_session=%00%ff',
      `cs_admin_session=${'x'.repeat(5000)}`,
      `a=${'b'.repeat(9000)}; cs_admin_session=as_AAAAAAAAAAAA.${secret}`,
      ';;;=;=;',
      'cs_admin_session="as_AAAAAAAAAAAA.x"',
      `cs_admin_session=${world.token}`,
      '__proto__=1; constructor=2',
    ]
    for (const cookie of cookies) {
      for (const header of ['1', '0', 'x'.repeat(3000), undefined]) {
        const headers: Record<string, string> = { Cookie: cookie, ...(header === undefined ? {} : { 'X-Admin-Session': header }) }
        const what = `cookie ${cookie.slice(0, 30)} header ${header?.slice(0, 5)}`
        const exchanged = await probe({ method: 'POST', path: '/v1/auth/admin-session/token', headers, what })
        if (exchanged !== (header === '1' ? 401 : 403)) failures.push(`POST /v1/auth/admin-session/token [${what}]: ${exchanged}`)
        const ended = await probe({ method: 'DELETE', path: '/v1/auth/admin-session', headers, what })
        if (ended !== (header === '1' ? 204 : 403)) failures.push(`DELETE /v1/auth/admin-session [${what}]: ${ended}`)
        // The cookie opens nothing and authenticates nothing.
        const opened = await probe({ method: 'POST', path: '/v1/auth/admin-session', headers, what })
        if (opened !== 401) failures.push(`POST /v1/auth/admin-session [${what}]: ${opened}`)
      }
    }
    expect(failures.slice(before)).toEqual([])
  })

  test('Story content: unknown and prototype keys on a block, and deep junk under a block key, are rejected', async () => {
    await ensureWorld()
    const at = `/v1/spaces/${world.space}/stories/${world.story.uuid}`
    for (const key of ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'not_a_field']) {
      const raw = `{"content":{"type":"doc","blocks":[{"component":"hero","_uid":"h1","headline":"x",${JSON.stringify(key)}:{"a":1}}]}}`
      const r = await t.request('PUT', at, { token: world.token, raw, headers: { 'Content-Type': 'application/json' } })
      expect({ key, status: r.status }).toEqual({ key, status: 422 })
      expect(Object.keys(r.body.errors)).toContain(`blocks/0/${key}`)
    }
    const deep = `{"content":{"type":"doc","blocks":[{"component":"hero","_uid":"h1","headline":${'['.repeat(5000)}${']'.repeat(5000)}}]}}`
    const r = await t.request('PUT', at, { token: world.token, raw: deep, headers: { 'Content-Type': 'application/json' } })
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('invalid_json')
  })

  test('hostile AVIF containers are refused (422/415) at once: decoys, huge sizes, broken, endless and nested boxes', async () => {
    await ensureWorld()
    const parts = await av1Parts(64, 64)
    const enc = new TextEncoder()
    const ftyp = box('ftyp', enc.encode('avif'), new Uint8Array(4), enc.encode('avifmif1miaf'))
    const good = craftAvif(parts, { w: 64, h: 64 })
    const files: [string, Uint8Array][] = [
      ['decoy first, large primary', craftAvif(parts, { w: 65_535, h: 65_535 }, { w: 64, h: 64 })],
      ['4 billion wide', craftAvif(parts, { w: 0xffffffff, h: 0xffffffff })],
      ['zero size', craftAvif(parts, { w: 0, h: 0 })],
      ['a thousand empty top-level boxes', new Uint8Array([...ftyp, ...Array.from({ length: 1000 }, () => [...box('free')]).flat()])],
      ['nested iprp boxes', new Uint8Array([...ftyp, ...box('meta', new Uint8Array(4), ...Array.from({ length: 2000 }, () => box('iprp')))])],
      ['a 64-bit box size past the end', new Uint8Array([...ftyp, 0, 0, 0, 1, ...enc.encode('meta'), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])],
      ['a meta of 4 GB', new Uint8Array([...ftyp, 0xff, 0xff, 0xff, 0xff, ...enc.encode('meta')])],
      // iloc v2 with zero-byte fields: 4 billion items of 65,535 extents that read no bytes.
      ['iloc of endless empty extents', new Uint8Array([...ftyp, ...box('meta', new Uint8Array(4), box('iloc', new Uint8Array([2, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]), ...Array.from({ length: 2000 }, () => new Uint8Array([0, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff]))))])],
      ['ipco of 20,000 ispe', new Uint8Array([...ftyp, ...box('meta', new Uint8Array(4), box('iprp', box('ipco', ...Array.from({ length: 20_000 }, () => ispe(1, 1)))))])],
    ]
    // Every cut of a valid file.
    for (let cut = 8; cut < good.length; cut += 7) files.push([`cut at ${cut}`, good.subarray(0, cut)])
    // Every single byte of the container flipped in turn (the AV1 data is the decoder's, tested elsewhere).
    const container = good.length - parts.data.length
    for (let i = 0; i < container; i += 3) {
      const b = good.slice()
      b[i] ^= 0xff
      files.push([`byte ${i} flipped`, b])
    }
    for (const [what, bytes] of files) {
      const head = enc.encode('--FUZZAVIF\r\nContent-Disposition: form-data; name="file"; filename="x.avif"\r\nContent-Type: application/octet-stream\r\n\r\n')
      const tail = enc.encode('\r\n--FUZZAVIF--\r\n')
      const raw = new Uint8Array([...head, ...bytes, ...tail])
      const status = await probe({
        method: 'POST',
        path: `/v1/spaces/${world.space}/assets`,
        raw,
        contentType: 'multipart/form-data; boundary=FUZZAVIF',
        token: world.token,
        what: `avif ${what}`,
      })
      if (status !== undefined && status !== 201 && status !== 415 && status !== 422) failures.push(`avif ${what}: ${status}`)
      if (status === 201 && what.startsWith('decoy')) failures.push(`avif ${what}: accepted`)
    }
    expect(failures).toEqual([])
  })

  test('GraphQL documents that multiply or nest (fragment bombs, deep nesting, token floods) are refused cheaply', async () => {
    const bomb = (levels: number, fan = 10) => {
      let q = 'query Q{...F0}'
      for (let i = 0; i < levels; i++) q += ` fragment F${i} on Query{${Array(fan).fill(`...F${i + 1}`).join(' ')}}`
      return `${q} fragment F${levels} on Query{__typename}`
    }
    let nested = '__typename'
    for (let i = 0; i < 200; i++) nested = `__type(name: "Query") { ofType { ${nested} } }`
    const documents = [
      bomb(6),
      bomb(20),
      bomb(1400, 5),
      `{ ${nested} }`,
      `{ ${'__typename '.repeat(5000)}}`,
      `query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }`,
      `{ ${Array.from({ length: 300 }, (_, i) => `a${i}: __typename`).join(' ')} }`,
    ]
    for (const query of documents) {
      for (const method of ['POST', 'GET'] as const) {
        const path = method === 'GET' ? `/v1/graphql?${new URLSearchParams({ query })}` : '/v1/graphql'
        const status = await probe({ method, path, raw: method === 'POST' ? JSON.stringify({ query }) : undefined, what: `graphql ${query.slice(0, 30)}` })
        if (status !== undefined && status !== 200 && status !== 413 && status !== 414) failures.push(`graphql ${method} ${query.slice(0, 40)}: ${status}`)
      }
    }
    expect(failures).toEqual([])
  })

  test('the beacon answers 204 to any body or URL, whatever its size', async () => {
    const long = 'q'.repeat(70 * 1024)
    const cases: { path: string; raw: string | Uint8Array; contentType?: string }[] = [
      { path: `/v1/cdn/${world.space}/_beacon`, raw: 'x'.repeat(2 * 1024 * 1024), contentType: 'text/plain' },
      { path: `/v1/cdn/${world.space}/_beacon?${long}`, raw: '{}' },
      { path: `/v1/cdn/${'s'.repeat(70 * 1024)}/_beacon`, raw: '{}' },
      { path: `/v1/cdn/${world.space}/_beacon`, raw: `${'['.repeat(100_000)}${']'.repeat(100_000)}` },
      { path: `/v1/cdn/${world.space}/_beacon`, raw: new Uint8Array(8192).fill(0xff), contentType: 'application/octet-stream' },
    ]
    for (const c of cases) {
      const status = await probe({ method: 'POST', path: c.path, raw: c.raw, contentType: c.contentType ?? 'application/json', what: 'beacon' })
      if (status !== 204) failures.push(`beacon ${c.path.slice(0, 60)}: ${status}`)
    }
    expect(failures).toEqual([])
  })

  test('a deep body does not stall other requests', async () => {
    await ensureWorld()
    const deep = `{"name":${'['.repeat(200_000)}${']'.repeat(200_000)}}`
    // CPU time, not wall time: both requests' work (the deep body's refusal included) must be cheap, whatever the load.
    const cpu = cpuTimer()
    const slow = t.request('PUT', `/v1/spaces/${world.space}/components/hero`, { token: world.token, raw: deep, headers: { 'Content-Type': 'application/json' } })
    const version = await t.request('GET', '/v1/version')
    expect(version.status).toBe(200)
    expect((await slow).status).toBe(400)
    expect(cpu.ms()).toBeLessThan(500)
  })
})
