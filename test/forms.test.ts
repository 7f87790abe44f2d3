import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { type TestApp, testApp } from './helpers/app'
import { type Receiver, type ReceivedRequest, startReceiver } from './helpers/receiver'
import { type SmtpSink, startSmtpSink } from './helpers/smtp'

setDefaultTimeout(60_000)

let t: TestApp
let sink: SmtpSink
let hooks: Receiver
let captcha: ReturnType<typeof Bun.serve>
const captchaCalls: { path: string; secret: string | null; response: string | null }[] = []
let admin: string
let editor: string
let viewer: string
let space: string

const member = (ownerTenant: number, role: 'viewer' | 'editor' | 'admin') => t.member(ownerTenant, space, role)

beforeAll(async () => {
  sink = await startSmtpSink()
  hooks = startReceiver()
  captcha = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const form = new URLSearchParams(await req.text())
      captchaCalls.push({ path: new URL(req.url).pathname, secret: form.get('secret'), response: form.get('response') })
      return Response.json({ success: form.get('response') === 'good-token' && form.get('secret') === 'captcha-secret' })
    },
  })
  t = await testApp(
    { outboundAllowPrivate: true, webhookTimeoutMs: 5000, publicUrl: 'https://cms.example.com' },
    {
      SMTP_URL: sink.url,
      TURNSTILE_VERIFY_URL: `http://127.0.0.1:${captcha.port}/turnstile`,
      HCAPTCHA_VERIFY_URL: `http://127.0.0.1:${captcha.port}/hcaptcha`,
    },
  )
  const owner = await t.register()
  admin = owner.token
  space = (await t.createSpace(admin, { name: 'Acme' })).slug
  expect((await t.request('POST', `/v1/spaces/${space}/locales`, { token: admin, body: { code: 'de' } })).status).toBe(201)
  editor = await member(owner.tenant.id, 'editor')
  viewer = await member(owner.tenant.id, 'viewer')
})

afterAll(async () => {
  await t?.close()
  await sink?.stop()
  await hooks?.stop()
  captcha?.stop(true)
})

let slugCounter = 0
const FIELDS = [
  { key: 'name', type: 'text', label: 'Your name', required: true },
  { key: 'email', type: 'email', label: 'E-mail', required: true },
  { key: 'message', type: 'textarea', label: 'Message' },
]
async function makeForm(body: Record<string, unknown> = {}) {
  const r = await t.request('POST', `/v1/spaces/${space}/forms`, {
    token: editor,
    body: { slug: `form-${++slugCounter}`, label: 'Contact', fields: FIELDS, ...body },
  })
  if (r.status !== 201) throw new Error(`create form: ${r.status} ${r.text}`)
  return r.body.data as { uuid: string; slug: string; secret?: string; [k: string]: any }
}
const submit = (slug: string, body: Record<string, unknown>, opts: { ip?: string; headers?: Record<string, string>; query?: string } = {}) =>
  t.request('POST', `/v1/cdn/${space}/forms/${slug}${opts.query ?? ''}`, { body, ip: opts.ip, headers: opts.headers })
const rows = (sql: string, params: unknown[] = []) => t.kernel.db.query<any>(sql, params)
const drain = () => t.kernel.jobs.runDueJobs()
const valid = { name: 'Ada', email: 'ada@example.com', message: 'Hello' }

