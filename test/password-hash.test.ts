// The argon2id cost of password hashes: the service's default (64 MiB, two passes), the operator's setting with its
// floor (OWASP's 19 MiB and two passes), and hashes made under another cost still verifying after a change.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { ConfigError, loadConfig } from '../src/config'
import { users } from '../src/kernel/tables'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

describe('PASSWORD_HASH_MEMORY_KIB and PASSWORD_HASH_PASSES', () => {
  test('default to 64 MiB and two passes; the environment cannot go below 19 MiB and two passes', () => {
    expect(loadConfig({}).passwordHash).toEqual({ memoryCost: 65_536, timeCost: 2 })
    expect(loadConfig({ PASSWORD_HASH_MEMORY_KIB: '19456', PASSWORD_HASH_PASSES: '3' }).passwordHash).toEqual({ memoryCost: 19_456, timeCost: 3 })
    for (const bad of ['19455', '1024', '0', 'lots', '-1', '1.5']) expect(() => loadConfig({ PASSWORD_HASH_MEMORY_KIB: bad })).toThrow(ConfigError)
    for (const bad of ['1', '0', '65', 'two']) expect(() => loadConfig({ PASSWORD_HASH_PASSES: bad })).toThrow(ConfigError)
  })
})

describe('hashes at the service cost', () => {
  let t: TestApp
  let cheap: TestApp
  beforeAll(async () => {
    // The defaults a service runs with, parsed from an empty environment.
    t = await testApp({ passwordHash: loadConfig({}).passwordHash })
    cheap = await testApp()
  })
  afterAll(async () => {
    await t?.close()
    await cheap?.close()
  })

  test('a sign-up stores an argon2id hash at the configured cost, and the password signs in', async () => {
    const email = `cost-${Math.random().toString(36).slice(2, 8)}@example.com`
    const res = await t.request('POST', '/v1/auth/register', { body: { email, password: 'correct horse battery staple', name: 'Ada' } })
    expect(res.status).toBe(201)
    const [row] = await t.kernel.db.db.select({ hash: users.passwordHash }).from(users).where(eq(users.email, email))
    expect(row.hash).toStartWith('$argon2id$v=19$m=65536,t=2,p=1$')
    expect(row.hash).not.toContain('correct horse')
    const login = await t.request('POST', '/v1/auth/login', { body: { email, password: 'correct horse battery staple' } })
    expect(login.status).toBe(200)
    const wrong = await t.request('POST', '/v1/auth/login', { body: { email, password: 'correct horse battery stapler' } })
    expect(wrong.status).toBe(401)
  })

  test('a hash made under another cost still verifies after the setting changes', async () => {
    const email = `moved-${Math.random().toString(36).slice(2, 8)}@example.com`
    const res = await cheap.request('POST', '/v1/auth/register', { body: { email, password: 'a password made cheaply', name: 'Bo' } })
    expect(res.status).toBe(201)
    const [row] = await cheap.kernel.db.db.select({ hash: users.passwordHash }).from(users).where(eq(users.email, email))
    expect(row.hash).toStartWith('$argon2id$v=19$m=1024,t=1,p=1$')
    // An account of the service whose hash was made under that cost: the login verifies against the cost it records.
    const other = `other-${Math.random().toString(36).slice(2, 8)}@example.com`
    await t.register({ email: other, password: 'the first password' })
    await t.kernel.db.db.update(users).set({ passwordHash: row.hash }).where(eq(users.email, other))
    expect((await t.request('POST', '/v1/auth/login', { body: { email: other, password: 'a password made cheaply' } })).status).toBe(200)
    expect((await t.request('POST', '/v1/auth/login', { body: { email: other, password: 'the first password' } })).status).toBe(401)
  })
})
