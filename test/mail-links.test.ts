/**
 * Links in mail hold capabilities (confirm, unsubscribe, cancel, invitation): where they point, where they are kept,
 * and what following one does.
 * - Their base is PUBLIC_URL, never the request's Host (a forged one would mail the victim a link to the attacker).
 * - The queued message is sealed: no row, old row version or WAL record holds a link in clear; `.eml` files are pruned.
 * - A link's GET changes nothing (mail scanners fetch links): it answers a page whose button POSTs; unsubscribe also
 *   takes RFC 8058 one-click POSTs.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestApp, testApp } from './helpers/app'
import { type SmtpSink, startSmtpSink } from './helpers/smtp'

setDefaultTimeout(60_000)

const DAY = 86_400_000
const PUBLIC = 'https://cms.example.com'
const FORM_FIELDS = [
  { key: 'name', type: 'text', label: 'Name' },
  { key: 'email', type: 'email', label: 'E-mail' },
]

let sink: SmtpSink
/** PUBLIC_URL unset (the default). */
let bare: TestApp
/** PUBLIC_URL set. */
let t: TestApp
const worlds = new Map<TestApp, { admin: string; space: string }>()

async function world(app: TestApp) {
  const owner = await app.register()
  const space = (await app.createSpace(owner.token, { name: 'Acme News' })).slug
  worlds.set(app, { admin: owner.token, space })
}

beforeAll(async () => {
  sink = await startSmtpSink()
  bare = await testApp({ outboundAllowPrivate: true }, { SMTP_URL: sink.url })
  t = await testApp({ publicUrl: PUBLIC, outboundAllowPrivate: true }, { SMTP_URL: sink.url })
  await world(bare)
  await world(t)
}, 180_000)

afterAll(async () => {
  await bare?.close()
  await t?.close()
  await sink?.stop()
})

let ipCounter = 0
/** A request to `app` whose Host (the URL's origin, as Bun.serve builds it from the Host header) is the attacker's. */
async function forged(app: TestApp, method: string, path: string, opts: { body?: unknown; token?: string } = {}) {
  const headers: Record<string, string> = { 'X-Forwarded-For': `10.99.${++ipCounter >> 8}.${ipCounter & 255}`, Host: 'attacker.example' }
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json'
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`
  const res = await app.app.handle(
    new Request(`http://attacker.example${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) }),
  )
  const text = await res.text()
  let body: any = null
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: res.status, body, text }
}

