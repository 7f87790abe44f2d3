import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { loadConfig } from '../src/config'
import { createUserAsOperator } from '../src/modules/auth/service'
import { type TestApp, testApp } from './helpers/app'
import { type SmtpSink, startSmtpSink } from './helpers/smtp'

setDefaultTimeout(60_000)

let t: TestApp
let sink: SmtpSink
const DAY = 24 * 3_600_000
const BASE = 'https://cms.example.com'
const LINK = /https:\/\/cms\.example\.com\/pitch-demo\/([A-Za-z0-9_-]{43})/
const RESET = /https:\/\/cms\.example\.com\/reset-password\/([A-Za-z0-9_-]{43})/

beforeAll(async () => {
  sink = await startSmtpSink()
  t = await testApp({ publicUrl: BASE }, { SMTP_URL: sink.url, PITCH_DEMOS: 'on', REGISTRATION_VERIFY: 'on' })
})
afterAll(async () => {
  await t?.close()
  await sink?.stop()
})

let n = 0
const uniq = () => `${++n}${Math.random().toString(36).slice(2, 6)}`

/** A Tenant admin: the operator's way in (then login). */
async function admin(app: TestApp = t) {
  const email = `admin${uniq()}@example.com`
  await createUserAsOperator(app.kernel, { email, password: 'correct horse battery staple', name: 'Alice Admin' })
  const login = await app.request('POST', '/v1/auth/login', { body: { email, password: 'correct horse battery staple' } })
  return login.body.data.token as string
}

const invite = (token: string, b: Record<string, unknown>, app: TestApp = t) => app.request('POST', '/v1/pitch-invitees', { token, body: b })
const provision = (slug: string, ip?: string, app: TestApp = t) => app.request('POST', `/v1/pitch/${slug}/test-account`, { ip })
const claim = (token: string, password = 'my demo passphrase', app: TestApp = t) => app.request('POST', '/v1/pitch/claim', { body: { token, password } })
const count = async (table: string) => Number((await t.kernel.db.query<{ n: string }>(`select count(*) as n from ${table}`))[0].n)

/** The mails to `to` sent since the sink was last looked at by this helper (the jobs run first). */
async function mailsTo(to: string) {
  await t.kernel.jobs.runDueJobs()
  return sink.mails.filter((m) => m.to.includes(to)).map((m) => m.parsed.text ?? '')
}

async function demoLink(to: string): Promise<string> {
  const texts = await mailsTo(to)
  const m = LINK.exec(texts[texts.length - 1] ?? '')
  if (!m) throw new Error(`no demo link mailed to ${to}: ${JSON.stringify(texts)}`)
  return m[1]
}

/** An invitee of a new admin's Tenant, with its demo started (link followed, password chosen). */
async function startedDemo(prefix: string) {
  const a = await admin()
  const slug = `${prefix}-${uniq()}`
  const email = `${prefix}${uniq()}@example.com`
  expect((await invite(a, { slug, name: 'Dee Demo', email })).status).toBe(201)
  expect((await provision(slug)).status).toBe(202)
  const r = await claim(await demoLink(email))
  expect(r.status).toBe(201)
  return { admin: a, slug, email, space: r.body.data.space as string, expiresAt: r.body.data.expires_at as string }
}

