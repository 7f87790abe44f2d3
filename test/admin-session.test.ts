/**
 * The admin app's shared sign-in (admin/README.md "Signing in across tabs"): an admin session in an HttpOnly,
 * SameSite=Strict cookie scoped to /v1/auth/admin-session, traded (with X-Admin-Session: 1) for bearer tokens of 15
 * minutes. The cookie is never authentication anywhere else; the session is stored hashed; signing out ends it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { sha256Hex } from '../src/kernel/crypto'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(async () => {
  await t?.close()
})

const PASSWORD = 'correct horse battery staple'
const MIN = 60_000
const DAY = 86_400_000

/** A user signed in to the admin: the login token and the session's cookie value. */
async function signIn(headers: Record<string, string> = {}) {
  const u = await t.register()
  const opened = await t.request('POST', '/v1/auth/admin-session', { token: u.token, headers })
  expect(opened.status).toBe(201)
  const setCookie = opened.headers.get('set-cookie') ?? ''
  const value = /^cs_admin_session=([^;]*)/.exec(setCookie)?.[1] ?? ''
  expect(value).toMatch(/^as_[A-Za-z0-9_-]{12}\.[A-Za-z0-9_-]{43}$/)
  return { ...u, cookie: value, setCookie, opened }
}

const exchange = (cookie: string | null, header: string | null = '1') =>
  t.request('POST', '/v1/auth/admin-session/token', {
    headers: { ...(cookie !== null ? { Cookie: `other=1; cs_admin_session=${cookie}` } : {}), ...(header !== null ? { 'X-Admin-Session': header } : {}) },
  })
const endSession = (cookie: string | null, header: string | null = '1') =>
  t.request('DELETE', '/v1/auth/admin-session', {
    headers: { ...(cookie !== null ? { Cookie: `cs_admin_session=${cookie}` } : {}), ...(header !== null ? { 'X-Admin-Session': header } : {}) },
  })
const me = (token: string) => t.request('GET', '/v1/auth/me', { token })

describe('opening a session', () => {
  test('sets an HttpOnly, SameSite=Strict cookie scoped to /v1/auth/admin-session; Secure only over https', async () => {
    const s = await signIn()
    const flags = s.setCookie.split(';').map((p) => p.trim())
    expect(flags).toContain('HttpOnly')
    expect(flags).toContain('SameSite=Strict')
    expect(flags).toContain('Path=/v1/auth/admin-session')
    expect(flags).toContain(`Max-Age=${14 * 86_400}`)
    // Plain http without PUBLIC_URL (a local install): no Secure, or browsers refusing Secure on http would drop it.
    expect(flags).not.toContain('Secure')
    expect(s.opened.body.data.expires_at).toBe(new Date(t.clock.ms() + 14 * DAY).toISOString())
    expect(s.opened.headers.get('cache-control')).toBe('no-store')
    // Behind a trusted proxy that says https (tests trust loopback): Secure.
    const secure = await signIn({ 'X-Forwarded-Proto': 'https' })
    expect(secure.setCookie.split(';').map((p) => p.trim())).toContain('Secure')
  })

  test('needs the token of a sign-in: no token 401, a Space token 403, a token minted from a session 403', async () => {
    expect((await t.request('POST', '/v1/auth/admin-session')).status).toBe(401)
    const s = await signIn()
    // The cookie alone opens nothing.
    const byCookie = await t.request('POST', '/v1/auth/admin-session', { headers: { Cookie: `cs_admin_session=${s.cookie}`, 'X-Admin-Session': '1' } })
    expect(byCookie.status).toBe(401)
    const space = await t.createSpace(s.token)
    const st = await t.spaceToken(s.token, space.slug, 'admin')
    expect((await t.request('POST', '/v1/auth/admin-session', { token: st.token })).status).toBe(403)
    const minted = (await exchange(s.cookie)).body.data.token as string
    const refused = await t.request('POST', '/v1/auth/admin-session', { token: minted })
    expect(refused.status).toBe(403)
    expect(refused.body.error).toBe('admin_session_refused')
  })

  test('a new sign-in sending the old cookie replaces that session', async () => {
    const s = await signIn()
    const again = await t.request('POST', '/v1/auth/admin-session', { token: s.token, headers: { Cookie: `cs_admin_session=${s.cookie}` } })
    expect(again.status).toBe(201)
    const fresh = /^cs_admin_session=([^;]*)/.exec(again.headers.get('set-cookie') ?? '')![1]
    expect((await exchange(s.cookie)).status).toBe(401)
    expect((await exchange(fresh)).status).toBe(200)
  })
})

