import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { ClientIpResolver, isIPv4, newRequestId } from '../src/kernel/http'
import { type TestApp, type TestResponse, testApp } from './helpers/app'

// bunfig's `[test] timeout` is not honoured by `bun test`; a fresh testApp() can take longer than the 5 s default.
setDefaultTimeout(60_000)

const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
const PASSWORD = 'correct horse battery staple'

let t: TestApp
/** Every response this file sees, to prove that no password ever leaves the service. */
const seen: TestResponse[] = []
let emailCounter = 0
let ipCounter = 0

const freshEmail = () => `auth-${++emailCounter}-${Math.random().toString(36).slice(2, 8)}@example.com`
/** Addresses from TEST-NET-3, distinct from the helper's random 10.x addresses. */
const freshIp = () => `203.0.113.${++ipCounter}`

async function call(method: string, path: string, opts: Parameters<TestApp['request']>[2] = {}) {
  const res = await t.request(method, path, opts)
  seen.push(res)
  return res
}

/** A sign-up (REGISTRATION_VERIFY=off here: the account is made at once), then a sign-in for its session. */
async function registerUser(input: Record<string, unknown> = {}) {
  const body = { email: freshEmail(), password: PASSWORD, name: 'Ada Lovelace', ...input }
  const res = await call('POST', '/v1/auth/register', { body })
  expect([201, 202]).toContain(res.status)
  const data =
    res.status === 201
      ? res.body.data
      : await (async () => {
          const login = await call('POST', '/v1/auth/login', { body: { email: body.email, password: body.password } })
          const me = await call('GET', '/v1/auth/me', { token: login.body.data.token })
          return { token: login.body.data.token, user: login.body.data.user, tenant: me.body.data.tenant }
        })()
  return { ...data, email: body.email as string, password: body.password as string } as {
    token: string
    user: { id: number; email: string; name: string }
    tenant: { id: number; name: string }
    email: string
    password: string
  }
}

beforeAll(async () => {
  t = await testApp()
})

afterAll(async () => {
  await t?.close()
})