/** A header of a raw message, unfolded (null when absent). */
function header(raw: string, name: string): string | null {
  const head = raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ')
  const line = head.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`))
  return line ? line.slice(name.length + 1).trim() : null
}

/** Runs due jobs and answers the mails to `to` so far. */
async function mailsTo(app: TestApp, to: string) {
  await app.kernel.jobs.runDueJobs()
  return sink.mails.filter((m) => m.to.includes(to))
}

async function createEvent(app: TestApp, over: Record<string, unknown> = {}) {
  const { admin, space } = worlds.get(app)!
  const start = app.clock.ms() + 7 * DAY
  const r = await app.request('POST', `/v1/spaces/${space}/events`, {
    token: admin,
    body: {
      slug: `meetup-${Math.random().toString(36).slice(2, 8)}`,
      title: { en: 'Bun meetup' },
      starts_at: new Date(start).toISOString(),
      ends_at: new Date(start + 2 * 3_600_000).toISOString(),
      timezone: 'Europe/Berlin',
      location: { name: 'Hall A' },
      capacity: null,
      published: true,
      ...over,
    },
  })
  if (r.status !== 201) throw new Error(`create event: ${r.status} ${r.text}`)
  return r.body.data as { id: string; slug: string }
}

describe('mail links come from PUBLIC_URL, never from the Host header', () => {
  test('without PUBLIC_URL, a subscribe with a forged Host is refused (403 mail_links_unavailable): nothing stored, nothing mailed', async () => {
    const { space } = worlds.get(bare)!
    sink.clear()
    const r = await forged(bare, 'POST', `/v1/cdn/${space}/subscribe`, { body: { email: 'victim@example.com' } })
    expect(r.status).toBe(403)
    expect(r.body.error).toBe('mail_links_unavailable')
    expect(await mailsTo(bare, 'victim@example.com')).toHaveLength(0)
    expect(await bare.kernel.db.query('select 1 from subscribers where email = $1', ['victim@example.com'])).toHaveLength(0)
    // The honeypot still answers 202 first; a malformed address is still 422.
    expect((await forged(bare, 'POST', `/v1/cdn/${space}/subscribe`, { body: { email: 'bot@example.com', _hp: 'x' } })).status).toBe(202)
    expect((await forged(bare, 'POST', `/v1/cdn/${space}/subscribe`, { body: { email: 'nope' } })).status).toBe(422)
  })

  test('with PUBLIC_URL, a forged Host changes nothing: confirm and List-Unsubscribe links are on PUBLIC_URL', async () => {
    const { space } = worlds.get(t)!
    sink.clear()
    expect((await forged(t, 'POST', `/v1/cdn/${space}/subscribe`, { body: { email: 'victim@example.com' } })).status).toBe(202)
    const [mail] = await mailsTo(t, 'victim@example.com')
    expect(mail.raw).not.toContain('attacker.example')
    expect(mail.parsed.text).toContain(`${PUBLIC}/v1/cdn/${space}/subscribe/confirm/`)
    expect(header(mail.raw, 'List-Unsubscribe')).toStartWith(`<${PUBLIC}/v1/cdn/${space}/unsubscribe/`)
  })

  test('without PUBLIC_URL, an event registration with a forged Host is taken, and its mail carries no link', async () => {
    const e = await createEvent(bare)
    const { space } = worlds.get(bare)!
    sink.clear()
    const r = await forged(bare, 'POST', `/v1/cdn/${space}/events/${e.slug}/register`, { body: { name: 'Victim', email: 'victim@example.com' } })
    expect(r.status).toBe(201)
    // The answer goes to the caller: on the origin they called.
    expect(r.body.data.ics_url).toStartWith(`http://attacker.example/v1/cdn/${space}/events/${e.slug}/ics/`)
    const [mail] = await mailsTo(bare, 'victim@example.com')
    expect(mail.parsed.subject).toBe('You are registered: Bun meetup')
    expect(mail.raw).not.toContain('attacker.example')
    expect(mail.parsed.text).not.toMatch(/https?:\/\/\S+\/(cancel|ics)\//)
    expect(mail.parsed.text).toContain('To cancel your registration, write to Acme News.')
  })

  test('with PUBLIC_URL, the registration mail’s links are on PUBLIC_URL whatever the Host', async () => {
    const e = await createEvent(t)
    const { space } = worlds.get(t)!
    sink.clear()
    expect((await forged(t, 'POST', `/v1/cdn/${space}/events/${e.slug}/register`, { body: { name: 'Ada', email: 'ada@example.com' } })).status).toBe(201)
    const [mail] = await mailsTo(t, 'ada@example.com')
    expect(mail.raw).not.toContain('attacker.example')
    expect(mail.parsed.text).toContain(`${PUBLIC}/v1/cdn/${space}/events/${e.slug}/cancel/`)
    expect(mail.parsed.text).toContain(`${PUBLIC}/v1/cdn/${space}/events/${e.slug}/ics/`)
  })

  test('without PUBLIC_URL, an invitation is refused (403 mail_links_unavailable) and nothing is mailed', async () => {
    const { admin, space } = worlds.get(bare)!
    sink.clear()
    const r = await forged(bare, 'POST', `/v1/spaces/${space}/invitations`, { token: admin, body: { email: 'invitee@example.com', role: 'editor' } })
    expect(r.status).toBe(403)
    expect(r.body.error).toBe('mail_links_unavailable')
    expect(await mailsTo(bare, 'invitee@example.com')).toHaveLength(0)
    expect((await bare.request('GET', `/v1/spaces/${space}/invitations`, { token: admin })).body.data).toHaveLength(0)
  })

  test('with PUBLIC_URL, the invitation link is on PUBLIC_URL whatever the Host', async () => {
    const { admin, space } = worlds.get(t)!
    sink.clear()
    const r = await forged(t, 'POST', `/v1/spaces/${space}/invitations`, { token: admin, body: { email: 'invitee@example.com', role: 'editor' } })
    expect(r.status).toBe(201)
    const [mail] = await mailsTo(t, 'invitee@example.com')
    expect(mail.raw).not.toContain('attacker.example')
    expect(mail.parsed.text).toMatch(new RegExp(`${PUBLIC.replace(/\./g, '\\.')}/invite/[A-Za-z0-9_-]{43}`))
  })

  test('without PUBLIC_URL, a lead form stores the submission, subscribes no one and says why', async () => {
    const { admin, space } = worlds.get(bare)!
    const f = await bare.request('POST', `/v1/spaces/${space}/forms`, { token: admin, body: { slug: 'lead', label: 'Lead', fields: FORM_FIELDS, submit_action: 'lead' } })
    expect(f.status).toBe(201)
    sink.clear()
    const r = await forged(bare, 'POST', `/v1/cdn/${space}/forms/lead`, { body: { data: { name: 'Victim', email: 'lead-victim@example.com' } } })
    expect(r.status).toBeLessThan(300)
    expect(await mailsTo(bare, 'lead-victim@example.com')).toHaveLength(0)
    const [s] = await bare.kernel.db.query<{ action_status: string; action_error: string }>('select action_status, action_error from form_submissions order by id desc limit 1')
    expect(s).toEqual({ action_status: 'failed', action_error: expect.stringContaining('PUBLIC_URL') })
    expect(await bare.kernel.db.query('select 1 from subscribers where email = $1', ['lead-victim@example.com'])).toHaveLength(0)
  })
})