describe('PITCH_DEMOS', () => {
  test('off by default: a new invitee, the anonymous call and the claim all answer 403 pitch_unavailable; nothing is made or mailed', async () => {
    expect(loadConfig({}).pitchDemos).toBe(false)
    const off = await testApp({ publicUrl: BASE }, { SMTP_URL: sink.url })
    try {
      const a = await admin(off)
      const refused = await invite(a, { slug: `off-${uniq()}`, name: 'Olaf Off', email: `off${uniq()}@example.com` }, off)
      expect(refused.status).toBe(403)
      expect(refused.body.error).toBe('pitch_unavailable')
      // An invitee made while demos were on stays unusable once they are off.
      const email = `stale${uniq()}@example.com`
      const [tenant] = await off.kernel.db.query<{ id: number }>('select id from tenants order by id desc limit 1')
      await off.kernel.db.query(`insert into pitch_invitees (tenant_id, slug, name, email, created_at) values ($1, 'stale-one', 'Stale', $2, now())`, [tenant.id, email])
      for (const slug of ['stale-one', 'no-such-slug']) {
        const r = await provision(slug, undefined, off)
        expect(r.status).toBe(403)
        expect(r.body.error).toBe('pitch_unavailable')
      }
      const c = await claim('A'.repeat(43), 'my demo passphrase', off)
      expect(c.status).toBe(403)
      expect(c.body.error).toBe('pitch_unavailable')
      await off.kernel.jobs.runDueJobs()
      expect(sink.mails.filter((m) => m.to.includes(email))).toEqual([])
      expect((await off.kernel.db.query('select id from users where email = $1', [email])).length).toBe(0)
      // The Tenant still sees (and may delete) what it has.
      expect((await off.request('GET', '/v1/pitch-invitees', { token: a })).status).toBe(200)
    } finally {
      await off.close()
    }
  })
})

describe('pitch invitees', () => {
  test('a Tenant admin adds, lists and deletes invitees; other Tenants see none of them', async () => {
    const a = await admin()
    const slug = `prospect-${uniq()}`
    const created = await invite(a, { slug, name: 'Pia Prospect', email: 'Pia@Example.com' })
    expect(created.status).toBe(201)
    expect(created.body.data).toMatchObject({ slug, name: 'Pia Prospect', email: 'pia@example.com', status: 'invited', provisioned_at: null, expires_at: null })
    const list = await t.request('GET', '/v1/pitch-invitees', { token: a })
    expect(list.status).toBe(200)
    expect(list.body.data.map((i: any) => i.slug)).toEqual([slug])

    const b = await admin()
    expect((await t.request('GET', '/v1/pitch-invitees', { token: b })).body.data).toEqual([])
    expect((await t.request('DELETE', `/v1/pitch-invitees/${slug}`, { token: b })).status).toBe(404)
    // Slugs are global: another Tenant cannot take it.
    const dup = await invite(b, { slug, name: 'X', email: 'x@example.com' })
    expect(dup.status).toBe(409)
    expect(dup.body.error).toBe('pitch_invitee_exists')

    expect((await t.request('DELETE', `/v1/pitch-invitees/${slug}`, { token: a })).status).toBe(204)
    expect((await t.request('GET', '/v1/pitch-invitees', { token: a })).body.data).toEqual([])
    expect((await t.request('DELETE', `/v1/pitch-invitees/${slug}`, { token: a })).status).toBe(404)
  })

  test('bad input is 422; no token 401; a Space-scoped token 403 user_required', async () => {
    const a = await admin()
    for (const b of [
      { slug: 'Bad Slug', name: 'X', email: 'x@example.com' },
      { slug: '1abc', name: 'X', email: 'x@example.com' },
      { slug: `ok-${uniq()}`, name: '', email: 'x@example.com' },
      { slug: `ok-${uniq()}`, name: 'X', email: 'nope' },
      { slug: `ok-${uniq()}`, name: 'X', email: 'x@example.com', extra: true },
    ]) {
      expect((await invite(a, b)).status).toBe(422)
    }
    expect((await t.request('GET', '/v1/pitch-invitees')).status).toBe(401)
    expect((await invite('', { slug: `ok-${uniq()}`, name: 'X', email: 'x@example.com' })).status).toBe(401)
    expect((await t.request('DELETE', '/v1/pitch-invitees/whatever')).status).toBe(401)
    // A Space-scoped admin token is not a person: it does not administer the Tenant.
    const space = await t.createSpace(a)
    const st = await t.spaceToken(a, space.slug, 'admin')
    const refused = await t.request('GET', '/v1/pitch-invitees', { token: st.token })
    expect(refused.status).toBe(403)
    expect(refused.body.error).toBe('user_required')
    expect((await invite(st.token, { slug: `ok-${uniq()}`, name: 'X', email: 'x@example.com' })).status).toBe(403)
  })
})