describe('register', () => {
  test('the first account of the service answers 201 with a token, the user and the new tenant', async () => {
    const email = freshEmail()
    const res = await call('POST', '/v1/auth/register', {
      body: { email, password: PASSWORD, name: 'Grace Hopper', tenant_name: 'Navy Labs' },
    })
    expect(res.status).toBe(201)
    expect(Object.keys(res.body)).toEqual(['data'])
    const { token, user, tenant } = res.body.data
    expect(typeof token).toBe('string')
    expect(token.length).toBeGreaterThan(20)
    expect(user).toEqual({ id: expect.any(Number), email, name: 'Grace Hopper' })
    expect(tenant).toEqual({ id: expect.any(Number), name: 'Navy Labs' })
    expect(Object.keys(res.body.data).sort()).toEqual(['tenant', 'token', 'user'])
  })

  test('the token returned by registration works at once', async () => {
    const u = await registerUser()
    const me = await call('GET', '/v1/auth/me', { token: u.token })
    expect(me.status).toBe(200)
    expect(me.body.data.email).toBe(u.email)
  })

  test('without a tenant_name the tenant still gets a name', async () => {
    const u = await registerUser({ name: 'Alan Turing' })
    expect(typeof u.tenant.name).toBe('string')
    expect(u.tenant.name.length).toBeGreaterThan(0)
  })

  test('the e-mail is stored lower-cased', async () => {
    const email = `Mixed.Case-${Math.random().toString(36).slice(2, 8)}@Example.COM`
    const u = await registerUser({ email })
    expect(u.user.email).toBe(email.toLowerCase())
  })

  test('later sign-ups answer 202 with the same body for a new and a taken address (in any letter case)', async () => {
    const u = await registerUser()
    const fresh = await call('POST', '/v1/auth/register', { body: { email: freshEmail(), password: PASSWORD, name: 'New' } })
    const taken = await call('POST', '/v1/auth/register', { body: { email: u.email, password: PASSWORD, name: 'Again' } })
    const shouting = await call('POST', '/v1/auth/register', { body: { email: u.email.toUpperCase(), password: PASSWORD, name: 'Shouting' } })
    for (const r of [fresh, taken, shouting]) {
      expect(r.status).toBe(202)
      expect(r.body).toEqual(fresh.body)
    }
    const rows = await t.kernel.db.query('select id from users where lower(email) = $1', [u.email.toLowerCase()])
    expect(rows.length).toBe(1)
  })

  test('a password shorter than 8 characters answers 422 validation_failed on password', async () => {
    const res = await call('POST', '/v1/auth/register', { body: { email: freshEmail(), password: 'short', name: 'X' } })
    expect(res.status).toBe(422)
    expect(res.body.error).toBe('validation_failed')
    expect(typeof res.body.message).toBe('string')
    expect(Array.isArray(res.body.errors.password)).toBe(true)
    expect(res.body.errors.password.length).toBeGreaterThan(0)
    expect(res.body.errors.email).toBeUndefined()
    expect(res.body.errors.name).toBeUndefined()
  })

  test('a malformed e-mail answers 422 validation_failed on email', async () => {
    for (const email of ['not-an-email', 'a@b', 'two@@example.com', 'spa ce@example.com', '']) {
      const res = await call('POST', '/v1/auth/register', { body: { email, password: PASSWORD, name: 'X' } })
      expect(res.status).toBe(422)
      expect(res.body.error).toBe('validation_failed')
      expect(Array.isArray(res.body.errors.email)).toBe(true)
      expect(res.body.errors.email.every((m: unknown) => typeof m === 'string')).toBe(true)
    }
  })

  test('a missing name answers 422 validation_failed on name', async () => {
    const res = await call('POST', '/v1/auth/register', { body: { email: freshEmail(), password: PASSWORD } })
    expect(res.status).toBe(422)
    expect(res.body.error).toBe('validation_failed')
    expect(Array.isArray(res.body.errors.name)).toBe(true)
  })

  test('an empty name answers 422', async () => {
    const res = await call('POST', '/v1/auth/register', { body: { email: freshEmail(), password: PASSWORD, name: '' } })
    expect(res.status).toBe(422)
    expect(Array.isArray(res.body.errors.name)).toBe(true)
  })

  test('a name of only blanks answers 422 and creates no account', async () => {
    const email = freshEmail()
    const res = await call('POST', '/v1/auth/register', { body: { email, password: PASSWORD, name: '   ' } })
    expect(res.status).toBe(422)
    expect(res.body.error).toBe('validation_failed')
    expect(Array.isArray(res.body.errors?.name)).toBe(true)
    const rows = await t.kernel.db.query('select id from users where email = $1', [email])
    expect(rows.length).toBe(0)
  })

  test('several invalid fields are all reported at once', async () => {
    const res = await call('POST', '/v1/auth/register', { body: { email: 'nope', password: 'x' } })
    expect(res.status).toBe(422)
    expect(Object.keys(res.body.errors).sort()).toEqual(['email', 'name', 'password'])
  })

  test('SQL and markup in name and tenant_name are stored verbatim and returned unchanged', async () => {
    const name = "Robert'); DROP TABLE users;--"
    const tenantName = '<script>alert(1)</script>'
    const u = await registerUser({ name, tenant_name: tenantName })
    expect(u.user.name).toBe(name)
    expect(u.tenant.name).toBe(tenantName)

    const me = await call('GET', '/v1/auth/me', { token: u.token })
    expect(me.status).toBe(200)
    expect(me.body.data.name).toBe(name)
    expect(me.body.data.tenant.name).toBe(tenantName)
    expect(me.headers.get('content-type')).toContain('application/json')

    const login = await call('POST', '/v1/auth/login', { body: { email: u.email, password: PASSWORD } })
    expect(login.body.data.user.name).toBe(name)

    // The users table is still there and still holds the row.
    const rows = await t.kernel.db.query<{ name: string }>('select name from users where email = $1', [u.email])
    expect(rows.map((r) => r.name)).toEqual([name])
  })

  test('an e-mail containing SQL is simply rejected or stored, never executed', async () => {
    const res = await call('POST', '/v1/auth/login', { body: { email: "x' OR '1'='1", password: "x' OR '1'='1" } })
    expect(res.status).toBe(401)
  })
})

