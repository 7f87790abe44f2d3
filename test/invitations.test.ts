import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type TestApp, testApp } from './helpers/app'
import { type SmtpSink, startSmtpSink } from './helpers/smtp'

setDefaultTimeout(60_000)

let t: TestApp
let sink: SmtpSink
const DAY = 24 * 3_600_000

beforeAll(async () => {
  sink = await startSmtpSink()
  t = await testApp({ publicUrl: 'https://cms.example.com' }, { SMTP_URL: sink.url })
})
afterAll(async () => {
  await t?.close()
  await sink?.stop()
})

let n = 0
const address = () => `invitee${++n}-${Math.random().toString(36).slice(2, 6)}@example.com`

async function adminWithSpace(name = 'Acme') {
  const owner = await t.register({ name: 'Olga Owner' })
  const space = await t.createSpace(owner.token, { name })
  return { owner, space: space.slug }
}

/** Runs the mail jobs and answers the token of the newest invitation mail to `to` (read from the real SMTP sink). */
async function tokenMailedTo(to: string) {
  await t.kernel.jobs.runDueJobs()
  const mail = [...sink.mails].reverse().find((m) => m.to.includes(to))
  if (!mail) throw new Error(`no mail to ${to}`)
  const token = /https:\/\/cms\.example\.com\/invite\/([A-Za-z0-9_-]{43})/.exec(mail.parsed.text ?? '')?.[1]
  if (!token) throw new Error(`no invitation link in: ${mail.parsed.text}`)
  return { token, mail }
}

const invite = (token: string, space: string, email: string, role = 'editor') =>
  t.request('POST', `/v1/spaces/${space}/invitations`, { token, body: { email, role } })