function signatureValid(secret: string, req: ReceivedRequest): boolean {
  const header = req.headers['x-service-signature'] ?? ''
  if (!header.startsWith('sha256=')) return false
  const expected = createHmac('sha256', secret).update(`${req.headers['x-service-timestamp']}.`).update(req.raw).digest()
  const given = Buffer.from(header.slice(7), 'hex')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

describe('form management', () => {
  test('create compiles a JSON Schema 2020-12 from the fields; a sent compiled_schema is ignored', async () => {
    const f = await makeForm({
      fields: [
        { key: 'name', type: 'text', label: 'Name', required: true, max_length: 100 },
        { key: 'email', type: 'email', label: 'E-mail' },
        { key: 'age', type: 'number', label: 'Age' },
        { key: 'topic', type: 'select', label: 'Topic', options: ['a', 'b'] },
        { key: 'terms', type: 'consent', label: 'I agree', required: true },
      ],
      compiled_schema: { evil: true },
    })
    expect(f.compiled_schema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 100, title: 'Name' },
        email: { type: 'string', format: 'email', maxLength: 254, title: 'E-mail' },
        age: { type: 'number', title: 'Age' },
        topic: { type: 'string', enum: ['a', 'b'], title: 'Topic' },
        terms: { type: 'boolean', const: true, title: 'I agree' },
      },
      required: ['name', 'terms'],
      additionalProperties: false,
    })
    expect(f).toMatchObject({ submit_action: 'store', rate_limit_per_ip: 5, archived_at: null, has_webhook_secret: false, spam_config: null })
    expect(f.secret).toBeUndefined()
  })

  test('every rule of the definition answers 422 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ slug: 'Bad Slug' }, 'slug'],
      [{ fields: [] }, 'fields'],
      [{ fields: [{ key: 'Bad', type: 'text', label: 'x' }] }, 'fields/0/key'],
      [{ fields: [{ key: 'a', type: 'color', label: 'x' }] }, 'fields/0/type'],
      [{ fields: [{ key: 'a', type: 'text', label: 'x' }, { key: 'a', type: 'text', label: 'y' }] }, 'fields/1/key'],
      [{ fields: [{ key: 'a', type: 'select', label: 'x' }] }, 'fields/0/options'],
      [{ fields: [{ key: 'a', type: 'number', label: 'x', max_length: 5 }] }, 'fields/0/max_length'],
      [{ fields: [{ key: 'a', type: 'text', label: 'x', max_length: 5001 }] }, 'fields/0/max_length'],
      [{ submit_action: 'email' }, 'notification_email'],
      [{ submit_action: 'email', notification_email: 'nope' }, 'notification_email'],
      [{ submit_action: 'webhook' }, 'webhook_url'],
      [{ submit_action: 'webhook', webhook_url: 'ftp://x.example.com' }, 'webhook_url'],
      [{ submit_action: 'lead', fields: [{ key: 'a', type: 'text', label: 'x' }] }, 'fields'],
      [{ success_message: { fr: 'Merci' } }, 'success_message/fr'],
      [{ rate_limit_per_ip: 0 }, 'rate_limit_per_ip'],
      [{ rate_limit_per_ip: 10_001 }, 'rate_limit_per_ip'],
      [{ spam_provider: 'turnstile' }, 'spam_config/secret'],
      [{ redirect_url: 'javascript:alert(1)' }, 'redirect_url'],
    ]
    for (const [patch, field] of cases) {
      const r = await t.request('POST', `/v1/spaces/${space}/forms`, { token: editor, body: { slug: 'rules', label: 'L', fields: FIELDS, ...patch } })
      expect({ patch, status: r.status, has: Object.keys(r.body.errors ?? {}).some((k) => k === field || k.startsWith(`${field}`)) }).toEqual({
        patch,
        status: 422,
        has: true,
      })
    }
  })

  test('roles: viewers read, editors write; other tenants see nothing', async () => {
    const f = await makeForm()
    expect((await t.request('GET', `/v1/spaces/${space}/forms/${f.uuid}`, { token: viewer })).status).toBe(200)
    expect((await t.request('POST', `/v1/spaces/${space}/forms`, { token: viewer, body: { slug: 'v', label: 'L', fields: FIELDS } })).status).toBe(403)
    const stranger = await t.register()
    expect((await t.request('GET', `/v1/spaces/${space}/forms/${f.uuid}`, { token: stranger.token })).status).toBe(404)
    expect((await t.request('GET', `/v1/spaces/${space}/forms`)).status).toBe(401)
  })

  test('slug is unique among live forms; DELETE archives: submit 404, hidden from the list, submissions kept, slug free again', async () => {
    const f = await makeForm({ slug: 'unique-one' })
    const dup = await t.request('POST', `/v1/spaces/${space}/forms`, { token: editor, body: { slug: 'unique-one', label: 'L', fields: FIELDS } })
    expect(dup.status).toBe(409)
    expect(dup.body.error).toBe('slug_taken')
    expect((await submit(f.slug, { data: valid })).status).toBe(201)
    expect((await t.request('DELETE', `/v1/spaces/${space}/forms/${f.uuid}`, { token: editor })).status).toBe(204)
    expect((await submit(f.slug, { data: valid })).status).toBe(404)
    const list = await t.request('GET', `/v1/spaces/${space}/forms`, { token: viewer })
    expect(list.body.data.some((x: any) => x.uuid === f.uuid)).toBe(false)
    const all = await t.request('GET', `/v1/spaces/${space}/forms?include_archived=1`, { token: viewer })
    expect(all.body.data.find((x: any) => x.uuid === f.uuid).archived_at).toBeTruthy()
    const subs = await t.request('GET', `/v1/spaces/${space}/forms/${f.uuid}/submissions`, { token: admin })
    expect(subs.body.meta.total).toBe(1)
    expect((await t.request('PUT', `/v1/spaces/${space}/forms/${f.uuid}`, { token: editor, body: { slug: 'unique-one', label: 'L', fields: FIELDS } })).status).toBe(404)
    await makeForm({ slug: 'unique-one' })
  })

  test('PUT replaces the definition and the public submit follows at once', async () => {
    const f = await makeForm()
    expect((await submit(f.slug, { data: { name: 'A', email: 'a@example.com', extra: 'x' } })).status).toBe(201)
    const put = await t.request('PUT', `/v1/spaces/${space}/forms/${f.uuid}`, {
      token: editor,
      body: { ...f, fields: [...FIELDS, { key: 'phone', type: 'tel', label: 'Phone', required: true }] },
    })
    expect(put.status).toBe(200)
    expect(put.body.data.compiled_schema.required).toEqual(['name', 'email', 'phone'])
    const r = await submit(f.slug, { data: valid })
    expect(r.status).toBe(422)
    expect(r.body.errors).toEqual({ phone: ['is required'] })
  })

  test('webhook forms get a secret once; rotate-secret gives a new one; others answer 422', async () => {
    const f = await makeForm({ submit_action: 'webhook', webhook_url: hooks.url })
    expect(f.secret).toMatch(/^whsec_/)
    expect(f.has_webhook_secret).toBe(true)
    const got = await t.request('GET', `/v1/spaces/${space}/forms/${f.uuid}`, { token: viewer })
    expect(got.body.data.secret).toBeUndefined()
    expect(got.text).not.toContain(f.secret!)
    const stored = await rows('select webhook_secret_sealed from forms where uuid = $1', [f.uuid])
    expect(stored[0].webhook_secret_sealed).not.toContain(f.secret!.slice(6))
    const rot = await t.request('POST', `/v1/spaces/${space}/forms/${f.uuid}/rotate-secret`, { token: editor })
    expect(rot.body.data.secret).toMatch(/^whsec_/)
    expect(rot.body.data.secret).not.toBe(f.secret)
    const plain = await makeForm()
    expect((await t.request('POST', `/v1/spaces/${space}/forms/${plain.uuid}/rotate-secret`, { token: editor })).status).toBe(422)
  })
})