describe('login', () => {
  test('logging in answers 200 with a new token and the user', async () => {
    const u = await registerUser({ name: 'Login Person' })
    const res = await call('POST', '/v1/auth/login', { body: { email: u.email, password: PASSWORD } })
    expect(res.status).toBe(200)
    expect(Object.keys(res.body)).toEqual(['data'])
    expect(typeof res.body.data.token).toBe('string')
    expect(res.body.data.token).not.toBe(u.token)
    expect(res.body.data.user).toEqual({ id: u.user.id, email: u.email, name: 'Login Person' })
    const me = await call('GET', '/v1/auth/me', { token: res.body.data.token })
    expect(me.status).toBe(200)
    expect(me.body.data.id).toBe(u.user.id)
  })

  test('the login e-mail is matched regardless of letter case', async () => {
    const u = await registerUser()
    const res = await call('POST', '/v1/auth/login', { body: { email: u.email.toUpperCase(), password: PASSWORD } })
    expect(res.status).toBe(200)
  })

  test('a wrong password and an unknown e-mail answer the same 401 body', async () => {
    const u = await registerUser()
    const wrong = await call('POST', '/v1/auth/login', { body: { email: u.email, password: 'not the password' } })
    const unknown = await call('POST', '/v1/auth/login', { body: { email: freshEmail(), password: 'not the password' } })
    expect(wrong.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect(wrong.body).toEqual(unknown.body)
    expect(typeof wrong.body.error).toBe('string')
    expect(typeof wrong.body.message).toBe('string')
  })

  test('a login without a password answers 422', async () => {
    const res = await call('POST', '/v1/auth/login', { body: { email: freshEmail() } })
    expect(res.status).toBe(422)
    expect(res.body.error).toBe('validation_failed')
    expect(Array.isArray(res.body.errors.password)).toBe(true)
  })
})

describe('GET /auth/me', () => {
  test('a user token describes the user, the tenant and a user token expiring in about 30 days', async () => {
    const u = await registerUser({ name: 'Me Myself', tenant_name: 'Me Inc' })
    const res = await call('GET', '/v1/auth/me', { token: u.token })
    expect(res.status).toBe(200)
    const d = res.body.data
    expect(d.id).toBe(u.user.id)
    expect(d.email).toBe(u.email)
    expect(d.name).toBe('Me Myself')
    expect(d.tenant).toEqual({ id: u.tenant.id, name: 'Me Inc' })
    expect(d.token.type).toBe('user')
    const expires = Date.parse(d.token.expires_at)
    expect(Number.isNaN(expires)).toBe(false)
    expect(d.token.expires_at).toMatch(/Z$/)
    const expected = t.clock.now().getTime() + 30 * DAY_MS
    expect(Math.abs(expires - expected)).toBeLessThan(60_000)
  })

  test('a Space-scoped token describes itself as type space with its Space slug and role', async () => {
    const u = await registerUser()
    const space = await t.createSpace(u.token)
    const st = await t.spaceToken(u.token, space.slug, 'editor')
    const res = await call('GET', '/v1/auth/me', { token: st.token })
    expect(res.status).toBe(200)
    expect(res.body.data.token.type).toBe('space')
    expect(res.body.data.token.space).toBe(space.slug)
    expect(res.body.data.token.role).toBe('editor')
    expect(res.body.data.tenant.id).toBe(u.tenant.id)
  })

  test('without a bearer token /auth/me answers 401 with WWW-Authenticate: Bearer', async () => {
    const res = await call('GET', '/v1/auth/me')
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/)
    expect(res.body).toEqual({ error: expect.any(String), message: expect.any(String) })
  })

  test('a non-Bearer Authorization scheme answers 401', async () => {
    const u = await registerUser()
    const res = await call('GET', '/v1/auth/me', { headers: { Authorization: `Basic ${btoa(`${u.email}:${PASSWORD}`)}` } })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/)
  })

  test('a garbage token answers 401', async () => {
    for (const token of ['garbage', 'u_abc.def', 'u_AAAAAAAAAAAA.' + 'A'.repeat(43), "' OR 1=1 --"]) {
      const res = await call('GET', '/v1/auth/me', { token })
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/)
    }
  })

  test('a token with a valid id but a wrong secret answers 401', async () => {
    const u = await registerUser()
    const [id, secret] = u.token.split('.')
    const flipped = secret[0] === 'A' ? `B${secret.slice(1)}` : `A${secret.slice(1)}`
    const res = await call('GET', '/v1/auth/me', { token: `${id}.${flipped}` })
    expect(res.status).toBe(401)
  })

  test('a user token stops working after 30 days', async () => {
    const u = await registerUser()
    t.clock.advance(29 * DAY_MS)
    expect((await call('GET', '/v1/auth/me', { token: u.token })).status).toBe(200)
    t.clock.advance(DAY_MS + 1000)
    const res = await call('GET', '/v1/auth/me', { token: u.token })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/)
  })
})

