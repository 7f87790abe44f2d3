/**
 * The signed-in user's profile (PATCH /v1/auth/me: name, the admin app's language and theme) and signing out every
 * login session at once (POST /v1/auth/logout-everywhere).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(async () => {
  await t?.close()
})

describe('profile', () => {
  test('name, language and theme are stored per user and read back by GET /v1/auth/me', async () => {
    const u = await t.register({ name: 'Grace Hopper' })
    const before = await t.request('GET', '/v1/auth/me', { token: u.token })
    expect(before.body.data).toMatchObject({ name: 'Grace Hopper', ui_language: null, ui_theme: null })
    const changed = await t.request('PATCH', '/v1/auth/me', { token: u.token, body: { name: '  Grace B. Hopper ', ui_language: 'de', ui_theme: 'dark' } })
    expect(changed.status).toBe(200)
    expect(changed.body.data).toMatchObject({ name: 'Grace B. Hopper', ui_language: 'de', ui_theme: 'dark', email: u.user.email })
    // Only the fields given change; null goes back to the browser's language.
    const partly = await t.request('PATCH', '/v1/auth/me', { token: u.token, body: { ui_language: null } })
    expect(partly.body.data).toMatchObject({ name: 'Grace B. Hopper', ui_language: null, ui_theme: 'dark' })
    expect((await t.request('GET', '/v1/auth/me', { token: u.token })).body.data).toMatchObject({ ui_language: null, ui_theme: 'dark' })
    // Another user is untouched.
    const other = await t.register({ name: 'Other' })
    expect((await t.request('GET', '/v1/auth/me', { token: other.token })).body.data).toMatchObject({ name: 'Other', ui_theme: null })
  })

  test('bad values answer 422 naming the field; a Space token gets 403; no token 401', async () => {
    const u = await t.register()
    for (const body of [{ ui_theme: 'purple' }, { ui_language: 'not a tag!' }, { name: '   ' }, { name: '' }, { ui_language: 'x'.repeat(40) }]) {
      const res = await t.request('PATCH', '/v1/auth/me', { token: u.token, body })
      expect(res.status).toBe(422)
      expect(Object.keys(res.body.errors ?? {})).toEqual(Object.keys(body))
    }
    const space = await t.createSpace(u.token)
    const st = await t.spaceToken(u.token, space.slug, 'admin')
    expect((await t.request('PATCH', '/v1/auth/me', { token: st.token, body: { name: 'x' } })).status).toBe(403)
    expect((await t.request('POST', '/v1/auth/logout-everywhere', { token: st.token })).status).toBe(403)
    expect((await t.request('PATCH', '/v1/auth/me', { body: { name: 'x' } })).status).toBe(401)
  })
})

describe('sign out everywhere', () => {
  test('every login session of the user ends, this one included; Space tokens and other users stay', async () => {
    const u = await t.register()
    const second = await t.request('POST', '/v1/auth/login', { body: { email: u.user.email, password: 'correct horse battery staple' } })
    const otherSession = second.status === 200 ? second.body.data.token : null
    const space = await t.createSpace(u.token)
    const st = await t.spaceToken(u.token, space.slug, 'viewer')
    const other = await t.register()
    const res = await t.request('POST', '/v1/auth/logout-everywhere', { token: u.token })
    expect(res.status).toBe(200)
    expect(res.body.data.revoked_sessions).toBeGreaterThanOrEqual(1)
    expect((await t.request('GET', '/v1/auth/me', { token: u.token })).status).toBe(401)
    if (otherSession) expect((await t.request('GET', '/v1/auth/me', { token: otherSession })).status).toBe(401)
    expect((await t.request('GET', '/v1/auth/me', { token: st.token })).status).toBe(200)
    expect((await t.request('GET', '/v1/auth/me', { token: other.token })).status).toBe(200)
  })
})
