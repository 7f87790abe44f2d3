/**
 * Sign-up tells no one whether an address has an account, and (REGISTRATION_VERIFY=on, the default) an account
 * exists only once its owner followed the link mailed to the address. The first account of a service is made at once:
 * the operator bootstrapping it may not have mail yet.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { ConfigError, loadConfig } from '../src/config'
import { createUserAsOperator } from '../src/modules/auth/service'
import { type TestApp, testApp } from './helpers/app'
import { type SmtpSink, startSmtpSink } from './helpers/smtp'

setDefaultTimeout(60_000)

const BASE = 'https://cms.example.com'
const CONFIRM = /https:\/\/cms\.example\.com\/confirm-sign-up\/([A-Za-z0-9_-]{43})/
const RESET = /https:\/\/cms\.example\.com\/reset-password\/([A-Za-z0-9_-]{43})/
const PASSWORD = 'correct horse battery staple'

let t: TestApp
let sink: SmtpSink
let owner: { token: string; email: string }

beforeAll(async () => {
  sink = await startSmtpSink()
  t = await testApp({ publicUrl: BASE }, { SMTP_URL: sink.url, REGISTRATION_VERIFY: 'on' })
  const email = `owner-${Math.random().toString(36).slice(2, 8)}@example.com`
  owner = { token: (await t.register({ email })).token, email }
})
afterAll(async () => {
  await t?.close()
  await sink?.stop()
})

let n = 0
const fresh = () => `person${++n}-${Math.random().toString(36).slice(2, 8)}@example.com`
const register = (body: Record<string, unknown>, app: TestApp = t) => app.request('POST', '/v1/auth/register', { body })
const login = (email: string, password = PASSWORD, app: TestApp = t) => app.request('POST', '/v1/auth/login', { body: { email, password } })
const confirm = (token: string, app: TestApp = t) => app.request('POST', '/v1/auth/register/confirm', { body: { token } })

async function mailsTo(to: string) {
  await t.kernel.jobs.runDueJobs()
  return sink.mails.filter((m) => m.to.includes(to)).map((m) => ({ subject: m.parsed.subject ?? '', text: m.parsed.text ?? '' }))
}

async function confirmLink(to: string): Promise<string> {
  const mails = await mailsTo(to)
  const m = CONFIRM.exec(mails.at(-1)?.text ?? '')
  if (!m) throw new Error(`no confirmation link mailed to ${to}`)
  return m[1]
}

describe('REGISTRATION_VERIFY', () => {
  test('is on by default; on and off are read; anything else is refused', () => {
    expect(loadConfig({}).registrationVerify).toBe(true)
    expect(loadConfig({ REGISTRATION_VERIFY: 'off' }).registrationVerify).toBe(false)
    expect(loadConfig({ REGISTRATION_VERIFY: 'on' }).registrationVerify).toBe(true)
    expect(() => loadConfig({ REGISTRATION_VERIFY: 'maybe' })).toThrow(ConfigError)
  })

  test('the first account of a service is made at once, with a session, even without PUBLIC_URL; later sign-ups need it (403 for every address)', async () => {
    const bare = await testApp({}, { REGISTRATION_VERIFY: 'on' })
    try {
      const first = await register({ email: 'operator@example.com', password: PASSWORD, name: 'Operator' }, bare)
      expect(first.status).toBe(201)
      expect(Object.keys(first.body.data).sort()).toEqual(['tenant', 'token', 'user'])
      expect((await bare.request('GET', '/v1/auth/me', { token: first.body.data.token })).status).toBe(200)
      // Later: the same 403 whether the address is new or taken.
      const taken = await register({ email: 'operator@example.com', password: PASSWORD, name: 'Again' }, bare)
      const fresh1 = await register({ email: 'newcomer@example.com', password: PASSWORD, name: 'New' }, bare)
      expect(taken.status).toBe(403)
      expect(taken.body.error).toBe('registration_unavailable')
      expect(fresh1.status).toBe(403)
      expect(fresh1.body).toEqual(taken.body)
      // The operator's own way in still works.
      await createUserAsOperator(bare.kernel, { email: 'second@example.com', password: PASSWORD, name: 'Second' })
      expect((await login('second@example.com', PASSWORD, bare)).status).toBe(200)
    } finally {
      await bare.close()
    }
  })
})

describe('a sign-up', () => {
  test('answers the same for a new and a taken address (status and body); the taken one is told by mail, and nothing of it changes', async () => {
    const newcomer = fresh()
    const a = await register({ email: newcomer, password: PASSWORD, name: 'New Person' })
    const b = await register({ email: owner.email, password: 'another long password', name: 'Impostor', tenant_name: 'Theirs' })
    const c = await register({ email: owner.email.toUpperCase(), password: PASSWORD, name: 'Shouting' })
    expect(a.status).toBe(202)
    expect(b.status).toBe(202)
    expect(c.status).toBe(202)
    expect(b.body).toEqual(a.body)
    expect(c.body).toEqual(a.body)
    expect(a.body.data).toEqual({ message: expect.any(String), confirmation: 'mail' })

    // The owner's account is untouched: old password in, the impostor's out.
    expect((await login(owner.email, 'another long password')).status).toBe(401)
    expect((await login(owner.email)).status).toBe(200)

    // The owner is told: sign in or reset, both links from PUBLIC_URL; no confirmation link.
    const told = await mailsTo(owner.email)
    expect(told).toHaveLength(2)
    expect(told[0].subject).toBe('Someone tried to sign up with your address')
    expect(told[0].text).toContain(`${BASE}/admin/`)
    expect(told[0].text).not.toMatch(CONFIRM)
    const reset = RESET.exec(told[0].text)![1]
    expect((await t.request('POST', '/v1/auth/password-reset/confirm', { body: { token: reset, new_password: 'the owner passphrase' } })).status).toBe(200)
    expect((await login(owner.email, 'the owner passphrase')).status).toBe(200)
    owner.token = (await login(owner.email, 'the owner passphrase')).body.data.token
    await t.request('POST', '/v1/auth/password', { token: owner.token, body: { current_password: 'the owner passphrase', new_password: PASSWORD } })

    // The newcomer gets the confirmation link.
    const mails = await mailsTo(newcomer)
    expect(mails).toHaveLength(1)
    expect(mails[0].subject).toBe('Confirm your address')
    expect(mails[0].text).toMatch(CONFIRM)
  })

  test('with REGISTRATION_VERIFY=on the account cannot sign in until the mailed link is followed', async () => {
    const email = fresh()
    expect((await register({ email, password: PASSWORD, name: 'Vera Verified', tenant_name: 'Vera Co' })).status).toBe(202)
    const before = await login(email)
    expect(before.status).toBe(401)
    expect(before.body.error).toBe('invalid_credentials')
    expect((await t.kernel.db.query('select id from users where email = $1', [email])).length).toBe(0)

    // Opening the link's page changes nothing (mail scanners open links); its button posts the token.
    const token = await confirmLink(email)
    const page = await t.request('GET', `/confirm-sign-up/${token}`)
    expect(page.status).toBe(200)
    expect(page.headers.get('cache-control')).toBe('no-store')
    expect(page.headers.get('referrer-policy')).toBe('no-referrer')
    expect(page.text).toContain('../v1/auth/register/confirm')
    expect((await login(email)).status).toBe(401)

    const done = await confirm(token)
    expect(done.status).toBe(201)
    expect(done.body.data).toEqual({ user: { id: expect.any(Number), email, name: 'Vera Verified' }, tenant: { id: expect.any(Number), name: 'Vera Co' }, warnings: [] })
    expect(done.text).not.toMatch(/"token"/)
    expect((await login(email)).status).toBe(200)
    // Once.
    const again = await confirm(token)
    expect(again.status).toBe(422)
    expect(again.body.error).toBe('sign_up_token_invalid')
  })

  test('a link works for 24 hours; made-up tokens answer 422', async () => {
    const email = fresh()
    await register({ email, password: PASSWORD, name: 'Late' })
    const token = await confirmLink(email)
    t.clock.advance(24 * 3_600_000 + 1000)
    expect((await confirm(token)).body.error).toBe('sign_up_token_invalid')
    expect((await login(email)).status).toBe(401)
    for (const bad of ['A'.repeat(43), 'short', '../../etc']) expect((await confirm(bad)).status).toBe(422)
  })

  test('two sign-ups of one address: the first link followed makes the account, the other then answers 409 email_taken', async () => {
    const email = fresh()
    await register({ email, password: 'first long password', name: 'One' })
    await register({ email, password: 'second long password', name: 'Two' })
    const [l1, l2] = (await mailsTo(email)).map((m) => CONFIRM.exec(m.text)![1])
    expect((await confirm(l2)).status).toBe(201)
    const late = await confirm(l1)
    expect(late.status).toBe(409)
    expect(late.body.error).toBe('email_taken')
    expect((await login(email, 'second long password')).status).toBe(200)
    expect((await login(email, 'first long password')).status).toBe(401)
  })

  test('3 mails an hour per address: a 4th sign-up answers the same and mails nothing', async () => {
    const email = fresh()
    const bodies = []
    for (let i = 0; i < 4; i++) bodies.push((await register({ email, password: PASSWORD, name: `Try ${i}` })).body)
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1)
    expect(await mailsTo(email)).toHaveLength(3)
    expect((await t.kernel.db.query('select id from pending_sign_ups where email = $1', [email])).length).toBe(3)
  })
})

describe('onboarding with REGISTRATION_VERIFY=on', () => {
  test('answers 202 like a sign-up; the confirmation makes the account, its Space and the sample content', async () => {
    const email = fresh()
    const slug = `verified-${Math.random().toString(36).slice(2, 8)}`
    const r = await t.request('POST', '/v1/onboard', {
      body: { email, password: PASSWORD, name: 'Olga Onboard', space: { slug, name: 'Olga Site', locales: ['en', 'de'] }, sample_content: true },
    })
    expect(r.status).toBe(202)
    expect(r.body).toEqual((await register({ email: owner.email, password: PASSWORD, name: 'Same' })).body)
    expect((await t.request('GET', `/v1/cdn/${slug}/stories/home`)).status).toBe(404)
    // A taken Space slug is refused at once (it says nothing about the address).
    const taken = await t.request('POST', '/v1/onboard', { body: { email: fresh(), password: PASSWORD, name: 'X', space: { slug: (await t.createSpace(owner.token)).slug, name: 'X' } } })
    expect(taken.status).toBe(409)
    expect(taken.body.error).toBe('slug_taken')

    const done = await confirm(await confirmLink(email))
    expect(done.status).toBe(201)
    expect(done.body.data.warnings).toEqual([])
    const session = await login(email)
    expect(session.status).toBe(200)
    const spaces = await t.request('GET', '/v1/spaces', { token: session.body.data.token })
    expect(spaces.body.data.map((s: any) => [s.slug, s.role])).toEqual([[slug, 'admin']])
    expect((await t.request('GET', `/v1/cdn/${slug}/stories/home?lang=de`)).status).toBe(200)
    expect((await t.request('GET', `/v1/cdn/${slug}/stories/blog/hello-world`)).status).toBe(200)
  })

  test('a Space slug taken before the link is followed: the account is made, the Space is a warning', async () => {
    const email = fresh()
    const slug = `race-${Math.random().toString(36).slice(2, 8)}`
    await t.request('POST', '/v1/onboard', { body: { email, password: PASSWORD, name: 'Racer', space: { slug, name: 'Race' } } })
    await t.createSpace(owner.token, { slug })
    const done = await confirm(await confirmLink(email))
    expect(done.status).toBe(201)
    expect(done.body.data.warnings).toHaveLength(1)
    expect(done.body.data.warnings[0]).toContain(slug)
    expect((await login(email)).status).toBe(200)
  })
})

describe('REGISTRATION_VERIFY=off', () => {
  test('the account is made at once and signs in; a taken address still gets the very same answer', async () => {
    const off = await testApp({ publicUrl: BASE }, { SMTP_URL: sink.url, REGISTRATION_VERIFY: 'off' })
    try {
      const first = await register({ email: 'first-off@example.com', password: PASSWORD, name: 'First' }, off)
      expect(first.status).toBe(201)
      const email = fresh()
      const a = await register({ email, password: PASSWORD, name: 'Walk In' }, off)
      const b = await register({ email: 'first-off@example.com', password: 'another long password', name: 'Impostor' }, off)
      expect(a.status).toBe(202)
      expect(b.status).toBe(202)
      expect(b.body).toEqual(a.body)
      expect(a.body.data.confirmation).toBe('none')
      expect((await login(email, PASSWORD, off)).status).toBe(200)
      expect((await login('first-off@example.com', PASSWORD, off)).status).toBe(200)
      expect((await login('first-off@example.com', 'another long password', off)).status).toBe(401)
    } finally {
      await off.close()
    }
  })
})