describe('logout', () => {
  test('logging out answers 204 and the token then gets 401', async () => {
    const u = await registerUser()
    const res = await call('POST', '/v1/auth/logout', { token: u.token })
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    const me = await call('GET', '/v1/auth/me', { token: u.token })
    expect(me.status).toBe(401)
    const again = await call('POST', '/v1/auth/logout', { token: u.token })
    expect(again.status).toBe(401)
  })

  test('logging out revokes only the token used, not other sessions of the user', async () => {
    const u = await registerUser()
    const other = await call('POST', '/v1/auth/login', { body: { email: u.email, password: PASSWORD } })
    expect((await call('POST', '/v1/auth/logout', { token: u.token })).status).toBe(204)
    expect((await call('GET', '/v1/auth/me', { token: other.body.data.token })).status).toBe(200)
  })

  test('logout without a token answers 401', async () => {
    const res = await call('POST', '/v1/auth/logout')
    expect(res.status).toBe(401)
  })
})

describe('rate limits', () => {
  test('the 11th failed login within an hour from one IP answers 429 rate_limited, and an hour later it is allowed again', async () => {
    const u = await registerUser()
    const ip = freshIp()
    for (let i = 1; i <= 10; i++) {
      // Each failure names another address: the per-address back-off is not what this test meets.
      const res = await call('POST', '/v1/auth/login', { ip, body: { email: freshEmail(), password: 'wrong password' } })
      expect(res.status).toBe(401)
      expect(res.headers.get('ratelimit-limit')).toBe('10')
      expect(res.headers.get('ratelimit-remaining')).toBe(String(10 - i))
    }
    const limited = await call('POST', '/v1/auth/login', { ip, body: { email: u.email, password: PASSWORD } })
    expect(limited.status).toBe(429)
    expect(limited.body.error).toBe('rate_limited')
    expect(typeof limited.body.message).toBe('string')
    const retryAfter = Number(limited.headers.get('retry-after'))
    expect(Number.isInteger(retryAfter)).toBe(true)
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(3600)
    expect(limited.headers.get('ratelimit-limit')).toBe('10')
    expect(limited.headers.get('ratelimit-remaining')).toBe('0')
    const reset = Number(limited.headers.get('ratelimit-reset'))
    expect(reset).toBeGreaterThan(0)
    expect(reset).toBeLessThanOrEqual(3600)
    expect(limited.headers.get('x-request-id')).toBeTruthy()

    // Another address is not affected.
    const other = await call('POST', '/v1/auth/login', { ip: freshIp(), body: { email: u.email, password: PASSWORD } })
    expect(other.status).toBe(200)

    t.clock.advance(HOUR_MS + 1000)
    const later = await call('POST', '/v1/auth/login', { ip, body: { email: u.email, password: PASSWORD } })
    expect(later.status).toBe(200)
    // A successful sign-in is given back: the window's budget is whole again.
    const next = await call('POST', '/v1/auth/login', { ip, body: { email: freshEmail(), password: 'wrong password' } })
    expect(next.headers.get('ratelimit-remaining')).toBe('9')
  })

  test('a limited login does not check the password at all (429 even with the right one)', async () => {
    const u = await registerUser()
    const ip = freshIp()
    for (let i = 0; i < 10; i++) await call('POST', '/v1/auth/login', { ip, body: { email: freshEmail(), password: 'nope nope' } })
    const res = await call('POST', '/v1/auth/login', { ip, body: { email: u.email, password: PASSWORD } })
    expect(res.status).toBe(429)
    expect(res.body.data).toBeUndefined()
  })

  test('the 6th registration within an hour from one IP answers 429', async () => {
    const ip = freshIp()
    for (let i = 0; i < 5; i++) {
      const res = await call('POST', '/v1/auth/register', { ip, body: { email: freshEmail(), password: PASSWORD, name: 'R' } })
      expect(res.status).toBe(202)
    }
    const sixth = await call('POST', '/v1/auth/register', { ip, body: { email: freshEmail(), password: PASSWORD, name: 'R' } })
    expect(sixth.status).toBe(429)
    expect(sixth.body.error).toBe('rate_limited')
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(sixth.headers.get('ratelimit-limit')).toBe('5')

    const elsewhere = await call('POST', '/v1/auth/register', {
      ip: freshIp(),
      body: { email: freshEmail(), password: PASSWORD, name: 'R' },
    })
    expect(elsewhere.status).toBe(202)
  })

  test('a 429 registration creates no account', async () => {
    const ip = freshIp()
    for (let i = 0; i < 5; i++) await call('POST', '/v1/auth/register', { ip, body: { email: freshEmail(), password: 'x', name: 'R' } })
    const email = freshEmail()
    const res = await call('POST', '/v1/auth/register', { ip, body: { email, password: PASSWORD, name: 'R' } })
    expect(res.status).toBe(429)
    const rows = await t.kernel.db.query('select id from users where email = $1', [email])
    expect(rows.length).toBe(0)
  })

  test('a spoofed X-Forwarded-For entry to the left of the real client is not believed', async () => {
    const real = freshIp()
    for (let i = 0; i < 10; i++) {
      const res = await call('POST', '/v1/auth/login', {
        headers: { 'X-Forwarded-For': `198.51.100.${i}, ${real}` },
        body: { email: freshEmail(), password: 'wrong password' },
      })
      expect(res.status).toBe(401)
    }
    const res = await call('POST', '/v1/auth/login', {
      headers: { 'X-Forwarded-For': `198.51.100.99, ${real}` },
      body: { email: freshEmail(), password: 'wrong password' },
    })
    expect(res.status).toBe(429)
  })
})