describe('trading the cookie for a token', () => {
  test('cookie + X-Admin-Session: 1 gives a 15-minute user token; the cookie slides', async () => {
    const s = await signIn()
    const res = await exchange(s.cookie)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const { token, expires_at, user } = res.body.data
    expect(user).toEqual(s.user)
    expect(expires_at).toBe(new Date(t.clock.ms() + 15 * MIN).toISOString())
    expect(token).not.toBe(s.token)
    const who = await me(token)
    expect(who.status).toBe(200)
    expect(who.body.data).toMatchObject({ id: s.user.id, token: { type: 'user', expires_at } })
    const again = res.headers.get('set-cookie') ?? ''
    expect(again).toContain(`cs_admin_session=${s.cookie}`)
    expect(again).toContain('HttpOnly')
  })

  test('without the header 403 (the error shape); a missing, malformed or wrong cookie 401', async () => {
    const s = await signIn()
    for (const header of [null, '0', 'true', '']) {
      const res = await exchange(s.cookie, header)
      expect({ header, status: res.status }).toEqual({ header, status: 403 })
      expect(res.body).toMatchObject({ error: 'admin_session_header_required', message: expect.any(String) })
    }
    const [id, secret] = s.cookie.split('.')
    const wrongSecret = `${id}.${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`
    for (const cookie of [null, '', 'x', s.token, `as_AAAAAAAAAAAA.${secret}`, wrongSecret, `${s.cookie}x`, '%00', 'a'.repeat(9000)]) {
      const res = await exchange(cookie)
      expect({ cookie: cookie?.slice(0, 30), status: res.status }).toEqual({ cookie: cookie?.slice(0, 30), status: 401 })
      expect(res.body).toMatchObject({ error: 'unauthorized', message: expect.any(String) })
    }
    // A bearer token instead of the cookie is not an admin session either.
    const bearer = await t.request('POST', '/v1/auth/admin-session/token', { token: s.token, headers: { 'X-Admin-Session': '1' } })
    expect(bearer.status).toBe(401)
  })

  test('expiry: the token after 15 minutes; the session 14 days after its last exchange, and never past 90 days', async () => {
    const s = await signIn()
    const token = (await exchange(s.cookie)).body.data.token
    t.clock.advance(14 * MIN)
    expect((await me(token)).status).toBe(200)
    t.clock.advance(2 * MIN)
    expect((await me(token)).status).toBe(401)
    // Sliding: an exchange every 13 days keeps the session ...
    for (let i = 0; i < 6; i++) {
      t.clock.advance(13 * DAY)
      expect((await exchange(s.cookie)).status).toBe(200)
    }
    // ... until 90 days after sign-in (78 days and a bit have passed; the end is now capped at day 90).
    t.clock.advance(12 * DAY)
    expect((await exchange(s.cookie)).status).toBe(401)
    const rows = await t.kernel.db.query('select id from admin_sessions where id = $1', [s.cookie.split('.')[0]])
    expect(rows).toEqual([])

    const idle = await signIn()
    t.clock.advance(14 * DAY + MIN)
    expect((await exchange(idle.cookie)).status).toBe(401)
    // The login token itself is not the session: it keeps its own lifetime (USER_TOKEN_TTL_DAYS).
    expect((await me(idle.token)).status).toBe(200)
  })
})