describe('a pitch demo', () => {
  test('the anonymous call makes nothing and answers no token; the link mailed to the invitee makes the demo, once', async () => {
    const a = await admin()
    const slug = `acme-${uniq()}`
    const email = `buyer${uniq()}@example.com`
    expect((await invite(a, { slug, name: 'Bea Buyer', email })).status).toBe(201)
    const users = await count('users')
    const tenants = await count('tenants')

    const r = await provision(slug)
    expect(r.status).toBe(202)
    expect(Object.keys(r.body.data)).toEqual(['message'])
    expect(r.text).not.toMatch(/token|u_[A-Za-z0-9_-]{12}\./)
    expect(await count('users')).toBe(users)
    expect(await count('tenants')).toBe(tenants)

    // The link goes to the invitee's address only, built from PUBLIC_URL; opening its page changes nothing.
    const token = await demoLink(email)
    const page = await t.request('GET', `/pitch-demo/${token}`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    expect(page.headers.get('cache-control')).toBe('no-store')
    expect(await count('users')).toBe(users)

    // The invitee chooses the password: the demo is made, with sample content public at once; no token is answered.
    const c = await claim(token)
    expect(c.status).toBe(201)
    expect(c.body.data).toMatchObject({ user: { email, name: 'Bea Buyer' }, warnings: [] })
    expect(c.body.data.token).toBeUndefined()
    const space = c.body.data.space as string
    expect(space).toStartWith(`${slug}-demo-`)
    expect(Date.parse(c.body.data.expires_at) - t.clock.ms()).toBe(14 * DAY)
    const login = await t.request('POST', '/v1/auth/login', { body: { email, password: 'my demo passphrase' } })
    expect(login.status).toBe(200)
    const spaces = await t.request('GET', '/v1/spaces', { token: login.body.data.token })
    expect(spaces.body.data.map((s: any) => [s.slug, s.role])).toEqual([[space, 'admin']])
    expect((await t.request('GET', `/v1/cdn/${space}/stories/home`)).status).toBe(200)
    expect((await t.request('GET', `/v1/cdn/${space}/stories/blog/hello-world`)).status).toBe(200)

    // Once: the link is spent, the call refuses, the listing says provisioned.
    const again = await claim(token, 'another passphrase')
    expect(again.status).toBe(422)
    expect(again.body.error).toBe('pitch_link_invalid')
    const call = await provision(slug)
    expect(call.status).toBe(409)
    expect(call.body.error).toBe('already_provisioned')
    const listed = (await t.request('GET', '/v1/pitch-invitees', { token: a })).body.data.find((i: any) => i.slug === slug)
    expect(listed).toMatchObject({ status: 'provisioned', expires_at: c.body.data.expires_at })
  })

  test('an address that has an account is refused: the same 202, a mail saying so (no link), and a claim answers 409 email_taken', async () => {
    const a = await admin()
    const email = `taken${uniq()}@example.com`
    await createUserAsOperator(t.kernel, { email, password: 'correct horse battery staple', name: 'Has Account' })
    const slug = `taken-${uniq()}`
    await invite(a, { slug, name: 'Has Account', email })
    const tenants = await count('tenants')
    const r = await provision(slug)
    expect(r.status).toBe(202)
    const texts = await mailsTo(email)
    expect(texts).toHaveLength(1)
    expect(texts[0]).toContain('has an account there already')
    expect(texts[0]).not.toMatch(LINK)
    expect(await count('tenants')).toBe(tenants)

    // A link mailed before the address got its account: following it makes nothing.
    const later = `later${uniq()}@example.com`
    const slug2 = `later-${uniq()}`
    await invite(a, { slug: slug2, name: 'Later', email: later })
    expect((await provision(slug2)).status).toBe(202)
    const token = await demoLink(later)
    await createUserAsOperator(t.kernel, { email: later, password: 'correct horse battery staple', name: 'Later' })
    const c = await claim(token)
    expect(c.status).toBe(409)
    expect(c.body.error).toBe('email_taken')
    expect(await count('tenants')).toBe(tenants + 1)
    const listed = (await t.request('GET', '/v1/pitch-invitees', { token: a })).body.data.find((i: any) => i.slug === slug2)
    expect(listed.status).toBe('invited')
  })

  test('two claims at once: one 201, one 422, and one demo Tenant', async () => {
    const a = await admin()
    const slug = `twin-${uniq()}`
    const email = `twin${uniq()}@example.com`
    await invite(a, { slug, name: 'Twin', email })
    await provision(slug)
    const token = await demoLink(email)
    const before = await count('tenants')
    const results = await Promise.all([claim(token), claim(token)])
    expect(results.map((r) => r.status).sort()).toEqual([201, 422])
    expect((await count('tenants')) - before).toBe(1)
  })

  test('a new call replaces the link; 3 mails an hour per invitee, then the same answer and no mail; made-up links 422', async () => {
    const a = await admin()
    const slug = `again-${uniq()}`
    const email = `again${uniq()}@example.com`
    await invite(a, { slug, name: 'Agnes', email })
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) statuses.push((await provision(slug, `198.51.100.${i + 1}`)).status)
    expect(statuses).toEqual([202, 202, 202, 202])
    const texts = await mailsTo(email)
    expect(texts).toHaveLength(3)
    const tokens = texts.map((x) => LINK.exec(x)![1])
    // Only the newest link works.
    expect((await claim(tokens[0])).body.error).toBe('pitch_link_invalid')
    for (const bad of ['A'.repeat(43), 'short', 'x'.repeat(200)]) {
      const r = await claim(bad)
      expect(r.status).toBe(422)
    }
    expect((await claim(tokens[2])).status).toBe(201)
  })

  test('works whatever REGISTRATION says: the invitation and the mailbox admit the address', async () => {
    const closed = await testApp({ publicUrl: BASE }, { SMTP_URL: sink.url, PITCH_DEMOS: 'on', REGISTRATION: 'closed' })
    try {
      const a = await admin(closed)
      const email = `closed${uniq()}@example.com`
      await invite(a, { slug: `closed-${uniq()}`, name: 'Cleo', email }, closed)
      const slug = (await closed.request('GET', '/v1/pitch-invitees', { token: a })).body.data[0].slug
      expect((await provision(slug, undefined, closed)).status).toBe(202)
      await closed.kernel.jobs.runDueJobs()
      const token = LINK.exec(sink.mails.filter((m) => m.to.includes(email)).at(-1)!.parsed.text ?? '')![1]
      expect((await claim(token, 'my demo passphrase', closed)).status).toBe(201)
    } finally {
      await closed.close()
    }
  })

  test('without PUBLIC_URL the demo is refused (403 pitch_unavailable): the link needs it', async () => {
    const bare = await testApp({}, { PITCH_DEMOS: 'on' })
    try {
      const owner = await bare.register()
      const r = await bare.request('POST', '/v1/pitch-invitees', { token: owner.token, body: { slug: 'bare', name: 'B', email: 'b@example.com' } })
      expect(r.status).toBe(403)
      expect(r.body.error).toBe('pitch_unavailable')
      const p = await bare.request('POST', '/v1/pitch/bare/test-account')
      expect(p.status).toBe(403)
      expect(p.body.error).toBe('pitch_unavailable')
    } finally {
      await bare.close()
    }
  })

  test('10 calls per 60 minutes per IP', async () => {
    const ip = '203.0.113.99'
    const statuses: number[] = []
    for (let i = 0; i < 11; i++) statuses.push((await provision(`nobody-${i}`, ip)).status)
    expect(statuses.slice(0, 10).every((s) => s === 404)).toBe(true)
    expect(statuses[10]).toBe(429)
  })
})