describe('public submit', () => {
  test('honeypot: 200 {ok: true}, nothing stored, no action', async () => {
    const f = await makeForm({ submit_action: 'email', notification_email: 'team@acme.test' })
    sink.clear()
    const r = await submit(f.slug, { _hp: 'I am a bot', data: valid })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ ok: true })
    expect((await rows('select count(*)::int as n from form_submissions s join forms f on f.id = s.form_id where f.uuid = $1', [f.uuid]))[0].n).toBe(0)
    await drain()
    expect(sink.mails).toHaveLength(0)
  })

  test('honeypot first: a filled _hp answers 200 {ok: true} whatever else the body holds — invalid data, unknown keys, no form', async () => {
    const f = await makeForm({ submit_action: 'email', notification_email: 'team@acme.test' })
    sink.clear()
    const bodies: Record<string, unknown>[] = [
      { _hp: 'x', data: { name: '', email: 'not an email' } }, // invalid data
      { _hp: 'x' }, // no data at all
      { _hp: 'x', data: 'not an object', unknown_key: 1, rendered_at: [] }, // wrong types, an unknown property
      { _hp: 'x'.repeat(20_000), data: valid }, // over the _hp length the schema declares
      { _hp: 1, data: valid }, // not even a string
      { _hp: { filled: true } },
    ]
    for (const body of bodies) {
      const r = await submit(f.slug, body)
      expect({ body: JSON.stringify(body).slice(0, 80), status: r.status, answer: r.body }).toEqual({ body: JSON.stringify(body).slice(0, 80), status: 200, answer: { ok: true } })
      expect(r.headers.get('cache-control')).toBe('no-store')
    }
    // Before the form or the Space is looked up: the trap answers the same everywhere.
    expect((await submit('no-such-form', { _hp: 'x', data: {} })).body).toEqual({ ok: true })
    expect((await t.request('POST', `/v1/cdn/no-such-space/forms/${f.slug}`, { body: { _hp: 'x' } })).body).toEqual({ ok: true })
    expect((await rows('select count(*)::int as n from form_submissions s join forms f on f.id = s.form_id where f.uuid = $1', [f.uuid]))[0].n).toBe(0)
    await drain()
    expect(sink.mails).toHaveLength(0)
    // An empty honeypot is no trap: the body is validated as usual.
    for (const hp of ['', null]) expect((await submit(f.slug, { _hp: hp, data: { name: '' } })).status).toBe(422)
  })

  test('missing required fields: 422 validation_failed keyed by field; unknown Space or form: 404', async () => {
    const f = await makeForm()
    const r = await submit(f.slug, { data: { message: 'hi' } })
    expect(r.status).toBe(422)
    expect(r.body.error).toBe('validation_failed')
    expect(r.body.errors).toEqual({ name: ['is required'], email: ['is required'] })
    expect((await submit(f.slug, { data: { name: 'A', email: 'not an email' } })).body.errors).toEqual({ email: ['must be an e-mail address'] })
    expect((await submit(f.slug, {})).status).toBe(422)
    expect((await submit('no-such-form', { data: valid })).status).toBe(404)
    expect((await t.request('POST', `/v1/cdn/no-such-space/forms/${f.slug}`, { body: { data: valid } })).status).toBe(404)
  })

  test('every field type is coerced to a scalar and stripped of markup; unknown keys dropped; strings cut at 5000', async () => {
    const f = await makeForm({
      fields: [
        { key: 'text', type: 'text', label: 'Text' },
        { key: 'area', type: 'textarea', label: 'Area' },
        { key: 'mail', type: 'email', label: 'Mail' },
        { key: 'tel', type: 'tel', label: 'Tel' },
        { key: 'num', type: 'number', label: 'Num' },
        { key: 'num2', type: 'number', label: 'Num2' },
        { key: 'sel', type: 'select', label: 'Sel', options: ['1', 'two'] },
        { key: 'rad', type: 'radio', label: 'Rad', options: ['x', 'y'] },
        { key: 'box', type: 'checkbox', label: 'Box' },
        { key: 'box2', type: 'checkbox', label: 'Box2' },
        { key: 'file', type: 'file', label: 'File' },
        { key: 'hid', type: 'hidden', label: 'Hid' },
        { key: 'ok', type: 'consent', label: 'I agree to the privacy policy', required: true },
      ],
      rate_limit_per_ip: 100,
    })
    const r = await submit(f.slug, {
      data: {
        text: '  <b>Bold</b> move ',
        area: 'x'.repeat(6000),
        mail: 'grace@example.com',
        tel: 4930123,
        num: '42.5',
        num2: 7,
        sel: 1,
        rad: 'y',
        box: 'on',
        box2: 0,
        file: 'https://files.example.com/cv.pdf',
        hid: ['a', 'b'],
        ok: 'true',
        unknown: 'dropped',
      },
    })
    expect(r.status).toBe(201)
    const s = (await t.request('GET', `/v1/spaces/${space}/forms/${f.uuid}/submissions?include_spam=1`, { token: admin })).body.data[0]
    expect(s.data).toEqual({
      text: 'Bold move',
      area: 'x'.repeat(5000),
      mail: 'grace@example.com',
      tel: '4930123',
      num: 42.5,
      num2: 7,
      sel: '1',
      rad: 'y',
      box: true,
      box2: false,
      file: 'https://files.example.com/cv.pdf',
      hid: 'a, b',
      ok: { accepted: true, text: 'I agree to the privacy policy' },
    })
    // Values that cannot be coerced are refused.
    const bad = await submit(f.slug, { data: { num: 'twelve', box: 'maybe', sel: 'three', text: { a: 1 }, ok: false } })
    expect(bad.status).toBe(422)
    expect(Object.keys(bad.body.errors).sort()).toEqual(['box', 'num', 'ok', 'sel', 'text'])
    expect(bad.body.errors.ok).toEqual(['must be checked'])
  })

  test('max_length below 5000 is validated after the cut', async () => {
    const f = await makeForm({ fields: [{ key: 'short', type: 'text', label: 'Short', max_length: 5 }] })
    expect((await submit(f.slug, { data: { short: '<i>12345</i>' } })).status).toBe(201)
    expect((await submit(f.slug, { data: { short: '123456' } })).body.errors).toEqual({ short: ['must be at most 5 characters'] })
  })

  test('201 answer: success_message by ?lang, Accept-Language, else the Space default; redirect_url', async () => {
    const f = await makeForm({ success_message: { en: 'Thanks!', de: 'Danke!' }, redirect_url: 'https://acme.test/thanks', rate_limit_per_ip: 50 })
    const en = await submit(f.slug, { data: valid })
    expect(en.status).toBe(201)
    expect(en.body.data).toMatchObject({ ok: true, success_message: 'Thanks!', redirect_url: 'https://acme.test/thanks' })
    expect(en.body.data.submission_uuid).toMatch(/^[0-9a-f-]{36}$/)
    expect((await submit(f.slug, { data: valid }, { query: '?lang=de' })).body.data.success_message).toBe('Danke!')
    expect((await submit(f.slug, { data: valid }, { headers: { 'Accept-Language': 'de-AT,de;q=0.9' } })).body.data.success_message).toBe('Danke!')
    expect((await submit(f.slug, { data: valid }, { query: '?lang=fr' })).body.data.success_message).toBe('Thanks!')
    const g = await makeForm({ success_message: { de: 'Nur Deutsch' } })
    expect((await submit(g.slug, { data: valid })).body.data.success_message).toBe(null)
  })
})

