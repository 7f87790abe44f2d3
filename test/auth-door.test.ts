// The door (issue 33): REGISTRATION modes, password change, password reset by mail. Runs on PGlite and, with
// TEST_DATABASE_URL, on Postgres.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { ConfigError, loadConfig } from '../src/config'
import { defineModule } from '../src/kernel/module'
import { authModule } from '../src/modules/auth'
import { MODULES } from '../src/modules/index'
import { type TestApp, testApp } from './helpers/app'
import { type SmtpSink, startSmtpSink } from './helpers/smtp'

setDefaultTimeout(60_000)

const PASSWORD = 'correct horse battery staple'
const HOUR_MS = 3_600_000
let counter = 0
const freshEmail = () => `door-${++counter}-${Math.random().toString(36).slice(2, 8)}@example.com`
const freshIp = () => `198.51.100.${++counter % 250}`
const errorShape = { error: expect.any(String), message: expect.any(String) }

describe('REGISTRATION', () => {
  test('defaults to open and refuses values it does not know', () => {
    expect(loadConfig({}).registration).toBe('open')
    expect(loadConfig({ REGISTRATION: 'first-user' }).registration).toBe('first-user')
    expect(() => loadConfig({ REGISTRATION: 'invite-only' })).toThrow(ConfigError)
  })

  test('closed: every sign-up answers 403 registration_closed (an invalid body 422), and creates nothing', async () => {
    const t = await testApp({}, { REGISTRATION: 'closed' })
    try {
      const email = freshEmail()
      const res = await t.request('POST', '/v1/auth/register', { body: { email, password: PASSWORD, name: 'Nope' } })
      expect(res.status).toBe(403)
      expect(res.body).toEqual(errorShape)
      expect(res.body.error).toBe('registration_closed')
      // An invitation may admit an address (the members module's sign-up allowance), so the body is read first: an
      // invalid one is 422 — it names no address that could be invited — and still creates nothing.
      const invalid = await t.request('POST', '/v1/auth/register', { body: { email: 'x' } })
      expect(invalid.status).toBe(422)
      expect(await t.kernel.db.query('select id from users')).toHaveLength(0)
    } finally {
      await t.close()
    }
  })

  test('first-user: the first account may sign up, every later one gets 403 registration_closed', async () => {
    const t = await testApp({}, { REGISTRATION: 'first-user' })
    try {
      const first = await t.request('POST', '/v1/auth/register', { body: { email: freshEmail(), password: PASSWORD, name: 'Owner' } })
      expect(first.status).toBe(201)
      const second = await t.request('POST', '/v1/auth/register', { body: { email: freshEmail(), password: PASSWORD, name: 'Late' } })
      expect(second.status).toBe(403)
      expect(second.body).toEqual(errorShape)
      expect(second.body.error).toBe('registration_closed')
      // The first account works as usual.
      const me = await t.request('GET', '/v1/auth/me', { token: first.body.data.token })
      expect(me.status).toBe(200)
    } finally {
      await t.close()
    }
  })

  test('first-user: concurrent first sign-ups create exactly one account', async () => {
    const t = await testApp({}, { REGISTRATION: 'first-user' })
    try {
      const results = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          t.request('POST', '/v1/auth/register', { body: { email: freshEmail(), password: PASSWORD, name: `Racer ${i}` } }),
        ),
      )
      const statuses = results.map((r) => r.status).sort()
      expect(statuses).toEqual([201, 403, 403, 403])
      for (const r of results.filter((r) => r.status === 403)) expect(r.body.error).toBe('registration_closed')
      expect(await t.kernel.db.query('select id from users')).toHaveLength(1)
      expect(await t.kernel.db.query('select id from tenants')).toHaveLength(1)
    } finally {
      await t.close()
    }
  })
})

