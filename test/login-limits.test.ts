/**
 * Sign-in limits: per IP (IPv6 by its /64) only failed sign-ins count, and per address — from any IP — a back-off that
 * a guesser spreading attempts over many addresses cannot dodge.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { ipv6Prefix64, rateClientKey } from '../src/kernel/rate-limit'
import { passwordResetLinkTx } from '../src/modules/auth/service'
import { type TestApp, testApp } from './helpers/app'
import { type SmtpSink, startSmtpSink } from './helpers/smtp'

setDefaultTimeout(60_000)

const BASE = 'https://cms.example.com'
const PASSWORD = 'correct horse battery staple'
let t: TestApp
let sink: SmtpSink

beforeAll(async () => {
  sink = await startSmtpSink()
  t = await testApp({ publicUrl: BASE }, { SMTP_URL: sink.url })
})
afterAll(async () => {
  await t?.close()
  await sink?.stop()
})

let ipCounter = 0
/** A fresh TEST-NET-2 address per call. */
const freshIp = () => `198.51.100.${++ipCounter}`
let n = 0
const fresh = () => `limits${++n}-${Math.random().toString(36).slice(2, 8)}@example.com`
const login = (email: string, password: string, ip = freshIp()) => t.request('POST', '/v1/auth/login', { ip, body: { email, password } })