describe('limits', () => {
  test("the form's rate_limit_per_ip per UTC day per IP hash: 429 with Retry-After to the end of the day", async () => {
    const f = await makeForm({ rate_limit_per_ip: 2 })
    const ip = '203.0.113.7'
    expect((await submit(f.slug, { data: valid }, { ip })).status).toBe(201)
    expect((await submit(f.slug, { data: valid }, { ip })).status).toBe(201)
    const r = await submit(f.slug, { data: valid }, { ip })
    expect(r.status).toBe(429)
    expect(r.body.error).toBe('rate_limited')
    const now = t.clock.now()
    const endOfDay = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)
    expect(Number(r.headers.get('retry-after'))).toBe(Math.ceil((endOfDay - now.getTime()) / 1000))
    expect((await submit(f.slug, { data: valid }, { ip: '203.0.113.8' })).status).toBe(201) // another address
    t.clock.set(new Date(endOfDay + 1000))
    expect((await submit(f.slug, { data: valid }, { ip })).status).toBe(201) // a new day
  })

  test('parallel submits from one address cannot pass the daily limit', async () => {
    const f = await makeForm({ rate_limit_per_ip: 3 })
    const res = await Promise.all(Array.from({ length: 10 }, () => submit(f.slug, { data: valid }, { ip: '203.0.113.99' })))
    expect(res.map((r) => r.status).sort()).toEqual([201, 201, 201, 429, 429, 429, 429, 429, 429, 429])
  })

  test('20 per minute per IP on the route', async () => {
    const f = await makeForm({ rate_limit_per_ip: 1000 })
    const ip = '198.51.100.20'
    for (let i = 0; i < 20; i++) expect((await submit(f.slug, { data: valid }, { ip })).status).toBe(201)
    const r = await submit(f.slug, { data: valid }, { ip })
    expect(r.status).toBe(429)
    expect(r.headers.get('retry-after')).toBeTruthy()
  })
})

