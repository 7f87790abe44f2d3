import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type TestApp, testApp } from './helpers/app'
import { type SmtpSink, startSmtpSink } from './helpers/smtp'

setDefaultTimeout(30_000)

let t: TestApp
let sink: SmtpSink
let admin: string
let viewer: string
let space: string

const member = (ownerTenant: number, role: 'viewer' | 'editor' | 'admin') => t.member(ownerTenant, space, role)

beforeAll(async () => {
  sink = await startSmtpSink()
  t = await testApp({ publicUrl: 'https://cms.example.com' }, { SMTP_URL: sink.url })
  const owner = await t.register()
  admin = owner.token
  space = (await t.createSpace(admin, { name: 'Acme News' })).slug
  viewer = await member(owner.tenant.id, 'viewer')
}, 180_000)

afterAll(async () => {
  await t?.close()
  await sink?.stop()
})

const subscribe = (body: Record<string, unknown>, s = space) => t.request('POST', `/v1/cdn/${s}/subscribe`, { body })

/** Runs the mail jobs and answers the links of the last mail to `to`. */
async function linksFor(to: string) {
  await t.kernel.jobs.runDueJobs()
  const mail = [...sink.mails].reverse().find((m) => m.to.includes(to))
  if (!mail) throw new Error(`no mail to ${to}`)
  const text = mail.parsed.text ?? ''
  const confirm = /https:\/\/cms\.example\.com(\/v1\/cdn\/[^\s]+\/subscribe\/confirm\/[A-Za-z0-9_-]{43})/.exec(text)?.[1]
  const unsub = /https:\/\/cms\.example\.com(\/v1\/cdn\/[^\s]+\/unsubscribe\/[A-Za-z0-9_-]{43})/.exec(text)?.[1]
  return { mail, confirm: confirm!, unsubscribe: unsub! }
}