describe('sign-up allowances (how invitations let people in while REGISTRATION refuses walk-ins)', () => {
  // A module below auth admits addresses it knows, as a members module does for pending invitations.
  const asked: string[] = []
  const inviteModule = defineModule({
    name: 'invite-probe',
    setup: (_kernel, use) => {
      use(authModule).signUpAllowances.push(async (email) => {
        asked.push(email)
        return email.endsWith('@invited.example')
      })
      return {}
    },
  })

  for (const mode of ['closed', 'first-user'] as const) {
    test(`${mode}: an admitted address may sign up, others get 403 registration_closed`, async () => {
      const t = await testApp({}, { REGISTRATION: mode }, { modules: [...MODULES, inviteModule] })
      try {
        if (mode === 'first-user') {
          expect((await t.request('POST', '/v1/auth/register', { body: { email: freshEmail(), password: PASSWORD, name: 'Owner' } })).status).toBe(201)
        }
        const walkIn = await t.request('POST', '/v1/auth/register', { body: { email: freshEmail(), password: PASSWORD, name: 'Walk-in' } })
        expect(walkIn.status).toBe(403)
        expect(walkIn.body.error).toBe('registration_closed')
        const invited = await t.request('POST', '/v1/auth/register', { body: { email: 'Guest@Invited.example', password: PASSWORD, name: 'Guest' } })
        // Closed: the service's first account (made at once); first-user: a later one (202, then it signs in).
        expect(invited.status).toBe(mode === 'closed' ? 201 : 202)
        expect((await t.request('POST', '/v1/auth/login', { body: { email: 'guest@invited.example', password: PASSWORD } })).status).toBe(200)
        expect(asked).toContain('guest@invited.example')
      } finally {
        await t.close()
      }
    })
  }
})

describe('password change', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await testApp()
  })
  afterAll(async () => {
    await t?.close()
  })

  const login = (email: string, password: string) => t.request('POST', '/v1/auth/login', { body: { email, password } })

  test('the right current password changes it, signs out the other sessions and keeps this one and Space tokens', async () => {
    const email = freshEmail()
    const u = await t.register({ email })
    const other = (await login(email, PASSWORD)).body.data.token as string
    const space = await t.createSpace(u.token)
    const spaceToken = await t.spaceToken(u.token, space.slug, 'viewer')

    const res = await t.request('POST', '/v1/auth/password', {
      token: u.token,
      body: { current_password: PASSWORD, new_password: 'a brand new passphrase' },
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ data: { revoked_sessions: 1 } })

    expect((await t.request('GET', '/v1/auth/me', { token: u.token })).status).toBe(200)
    expect((await t.request('GET', '/v1/auth/me', { token: other })).status).toBe(401)
    expect((await t.request('GET', '/v1/auth/me', { token: spaceToken.token })).status).toBe(200)
    expect((await login(email, PASSWORD)).status).toBe(401)
    expect((await login(email, 'a brand new passphrase')).status).toBe(200)
  })

  test('a wrong current password answers 422 wrong_password on current_password and changes nothing', async () => {
    const email = freshEmail()
    const u = await t.register({ email })
    const other = (await login(email, PASSWORD)).body.data.token as string
    const res = await t.request('POST', '/v1/auth/password', {
      token: u.token,
      body: { current_password: 'not my password', new_password: 'a brand new passphrase' },
    })
    expect(res.status).toBe(422)
    expect(res.body.error).toBe('wrong_password')
    expect(Array.isArray(res.body.errors.current_password)).toBe(true)
    expect((await login(email, PASSWORD)).status).toBe(200)
    expect((await t.request('GET', '/v1/auth/me', { token: other })).status).toBe(200)
  })

  test('a short new password answers 422 on new_password; no token 401; a Space token 403', async () => {
    const u = await t.register()
    const short = await t.request('POST', '/v1/auth/password', { token: u.token, body: { current_password: PASSWORD, new_password: 'short' } })
    expect(short.status).toBe(422)
    expect(Array.isArray(short.body.errors.new_password)).toBe(true)
    const anon = await t.request('POST', '/v1/auth/password', { body: { current_password: PASSWORD, new_password: 'long enough now' } })
    expect(anon.status).toBe(401)
    const space = await t.createSpace(u.token)
    const st = await t.spaceToken(u.token, space.slug, 'admin')
    const scoped = await t.request('POST', '/v1/auth/password', { token: st.token, body: { current_password: PASSWORD, new_password: 'long enough now' } })
    expect(scoped.status).toBe(403)
    expect(scoped.body).toEqual(errorShape)
  })
})