describe('privacy', () => {
  test('ip_hash, ua_hash and referrer origin are stored; the raw IP is nowhere in the database', async () => {
    const f = await makeForm()
    const ip = '192.0.2.123'
    const ua = 'Mozilla/5.0 (X11; Linux x86_64) TestBrowser/1.0'
    const r = await submit(f.slug, { data: valid }, { ip, headers: { 'User-Agent': ua, Referer: 'https://www.acme.test/contact?utm=1#top' } })
    expect(r.status).toBe(201)
    const [s] = await rows('select ip_hash, ua_hash, referrer from form_submissions where uuid = $1', [r.body.data.submission_uuid])
    expect(s.ip_hash).toMatch(/^[0-9a-f]{64}$/)
    expect(s.ua_hash).toBe(new Bun.CryptoHasher('sha256').update(ua).digest('hex').slice(0, 16))
    expect(s.referrer).toBe('https://www.acme.test')
    // Every column of every table, as text.
    const tables = await rows(`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`)
    expect(tables.length).toBeGreaterThan(10)
    for (const { table_name } of tables) {
      const hits = await rows(`select count(*)::int as n from "${table_name}" x where x::text like $1`, [`%${ip}%`])
      expect({ table: table_name, hits: hits[0].n }).toEqual({ table: table_name, hits: 0 })
    }
  })

  test('the same IP hashes alike within a day and differently on another day and Space; salts go after two days', async () => {
    const f = await makeForm({ rate_limit_per_ip: 100 })
    const ip = '192.0.2.55'
    const a = await submit(f.slug, { data: valid }, { ip })
    const b = await submit(f.slug, { data: valid }, { ip })
    t.clock.advance(86_400_000)
    const c = await submit(f.slug, { data: valid }, { ip })
    const hashes = await rows('select uuid, ip_hash from form_submissions where uuid = any($1::uuid[])', [
      `{${[a, b, c].map((x) => x.body.data.submission_uuid).join(',')}}`,
    ])
    const by = new Map(hashes.map((h: any) => [h.uuid, h.ip_hash]))
    expect(by.get(a.body.data.submission_uuid)).toBe(by.get(b.body.data.submission_uuid))
    expect(by.get(c.body.data.submission_uuid)).not.toBe(by.get(a.body.data.submission_uuid))
    const before = (await rows('select day from form_ip_salts order by day')).map((r: any) => r.day)
    expect(before.length).toBeGreaterThanOrEqual(2)
    t.clock.advance(2 * 86_400_000)
    await t.kernel.jobs.enqueue('forms.prune-salts', {})
    await drain()
    const after = (await rows('select day from form_ip_salts')).map((r: any) => r.day)
    for (const d of before) expect(after).not.toContain(d)
  })
})