describe('double opt-in', () => {
  test('subscribe → confirmation mail → confirm (once) → unsubscribe (idempotent)', async () => {
    const r = await subscribe({ email: 'Ada@Example.com', name: 'Ada', lang: 'en' })
    expect(r.status).toBe(202)
    expect(r.body).toEqual({ data: { ok: true } })
    const { mail, confirm, unsubscribe } = await linksFor('ada@example.com')
    expect(mail.parsed.subject).toBe('Please confirm your subscription to Acme News')
    expect(mail.raw).toContain('List-Unsubscribe')
    expect(confirm).toBeTruthy()
    // Tokens are stored hashed only.
    const token = confirm.split('/').pop()!
    const stored = await t.kernel.db.query<{ token_hash: string }>('select token_hash from subscriber_tokens')
    expect(stored.some((s) => s.token_hash === token)).toBe(false)
    expect(stored.every((s) => /^[0-9a-f]{64}$/.test(s.token_hash))).toBe(true)

    const list = await t.request('GET', `/v1/spaces/${space}/subscribers?q=ada`, { token: admin })
    expect(list.body.data[0]).toMatchObject({ email: 'ada@example.com', name: 'Ada', status: 'pending', source: 'subscribe' })

    const c = await t.request('POST', confirm)
    expect(c.status).toBe(200)
    expect(c.body).toEqual({ data: { ok: true, status: 'confirmed' } })
    expect((await t.request('POST', confirm)).status).toBe(404) // single use

    const u1 = await t.request('POST', unsubscribe)
    expect(u1.body).toEqual({ data: { ok: true, status: 'unsubscribed' } })
    const u2 = await t.request('POST', unsubscribe)
    expect(u2.status).toBe(200)
    const one = await t.request('GET', `/v1/spaces/${space}/subscribers/${list.body.data[0].id}`, { token: admin })
    expect(one.body.data.status).toBe('unsubscribed')
    expect(one.body.data.confirmed_at).toBeTruthy()
  })

  test('the answer is the same for new, pending and confirmed addresses; a confirmed one gets no mail', async () => {
    await subscribe({ email: 'grace@example.com' })
    const { confirm } = await linksFor('grace@example.com')
    await t.request('POST', confirm)
    sink.clear()
    const again = await subscribe({ email: 'grace@example.com' })
    expect(again.status).toBe(202)
    expect(again.body).toEqual({ data: { ok: true } })
    await t.kernel.jobs.runDueJobs()
    expect(sink.mails).toHaveLength(0)
    // pending: a fresh confirmation mail, at most one per 10 minutes
    await subscribe({ email: 'pending@example.com' })
    await subscribe({ email: 'pending@example.com' })
    await t.kernel.jobs.runDueJobs()
    expect(sink.mails.filter((m) => m.to.includes('pending@example.com'))).toHaveLength(1)
    t.clock.advance(10 * 60_000 + 1000)
    expect((await subscribe({ email: 'pending@example.com' })).status).toBe(202)
    await t.kernel.jobs.runDueJobs()
    expect(sink.mails.filter((m) => m.to.includes('pending@example.com'))).toHaveLength(2)
  })

  test('once the confirmation mail is sent, its tokens exist in clear only in the mail: no table row holds them', async () => {
    await subscribe({ email: 'secret@example.com' })
    const { mail, confirm, unsubscribe } = await linksFor('secret@example.com')
    const tokens = [confirm.split('/').pop()!, unsubscribe.split('/').pop()!]
    const tables = await t.kernel.db.query<{ name: string }>(
      `select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
    )
    expect(tables.map((r) => r.name)).toContain('jobs')
    for (const { name } of tables) {
      for (const token of tokens) {
        const hits = await t.kernel.db.query(`select 1 from "${name}" as r where strpos(r::text, $1) > 0`, [token])
        expect({ table: name, hits: hits.length }).toEqual({ table: name, hits: 0 })
      }
    }
    // The job row keeps the mail's metadata only.
    const [job] = await t.kernel.db.query<{ status: string; payload: Record<string, unknown> }>(
      `select status, payload from jobs where queue = 'mail.send' and payload->>'to' = $1`,
      ['secret@example.com'],
    )
    expect(job.status).toBe('done')
    expect(Object.keys(job.payload).sort()).toEqual(['message_id', 'sent_at', 'subject', 'to'])
    expect(job.payload).toMatchObject({ to: 'secret@example.com', subject: mail.parsed.subject })
    expect(job.payload.message_id).toBe(mail.parsed.messageId)
    expect(job.payload.sent_at).toBe(t.clock.now().toISOString())
  })

  test('a confirmation link expires after 7 days', async () => {
    await subscribe({ email: 'late@example.com' })
    const { confirm } = await linksFor('late@example.com')
    t.clock.advance(7 * 86_400_000 + 1000)
    expect((await t.request('POST', confirm)).status).toBe(404)
  })

  test('honeypot: 202, nothing stored or sent; malformed e-mail: 422; unknown Space: 404', async () => {
    sink.clear()
    const r = await subscribe({ email: 'bot@example.com', _hp: 'filled' })
    expect(r.status).toBe(202)
    await t.kernel.jobs.runDueJobs()
    expect(sink.mails).toHaveLength(0)
    expect((await t.kernel.db.query('select 1 from subscribers where email = $1', ['bot@example.com'])).length).toBe(0)
    // The honeypot comes first: a malformed address, unknown properties or an unknown Space with a filled _hp get 202.
    for (const body of [{ _hp: 'x', email: 'not-an-address' }, { _hp: 'x' }, { _hp: 'x', email: 1, extra: [] }]) {
      const hp = await subscribe(body)
      expect({ body, status: hp.status, answer: hp.body }).toEqual({ body, status: 202, answer: { data: { ok: true } } })
    }
    expect((await subscribe({ _hp: 'x', email: 'a@example.com' }, 'no-such-space')).status).toBe(202)
    await t.kernel.jobs.runDueJobs()
    expect(sink.mails).toHaveLength(0)
    expect((await subscribe({ email: 'not-an-address' })).status).toBe(422)
    expect((await subscribe({ email: 'a@example.com' }, 'no-such-space')).status).toBe(404)
    expect((await t.request('GET', `/v1/cdn/${space}/subscribe/confirm/${'A'.repeat(43)}`)).status).toBe(404)
  })

  test('with newsletter_redirect_url, the confirm and unsubscribe pages’ buttons answer 303', async () => {
    expect((await t.request('PUT', `/v1/spaces/${space}/newsletter`, { token: viewer, body: { newsletter_redirect_url: 'https://acme.test/thanks' } })).status).toBe(403)
    const put = await t.request('PUT', `/v1/spaces/${space}/newsletter`, { token: admin, body: { newsletter_redirect_url: 'https://acme.test/thanks' } })
    expect(put.body.data).toEqual({ newsletter_redirect_url: 'https://acme.test/thanks' })
    await subscribe({ email: 'redirect@example.com' })
    const { confirm, unsubscribe } = await linksFor('redirect@example.com')
    const fromPage = { raw: 'via=page', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }
    const c = await t.request('POST', confirm, fromPage)
    expect(c.status).toBe(303)
    expect(c.headers.get('location')).toBe('https://acme.test/thanks?status=confirmed')
    const u = await t.request('POST', unsubscribe, fromPage)
    expect(u.status).toBe(303)
    expect(u.headers.get('location')).toBe('https://acme.test/thanks?status=unsubscribed')
    await t.request('PUT', `/v1/spaces/${space}/newsletter`, { token: admin, body: { newsletter_redirect_url: null } })
  })
})

describe('management', () => {
  test('list filters by status and q, pages, and checks roles (subscribers are personal data: admin only)', async () => {
    const refused = await t.request('GET', `/v1/spaces/${space}/subscribers?per_page=2`, { token: viewer })
    expect(refused.status).toBe(403)
    expect(refused.body.error).toBe('forbidden')
    const [first] = (await t.request('GET', `/v1/spaces/${space}/subscribers?per_page=1`, { token: admin })).body.data
    expect((await t.request('GET', `/v1/spaces/${space}/subscribers/${first.id}`, { token: viewer })).status).toBe(403)
    const all = await t.request('GET', `/v1/spaces/${space}/subscribers?per_page=2`, { token: admin })
    expect(all.status).toBe(200)
    expect(all.body.data).toHaveLength(2)
    expect(all.body.meta.total).toBeGreaterThanOrEqual(5)
    const confirmed = await t.request('GET', `/v1/spaces/${space}/subscribers?status=confirmed`, { token: admin })
    expect(confirmed.body.data.every((s: any) => s.status === 'confirmed')).toBe(true)
    expect((await t.request('GET', `/v1/spaces/${space}/subscribers?status=bogus`, { token: admin })).status).toBe(422)
    expect((await t.request('GET', `/v1/spaces/${space}/subscribers`)).status).toBe(401)
  })

  test('PATCH changes name and can unsubscribe but never confirm; DELETE erases', async () => {
    const [s] = (await t.request('GET', `/v1/spaces/${space}/subscribers?q=pending@`, { token: admin })).body.data
    expect((await t.request('PATCH', `/v1/spaces/${space}/subscribers/${s.id}`, { token: viewer, body: { name: 'X' } })).status).toBe(403)
    expect((await t.request('PATCH', `/v1/spaces/${space}/subscribers/${s.id}`, { token: admin, body: { status: 'confirmed' } })).status).toBe(422)
    const p = await t.request('PATCH', `/v1/spaces/${space}/subscribers/${s.id}`, { token: admin, body: { name: 'Pat', status: 'unsubscribed' } })
    expect(p.body.data).toMatchObject({ name: 'Pat', status: 'unsubscribed' })
    expect((await t.request('DELETE', `/v1/spaces/${space}/subscribers/${s.id}`, { token: admin })).status).toBe(204)
    expect((await t.request('GET', `/v1/spaces/${space}/subscribers/${s.id}`, { token: admin })).status).toBe(404)
  })

  test('CSV export: BOM, header, quoted cells, formula injection neutralised', async () => {
    await subscribe({ email: 'csv@example.com', name: '=HYPERLINK("x","y"), "quoted"' })
    expect((await t.request('GET', `/v1/spaces/${space}/subscribers.csv`, { token: viewer })).status).toBe(403)
    const r = await t.request('GET', `/v1/spaces/${space}/subscribers.csv`, { token: admin })
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toContain('text/csv')
    const bytes = new Uint8Array(
      await (await t.app.handle(new Request(`http://localhost/v1/spaces/${space}/subscribers.csv`, { headers: { Authorization: `Bearer ${admin}` } }))).arrayBuffer(),
    )
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    const lines = r.text.split('\r\n')
    expect(lines[0]).toBe('email,name,lang,status,source,created_at,confirmed_at,unsubscribed_at')
    const row = lines.find((l) => l.startsWith('csv@example.com'))!
    expect(row).toContain(`"'=HYPERLINK(""x"",""y""), ""quoted"""`)
  })
})