/**
 * Where a text is stored: every table's rows (as text), and — after a checkpoint — the database's write-ahead log
 * segments and the `jobs` table's files, where updated rows leave their old versions until vacuum.
 */
async function storedAt(app: TestApp, needle: string): Promise<string[]> {
  const db = app.kernel.db
  const found: string[] = []
  const tables = await db.query<{ name: string }>(`select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`)
  for (const { name } of tables) {
    if ((await db.query(`select 1 from "${name}" as r where strpos(r::text, $1) > 0 limit 1`, [needle])).length) found.push(`table ${name}`)
  }
  await db.query('checkpoint')
  const files = [
    ...(await db.query<{ path: string }>(`select 'pg_wal/' || name as path from pg_ls_waldir() where modification > now() - interval '10 minutes'`)).map((r) => r.path),
    ...(
      await db.query<{ path: string | null }>(
        `select pg_relation_filepath(c.oid) as path from pg_class c where c.oid = 'jobs'::regclass or c.oid = (select reltoastrelid from pg_class where oid = 'jobs'::regclass)`,
      )
    ).flatMap((r) => (r.path ? [r.path] : [])),
  ]
  for (const path of files) {
    const [hit] = await db.query<{ at: number }>(`select position(convert_to($1, 'UTF8') in pg_read_binary_file($2)) as at`, [needle, path])
    if (Number(hit.at) > 0) found.push(`file ${path}`)
  }
  return found
}

describe('capability links never sit in the database in clear', () => {
  test('a queued confirmation mail is sealed: no row holds its link, and after sending no row, old row version or WAL record holds its tokens', async () => {
    const { space } = worlds.get(t)!
    sink.clear()
    expect((await t.request('POST', `/v1/cdn/${space}/subscribe`, { body: { email: 'sealed@example.com' } })).status).toBe(202)
    // Queued, not sent yet: the link is in no row (its token is not known to us yet; its stem is).
    const stem = `${PUBLIC}/v1/cdn/${space}/subscribe/confirm/`
    expect(await storedAt(t, stem)).toEqual([])
    const [job] = await t.kernel.db.query<{ payload: Record<string, unknown> }>(`select payload from jobs where queue = 'mail.send' and status = 'pending'`)
    expect(Object.keys(job.payload)).toEqual(['sealed'])
    const [mail] = await mailsTo(t, 'sealed@example.com')
    const text = mail.parsed.text ?? ''
    const tokens = [...text.matchAll(/\/(?:confirm|unsubscribe)\/([A-Za-z0-9_-]{43})/g)].map((m) => m[1])
    expect(tokens).toHaveLength(2)
    for (const token of tokens) expect({ token, at: await storedAt(t, token) }).toEqual({ token, at: [] })
  })

  test('mails queued in one statement by the registration writer are sealed too', async () => {
    const e = await createEvent(t)
    const { space } = worlds.get(t)!
    sink.clear()
    const answers = await Promise.all(
      ['one', 'two', 'three'].map((n) => t.request('POST', `/v1/cdn/${space}/events/${e.slug}/register`, { body: { name: n, email: `${n}@batch.example.com` } })),
    )
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201])
    expect(await storedAt(t, `/events/${e.slug}/cancel/`)).toEqual([])
    await t.kernel.jobs.runDueJobs()
    const cancels = sink.mails.flatMap((m) => [...(m.parsed.text ?? '').matchAll(/\/cancel\/([A-Za-z0-9_-]{43})/g)].map((x) => x[1]))
    expect(cancels).toHaveLength(3)
    for (const token of cancels) expect(await storedAt(t, token)).toEqual([])
  })

  test('a sealed message that does not open with this key fails for good, saying why', async () => {
    const now = t.clock.now().toISOString()
    const [{ id }] = await t.kernel.db.query<{ id: number }>(
      `insert into jobs (queue, payload, status, run_at, created_at, updated_at) values ('mail.send', $1::jsonb, 'pending', $2, $2, $2) returning id`,
      [JSON.stringify({ sealed: 'v1.AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA' }), now],
    )
    await t.kernel.jobs.runDueJobs()
    const [row] = await t.kernel.db.query<{ status: string; last_error: string }>('select status, last_error from jobs where id = $1', [id])
    expect(row.status).toBe('failed')
    expect(row.last_error).toContain('SERVICE_SECRET_KEY')
  })

  test('a message queued in clear by an earlier version is still sent', async () => {
    sink.clear()
    const now = t.clock.now().toISOString()
    await t.kernel.db.query(`insert into jobs (queue, payload, status, run_at, created_at, updated_at) values ('mail.send', $1::jsonb, 'pending', $2, $2, $2)`, [
      JSON.stringify({ message: { to: 'legacy@example.com', subject: 'Queued before the upgrade', text: 'hello' } }),
      now,
    ])
    const [mail] = await mailsTo(t, 'legacy@example.com')
    expect(mail.parsed.subject).toBe('Queued before the upgrade')
  })
})

