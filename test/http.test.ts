import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHash } from 'node:crypto'
import pkg from '../package.json'
import { ConfigError, loadConfig } from '../src/config'
import { type TestApp, type TestResponse, testApp } from './helpers/app'

// bunfig's `[test] timeout` is not honoured by `bun test`; a fresh testApp() can take longer than the 5 s default.
setDefaultTimeout(60_000)

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const VERSION = pkg.version
const SCRIPT_PATHS = ['/embed.js', `/embed-v${VERSION}.js`, '/service-admin.js']

let t: TestApp
/** Every error response this file sees, to check that none of them leaks internals. */
const errors: TestResponse[] = []

async function call(method: string, path: string, opts: Parameters<TestApp['request']>[2] = {}) {
  const res = await t.request(method, path, opts)
  if (res.status >= 400) errors.push(res)
  return res
}

const sha384 = (text: string) => `sha384-${createHash('sha384').update(text).digest('base64')}`

function expectErrorShape(res: TestResponse, status: number, code: string) {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toContain('application/json')
  expect(res.body.error).toBe(code)
  expect(typeof res.body.message).toBe('string')
  expect(res.body.message.length).toBeGreaterThan(0)
  for (const k of Object.keys(res.body)) expect(['error', 'message', 'errors', 'request_id']).toContain(k)
}

beforeAll(async () => {
  t = await testApp()
}, 180_000)

afterAll(async () => {
  await t?.close()
})

describe('request bodies', () => {
  test('an unparseable JSON body answers 400 invalid_json', async () => {
    for (const raw of ['{', '{"email": }', 'not json', '{"a":1}}']) {
      const res = await call('POST', '/v1/auth/login', { raw, headers: { 'Content-Type': 'application/json' } })
      expectErrorShape(res, 400, 'invalid_json')
    }
  })

  test('a JSON body with a charset parameter is accepted', async () => {
    const res = await call('POST', '/v1/auth/login', {
      raw: JSON.stringify({ email: 'nobody@example.com', password: 'whatever1' }),
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    })
    expect(res.status).toBe(401)
  })

  test('a text/plain or form-urlencoded body on a JSON route answers 415', async () => {
    const plain = await call('POST', '/v1/auth/login', {
      raw: JSON.stringify({ email: 'a@example.com', password: 'whatever1' }),
      headers: { 'Content-Type': 'text/plain' },
    })
    expectErrorShape(plain, 415, 'unsupported_media_type')
    const form = await call('POST', '/v1/auth/register', {
      raw: 'email=a%40example.com&password=whatever1&name=x',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    })
    expect(form.status).toBe(415)
    expect(typeof form.body.error).toBe('string')
    const rows = await t.kernel.db.query('select id from users where email = $1', ['a@example.com'])
    expect(rows.length).toBe(0)
  })

  test('a body over 1 MB answers 413 payload_too_large', async () => {
    const raw = JSON.stringify({ email: 'big@example.com', password: 'x'.repeat(1024 * 1024) })
    const res = await call('POST', '/v1/auth/login', { raw, headers: { 'Content-Type': 'application/json' } })
    expectErrorShape(res, 413, 'payload_too_large')
  })

  test('a body over 1 MB is refused from its Content-Length alone', async () => {
    const raw = JSON.stringify({ email: 'big@example.com', password: 'x'.repeat(1024 * 1024 + 10) })
    const res = await call('POST', '/v1/auth/register', {
      raw,
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(raw.length) },
    })
    expectErrorShape(res, 413, 'payload_too_large')
  })

  test('a body of just under 1 MB is parsed (not 413)', async () => {
    const filler = 'x'.repeat(1024 * 1024 - 100)
    const raw = JSON.stringify({ email: 'near@example.com', password: 'whatever1', filler })
    expect(raw.length).toBeLessThanOrEqual(1024 * 1024)
    const res = await call('POST', '/v1/auth/login', { raw, headers: { 'Content-Type': 'application/json' } })
    expect(res.status).not.toBe(413)
    expect([401, 422]).toContain(res.status)
  })
})

