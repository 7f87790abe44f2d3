import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type TestApp, testApp } from './helpers/app'
import { type SmtpSink, startSmtpSink } from './helpers/smtp'

setDefaultTimeout(60_000)

let t: TestApp
let sink: SmtpSink
const DAY = 24 * 3_600_000

beforeAll(async () => {
  sink = await startSmtpSink()
  // REGISTRATION=closed: pitch provisioning works whatever it says (the Tenant admin's invitation admits the address).
  t = await testApp({ publicUrl: 'https://cms.example.com', registration: 'closed' }, { SMTP_URL: sink.url })
})
afterAll(async () => {
  await t?.close()
  await sink?.stop()
})

let n = 0
const uniq = () => `${++n}${Math.random().toString(36).slice(2, 6)}`

/** A Tenant admin: on a closed service, the operator's way in (then login). */
async function admin() {
  const { createUserAsOperator } = await import('../src/modules/auth/service')
  const email = `admin${uniq()}@example.com`
  await createUserAsOperator(t.kernel, { email, password: 'correct horse battery staple', name: 'Alice Admin' })
  const login = await t.request('POST', '/v1/auth/login', { body: { email, password: 'correct horse battery staple' } })
  return login.body.data.token as string
}

const invite = (token: string, b: Record<string, unknown>) => t.request('POST', '/v1/pitch-invitees', { token, body: b })
const provision = (slug: string, ip?: string) => t.request('POST', `/v1/pitch/${slug}/test-account`, { ip })

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