describe('X-Forwarded-For from an untrusted peer', () => {
  test('is ignored: every request counts against the peer address', async () => {
    const untrusted = await testApp({}, { TRUSTED_PROXIES: '' })
    try {
      const reg = await untrusted.request('POST', '/v1/auth/register', {
        ip: '192.0.2.1',
        body: { email: freshEmail(), password: PASSWORD, name: 'U' },
      })
      expect(reg.status).toBe(201)
      const email = reg.body.data.user.email
      for (let i = 0; i < 10; i++) {
        const res = await untrusted.request('POST', '/v1/auth/login', {
          ip: `192.0.2.${10 + i}`,
          body: { email: freshEmail(), password: 'wrong password' },
        })
        expect(res.status).toBe(401)
      }
      const res = await untrusted.request('POST', '/v1/auth/login', { ip: '192.0.2.99', body: { email, password: PASSWORD } })
      expect(res.status).toBe(429)
    } finally {
      await untrusted.close()
    }
  })

  test('ClientIpResolver believes X-Forwarded-For only from a trusted peer', () => {
    const none = new ClientIpResolver([])
    expect(none.resolve('192.0.2.7', '1.2.3.4')).toBe('192.0.2.7')
    expect(none.resolve('127.0.0.1', '1.2.3.4')).toBe('127.0.0.1')

    const r = new ClientIpResolver(['127.0.0.1', '10.0.0.0/8'])
    expect(r.resolve('127.0.0.1', '1.2.3.4')).toBe('1.2.3.4')
    expect(r.resolve('192.0.2.7', '1.2.3.4')).toBe('192.0.2.7')
    expect(r.resolve('127.0.0.1', null)).toBe('127.0.0.1')
    // The right-most address that is not a trusted proxy is the client; entries to its left are client-supplied.
    expect(r.resolve('127.0.0.1', '6.6.6.6, 1.2.3.4')).toBe('1.2.3.4')
    expect(r.resolve('127.0.0.1', '6.6.6.6, 1.2.3.4, 10.1.2.3')).toBe('1.2.3.4')
    // Garbage entries are skipped.
    expect(r.resolve('127.0.0.1', 'not-an-ip, 1.2.3.4')).toBe('1.2.3.4')
    expect(r.resolve('127.0.0.1', 'not-an-ip')).toBe('127.0.0.1')
    // IPv4-mapped IPv6 peers are recognised.
    expect(r.isTrusted('::ffff:127.0.0.1')).toBe(true)
    expect(r.isTrusted('10.200.1.1')).toBe(true)
    expect(r.isTrusted('11.0.0.1')).toBe(false)
    expect(() => new ClientIpResolver(['not-an-ip'])).toThrow()
  })

  test('isIPv4 (the resolver\'s regex-free check) takes canonical dotted quads only', () => {
    for (const ok of ['0.0.0.0', '1.2.3.4', '10.0.0.1', '100.200.250.255', '255.255.255.255']) expect(isIPv4(ok)).toBe(true)
    for (const bad of ['', '1.2.3', '1.2.3.4.5', '256.1.1.1', '1.2.3.256', '01.2.3.4', '1.2.3.04', '1..3.4', '.1.2.3', '1.2.3.4.', ' 1.2.3.4', '1.2.3.4 ', 'a.b.c.d', '::1', '1.2.3.-4', '1000.1.1.1']) {
      expect(isIPv4(bad)).toBe(false)
    }
    // The same answers as the regex it replaced, over random near-addresses.
    const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/
    for (let i = 0; i < 20_000; i++) {
      const part = () => (Math.random() < 0.05 ? '0' : '') + String(Math.floor(Math.random() * 300))
      const s = [part(), part(), part(), part()].join('.')
      expect(isIPv4(s)).toBe(IPV4.test(s))
    }
  })

  test('request ids are UUID-shaped and distinct', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newRequestId()))
    expect(ids.size).toBe(1000)
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })
})

describe('secrets', () => {
  test('no response ever contains a password or a password hash', async () => {
    // Make sure the interesting endpoints were exercised with a known password, also on failure paths.
    const u = await registerUser()
    await call('POST', '/v1/auth/login', { body: { email: u.email, password: PASSWORD } })
    await call('POST', '/v1/auth/login', { body: { email: u.email, password: 'almost the password' } })
    await call('POST', '/v1/auth/register', { body: { email: u.email, password: PASSWORD, name: 'Dup' } })
    await call('GET', '/v1/auth/me', { token: u.token })
    expect(seen.length).toBeGreaterThan(20)
    for (const res of seen) {
      expect(res.text).not.toContain(PASSWORD)
      expect(res.text).not.toContain('almost the password')
      expect(res.text).not.toContain('$argon2')
      expect(res.text.toLowerCase()).not.toContain('password_hash')
      expect(res.text).not.toContain('passwordHash')
    }
  })
})