describe('routing and request ids', () => {
  test('an unknown route answers 404 not_found in the error shape', async () => {
    for (const [method, path] of [
      ['GET', '/v1/nope'],
      ['GET', '/nope'],
      ['POST', '/v1/auth/nope'],
      ['DELETE', '/v1/auth/login'],
    ] as const) {
      const res = await call(method, path)
      expectErrorShape(res, 404, 'not_found')
      expect(res.headers.get('x-request-id')).toBeTruthy()
    }
  })

  test('every response, success or error, carries an X-Request-Id', async () => {
    const u = await t.register()
    const responses = [
      await call('GET', '/v1/version'),
      await call('GET', '/embed.js'),
      await call('GET', '/v1/auth/me', { token: u.token }),
      await call('POST', '/v1/auth/logout', { token: (await t.register()).token }),
      await call('GET', '/v1/auth/me'),
      await call('GET', '/v1/nope'),
      await call('POST', '/v1/auth/register', { body: {} }),
      await call('POST', '/v1/auth/login', { raw: '{', headers: { 'Content-Type': 'application/json' } }),
      await call('POST', '/v1/auth/login', { raw: 'x', headers: { 'Content-Type': 'text/plain' } }),
    ]
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 204, 401, 404, 422, 400, 415])
    for (const res of responses) {
      const id = res.headers.get('x-request-id')
      expect(id).toBeTruthy()
      expect(id).toMatch(UUID)
    }
    // Ids are fresh per request.
    const ids = new Set(responses.map((r) => r.headers.get('x-request-id')))
    expect(ids.size).toBe(responses.length)
  })

  test('a rate-limited (429) response carries an X-Request-Id', async () => {
    const ip = '198.51.100.201'
    let last: TestResponse | undefined
    for (let i = 0; i < 6; i++) last = await call('POST', '/v1/auth/register', { ip, body: {} })
    expect(last!.status).toBe(429)
    expect(last!.headers.get('x-request-id')).toMatch(UUID)
  })

  test('a safe incoming X-Request-Id is echoed, on success and on error', async () => {
    for (const id of ['abc-123', 'req_42.retry-1', 'A'.repeat(128), '0f6b0f2c-1d1a-4b9a-9d5c-7f8d5a1e2b3c']) {
      const ok = await call('GET', '/v1/version', { headers: { 'X-Request-Id': id } })
      expect(ok.headers.get('x-request-id')).toBe(id)
      const err = await call('GET', '/v1/auth/me', { headers: { 'X-Request-Id': id } })
      expect(err.status).toBe(401)
      expect(err.headers.get('x-request-id')).toBe(id)
    }
  })

  test('an unsafe incoming X-Request-Id is replaced by a fresh one', async () => {
    for (const id of ['has space', '<script>alert(1)</script>', '../../etc/passwd', 'a;b', 'x'.repeat(129), 'ü-umlaut']) {
      const res = await call('GET', '/v1/version', { headers: { 'X-Request-Id': id } }).catch(() => null)
      if (!res) continue // a header value the Request constructor itself refuses
      const got = res.headers.get('x-request-id')
      expect(got).not.toBe(id)
      expect(got).toMatch(UUID)
      const err = await call('GET', '/v1/nope', { headers: { 'X-Request-Id': id } })
      expect(err.headers.get('x-request-id')).toMatch(UUID)
    }
  })

  test('a CORS preflight on /v1/auth/login answers the allow headers', async () => {
    const res = await call('OPTIONS', '/v1/auth/login', {
      headers: {
        Origin: 'https://app.example.org',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type, authorization',
      },
    })
    expect([200, 204]).toContain(res.status)
    const allowOrigin = res.headers.get('access-control-allow-origin')
    expect(['*', 'https://app.example.org']).toContain(allowOrigin ?? '(none)')
    expect(res.headers.get('access-control-allow-methods') ?? '').toContain('POST')
    const allowHeaders = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase()
    expect(allowHeaders).toContain('content-type')
    expect(allowHeaders).toContain('authorization')
    expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0)
  })

  test('a CORS preflight answer carries an X-Request-Id as well', async () => {
    const res = await call('OPTIONS', '/v1/auth/login', {
      headers: { Origin: 'https://app.example.org', 'Access-Control-Request-Method': 'POST', 'X-Request-Id': 'preflight-1' },
    })
    expect(res.headers.get('x-request-id')).toBe('preflight-1')
  })

  test('a cross-origin response exposes X-Request-Id and the rate-limit headers to the browser', async () => {
    const res = await call('POST', '/v1/auth/login', {
      headers: { Origin: 'https://app.example.org' },
      body: { email: 'x@example.com', password: 'whatever1' },
    })
    expect(res.status).toBe(401)
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase()
    for (const h of ['x-request-id', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
      expect(exposed).toContain(h)
    }
    expect(['*', 'https://app.example.org']).toContain(res.headers.get('access-control-allow-origin') ?? '(none)')
  })
})