describe('password reset by mail', () => {
  let t: TestApp
  let sink: SmtpSink
  beforeAll(async () => {
    sink = await startSmtpSink()
    t = await testApp({}, { SMTP_URL: sink.url, PUBLIC_URL: 'https://cms.example.com/' })
  })
  afterAll(async () => {
    await t?.close()
    await sink?.stop()
  })

  const ask = (email: string, ip = freshIp()) => t.request('POST', '/v1/auth/password-reset', { ip, body: { email } })
  const confirm = (token: string, new_password: string) => t.request('POST', '/v1/auth/password-reset/confirm', { body: { token, new_password } })
  const login = (email: string, password: string) => t.request('POST', '/v1/auth/login', { body: { email, password } })

  /** Runs the mail jobs and answers the reset links mailed to `email` so far. */
  async function linksFor(email: string, atLeast = 1): Promise<string[]> {
    const until = Date.now() + 30_000
    for (;;) {
      await t.kernel.jobs.runDueJobs()
      const links = sink.mails
        .filter((m) => m.to.includes(email))
        .map((m) => /https:\/\/cms\.example\.com\/reset-password\/([A-Za-z0-9_-]+)/.exec(m.parsed.text ?? '')?.[0])
        .filter((l): l is string => !!l)
      if (links.length >= atLeast || Date.now() > until) return links
      await Bun.sleep(20)
    }
  }
  const tokenOf = (link: string) => link.split('/').pop()!

  test('a known and an unknown address get the same 202 answer; only the known one gets a mail', async () => {
    const email = freshEmail()
    await t.register({ email })
    const known = await ask(email.toUpperCase())
    const unknown = await ask(freshEmail())
    expect(known.status).toBe(202)
    expect(unknown.status).toBe(202)
    expect(known.body).toEqual(unknown.body)
    expect(typeof known.body.data.message).toBe('string')
    const links = await linksFor(email)
    expect(links).toHaveLength(1)
    const mail = sink.mails.find((m) => m.to.includes(email))!
    expect(mail.parsed.subject).toBe('Reset your password')
    // Stored hashed: the token from the mail is nowhere in the database.
    const rows = await t.kernel.db.query<{ token_hash: string }>('select token_hash from password_reset_tokens')
    expect(rows.some((r) => r.token_hash.includes(tokenOf(links[0])))).toBe(false)
  })

  test('the mailed link sets a new password once, signs out every session and uses up older links', async () => {
    const email = freshEmail()
    const u = await t.register({ email })
    const second = (await login(email, PASSWORD)).body.data.token as string
    expect((await ask(email)).status).toBe(202)
    expect((await ask(email)).status).toBe(202)
    const links = await linksFor(email, 2)
    expect(links).toHaveLength(2)

    const res = await confirm(tokenOf(links[1]), 'reset passphrase 1')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ data: { revoked_sessions: 2 } })
    expect((await t.request('GET', '/v1/auth/me', { token: u.token })).status).toBe(401)
    expect((await t.request('GET', '/v1/auth/me', { token: second })).status).toBe(401)
    expect((await login(email, PASSWORD)).status).toBe(401)
    expect((await login(email, 'reset passphrase 1')).status).toBe(200)

    const again = await confirm(tokenOf(links[1]), 'reset passphrase 2')
    expect(again.status).toBe(422)
    expect(again.body.error).toBe('reset_token_invalid')
    const older = await confirm(tokenOf(links[0]), 'reset passphrase 3')
    expect(older.status).toBe(422)
    expect(older.body.error).toBe('reset_token_invalid')
    expect((await login(email, 'reset passphrase 1')).status).toBe(200)
  })

  test('the link opens a page whose form posts to the confirm endpoint; its inline script is allowed by its CSP', async () => {
    const email = freshEmail()
    await t.register({ email })
    await ask(email)
    const [link] = await linksFor(email)
    const page = await t.request('GET', new URL(link).pathname)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('cache-control')).toBe('no-store')
    expect(page.headers.get('referrer-policy')).toBe('no-referrer')
    const csp = page.headers.get('content-security-policy')!
    expect(csp).toContain("frame-ancestors 'none'")
    const script = /<script>([\s\S]*)<\/script>/.exec(page.text)![1]
    const hash = new Bun.CryptoHasher('sha256').update(script).digest('base64')
    expect(csp).toContain(`'sha256-${hash}'`)
    // The script's relative endpoint, resolved against the link, is the confirm route.
    const endpoint = /fetch\('([^']+)'/.exec(script)![1]
    expect(new URL(endpoint, link).href).toBe('https://cms.example.com/v1/auth/password-reset/confirm')
    expect(page.text).not.toContain(tokenOf(link))
  })

  test('a link older than one hour no longer works', async () => {
    const email = freshEmail()
    await t.register({ email })
    await ask(email)
    const [link] = await linksFor(email)
    t.clock.advance(HOUR_MS + 1000)
    const res = await confirm(tokenOf(link), 'too late passphrase')
    expect(res.status).toBe(422)
    expect(res.body.error).toBe('reset_token_invalid')
    expect((await login(email, PASSWORD)).status).toBe(200)
  })

  test('a password change uses up open reset links', async () => {
    const email = freshEmail()
    const u = await t.register({ email })
    await ask(email)
    const [link] = await linksFor(email)
    const changed = await t.request('POST', '/v1/auth/password', { token: u.token, body: { current_password: PASSWORD, new_password: 'changed passphrase' } })
    expect(changed.status).toBe(200)
    expect((await confirm(tokenOf(link), 'sneaky passphrase')).status).toBe(422)
  })

  test('the link is built from PUBLIC_URL, never from the Host the request names', async () => {
    const email = freshEmail()
    await t.register({ email })
    const res = await t.app.handle(
      new Request('http://attacker.example/v1/auth/password-reset', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': freshIp(), 'X-Forwarded-Host': 'attacker.example' },
        body: JSON.stringify({ email }),
      }),
    )
    expect(res.status).toBe(202)
    await t.kernel.jobs.runDueJobs()
    const [link] = await linksFor(email)
    expect(link).toStartWith('https://cms.example.com/reset-password/')
    for (const m of sink.mails) expect(m.raw).not.toContain('attacker.example')
  })

  test('made-up tokens answer 422 reset_token_invalid', async () => {
    for (const token of ['x', 'A'.repeat(43), "' or 1=1 --", '../../etc/passwd']) {
      const res = await confirm(token, 'whatever passphrase')
      expect(res.status).toBe(422)
      expect(res.body.error).toBe('reset_token_invalid')
    }
  })

  test('at most 3 mails an hour per address; the 4th request still answers the same 202', async () => {
    const email = freshEmail()
    await t.register({ email })
    const answers = []
    for (let i = 0; i < 4; i++) answers.push(await ask(email))
    for (const a of answers) {
      expect(a.status).toBe(202)
      expect(a.body).toEqual(answers[0].body)
    }
    expect(await linksFor(email, 3)).toHaveLength(3)
    await t.kernel.jobs.runDueJobs()
    expect(sink.mails.filter((m) => m.to.includes(email))).toHaveLength(3)
    t.clock.advance(HOUR_MS + 1000)
    await ask(email)
    expect(await linksFor(email, 4)).toHaveLength(4)
  })

  test('the 6th request within an hour from one IP answers 429', async () => {
    const ip = '192.0.2.77'
    for (let i = 0; i < 5; i++) expect((await ask(freshEmail(), ip)).status).toBe(202)
    const limited = await ask(freshEmail(), ip)
    expect(limited.status).toBe(429)
    expect(limited.body.error).toBe('rate_limited')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
  })
})

describe('password reset without PUBLIC_URL', () => {
  test('answers 403 password_reset_unavailable for every address and mails nothing', async () => {
    const sink = await startSmtpSink()
    const t = await testApp({}, { SMTP_URL: sink.url })
    try {
      const email = freshEmail()
      await t.register({ email })
      const known = await t.request('POST', '/v1/auth/password-reset', { body: { email } })
      const unknown = await t.request('POST', '/v1/auth/password-reset', { body: { email: freshEmail() } })
      expect(known.status).toBe(403)
      expect(known.body).toEqual(errorShape)
      expect(known.body.error).toBe('password_reset_unavailable')
      expect(unknown.body).toEqual(known.body)
      await t.kernel.jobs.runDueJobs()
      expect(sink.mails).toHaveLength(0)
    } finally {
      await t.close()
      await sink.stop()
    }
  })
})