describe('captcha and spam', () => {
  test('turnstile: missing or rejected token → 422 captcha_failed, nothing stored; accepted → 201', async () => {
    const f = await makeForm({ spam_provider: 'turnstile', spam_config: { secret: 'captcha-secret' }, rate_limit_per_ip: 50 })
    expect(f.spam_config).toEqual({ secret_set: true })
    expect(JSON.stringify(f)).not.toContain('captcha-secret')
    const none = await submit(f.slug, { data: valid })
    expect(none.status).toBe(422)
    expect(none.body.error).toBe('captcha_failed')
    captchaCalls.length = 0
    const bad = await submit(f.slug, { data: valid, captcha_token: 'bad-token' })
    expect(bad.body.error).toBe('captcha_failed')
    expect(captchaCalls).toEqual([{ path: '/turnstile', secret: 'captcha-secret', response: 'bad-token' }])
    const ok = await submit(f.slug, { data: valid, captcha_token: 'good-token' })
    expect(ok.status).toBe(201)
    const subs = await t.request('GET', `/v1/spaces/${space}/forms/${f.uuid}/submissions?include_spam=1`, { token: admin })
    expect(subs.body.meta.total).toBe(1)
    // hcaptcha goes to its own verify URL; PUT without the secret keeps it for the same provider.
    const put = await t.request('PUT', `/v1/spaces/${space}/forms/${f.uuid}`, { token: editor, body: { ...f, spam_provider: 'hcaptcha', spam_config: { secret: 'captcha-secret' } } })
    expect(put.status).toBe(200)
    const put2 = await t.request('PUT', `/v1/spaces/${space}/forms/${f.uuid}`, { token: editor, body: { ...put.body.data, label: 'Renamed' } })
    expect(put2.status).toBe(200)
    captchaCalls.length = 0
    expect((await submit(f.slug, { data: valid, captcha_token: 'good-token' })).status).toBe(201)
    expect(captchaCalls[0].path).toBe('/hcaptcha')
  })

  test('spam_score: links, stripped markup, repeated characters and a fast submit; ≥ 0.8 is stored as spam with no action', async () => {
    const f = await makeForm({ submit_action: 'email', notification_email: 'team@acme.test', rate_limit_per_ip: 50 })
    const clean = await submit(f.slug, { data: valid, rendered_at: new Date(t.clock.now().getTime() - 60_000).toISOString() })
    const links = await submit(f.slug, { data: { ...valid, message: 'see https://a.example and www.b.example' } })
    const spammy = await submit(f.slug, {
      data: { ...valid, message: '<a href="https://x.example">cheap</a> https://y.example https://z.example' },
    })
    const fast = await submit(f.slug, { data: { ...valid, message: 'aaaaaaaaaaaa <b>hi</b>' }, rendered_at: t.clock.now().getTime() - 500 })
    const score = async (r: any) => (await rows('select spam_score, spam, action_status from form_submissions where uuid = $1', [r.body.data.submission_uuid]))[0]
    expect(await score(clean)).toEqual({ spam_score: 0, spam: false, action_status: 'pending' })
    expect(await score(links)).toEqual({ spam_score: 0.4, spam: false, action_status: 'pending' })
    expect(await score(spammy)).toEqual({ spam_score: 1, spam: true, action_status: 'none' })
    expect(await score(fast)).toEqual({ spam_score: 1, spam: true, action_status: 'none' })
    sink.clear()
    await drain()
    expect(sink.mails).toHaveLength(2) // the two clean ones only
    const list = await t.request('GET', `/v1/spaces/${space}/forms/${f.uuid}/submissions`, { token: admin })
    expect(list.body.meta.total).toBe(2)
    const all = await t.request('GET', `/v1/spaces/${space}/forms/${f.uuid}/submissions?include_spam=1&per_page=1`, { token: admin })
    expect(all.body.meta).toEqual({ total: 4, page: 1, per_page: 1 })
    // toggle
    // The toggle answers the submission (what a person wrote): admin only.
    expect((await t.request('POST', `/v1/spaces/${space}/forms/${f.uuid}/submissions/${spammy.body.data.submission_uuid}/spam`, { token: editor })).status).toBe(403)
    for (const token of [viewer, editor]) expect((await t.request('GET', `/v1/spaces/${space}/forms/${f.uuid}/submissions`, { token })).status).toBe(403)
    const tog = await t.request('POST', `/v1/spaces/${space}/forms/${f.uuid}/submissions/${spammy.body.data.submission_uuid}/spam`, { token: admin })
    expect(tog.status).toBe(200)
    expect(tog.body.data.spam).toBe(false)
    expect((await t.request('GET', `/v1/spaces/${space}/forms/${f.uuid}/submissions`, { token: admin })).body.meta.total).toBe(3)
    expect((await t.request('POST', `/v1/spaces/${space}/forms/${f.uuid}/submissions/${spammy.body.data.submission_uuid}/spam`, { token: viewer })).status).toBe(403)
  })

  test('submissions: q searches the stored values (not the JSON source, LIKE wildcards literal); spam=only is the spam view', async () => {
    const f = await makeForm({ rate_limit_per_ip: 50 })
    const old = new Date(t.clock.now().getTime() - 60_000).toISOString()
    const grace = await submit(f.slug, { data: { name: 'Grace Hopper', email: 'grace@navy.example', message: '100% "cobol"' }, rendered_at: old })
    await submit(f.slug, { data: { name: 'Alan', email: 'alan@example.com', message: 'Hi' }, rendered_at: old })
    const spam = await submit(f.slug, { data: { name: 'Grace Bot', email: 'bot@example.com', message: '<a href="https://x.example">x</a> https://y.example https://z.example' } })
    const list = async (query: string, token = admin) => t.request('GET', `/v1/spaces/${space}/forms/${f.uuid}/submissions?${query}`, { token })
    const uuids = async (query: string) => ((await list(query)).body.data as { uuid: string }[]).map((s) => s.uuid)
    expect(await uuids('q=HOPPER')).toEqual([grace.body.data.submission_uuid])
    expect(await uuids('q=navy.example')).toEqual([grace.body.data.submission_uuid])
    expect(await uuids('q=%22cobol%22')).toEqual([grace.body.data.submission_uuid]) // a quote as typed
    expect(await uuids('q=0%25')).toEqual([grace.body.data.submission_uuid]) // % is a character, not a wildcard
    expect(await uuids('q=_')).toEqual([])
    expect(await uuids('q=name')).toEqual([]) // keys are not values
    expect(await uuids('q=grace')).toEqual([grace.body.data.submission_uuid]) // spam hidden
    expect(await uuids('q=grace&include_spam=1')).toEqual([spam.body.data.submission_uuid, grace.body.data.submission_uuid])
    expect(await uuids('spam=only')).toEqual([spam.body.data.submission_uuid])
    expect((await list('spam=only')).body.meta.total).toBe(1)
    expect(await uuids('spam=only&q=alan')).toEqual([])
    expect((await list('spam=yes')).status).toBe(422)
    expect((await list(`q=${'x'.repeat(201)}`)).status).toBe(422)
    expect((await list('spam=only', editor)).status).toBe(403)
  })
})