describe('GET /v1/version', () => {
  test('answers every field of spec section 9', async () => {
    const res = await call('GET', '/v1/version')
    expect(res.status).toBe(200)
    const { service, components } = res.body
    expect(service.version).toBe(VERSION)
    expect(service.version).toMatch(/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/)
    expect(service.channel).toBe('stable')
    expect(typeof service.released_at).toBe('string')
    expect(service.released_at).toMatch(/^\d{4}-\d{2}-\d{2}/)
    expect(Number.isNaN(Date.parse(service.released_at))).toBe(false)
    expect(typeof service.min_supported_sdk).toBe('string')
    expect(typeof service.min_supported_embed).toBe('string')

    const embed = components.embed_js
    expect(embed.latest).toBe(VERSION)
    expect(embed.url).toBe('http://localhost/embed.js')
    expect(embed.versioned_url).toBe(`http://localhost/embed-v${VERSION}.js`)
    expect(embed.integrity).toMatch(/^sha384-[A-Za-z0-9+/]{64}$/)
    expect(() => new URL(embed.changelog)).not.toThrow()

    const admin = components.service_admin_js
    expect(admin.latest).toBe(VERSION)
    expect(admin.url).toBe('http://localhost/service-admin.js')
    expect(admin.integrity).toMatch(/^sha384-/)

    for (const name of ['sdk_js', 'sdk_astro', 'cli']) {
      const c = components[name]
      expect(typeof c.latest).toBe('string')
      expect(c.latest.length).toBeGreaterThan(0)
      expect(typeof c.npm).toBe('string')
      expect(c.npm.length).toBeGreaterThan(0)
    }
  })

  test('is never rate limited: 700 requests from one IP all answer 200', async () => {
    const ip = '198.51.100.7'
    const statuses = new Set<number>()
    for (let i = 0; i < 700; i++) {
      const res = await t.request('GET', '/v1/version', { ip })
      statuses.add(res.status)
      if (i === 699) {
        expect(res.headers.get('ratelimit-limit')).toBeNull()
        expect(res.headers.get('retry-after')).toBeNull()
      }
    }
    expect([...statuses]).toEqual([200])
  })

  test('has a Cache-Control header that lets caches keep it only briefly', async () => {
    const res = await call('GET', '/v1/version')
    const cc = res.headers.get('cache-control')
    expect(cc).toBeTruthy()
    expect(cc).not.toContain('no-store')
    const maxAges = [...(cc ?? '').matchAll(/(?:s-)?max-age=(\d+)/g)].map((m) => Number(m[1]))
    expect(maxAges.length).toBeGreaterThan(0)
    for (const age of maxAges) expect(age).toBeLessThanOrEqual(5)
  })

  test('an invalid release channel makes loadConfig throw', () => {
    expect(() => loadConfig({ SERVICE_RELEASE_CHANNEL: 'nightly' })).toThrow(ConfigError)
    expect(() => loadConfig({ SERVICE_RELEASE_CHANNEL: 'Stable' })).toThrow()
    for (const c of ['pre-alpha', 'alpha', 'beta', 'stable']) {
      expect(loadConfig({ SERVICE_RELEASE_CHANNEL: c }).releaseChannel).toBe(c as never)
    }
    expect(loadConfig({}).releaseChannel).toBe('stable')
  })

  test('an invalid PUBLIC_URL makes loadConfig throw', () => {
    expect(() => loadConfig({ PUBLIC_URL: 'not a url' })).toThrow(ConfigError)
    expect(() => loadConfig({ PUBLIC_URL: 'ftp://cms.example.com' })).toThrow(ConfigError)
    expect(loadConfig({ PUBLIC_URL: 'https://cms.example.com/' }).publicUrl).toBe('https://cms.example.com')
  })
})

