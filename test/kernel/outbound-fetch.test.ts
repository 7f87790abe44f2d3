/**
 * The outbound guard (src/kernel/outbound.ts): every IPv6 form that carries an internal IPv4 address is internal;
 * cloud metadata addresses stay closed whatever the policy says (SERVICE_OUTBOUND_ALLOW_PRIVATE, AI_BASE_URL); the
 * captcha verifier's answer is read to a cap.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { isInternalAddress, isMetadataAddress, OutboundError, resolveTarget } from '../../src/kernel/outbound'
import { type TestApp, testApp } from '../helpers/app'

setDefaultTimeout(60_000)

describe('internal addresses', () => {
  test('IPv4-translated (SIIT), NAT64, 6to4 and Teredo forms are internal', () => {
    for (const ip of [
      '::ffff:0:7f00:1', // ::ffff:0:127.0.0.1, IPv4-translated
      '::ffff:0:127.0.0.1',
      '::ffff:0:a00:1',
      '::ffff:0:8.8.8.8', // a translator may map any of them: the whole range is refused
      '64:ff9b::7f00:1',
      '2002:7f00:1::1',
      '2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo; client 127.0.0.1 inverted
      '2001::1',
      '2001:2::1', // benchmarking, inside the IETF protocol assignments
      '3fff::1',
    ]) {
      expect([ip, isInternalAddress(ip)]).toEqual([ip, true])
    }
    for (const ip of ['2606:4700::1111', '2a00:1450:4001:80b::200e', '2001:4860:4860::8888', '8.8.8.8']) {
      expect([ip, isInternalAddress(ip)]).toEqual([ip, false])
    }
  })

  test('cloud metadata addresses are recognised in every form that carries them', () => {
    for (const ip of [
      '169.254.169.254',
      '169.254.170.2',
      '100.100.100.200',
      '168.63.129.16',
      'fd00:ec2::254',
      'fd20:ce::254',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '::ffff:0:a9fe:a9fe',
      '::a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b:1::a9fe:a9fe',
      '2002:a9fe:a9fe::1',
      '2001:0:4136:e378:8000:63bf:5601:5601', // Teredo; client 169.254.169.254 inverted
    ]) {
      expect([ip, isMetadataAddress(ip)]).toEqual([ip, true])
    }
    for (const ip of ['127.0.0.1', '10.0.0.1', '::1', 'fd12::1', '8.8.8.8', '::ffff:10.0.0.1']) {
      expect([ip, isMetadataAddress(ip)]).toEqual([ip, false])
    }
  })

  test('allowing private targets opens private addresses but never metadata ones', async () => {
    expect((await resolveTarget('http://127.0.0.1:9/x', { allowPrivate: true })).addresses[0]!.address).toBe('127.0.0.1')
    expect((await resolveTarget('http://[::ffff:0:7f00:1]:9/x', { allowPrivate: true })).addresses.length).toBe(1)
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/',
      'http://[::ffff:0:a9fe:a9fe]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[2001:0:4136:e378:8000:63bf:5601:5601]/',
      'http://100.100.100.200/latest/meta-data/',
    ]) {
      const err = await resolveTarget(url, { allowPrivate: true }).then(
        () => null,
        (e) => e,
      )
      expect([url, err instanceof OutboundError && err.kind]).toEqual([url, 'blocked_address'])
      expect(String(err.message)).toContain('metadata')
    }
    for (const url of ['http://[::ffff:0:7f00:1]/', 'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'http://[2002:7f00:1::1]/']) {
      const err = await resolveTarget(url, { allowPrivate: false }).then(
        () => null,
        (e) => e,
      )
      expect([url, err instanceof OutboundError && err.kind]).toEqual([url, 'blocked_address'])
    }
  })
})

describe('with SERVICE_OUTBOUND_ALLOW_PRIVATE=true and AI_BASE_URL on a metadata address', () => {
  let t: TestApp
  let token: string
  let space: string
  let verifier: ReturnType<typeof Bun.serve>
  const PAD = 'x'.repeat(1024 * 1024)

  beforeAll(async () => {
    // A captcha verifier that says yes — after a megabyte of padding.
    verifier = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () => new Response(`{"success":true,"pad":"${PAD}"}`, { headers: { 'Content-Type': 'application/json' } }),
    })
    t = await testApp(
      { outboundAllowPrivate: true },
      { AI_BASE_URL: 'http://169.254.169.254/v1', AI_MODEL: 'm', TURNSTILE_VERIFY_URL: `http://127.0.0.1:${verifier.port}/siteverify` },
    )
    const owner = await t.register()
    token = owner.token
    space = (await t.createSpace(token)).slug
  }, 180_000)

  afterAll(async () => {
    await t?.close()
    verifier?.stop(true)
  })

  test('a webhook or datasource pointed at a metadata address is refused (422), a private one is taken', async () => {
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:0:a9fe:a9fe]/', 'http://[fd00:ec2::254]/']) {
      const hook = await t.request('POST', `/v1/spaces/${space}/webhooks`, { token, body: { label: 'x', url, events: ['story.published'] } })
      expect([url, hook.status]).toEqual([url, 422])
      expect(hook.body.errors.url[0]).toContain('metadata')
      const ds = await t.request('POST', `/v1/spaces/${space}/datasources`, {
        token,
        body: { key: 'meta', label: 'x', type: 'http_json', config: { url, json_path: '$', cron: '0 * * * *' } },
      })
      expect([url, ds.status]).toEqual([url, 422])
    }
    const ok = await t.request('POST', `/v1/spaces/${space}/webhooks`, { token, body: { label: 'x', url: 'http://127.0.0.1:9/hook', events: ['story.published'] } })
    expect(ok.status).toBe(201)
  })

  test('AI_BASE_URL on a metadata address is never called', async () => {
    const res = await t.request('POST', `/v1/spaces/${space}/ai/text`, { token, body: { prompt: 'Hello' } })
    expect(res.status).toBe(502)
    expect(res.body.message).toContain('metadata')
  })

  test("a captcha verifier's answer over the cap counts as a failed check", async () => {
    const form = await t.request('POST', `/v1/spaces/${space}/forms`, {
      token,
      body: {
        slug: 'contact',
        label: 'Contact',
        fields: [{ key: 'name', type: 'text', label: 'Name', required: true }],
        spam_provider: 'turnstile',
        spam_config: { secret: 'captcha-secret' },
      },
    })
    expect(form.status).toBe(201)
    const res = await t.request('POST', `/v1/cdn/${space}/forms/contact`, { body: { data: { name: 'Ada' }, captcha_token: 'token' } })
    expect(res.status).toBe(422)
    expect(res.body.error).toBe('captcha_failed')
  })
})