describe('the end of a demo', () => {
  test('after PITCH_TTL_DAYS the daily job archives the demo Spaces and revokes its tokens; sign-in is refused', async () => {
    const d = await startedDemo('expiring')
    const login = () => t.request('POST', '/v1/auth/login', { body: { email: d.email, password: 'my demo passphrase' } })
    const first = await login()
    expect(first.status).toBe(200)
    const token = first.body.data.token as string
    const st = await t.spaceToken(token, d.space, 'viewer')
    await t.kernel.jobs.runDueJobs()
    expect((await t.request('GET', '/v1/auth/me', { token })).status).toBe(200)

    // A day before the end: the daily run leaves it alone.
    t.clock.advance(13 * DAY)
    await t.kernel.jobs.runDueJobs()
    expect((await t.request('GET', '/v1/auth/me', { token })).status).toBe(200)
    expect((await t.request('GET', `/v1/cdn/${d.space}/stories/home`)).status).toBe(200)

    t.clock.advance(1 * DAY + 3_600_000)
    // Expired already in the listing, before the job ran; its user cannot sign in again, even with the right password.
    const listed = (await t.request('GET', '/v1/pitch-invitees', { token: d.admin })).body.data.find((i: any) => i.slug === d.slug)
    expect(listed.status).toBe('expired')
    const refused = await login()
    expect(refused.status).toBe(403)
    expect(refused.body.error).toBe('sign_in_refused')
    t.clock.advance(DAY)
    await t.kernel.jobs.runDueJobs()
    expect((await t.request('GET', '/v1/auth/me', { token })).status).toBe(401)
    expect((await t.request('GET', '/v1/auth/me', { token: st.token })).status).toBe(401)
    expect((await t.request('GET', `/v1/cdn/${d.space}/stories/home`)).status).toBe(404)
    const events = await t.kernel.db.query<{ payload: any }>(`select payload from events where type = 'space.archived' order by id desc limit 1`)
    expect(events[0].payload.space.slug).toBe(d.space)
    expect((await provision(d.slug)).status).toBe(409)
  })

  test('a deleted demo releases its address: sign-up answers as for any address and mails a reset link; the reset makes it an ordinary account', async () => {
    const d = await startedDemo('gone')
    const before = await t.request('POST', '/v1/auth/login', { body: { email: d.email, password: 'my demo passphrase' } })
    expect(before.status).toBe(200)
    expect((await t.request('DELETE', `/v1/pitch-invitees/${d.slug}`, { token: d.admin })).status).toBe(204)
    expect((await t.request('GET', '/v1/auth/me', { token: before.body.data.token })).status).toBe(401)
    expect((await t.request('GET', `/v1/cdn/${d.space}/stories/home`)).status).toBe(404)
    expect((await provision(d.slug)).status).toBe(404)
    const refused = await t.request('POST', '/v1/auth/login', { body: { email: d.email, password: 'my demo passphrase' } })
    expect(refused.status).toBe(403)
    expect(refused.body.error).toBe('sign_in_refused')

    // The address's owner signs up: the same answer as any sign-up, and a mail with a reset link.
    const reg = await t.request('POST', '/v1/auth/register', { body: { email: d.email, password: 'a brand new passphrase', name: 'Owner' } })
    expect(reg.status).toBe(202)
    expect(reg.body.data.confirmation).toBe('mail')
    const texts = await mailsTo(d.email)
    const reset = RESET.exec(texts[texts.length - 1])![1]
    expect((await t.request('POST', '/v1/auth/password-reset/confirm', { body: { token: reset, new_password: 'my own passphrase' } })).status).toBe(200)
    const after = await t.request('POST', '/v1/auth/login', { body: { email: d.email, password: 'my own passphrase' } })
    expect(after.status).toBe(200)
    // An ordinary account: it makes Spaces of its own; the demo's stay archived.
    const space = await t.createSpace(after.body.data.token)
    expect((await t.request('GET', '/v1/spaces', { token: after.body.data.token })).body.data.map((s: any) => s.slug)).toContain(space.slug)
    expect((await t.request('GET', `/v1/cdn/${d.space}/stories/home`)).status).toBe(404)
  })

  test('a reset while the demo runs does not keep it alive past its end', async () => {
    const d = await startedDemo('midway')
    expect((await t.request('POST', '/v1/auth/password-reset', { body: { email: d.email } })).status).toBe(202)
    await t.kernel.jobs.runDueJobs()
    const reset = RESET.exec((await mailsTo(d.email)).at(-1)!)![1]
    expect((await t.request('POST', '/v1/auth/password-reset/confirm', { body: { token: reset, new_password: 'midway passphrase' } })).status).toBe(200)
    t.clock.advance(15 * DAY)
    const refused = await t.request('POST', '/v1/auth/login', { body: { email: d.email, password: 'midway passphrase' } })
    expect(refused.status).toBe(403)
    expect(refused.body.error).toBe('sign_in_refused')
  })
})