describe('POST /v1/pitch/{slug}/test-account', () => {
  test('provisions a demo Tenant with sample content once; mails a working sign-in link; a second call is 409', async () => {
    const a = await admin()
    const slug = `acme-${uniq()}`
    const email = `buyer${uniq()}@example.com`
    expect((await invite(a, { slug, name: 'Bea Buyer', email })).status).toBe(201)

    const r = await provision(slug)
    expect(r.status).toBe(201)
    expect(r.body.data).toMatchObject({ user: { email, name: 'Bea Buyer' }, warnings: [] })
    const space = r.body.data.space as string
    expect(space).toStartWith(`${slug}-demo-`)
    expect(Date.parse(r.body.data.expires_at) - t.clock.ms()).toBe(14 * DAY)
    // The token works; the Space has the sample content, public at once.
    const spaces = await t.request('GET', '/v1/spaces', { token: r.body.data.token })
    expect(spaces.body.data.map((s: any) => [s.slug, s.role])).toEqual([[space, 'admin']])
    expect((await t.request('GET', `/v1/cdn/${space}/stories/home`)).status).toBe(200)
    expect((await t.request('GET', `/v1/cdn/${space}/stories/blog/hello-world`)).status).toBe(200)

    const again = await provision(slug)
    expect(again.status).toBe(409)
    expect(again.body.error).toBe('already_provisioned')

    const listed = (await t.request('GET', '/v1/pitch-invitees', { token: a })).body.data.find((i: any) => i.slug === slug)
    expect(listed).toMatchObject({ status: 'provisioned', expires_at: r.body.data.expires_at })

    // The mail reaches the SMTP sink: the sign-in address and a one-time password link, no password.
    await t.kernel.jobs.runDueJobs()
    const mail = sink.mails.find((m) => m.to.includes(email))
    expect(mail).toBeDefined()
    const text = mail!.parsed.text ?? ''
    expect(text).toContain('https://cms.example.com/admin/')
    expect(text).toContain(email)
    const link = /https:\/\/cms\.example\.com\/reset-password\/([A-Za-z0-9_-]{43})/.exec(text)
    expect(link).not.toBeNull()
    const page = await t.request('GET', `/reset-password/${link![1]}`)
    expect(page.status).toBe(200)
    const set = await t.request('POST', '/v1/auth/password-reset/confirm', { body: { token: link![1], new_password: 'my demo passphrase' } })
    expect(set.status).toBe(200)
    const login = await t.request('POST', '/v1/auth/login', { body: { email, password: 'my demo passphrase' } })
    expect(login.status).toBe(200)
    // The link works once.
    expect((await t.request('POST', '/v1/auth/password-reset/confirm', { body: { token: link![1], new_password: 'another passphrase' } })).status).toBe(422)
  })

  test('two calls at once: one 201, one 409, and one demo Tenant', async () => {
    const a = await admin()
    const slug = `twin-${uniq()}`
    const email = `twin${uniq()}@example.com`
    await invite(a, { slug, name: 'Twin', email })
    const before = await t.kernel.db.query<{ n: string }>('select count(*) as n from tenants')
    const results = await Promise.all([provision(slug), provision(slug)])
    expect(results.map((r) => r.status).sort()).toEqual([201, 409])
    const after = await t.kernel.db.query<{ n: string }>('select count(*) as n from tenants')
    expect(Number(after[0].n) - Number(before[0].n)).toBe(1)
  })

  test('unknown or malformed slug: 404; an address that has an account: 409 email_taken and nothing created', async () => {
    expect((await provision('no-such-prospect')).status).toBe(404)
    expect((await provision('Not_A_Slug')).status).toBe(404)
    const a = await admin()
    const { createUserAsOperator } = await import('../src/modules/auth/service')
    const email = `taken${uniq()}@example.com`
    await createUserAsOperator(t.kernel, { email, password: 'correct horse battery staple', name: 'Has Account' })
    const slug = `taken-${uniq()}`
    await invite(a, { slug, name: 'Has Account', email })
    const before = await t.kernel.db.query<{ n: string }>('select count(*) as n from tenants')
    const r = await provision(slug)
    expect(r.status).toBe(409)
    expect(r.body.error).toBe('email_taken')
    expect(await t.kernel.db.query<{ n: string }>('select count(*) as n from tenants')).toEqual(before)
    // The claim was rolled back with the rest: still invited.
    const listed = (await t.request('GET', '/v1/pitch-invitees', { token: a })).body.data.find((i: any) => i.slug === slug)
    expect(listed.status).toBe('invited')
  })

  test('without PUBLIC_URL the demo is refused (403 pitch_unavailable): the password link needs it', async () => {
    const bare = await testApp()
    try {
      const owner = await bare.register()
      await bare.request('POST', '/v1/pitch-invitees', { token: owner.token, body: { slug: 'bare', name: 'B', email: 'b@example.com' } })
      const r = await bare.request('POST', '/v1/pitch/bare/test-account')
      expect(r.status).toBe(403)
      expect(r.body.error).toBe('pitch_unavailable')
    } finally {
      await bare.close()
    }
  })

  test('10 per 60 minutes per IP', async () => {
    const ip = '203.0.113.99'
    const statuses: number[] = []
    for (let i = 0; i < 11; i++) statuses.push((await provision(`nobody-${i}`, ip)).status)
    expect(statuses.slice(0, 10).every((s) => s === 404)).toBe(true)
    expect(statuses[10]).toBe(429)
  })

  test('after PITCH_TTL_DAYS the daily job archives the demo Spaces and revokes its tokens', async () => {
    const a = await admin()
    const slug = `expiring-${uniq()}`
    await invite(a, { slug, name: 'Ed Expiring', email: `ed${uniq()}@example.com` })
    const r = await provision(slug)
    expect(r.status).toBe(201)
    const { space } = r.body.data
    const email = r.body.data.user.email as string
    // The invitee chose a password (as through the mailed link) and signs in.
    const { setPasswordAsOperator } = await import('../src/modules/auth/service')
    await setPasswordAsOperator(t.kernel, { email, password: 'my demo passphrase' })
    const login = () => t.request('POST', '/v1/auth/login', { body: { email, password: 'my demo passphrase' } })
    const first = await login()
    expect(first.status).toBe(200)
    const token = first.body.data.token as string
    const st = await t.spaceToken(token, space, 'viewer')
    await t.kernel.jobs.runDueJobs()
    expect((await t.request('GET', '/v1/auth/me', { token })).status).toBe(200)

    // A day before the end: the daily run leaves it alone.
    t.clock.advance(13 * DAY)
    await t.kernel.jobs.runDueJobs()
    expect((await t.request('GET', '/v1/auth/me', { token })).status).toBe(200)
    expect((await t.request('GET', `/v1/cdn/${space}/stories/home`)).status).toBe(200)

    t.clock.advance(1 * DAY + 3_600_000)
    // Expired already in the listing, before the job ran.
    const listed = (await t.request('GET', '/v1/pitch-invitees', { token: a })).body.data.find((i: any) => i.slug === slug)
    expect(listed.status).toBe('expired')
    // Its user cannot sign in again, even with the right password.
    const refused = await login()
    expect(refused.status).toBe(403)
    expect(refused.body.error).toBe('sign_in_refused')
    t.clock.advance(DAY)
    await t.kernel.jobs.runDueJobs()
    expect((await t.request('GET', '/v1/auth/me', { token })).status).toBe(401)
    expect((await t.request('GET', '/v1/auth/me', { token: st.token })).status).toBe(401)
    expect((await t.request('GET', `/v1/cdn/${space}/stories/home`)).status).toBe(404)
    const events = await t.kernel.db.query<{ payload: any }>(`select payload from events where type = 'space.archived' order by id desc limit 1`)
    expect(events[0].payload.space.slug).toBe(space)
    // Still once only.
    expect((await provision(slug)).status).toBe(409)
  })

  test('deleting a provisioned invitee closes its demo at once', async () => {
    const a = await admin()
    const slug = `gone-${uniq()}`
    await invite(a, { slug, name: 'Gone', email: `gone${uniq()}@example.com` })
    const r = await provision(slug)
    expect(r.status).toBe(201)
    expect((await t.request('DELETE', `/v1/pitch-invitees/${slug}`, { token: a })).status).toBe(204)
    expect((await t.request('GET', '/v1/auth/me', { token: r.body.data.token })).status).toBe(401)
    expect((await t.request('GET', `/v1/cdn/${r.body.data.space}/stories/home`)).status).toBe(404)
    expect((await provision(slug)).status).toBe(404)
    expect((await t.request('GET', '/v1/pitch-invitees', { token: a })).body.data.map((i: any) => i.slug)).not.toContain(slug)
    // Its demo user cannot sign in again; the slug stays taken.
    const { setPasswordAsOperator } = await import('../src/modules/auth/service')
    await setPasswordAsOperator(t.kernel, { email: r.body.data.user.email, password: 'my demo passphrase' })
    const login = await t.request('POST', '/v1/auth/login', { body: { email: r.body.data.user.email, password: 'my demo passphrase' } })
    expect(login.status).toBe(403)
    expect(login.body.error).toBe('sign_in_refused')
    expect((await invite(a, { slug, name: 'Again', email: `again${uniq()}@example.com` })).status).toBe(409)
  })
})