describe('embed scripts', () => {
  test('GET /embed.js, /embed-v<version>.js and /service-admin.js answer JavaScript for any origin', async () => {
    for (const path of SCRIPT_PATHS) {
      for (const headers of [{}, { Origin: 'https://some-site.example' }] as Record<string, string>[]) {
        const res = await call('GET', path, { headers })
        expect(res.status).toBe(200)
        expect(res.headers.get('content-type')).toMatch(/^(application|text)\/javascript/)
        expect(res.headers.get('access-control-allow-origin')).toBe('*')
        expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin')
        expect(res.text).toContain(VERSION)
        expect(res.text).not.toContain('__VERSION__')
      }
    }
  })

  test('the in-page editing bridge stays small: at most 6 KB gzipped', async () => {
    const admin = await call('GET', '/service-admin.js')
    expect(Bun.gzipSync(Buffer.from(admin.text)).length).toBeLessThanOrEqual(6 * 1024)
  })

  test('their sha384 equals the integrity announced in /version', async () => {
    const version = await call('GET', '/v1/version')
    const embed = await call('GET', '/embed.js')
    const versioned = await call('GET', `/embed-v${VERSION}.js`)
    const admin = await call('GET', '/service-admin.js')
    expect(sha384(embed.text)).toBe(version.body.components.embed_js.integrity)
    expect(sha384(versioned.text)).toBe(version.body.components.embed_js.integrity)
    expect(sha384(admin.text)).toBe(version.body.components.service_admin_js.integrity)
    expect(embed.text).toBe(versioned.text)
  })

  test('the scripts are served at the paths /version announces', async () => {
    const version = await call('GET', '/v1/version')
    for (const url of [
      version.body.components.embed_js.url,
      version.body.components.embed_js.versioned_url,
      version.body.components.service_admin_js.url,
    ]) {
      const res = await call('GET', new URL(url).pathname)
      expect(res.status).toBe(200)
    }
  })

  test('the versioned script is cached for long, the unversioned ones briefly', async () => {
    const versioned = await call('GET', `/embed-v${VERSION}.js`)
    expect(versioned.headers.get('cache-control')).toContain('immutable')
    const plain = await call('GET', '/embed.js')
    expect(plain.headers.get('cache-control')).not.toContain('immutable')
  })

  test('OPTIONS on the scripts answers 204', async () => {
    for (const path of SCRIPT_PATHS) {
      const res = await call('OPTIONS', path, {
        headers: { Origin: 'https://some-site.example', 'Access-Control-Request-Method': 'GET' },
      })
      expect(res.status).toBe(204)
      expect(['*', 'https://some-site.example']).toContain(res.headers.get('access-control-allow-origin') ?? '(none)')
      expect(res.headers.get('access-control-allow-methods') ?? '').toContain('GET')
      const bare = await call('OPTIONS', path)
      expect(bare.status).toBe(204)
    }
  })

  test('the scripts are not rate limited', async () => {
    for (let i = 0; i < 650; i++) {
      const res = await t.request('GET', '/embed.js', { ip: '198.51.100.8' })
      if (res.status !== 200) throw new Error(`request ${i} answered ${res.status}`)
    }
  })
})