describe('signing out', () => {
  test('DELETE with the cookie ends the session, revokes its tokens and clears the cookie', async () => {
    const s = await signIn()
    const minted = (await exchange(s.cookie)).body.data.token
    expect((await endSession(s.cookie, null)).status).toBe(403)
    const res = await endSession(s.cookie)
    expect(res.status).toBe(204)
    const cleared = res.headers.get('set-cookie') ?? ''
    expect(cleared).toMatch(/^cs_admin_session=;/)
    expect(cleared).toContain('Max-Age=0')
    expect(cleared).toContain('Path=/v1/auth/admin-session')
    expect((await exchange(s.cookie)).status).toBe(401)
    expect((await me(minted)).status).toBe(401)
    // Nothing to end: still 204.
    expect((await endSession(null)).status).toBe(204)
    expect((await endSession('junk')).status).toBe(204)
  })

  test('logout with the login token, or with a minted token, ends the session for every tab', async () => {
    const a = await signIn()
    const tabB = (await exchange(a.cookie)).body.data.token
    expect((await t.request('POST', '/v1/auth/logout', { token: a.token })).status).toBe(204)
    expect((await exchange(a.cookie)).status).toBe(401)
    expect((await me(tabB)).status).toBe(401)

    const b = await signIn()
    const tab1 = (await exchange(b.cookie)).body.data.token
    const tab2 = (await exchange(b.cookie)).body.data.token
    expect((await t.request('POST', '/v1/auth/logout', { token: tab1 })).status).toBe(204)
    expect((await exchange(b.cookie)).status).toBe(401)
    expect((await me(tab2)).status).toBe(401)
    // The login token of that browser is a session of its own (signed out with its own logout).
    expect((await me(b.token)).status).toBe(200)
  })

  test('sign out everywhere ends every session; a password change every other one', async () => {
    const s = await signIn()
    const other = await t.request('POST', '/v1/auth/login', { body: { email: s.user.email, password: PASSWORD } })
    const otherOpened = await t.request('POST', '/v1/auth/admin-session', { token: other.body.data.token })
    const otherCookie = /^cs_admin_session=([^;]*)/.exec(otherOpened.headers.get('set-cookie') ?? '')![1]
    const minted = (await exchange(s.cookie)).body.data.token
    // A password change from this browser (its minted token): the other browser's session ends, this one stays.
    const changed = await t.request('POST', '/v1/auth/password', { token: minted, body: { current_password: PASSWORD, new_password: 'a whole new password' } })
    expect(changed.status).toBe(200)
    expect((await exchange(otherCookie)).status).toBe(401)
    expect((await exchange(s.cookie)).status).toBe(200)
    const everywhere = await t.request('POST', '/v1/auth/logout-everywhere', { token: minted })
    expect(everywhere.status).toBe(200)
    expect((await exchange(s.cookie)).status).toBe(401)
    const rows = await t.kernel.db.query('select id from admin_sessions where user_id = $1', [s.user.id])
    expect(rows).toEqual([])
  })
})

describe('the cookie is nothing but a session to trade', () => {
  test('no other route takes it as authentication', async () => {
    const s = await signIn()
    const space = await t.createSpace(s.token)
    const headers = { Cookie: `cs_admin_session=${s.cookie}`, 'X-Admin-Session': '1' }
    for (const [method, path, body] of [
      ['GET', '/v1/auth/me', undefined],
      ['GET', '/v1/whoami', undefined],
      ['GET', '/v1/spaces', undefined],
      ['GET', `/v1/spaces/${space.slug}/stories`, undefined],
      ['POST', '/v1/spaces', { slug: 'by-cookie', name: 'By cookie' }],
      ['POST', '/v1/auth/logout', undefined],
      ['POST', '/v1/auth/logout-everywhere', undefined],
    ] as const) {
      const res = await t.request(method, path, { headers, body })
      expect({ path, status: res.status }).toEqual({ path, status: 401 })
    }
    // ... and it still works afterwards (none of those ended it).
    expect((await exchange(s.cookie)).status).toBe(200)
  })

  test('stored hashed: the row holds SHA-256 of the secret, never the cookie value', async () => {
    const s = await signIn()
    const [id, secret] = s.cookie.split('.')
    const rows = await t.kernel.db.query<Record<string, unknown>>('select * from admin_sessions where id = $1', [id])
    expect(rows.length).toBe(1)
    const text = JSON.stringify(rows)
    expect(text).not.toContain(secret)
    expect(text).not.toContain(s.cookie)
    expect(rows[0].secret_hash).toBe(sha256Hex(secret))
    expect(rows[0].user_id).toBe(s.user.id)
    // The minted token is stored like every token: hashed.
    const minted = (await exchange(s.cookie)).body.data.token as string
    const tokens = await t.kernel.db.query<Record<string, unknown>>('select * from api_tokens where name = $1', [`admin-session:${id}`])
    expect(tokens.length).toBe(1)
    expect(JSON.stringify(tokens)).not.toContain(minted.split('.')[1])
  })

  test('the minted tokens of a session that ran out are deleted at the next exchange', async () => {
    const s = await signIn()
    const id = s.cookie.split('.')[0]
    for (let i = 0; i < 3; i++) {
      expect((await exchange(s.cookie)).status).toBe(200)
      t.clock.advance(16 * MIN)
    }
    expect((await exchange(s.cookie)).status).toBe(200)
    const tokens = await t.kernel.db.query('select id from api_tokens where name = $1', [`admin-session:${id}`])
    expect(tokens.length).toBe(1)
  })
})