describe('.eml files of the file driver are pruned like finished mail jobs', () => {
  let app: TestApp
  let dir: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cs-mail-prune-'))
    app = await testApp({ dataDir: dir })
  })
  afterAll(async () => {
    await app?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('a file older than 7 days is deleted by the hourly job; newer ones and other files stay', async () => {
    const emls = () => readdirSync(join(dir, 'mail')).filter((f) => f.endsWith('.eml'))
    await app.kernel.mail.enqueue({ to: 'old@example.com', subject: 'Old', text: 'old' })
    await app.kernel.jobs.runDueJobs()
    const [old] = emls()
    expect(old).toBeTruthy()
    await Bun.write(join(dir, 'mail', 'notes.txt'), 'kept')
    app.clock.advance(6 * DAY)
    await app.kernel.mail.enqueue({ to: 'new@example.com', subject: 'New', text: 'new' })
    await app.kernel.jobs.runDueJobs()
    expect(emls()).toHaveLength(2)
    app.clock.advance(DAY + 2 * 3_600_000)
    await app.kernel.jobs.runDueJobs()
    expect(emls()).not.toContain(old)
    expect(emls()).toHaveLength(1)
    expect(existsSync(join(dir, 'mail', 'notes.txt'))).toBe(true)
  })
})

describe('a link’s GET changes nothing; its page’s button POSTs', () => {
  const fromPage = { raw: 'via=page', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }
  const statusOf = async (email: string) =>
    (await t.kernel.db.query<{ status: string }>('select status from subscribers where email = $1', [email]))[0]?.status

  async function subscribed(email: string) {
    const { space } = worlds.get(t)!
    sink.clear()
    await t.request('POST', `/v1/cdn/${space}/subscribe`, { body: { email } })
    const [mail] = await mailsTo(t, email)
    const text = mail.parsed.text ?? ''
    return {
      mail,
      confirm: new URL(/https:\S+\/subscribe\/confirm\/[A-Za-z0-9_-]{43}/.exec(text)![0]).pathname,
      unsubscribe: new URL(/https:\S+\/unsubscribe\/[A-Za-z0-9_-]{43}/.exec(text)![0]).pathname,
    }
  }

  function expectPage(r: { status: number; headers: Headers; text: string }, status = 200) {
    expect(r.status).toBe(status)
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(r.headers.get('cache-control')).toBe('no-store')
    expect(r.headers.get('referrer-policy')).toBe('no-referrer')
    const csp = r.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain('script-src')
    expect(r.text).not.toContain('<script')
  }

  test('GET of the confirmation link answers a page and confirms no one; its button confirms', async () => {
    const { confirm } = await subscribed('scanned@example.com')
    // A mail scanner fetches the link, twice.
    for (let i = 0; i < 2; i++) {
      const page = await t.request('GET', confirm)
      expectPage(page)
      expect(page.text).toContain('<form method="post">')
      expect(page.text).toContain('Confirm my subscription')
      expect(page.text).toContain('Acme News')
    }
    expect(await statusOf('scanned@example.com')).toBe('pending')
    const done = await t.request('POST', confirm, fromPage)
    expectPage(done)
    expect(done.text).toContain('Subscription confirmed')
    expect(await statusOf('scanned@example.com')).toBe('confirmed')
    // Used: the page and the button say so (404); an API client gets the error shape.
    const used = await t.request('GET', confirm, { headers: { Accept: 'text/html,application/xhtml+xml' } })
    expectPage(used, 404)
    expect((await t.request('GET', confirm)).body.error).toBe('not_found')
    expect((await t.request('POST', confirm)).body.error).toBe('not_found')
  })

  test('GET of the unsubscribe link answers a page and unsubscribes no one; its button unsubscribes', async () => {
    const { confirm, unsubscribe } = await subscribed('reader@example.com')
    await t.request('POST', confirm)
    const page = await t.request('GET', unsubscribe)
    expectPage(page)
    expect(page.text).toContain('<form method="post">')
    expect(await statusOf('reader@example.com')).toBe('confirmed')
    expectPage(await t.request('POST', unsubscribe, fromPage))
    expect(await statusOf('reader@example.com')).toBe('unsubscribed')
    const after = await t.request('GET', unsubscribe)
    expectPage(after)
    expect(after.text).toContain('You are unsubscribed')
    expect(after.text).not.toContain('<form')
  })

  test('RFC 8058: the mail offers one-click unsubscription, and a one-click POST (form-encoded or multipart) unsubscribes', async () => {
    const a = await subscribed('oneclick@example.com')
    expect(header(a.mail.raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click')
    await t.request('POST', a.confirm)
    const r = await t.request('POST', a.unsubscribe, { raw: 'List-Unsubscribe=One-Click', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ data: { ok: true, status: 'unsubscribed' } })
    expect(await statusOf('oneclick@example.com')).toBe('unsubscribed')

    const b = await subscribed('multipart@example.com')
    await t.request('POST', b.confirm)
    const form = new FormData()
    form.set('List-Unsubscribe', 'One-Click')
    const m = await t.app.handle(new Request(`http://localhost${b.unsubscribe}`, { method: 'POST', body: form, headers: { 'X-Forwarded-For': '10.98.0.1' } }))
    expect(m.status).toBe(200)
    expect(await m.json()).toEqual({ data: { ok: true, status: 'unsubscribed' } })
    expect(await statusOf('multipart@example.com')).toBe('unsubscribed')
  })

  test('with newsletter_redirect_url: the page may post to it (CSP form-action), the button redirects, one-click never does', async () => {
    const { admin, space } = worlds.get(t)!
    await t.request('PUT', `/v1/spaces/${space}/newsletter`, { token: admin, body: { newsletter_redirect_url: 'https://acme.test/thanks' } })
    try {
      const { confirm, unsubscribe } = await subscribed('redirected@example.com')
      const page = await t.request('GET', confirm)
      expect(page.headers.get('content-security-policy')).toContain("form-action 'self' https://acme.test;")
      const c = await t.request('POST', confirm, fromPage)
      expect(c.status).toBe(303)
      expect(c.headers.get('location')).toBe('https://acme.test/thanks?status=confirmed')
      const u = await t.request('POST', unsubscribe, { raw: 'List-Unsubscribe=One-Click', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } })
      expect(u.status).toBe(200)
      expect(u.body.data.status).toBe('unsubscribed')
    } finally {
      await t.request('PUT', `/v1/spaces/${space}/newsletter`, { token: admin, body: { newsletter_redirect_url: null } })
    }
  })

  test('GET of an event’s cancel link answers a page and cancels nothing; its button cancels', async () => {
    const e = await createEvent(t)
    const { admin, space } = worlds.get(t)!
    sink.clear()
    await t.request('POST', `/v1/cdn/${space}/events/${e.slug}/register`, { body: { name: 'Ada', email: 'cancel-me@example.com' } })
    const [mail] = await mailsTo(t, 'cancel-me@example.com')
    const cancel = new URL(/https:\S+\/cancel\/[A-Za-z0-9_-]{43}/.exec(mail.parsed.text ?? '')![0]).pathname
    const status = async () => (await t.request('GET', `/v1/spaces/${space}/events/${e.id}/registrations`, { token: admin })).body.data[0].status
    const page = await t.request('GET', cancel)
    expectPage(page)
    expect(page.text).toContain('Bun meetup')
    expect(page.text).toContain('<form method="post">')
    expect(await status()).toBe('confirmed')
    const done = await t.request('POST', cancel, fromPage)
    expectPage(done)
    expect(await status()).toBe('cancelled')
    expect((await t.request('GET', cancel)).text).toContain('Registration cancelled')
  })
})