describe('configured instance (PUBLIC_URL, beta channel, restricted CORS)', () => {
  let c: TestApp
  beforeAll(async () => {
    c = await testApp(
      { publicUrl: 'https://cms.example.com' },
      { SERVICE_RELEASE_CHANNEL: 'beta', CORS_ORIGINS: 'https://admin.example.com' },
    )
  })
  afterAll(async () => {
    await c?.close()
  })

  test('SERVICE_RELEASE_CHANNEL=beta is reported as the channel', async () => {
    const res = await c.request('GET', '/v1/version')
    expect(res.body.service.channel).toBe('beta')
  })

  test('PUBLIC_URL is used for the script URLs in /version', async () => {
    const res = await c.request('GET', '/v1/version', { headers: { Host: 'internal:8080' } })
    expect(res.body.components.embed_js.url).toBe('https://cms.example.com/embed.js')
    expect(res.body.components.embed_js.versioned_url).toBe(`https://cms.example.com/embed-v${VERSION}.js`)
    expect(res.body.components.service_admin_js.url).toBe('https://cms.example.com/service-admin.js')
  })

  test('the management API answers CORS only to the configured origins', async () => {
    const allowed = await c.request('OPTIONS', '/v1/auth/login', {
      headers: { Origin: 'https://admin.example.com', 'Access-Control-Request-Method': 'POST' },
    })
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://admin.example.com')
    const other = await c.request('OPTIONS', '/v1/auth/login', {
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' },
    })
    const got = other.headers.get('access-control-allow-origin')
    expect(got === null || got === 'https://admin.example.com').toBe(true)
  })

  test('the public scripts and /version stay readable from any origin', async () => {
    const script = await c.request('GET', '/embed.js', { headers: { Origin: 'https://evil.example' } })
    expect(script.headers.get('access-control-allow-origin')).toBe('*')
    const version = await c.request('GET', '/v1/version', { headers: { Origin: 'https://evil.example' } })
    expect(['*', 'https://evil.example']).toContain(version.headers.get('access-control-allow-origin') ?? '(none)')
  })
})

describe('unexpected errors', () => {
  test('an unexpected error answers 500 internal_error with the request id and no internals', async () => {
    const broken = await testApp()
    try {
      const u = await broken.register()
      // A table gone from under the service: an error no route expects (a closed or unreachable database is 503
      // database_unavailable instead, test/database-outage.test.ts).
      await broken.kernel.db.query('drop table memberships, users cascade')
      const res = await broken.request('GET', '/v1/spaces', { token: u.token, headers: { 'X-Request-Id': 'boom-1' } })
      expect(res.status).toBe(500)
      expect(res.headers.get('content-type')).toContain('application/json')
      expect(Object.keys(res.body).sort()).toEqual(['error', 'message', 'request_id'])
      expect(res.body.error).toBe('internal_error')
      expect(typeof res.body.message).toBe('string')
      expect(res.body.request_id).toBe('boom-1')
      expect(res.headers.get('x-request-id')).toBe('boom-1')
      expect(res.text).not.toMatch(/pglite|postgres|select |drizzle|\bat .*:\d+|\.ts\b|stack|closed|ended/i)

      const anon = await broken.request('POST', '/v1/auth/login', { body: { email: u.user.email, password: 'whatever1' } })
      expect(anon.status).toBe(500)
      expect(anon.body.error).toBe('internal_error')
      expect(anon.body.request_id).toMatch(UUID)
      expect(anon.body.request_id).toBe(anon.headers.get('x-request-id'))
      errors.push(res, anon)
    } finally {
      await broken.close()
    }
  })

  test('no error body ever contains a stack trace or source paths', () => {
    expect(errors.length).toBeGreaterThan(20)
    for (const res of errors) {
      expect(res.text).not.toMatch(/\n\s+at /)
      expect(res.text).not.toMatch(/\/work\/|node_modules|\.ts:\d+/)
      expect(res.text.toLowerCase()).not.toContain('"stack"')
      if (res.text) expect(typeof res.body.error).toBe('string')
    }
  })
})