describe('actions', () => {
  test('email: notification_email gets every value, readable; action_status done', async () => {
    const f = await makeForm({ submit_action: 'email', notification_email: 'Team@Acme.test', label: 'Contact us' })
    sink.clear()
    const r = await submit(f.slug, { data: { ...valid, message: 'Line 1\nLine 2' } })
    const st = async () => (await rows('select action_status from form_submissions where uuid = $1', [r.body.data.submission_uuid]))[0].action_status
    expect(await st()).toBe('pending')
    await drain()
    const [mail] = await sink.waitFor(1)
    expect(mail.to).toEqual(['team@acme.test'])
    expect(mail.parsed.subject).toBe('New submission: Contact us')
    expect(mail.parsed.text).toContain('Your name (name):\nAda')
    expect(mail.parsed.text).toContain('Line 1\nLine 2')
    expect(await st()).toBe('done')
  })

  test('email: an SMTP refusal is retried; failures after the last retry mark failed', async () => {
    const f = await makeForm({ submit_action: 'email', notification_email: 'team@acme.test' })
    sink.clear()
    sink.failNext(1)
    const r = await submit(f.slug, { data: valid })
    await drain()
    const st = async () => (await rows('select action_status, action_error from form_submissions where uuid = $1', [r.body.data.submission_uuid]))[0]
    expect((await st()).action_status).toBe('pending')
    expect((await st()).action_error).toBeTruthy()
    t.clock.advance(30_000)
    await drain()
    expect(await st()).toEqual({ action_status: 'done', action_error: null })
  })

  test('webhook: POST {event, delivered_at, space, form, submission} signed like spec 6; 5xx retried, 4xx failed', async () => {
    const f = await makeForm({ submit_action: 'webhook', webhook_url: `${hooks.url}/forms` })
    hooks.clear()
    hooks.respond(() => new Response('ok'))
    const r = await submit(f.slug, { data: valid })
    await drain()
    const [req] = await hooks.waitFor(1)
    expect(req.headers['x-service-event']).toBe('form.submitted')
    expect(req.headers['x-service-delivery']).toBe(r.body.data.submission_uuid)
    expect(Math.abs(Number(req.headers['x-service-timestamp']) - Math.floor(t.clock.now().getTime() / 1000))).toBeLessThanOrEqual(1)
    expect(signatureValid(f.secret!, req)).toBe(true)
    expect(Object.keys(req.json)).toEqual(['event', 'delivered_at', 'space', 'form', 'submission'])
    expect(req.json).toMatchObject({
      event: 'form.submitted',
      space: { slug: space },
      form: { uuid: f.uuid, slug: f.slug },
      submission: { uuid: r.body.data.submission_uuid, data: valid, spam_score: 0 },
    })
    const st = async (uuid: string) => (await rows('select action_status from form_submissions where uuid = $1', [uuid]))[0].action_status
    expect(await st(r.body.data.submission_uuid)).toBe('done')

    // 5xx: retried after 30 s, then 2xx → done
    hooks.clear()
    let n = 0
    hooks.respond(() => new Response('err', { status: n++ === 0 ? 503 : 200 }))
    const r2 = await submit(f.slug, { data: valid })
    await drain()
    expect(await st(r2.body.data.submission_uuid)).toBe('pending')
    t.clock.advance(30_000)
    await drain()
    expect(hooks.requests).toHaveLength(2)
    expect(await st(r2.body.data.submission_uuid)).toBe('done')

    // 4xx: not retried
    hooks.clear()
    hooks.respond(() => new Response('no', { status: 410 }))
    const r3 = await submit(f.slug, { data: valid })
    await drain()
    t.clock.advance(60 * 60_000)
    await drain()
    if (hooks.requests.length !== 1) console.log(hooks.requests.map((q) => [q.path, q.headers['x-service-delivery'], q.json?.form?.slug]), r3.body)
    expect(hooks.requests).toHaveLength(1)
    expect(await st(r3.body.data.submission_uuid)).toBe('failed')
    hooks.respond(() => new Response('ok'))
  })

  test('webhook: a redirect fails at once, classified as webhook deliveries are (redirects are not followed)', async () => {
    const f = await makeForm({ submit_action: 'webhook', webhook_url: `${hooks.url}/moved` })
    hooks.clear()
    hooks.respond(() => new Response(null, { status: 302, headers: { location: 'http://127.0.0.1:9/elsewhere' } }))
    const r = await submit(f.slug, { data: valid })
    await drain()
    t.clock.advance(60 * 60_000)
    await drain()
    expect(hooks.requests).toHaveLength(1)
    const [s] = await rows('select action_status, action_error from form_submissions where uuid = $1', [r.body.data.submission_uuid])
    expect(s).toEqual({ action_status: 'failed', action_error: 'the receiver answered 302 (redirects are not followed)' })
    hooks.respond(() => new Response('ok'))
  })

  test('webhook: after 5 failed retries the action is failed', async () => {
    const f = await makeForm({ submit_action: 'webhook', webhook_url: `${hooks.url}/down` })
    hooks.clear()
    hooks.respond(() => new Response('down', { status: 500 }))
    const r = await submit(f.slug, { data: valid })
    await drain()
    for (const d of [30_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 12 * 3_600_000]) {
      t.clock.advance(d)
      await drain()
    }
    expect(hooks.requests).toHaveLength(6)
    const [s] = await rows('select action_status, action_error from form_submissions where uuid = $1', [r.body.data.submission_uuid])
    expect(s.action_status).toBe('failed')
    expect(s.action_error).toContain('500')
    hooks.respond(() => new Response('ok'))
  })

  test('lead: creates a pending subscriber and sends the double opt-in mail', async () => {
    const f = await makeForm({ submit_action: 'lead' })
    sink.clear()
    await submit(f.slug, { data: { name: 'Lea Lead', email: 'Lea@Example.com' } }, { query: '?lang=de' })
    await drain()
    const [mail] = await sink.waitFor(1)
    expect(mail.to).toEqual(['lea@example.com'])
    expect(mail.parsed.text).toContain(`https://cms.example.com/v1/cdn/${space}/subscribe/confirm/`)
    const subs = await t.request('GET', `/v1/spaces/${space}/subscribers?q=lea@`, { token: admin })
    expect(subs.body.data[0]).toMatchObject({ email: 'lea@example.com', name: 'Lea Lead', status: 'pending', source: 'form', lang: 'de' })
    const confirm = /\/v1\/cdn\/[^\s]+\/subscribe\/confirm\/[A-Za-z0-9_-]{43}/.exec(mail.parsed.text!)![0]
    expect((await t.request('POST', confirm)).body.data.status).toBe('confirmed')
  })
})