describe('invitations', () => {
  test('an admin invites; the mail reaches SMTP; its link previews and accepts; the invitee is a member', async () => {
    const { owner, space } = await adminWithSpace('Acme News')
    const email = address()
    const created = await invite(owner.token, space, email.toUpperCase())
    expect(created.status).toBe(201)
    expect(created.body.data).toMatchObject({ email, role: 'editor', status: 'pending', invited_by: { id: owner.user.id, name: 'Olga Owner' } })
    expect(created.text).not.toMatch(/[A-Za-z0-9_-]{43}/) // the token is only in the mail

    const { token, mail } = await tokenMailedTo(email)
    expect(mail.parsed.subject).toBe('Olga Owner invited you to Acme News')
    const preview = await t.request('GET', `/v1/invite/${token}`)
    expect(preview.status).toBe(200)
    expect(preview.body.data).toEqual({
      space: { slug: space, name: 'Acme News' },
      role: 'editor',
      invited_by: { name: 'Olga Owner' },
      email: `${email[0]}•••@example.com`,
      expires_at: created.body.data.expires_at,
      account_exists: false,
    })

    // A user of another Tenant registers with the invited address and accepts.
    const invitee = await t.register({ email })
    expect((await t.request('GET', `/v1/invite/${token}`)).body.data.account_exists).toBe(true)
    const accepted = await t.request('POST', `/v1/invite/${token}/accept`, { token: invitee.token })
    expect(accepted.status).toBe(200)
    expect(accepted.body.data).toEqual({ space: { slug: space, name: 'Acme News' }, role: 'editor' })
    expect((await t.request('GET', `/v1/spaces/${space}/stories`, { token: invitee.token })).status).toBe(200)
    const spaces = await t.request('GET', '/v1/spaces', { token: invitee.token })
    expect(spaces.body.data.map((s: any) => [s.slug, s.role])).toEqual([[space, 'editor']])
    const members = await t.request('GET', `/v1/spaces/${space}/members`, { token: owner.token })
    expect(members.body.data.map((m: any) => m.user.email)).toContain(email)
    // Single use: the link is spent.
    expect((await t.request('GET', `/v1/invite/${token}`)).status).toBe(404)
    expect((await t.request('POST', `/v1/invite/${token}/accept`, { token: invitee.token })).status).toBe(404)
    // No longer pending; inviting a member is 409.
    expect((await t.request('GET', `/v1/spaces/${space}/invitations`, { token: owner.token })).body.data).toEqual([])
    const again = await invite(owner.token, space, email)
    expect(again.status).toBe(409)
    expect(again.body.error).toBe('already_member')
  })

  test('accepting with another e-mail is 403 email_mismatch and spends nothing', async () => {
    const { owner, space } = await adminWithSpace()
    const email = address()
    await invite(owner.token, space, email)
    const { token } = await tokenMailedTo(email)
    const someoneElse = await t.register()
    const res = await t.request('POST', `/v1/invite/${token}/accept`, { token: someoneElse.token })
    expect(res.status).toBe(403)
    expect(res.body.error).toBe('email_mismatch')
    expect((await t.request('GET', `/v1/spaces/${space}`, { token: someoneElse.token })).status).toBe(404)
    expect((await t.request('GET', `/v1/invite/${token}`)).status).toBe(200)
  })

  test('two accepts at once: one 200, one 404, one membership', async () => {
    const { owner, space } = await adminWithSpace()
    const email = address()
    await invite(owner.token, space, email, 'viewer')
    const { token } = await tokenMailedTo(email)
    const invitee = await t.register({ email })
    const results = await Promise.all([
      t.request('POST', `/v1/invite/${token}/accept`, { token: invitee.token }),
      t.request('POST', `/v1/invite/${token}/accept`, { token: invitee.token }),
    ])
    expect(results.map((r) => r.status).sort()).toEqual([200, 404])
    const members = await t.request('GET', `/v1/spaces/${space}/members`, { token: owner.token })
    expect(members.body.data.filter((m: any) => m.user.email === email)).toHaveLength(1)
  })

  test('a pending address is 409 invitation_pending; resend mails a fresh link and the old one dies', async () => {
    const { owner, space } = await adminWithSpace()
    const email = address()
    const created = await invite(owner.token, space, email)
    const first = await tokenMailedTo(email)
    const dup = await invite(owner.token, space, email, 'admin')
    expect(dup.status).toBe(409)
    expect(dup.body.error).toBe('invitation_pending')
    t.clock.advance(DAY)
    const resent = await t.request('POST', `/v1/spaces/${space}/invitations/${created.body.data.id}/resend`, { token: owner.token })
    expect(resent.status).toBe(200)
    expect(Date.parse(resent.body.data.expires_at) - Date.parse(created.body.data.expires_at)).toBe(DAY)
    const second = await tokenMailedTo(email)
    expect(second.token).not.toBe(first.token)
    expect((await t.request('GET', `/v1/invite/${first.token}`)).status).toBe(404)
    expect((await t.request('GET', `/v1/invite/${second.token}`)).status).toBe(200)
  })

  test('an invitation expires after 7 days; then the address can be invited again', async () => {
    const { owner, space } = await adminWithSpace()
    const email = address()
    await invite(owner.token, space, email)
    const { token } = await tokenMailedTo(email)
    t.clock.advance(7 * DAY - 1000)
    expect((await t.request('GET', `/v1/invite/${token}`)).status).toBe(200)
    t.clock.advance(1000)
    expect((await t.request('GET', `/v1/invite/${token}`)).status).toBe(404)
    const invitee = await t.register({ email })
    expect((await t.request('POST', `/v1/invite/${token}/accept`, { token: invitee.token })).status).toBe(404)
    expect((await t.request('GET', `/v1/spaces/${space}/invitations`, { token: owner.token })).body.data).toEqual([])
    expect((await invite(owner.token, space, email)).status).toBe(201)
  })

  test('revoke and decline spend the link; unknown tokens look the same (404)', async () => {
    const { owner, space } = await adminWithSpace()
    const a = address()
    const b = address()
    const ia = await invite(owner.token, space, a)
    await invite(owner.token, space, b)
    const ta = (await tokenMailedTo(a)).token
    const tb = (await tokenMailedTo(b)).token
    expect((await t.request('DELETE', `/v1/spaces/${space}/invitations/${ia.body.data.id}`, { token: owner.token })).status).toBe(204)
    expect((await t.request('DELETE', `/v1/spaces/${space}/invitations/${ia.body.data.id}`, { token: owner.token })).status).toBe(404)
    expect((await t.request('POST', `/v1/invite/${tb}/decline`)).status).toBe(204)
    for (const token of [ta, tb, 'A'.repeat(43)]) {
      const res = await t.request('GET', `/v1/invite/${token}`)
      expect(res.status).toBe(404)
      expect(res.body.error).toBe('not_found')
    }
    expect((await t.request('GET', '/v1/invite/short')).status).toBe(404)
  })

  test('invitation ids in paths are positive int32 integers: anything else names nothing (404), never a database error', async () => {
    const { owner, space } = await adminWithSpace()
    const created = await invite(owner.token, space, address())
    expect(typeof created.body.data.id).toBe('number')
    for (const bad of ['0', '01', '-1', '1.0', '1e3', '%2B1', '2147483648', '9999999999', '99999999999999999999', 'abc']) {
      for (const [method, suffix] of [['DELETE', ''], ['POST', '/resend']] as const) {
        const r = await t.request(method, `/v1/spaces/${space}/invitations/${bad}${suffix}`, { token: owner.token })
        expect({ bad, method, status: r.status, error: r.body.error }).toEqual({ bad, method, status: 404, error: 'not_found' })
      }
    }
    // The largest int32 is a well-formed id that names no invitation.
    expect((await t.request('DELETE', `/v1/spaces/${space}/invitations/2147483647`, { token: owner.token })).status).toBe(404)
    expect((await t.request('DELETE', `/v1/spaces/${space}/invitations/${created.body.data.id}`, { token: owner.token })).status).toBe(204)
  })

  test('only admins manage invitations; input is validated; at most 50 pending', async () => {
    const { owner, space } = await adminWithSpace()
    const editor = await t.member(owner.tenant.id, space, 'editor')
    expect((await invite(editor, space, address())).status).toBe(403)
    expect((await t.request('GET', `/v1/spaces/${space}/invitations`, { token: editor })).status).toBe(403)
    expect((await invite(owner.token, space, 'not-an-address')).status).toBe(422)
    expect((await invite(owner.token, space, address(), 'owner')).status).toBe(422)
    const stranger = await t.register()
    expect((await invite(stranger.token, space, address())).status).toBe(404)
    // The limit: 50 pending per Space (the rate limit is per IP: send them from different addresses).
    for (let i = 0; i < 50; i++) {
      const r = await t.request('POST', `/v1/spaces/${space}/invitations`, { token: owner.token, body: { email: address(), role: 'viewer' } })
      expect(r.status).toBe(201)
    }
    const over = await invite(owner.token, space, address())
    expect(over.status).toBe(409)
    expect(over.body.error).toBe('invitation_limit')
  })

  test('accept needs a user token (401 without, 403 with a Space token)', async () => {
    const { owner, space } = await adminWithSpace()
    const email = address()
    await invite(owner.token, space, email)
    const { token } = await tokenMailedTo(email)
    expect((await t.request('POST', `/v1/invite/${token}/accept`)).status).toBe(401)
    const st = await t.spaceToken(owner.token, space, 'admin')
    expect((await t.request('POST', `/v1/invite/${token}/accept`, { token: st.token })).status).toBe(403)
  })
})