describe('GC pacer', () => {
  test('collects on a tick only once enough requests were served since the last collection', async () => {
    const { GcPacer } = await import('../src/kernel/gc-pacer')
    let collections = 0
    const pacer = new GcPacer(100, 3, () => collections++, 0.3, () => 0)
    expect(pacer.tick()).toBe(false) // idle: never collected by the pacer
    pacer.count()
    pacer.count()
    expect(pacer.tick()).toBe(false)
    pacer.count()
    expect(pacer.tick()).toBe(true)
    expect(collections).toBe(1)
    expect(pacer.tick()).toBe(false) // the count starts again
    expect(collections).toBe(1)
  })

  test('collects on a tick after a busy interval even with few requests (heavy requests: cold search loads)', async () => {
    const { GcPacer } = await import('../src/kernel/gc-pacer')
    let collections = 0
    let cpu = 0
    const pacer = new GcPacer(100, 1000, () => collections++, 0.3, () => cpu)
    cpu += 29_000 // 29 ms of CPU in a 100 ms interval: not busy enough
    expect(pacer.tick()).toBe(false)
    cpu += 30_000
    expect(pacer.tick()).toBe(true)
    expect(collections).toBe(1)
    expect(pacer.tick()).toBe(false) // nothing spent since
    pacer.count()
    cpu += 100_000
    expect(pacer.tick()).toBe(true)
    expect(collections).toBe(2)
  })

  test('the collector it calls (bun:jsc edenGC) exists in this Bun', async () => {
    const { edenGC } = await import('bun:jsc')
    expect(typeof edenGC()).toBe('number')
  })
})

describe('X-Content-Type-Options: nosniff', () => {
  test('on JSON answers of every kind: the Elysia path, errors, the fast path (Story read, search, DOM overlay)', async () => {
    const u = await t.register()
    const space = (await t.createSpace(u.token)).slug
    await t.request('POST', `/v1/spaces/${space}/components`, { token: u.token, body: { name: 'hero', schema: { headline: { type: 'text' } } } })
    const story = await t.request('POST', `/v1/spaces/${space}/stories`, {
      token: u.token,
      body: { name: 'Home', slug: 'home', content: { type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline: 'Hi' }] } },
    })
    await t.request('POST', `/v1/spaces/${space}/stories/${story.body.data.uuid}/publish`, { token: u.token })
    const answers = [
      await t.request('GET', '/v1/version'),
      await t.request('GET', `/v1/spaces/${space}`, { token: u.token }),
      await t.request('GET', '/v1/no-such-route'),
      await t.request('GET', `/v1/spaces/${space}`),
      await t.request('POST', '/v1/auth/login', { raw: '{', headers: { 'Content-Type': 'application/json' } }),
      await t.request('GET', `/v1/cdn/${space}/stories/home`),
      await t.request('GET', `/v1/cdn/${space}/stories/home`), // from memory, on the fast path
      await t.request('GET', `/v1/cdn/${space}/stories/home?lang=en`),
      await t.request('GET', `/v1/cdn/${space}/search?q=home`),
      await t.request('GET', `/v1/cdn/${space}/dom-overlay?path=/`),
      await t.request('GET', `/v1/cdn/${space}/dom-overlay?path=/`),
      await t.request('GET', '/openapi.json'),
    ]
    for (const res of answers) expect([res.status, res.headers.get('x-content-type-options')]).toEqual([res.status, 'nosniff'])
  })
})

describe('TRUSTED_PROXIES', () => {
  test('a wildcard is refused at start, naming what to set instead', () => {
    for (const value of ['*', '127.0.0.1,*', '0.0.0.0/0', '::/0']) {
      let error: unknown = null
      try {
        loadConfig({ TRUSTED_PROXIES: value })
      } catch (err) {
        error = err
      }
      expect(error).toBeInstanceOf(ConfigError)
      expect(String((error as Error).message)).toContain('X-Forwarded-For')
      expect(String((error as Error).message)).toContain('TRUSTED_PROXIES=127.0.0.1')
    }
    expect(() => loadConfig({ TRUSTED_PROXIES: 'proxy.example' })).toThrow(ConfigError)
    expect(() => loadConfig({ TRUSTED_PROXIES: '10.0.0.0/33' })).toThrow(ConfigError)
    expect(loadConfig({ TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8, fd00::/8' }).trustedProxies).toEqual(['127.0.0.1', '10.0.0.0/8', 'fd00::/8'])
  })
})