describe('CSV export', () => {
  test('10,000 submissions: BOM, header, RFC 4180 quoting, formula prefix; spam rows and file fields left out', async () => {
    const f = await makeForm({
      fields: [
        { key: 'name', type: 'text', label: 'Name' },
        { key: 'cv', type: 'file', label: 'CV' },
        { key: 'note', type: 'textarea', label: 'Note' },
        { key: 'ok', type: 'consent', label: 'Agree' },
      ],
    })
    const [{ id: formId, space_id: spaceId }] = await rows('select id, space_id from forms where uuid = $1', [f.uuid])
    const tricky = ['=SUM(A1:A2)', '+1', '-2', '@cmd', '\tTab', '\rCR', 'comma, "quote"', 'line\nbreak', 'plain ünïcödé']
    // 10,000 clean rows and 500 spam rows, written directly (the submit path is tested above).
    await t.kernel.db.query(
      `insert into form_submissions (uuid, form_id, space_id, data, submitted_at, spam_score, spam, ip_hash, action_status)
       select gen_random_uuid(), $1, $2,
              jsonb_build_object('name', (array[${tricky.map((_, i) => `$${i + 3}`).join(',')}])[1 + (g % ${tricky.length})], 'cv', 'file.pdf', 'note', 'n' || g, 'ok', jsonb_build_object('accepted', true, 'text', 'Agree')),
              now() + (g || ' milliseconds')::interval, case when g > 10000 then 0.9 else 0.1 end, g > 10000, 'h', 'none'
       from generate_series(1, 10500) g`,
      [formId, spaceId, ...tricky],
    )
    const csv = (token: string) => t.app.handle(new Request(`http://localhost/v1/spaces/${space}/forms/${f.uuid}/submissions.csv`, { headers: { Authorization: `Bearer ${token}` } }))
    for (const token of [viewer, editor]) expect((await csv(token)).status).toBe(403)
    const res = await csv(admin)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    const bytes = new Uint8Array(await res.arrayBuffer())
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    const text = new TextDecoder().decode(bytes.slice(3))
    const records = simpleCsv(text)
    expect(records[0]).toEqual(['name', 'note', 'ok', 'submitted_at', 'uuid', 'spam_score'])
    expect(records).toHaveLength(10_001)
    const names = new Set(records.slice(1).map((r) => r[0]))
    expect([...names].sort()).toEqual(["'=SUM(A1:A2)", "'+1", "'-2", "'@cmd", "'\tTab", "'\rCR", 'comma, "quote"', 'line\nbreak', 'plain ünïcödé'].sort())
    expect(records[1][2]).toBe('true')
    expect(records.slice(1).every((r) => r[5] === '0.1')).toBe(true)
    expect(text).not.toContain('file.pdf')
    expect(text).toContain('"comma, ""quote"""')
  })
})

/** A minimal RFC 4180 reader (quoted fields, doubled quotes, CRLF records). */
function simpleCsv(text: string): string[][] {
  const out: string[][] = []
  let row: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"'
        i++
      } else if (c === '"') quoted = false
      else cell += c
    } else if (c === '"') quoted = true
    else if (c === ',') {
      row.push(cell)
      cell = ''
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell)
      out.push(row)
      row = []
      cell = ''
      i++
    } else cell += c
  }
  if (cell || row.length) {
    row.push(cell)
    out.push(row)
  }
  return out
}