describe('invitations on a service closed to sign-up', () => {
  test('REGISTRATION=closed: only an address with a live invitation may register, then accept', async () => {
    const closed = await testApp({ publicUrl: 'https://cms.example.com' }, { SMTP_URL: sink.url, REGISTRATION: 'closed' })
    try {
      const owner = await closed.request('POST', '/v1/auth/register', {
        body: { email: 'owner@example.com', password: 'correct horse battery staple', name: 'Owner' },
      })
      expect(owner.status).toBe(403)
      expect(owner.body.error).toBe('registration_closed')
      // The operator's way in (what `content-service user create` does), then a Space.
      const { createUserAsOperator } = await import('../src/modules/auth/service')
      await createUserAsOperator(closed.kernel, { email: 'owner@example.com', password: 'correct horse battery staple', name: 'Owner' })
      const login = await closed.request('POST', '/v1/auth/login', { body: { email: 'owner@example.com', password: 'correct horse battery staple' } })
      const space = await closed.createSpace(login.body.data.token)
      const email = address()
      expect((await closed.request('POST', `/v1/spaces/${space.slug}/invitations`, { token: login.body.data.token, body: { email, role: 'viewer' } })).status).toBe(201)

      const walkIn = await closed.request('POST', '/v1/auth/register', { body: { email: address(), password: 'correct horse battery staple', name: 'X' } })
      expect(walkIn.status).toBe(403)
      const invited = await closed.request('POST', '/v1/auth/register', { body: { email, password: 'correct horse battery staple', name: 'Invitee' } })
      expect(invited.status).toBe(202)
      const session = await closed.request('POST', '/v1/auth/login', { body: { email, password: 'correct horse battery staple' } })
      expect(session.status).toBe(200)
      const invitee = session.body.data.token as string
      await closed.kernel.jobs.runDueJobs()
      const mail = [...sink.mails].reverse().find((m) => m.to.includes(email))!
      const token = /\/invite\/([A-Za-z0-9_-]{43})/.exec(mail.parsed.text ?? '')![1]
      const accepted = await closed.request('POST', `/v1/invite/${token}/accept`, { token: invitee })
      expect(accepted.status).toBe(200)
      // The invitation is spent: the address has no allowance left, a second account cannot be made with it anyway.
      expect((await closed.request('GET', `/v1/spaces/${space.slug}`, { token: invitee })).status).toBe(200)
    } finally {
      await closed.close()
    }
  })
})