describe('IPv6 clients are counted by their /64', () => {
  test('every spelling of an address in one /64 gives one key; an IPv4-mapped address counts as its IPv4 address', () => {
    const same = ['2001:db8:1:2::1', '2001:0db8:0001:0002:0000:0000:0000:0001', '2001:DB8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2:a:b:1.2.3.4', 'fe80::1%eth0'.replace('fe80::', '2001:db8:1:2::')]
    for (const ip of same) expect(ipv6Prefix64(ip)).toBe('2001:db8:1:2::/64')
    expect(ipv6Prefix64('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64')
    expect(ipv6Prefix64('::1')).toBe('0:0:0:0::/64')
    expect(ipv6Prefix64('2001:db8::')).toBe('2001:db8:0:0::/64')
    expect(ipv6Prefix64('::ffff:192.0.2.7')).toBe('192.0.2.7')
    for (const bad of ['1::2::3', '1:2:3:4:5:6:7:8:9', 'not:an:address', '12345::1']) expect(ipv6Prefix64(bad)).toBeNull()
    expect(rateClientKey('192.0.2.7')).toBe('192.0.2.7')
    expect(rateClientKey('2001:db8:1:2::99')).toBe('2001:db8:1:2::/64')
  })

  test('clients in one /64 share a bucket; another /64 has its own', async () => {
    const send = (ip: string) => t.request('POST', '/v1/auth/register', { ip, body: {} })
    for (let i = 1; i <= 5; i++) expect((await send(`2001:db8:a:b::${i}`)).status).toBe(422)
    // The sixth from anywhere in that /64, whatever it picks as its own address, is over the limit.
    const sixth = await send('2001:db8:a:b:dead:beef:0:1')
    expect(sixth.status).toBe(429)
    expect(sixth.body.error).toBe('rate_limited')
    expect((await send('2001:db8:a:c::1')).status).toBe(422)
  })
})

describe('per IP, only failed sign-ins count', () => {
  test('11 successful sign-ins in an hour from one address all succeed; the 11th failure from it is refused', async () => {
    const u = await t.register({ email: fresh() })
    const ip = freshIp()
    for (let i = 0; i < 11; i++) {
      const ok = await login(u.user.email, PASSWORD, ip)
      expect(ok.status).toBe(200)
      expect(ok.headers.get('ratelimit-remaining')).toBe('10')
    }
    // Ten failures (each for another address, so no per-address back-off is met) use the budget up.
    for (let i = 0; i < 10; i++) expect((await login(fresh(), 'a wrong password', ip)).status).toBe(401)
    const limited = await login(u.user.email, PASSWORD, ip)
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
  })
})

describe('per address, a back-off from any IP', () => {
  async function guesses(email: string, k: number) {
    const statuses: number[] = []
    for (let i = 0; i < k; i++) statuses.push((await login(email, `guess number ${i}`)).status)
    return statuses
  }

  test('failed sign-ins for one account from many IPs: 5 free, then one attempt per wait, and the right password waits too', async () => {
    const u = await t.register({ email: fresh() })
    expect(await guesses(u.user.email, 6)).toEqual([401, 401, 401, 401, 401, 401])
    const refused = await login(u.user.email, PASSWORD)
    expect(refused.status).toBe(429)
    expect(refused.body.error).toBe('rate_limited')
    const wait = Number(refused.headers.get('retry-after'))
    expect(wait).toBeGreaterThan(0)
    expect(wait).toBeLessThanOrEqual(60)
    // After the wait, one attempt goes ahead: the right password signs in.
    t.clock.advance(61_000)
    expect((await login(u.user.email, PASSWORD)).status).toBe(200)
    // The next wrong one goes ahead too (a sign-in ends the current wait), and each failure doubles the next wait.
    expect((await login(u.user.email, 'yet another guess')).status).toBe(401)
    const two = await login(u.user.email, PASSWORD)
    expect(two.status).toBe(429)
    expect(Number(two.headers.get('retry-after'))).toBeGreaterThan(60)
    expect(Number(two.headers.get('retry-after'))).toBeLessThanOrEqual(120)
    t.clock.advance(121_000)
    expect((await login(u.user.email, 'and another guess')).status).toBe(401)
    const four = await login(u.user.email, PASSWORD)
    expect(four.status).toBe(429)
    expect(Number(four.headers.get('retry-after'))).toBeGreaterThan(120)
  })

  test('an address without an account meets the very same answers (the back-off tells nothing)', async () => {
    const u = await t.register({ email: fresh() })
    const known = [...(await guesses(u.user.email, 6)), (await login(u.user.email, PASSWORD)).status]
    const nobody = fresh()
    const unknown = [...(await guesses(nobody, 6)), (await login(nobody, PASSWORD)).status]
    expect(known).toEqual([401, 401, 401, 401, 401, 401, 429])
    expect(unknown).toEqual(known)
  })

  test('attempts sent at once are all counted: at most 6 of 12 reach the password check', async () => {
    const u = await t.register({ email: fresh() })
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => login(u.user.email, `burst guess ${i}`)))
    const checked = answers.filter((r) => r.status === 401).length
    expect(checked).toBeLessThanOrEqual(6)
    expect(answers.filter((r) => r.status === 429).length).toBe(12 - checked)
  })

  test('a password reset by mail lifts the wait: the owner signs in at once', async () => {
    const u = await t.register({ email: fresh() })
    await guesses(u.user.email, 6)
    expect((await login(u.user.email, PASSWORD)).status).toBe(429)
    expect((await t.request('POST', '/v1/auth/password-reset', { body: { email: u.user.email } })).status).toBe(202)
    await t.kernel.jobs.runDueJobs()
    await t.kernel.jobs.runDueJobs()
    const text = sink.mails.filter((m) => m.to.includes(u.user.email)).at(-1)!.parsed.text ?? ''
    const token = /reset-password\/([A-Za-z0-9_-]{43})/.exec(text)![1]
    expect((await t.request('POST', '/v1/auth/password-reset/confirm', { body: { token, new_password: 'a fresh passphrase' } })).status).toBe(200)
    expect((await login(u.user.email, 'a fresh passphrase')).status).toBe(200)
  })

  test('password resets per account: the 6th within an hour is refused, from any IP', async () => {
    const u = await t.register({ email: fresh() })
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      const token = await t.kernel.db.db.transaction(async (tx) => (await passwordResetLinkTx(t.kernel, tx, u.user.id, BASE)).split('/').pop()!)
      statuses.push((await t.request('POST', '/v1/auth/password-reset/confirm', { ip: freshIp(), body: { token, new_password: `passphrase number ${i}` } })).status)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
  })
})
