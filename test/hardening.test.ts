/**
 * The request boundary against the inputs that once broke it (one test per finding of the hostile-input review); the
 * generic sweep over every route is test/fuzz.test.ts.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createRuntime } from '../src/app'
import { createKernel } from '../src/kernel/kernel'
import { type TestApp, testApp } from './helpers/app'
import { cpuTimer } from './helpers/cpu'

setDefaultTimeout(60_000)

let t: TestApp
let owner: string
let space: string
let story: { uuid: string }
let hookId: number

const json = (raw: string) => ({ raw, headers: { 'Content-Type': 'application/json' } })

beforeAll(async () => {
  t = await testApp({ outboundAllowPrivate: true })
  owner = (await t.register()).token
  space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })).slug
  await t.request('POST', `/v1/spaces/${space}/components`, { token: owner, body: { name: 'hero', schema: { headline: { type: 'text' } } } })
  const s = await t.request('POST', `/v1/spaces/${space}/stories`, {
    token: owner,
    body: { name: 'Home', slug: 'home', content: { type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline: 'Home' }] } },
  })
  story = s.body.data
  const hook = await t.request('POST', `/v1/spaces/${space}/webhooks`, {
    token: owner,
    body: { label: 'h', url: 'http://127.0.0.1:9/x', events: ['story.published'] },
  })
  hookId = hook.body.data.id
}, 60_000)

afterAll(async () => {
  await t?.close()
})

const expectError = (r: { status: number; body: any; headers: Headers }, status: number, code: string) => {
  expect({ status: r.status, error: r.body?.error }).toEqual({ status, error: code })
  expect(typeof r.body.message).toBe('string')
  expect(r.headers.get('content-type')).toContain('application/json')
}

describe('deep and malformed JSON', () => {
  test('a 5,000-deep value answers 400 invalid_json in the error shape, anonymously too', async () => {
    const r = await t.request('POST', '/v1/auth/login', json(`{"email":${'['.repeat(5000)}${']'.repeat(5000)},"password":"x"}`))
    expectError(r, 400, 'invalid_json')
    expect(r.body.message).toContain('64 levels')
  })

  test('a 100,000-deep body answers at once', async () => {
    // CPU time, not wall time: on a loaded machine a cheap request can wait for a core (test/helpers/cpu.ts).
    const cpu = cpuTimer()
    const r = await t.request('PUT', `/v1/spaces/${space}/components/hero`, { token: owner, ...json(`{"display_name":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`) })
    expectError(r, 400, 'invalid_json')
    expect(cpu.ms()).toBeLessThan(1000)
  })

  test('64 levels are parsed (and then validated), 65 are not; bytes that are not UTF-8 are refused', async () => {
    const nested = (levels: number) => `{"email":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)},"password":"x"}`
    expectError(await t.request('POST', '/v1/auth/login', json(nested(64))), 422, 'validation_failed')
    expectError(await t.request('POST', '/v1/auth/login', json(nested(65))), 400, 'invalid_json')
    const bytes = new Uint8Array([...new TextEncoder().encode('{"display_name":"'), 0xff, 0xfe, ...new TextEncoder().encode('"}')])
    const r = await t.request('PUT', `/v1/spaces/${space}/components/hero`, { token: owner, raw: bytes, headers: { 'Content-Type': 'application/json' } })
    expectError(r, 400, 'invalid_json')
  })
})

describe('NUL bytes and lone surrogates', () => {
  const cases: [string, string, string, () => string, string][] = [
    ['login e-mail', 'POST', '/v1/auth/login', () => '{"email":"a\\u0000@example.com","password":"x"}', 'email'],
    ['register name', 'POST', '/v1/auth/register', () => '{"email":"n@example.com","password":"long enough","name":"A\\u0000"}', 'name'],
    ['Space name', 'PATCH', '', () => '{"name":"\\ud800x"}', 'name'],
    ['token name', 'POST', '/tokens', () => '{"name":"t\\u0000","role":"viewer"}', 'name'],
    ['blueprint name', 'POST', '/components', () => '{"name":"c\\udc00"}', 'name'],
    ['Story content field', 'PUT', '/stories/:uuid', () => '{"content":{"type":"doc","blocks":[{"component":"hero","_uid":"h1","headline":"\\u0000"}]}}', 'content/blocks/0/headline'],
    ['webhook label', 'PATCH', '/webhooks/:hook', () => '{"label":"l\\u0000"}', 'label'],
    ['a key', 'PATCH', '', () => '{"na\\u0000me":"x"}', 'na\u0000me'],
  ]
  for (const [what, method, suffix, body, field] of cases) {
    test(`in a ${what}: 422 naming the field`, async () => {
      const path = suffix.startsWith('/v1') ? suffix : `/v1/spaces/${space}${suffix.replace(':uuid', story.uuid).replace(':hook', String(hookId))}`
      const r = await t.request(method, path, { token: owner, ...json(body()) })
      expectError(r, 422, 'validation_failed')
      expect(Object.keys(r.body.errors)).toEqual([field])
    })
  }

  test('in a query value: 422 naming the parameter; in a path segment: 404', async () => {
    const q = await t.request('GET', `/v1/spaces/${space}/stories?q=%00`, { token: owner })
    expectError(q, 422, 'validation_failed')
    expect(Object.keys(q.body.errors)).toEqual(['q'])
    for (const path of [`/v1/spaces/%00`, `/v1/spaces/${space}/components/%00`, `/v1/spaces/${space}/tokens/a%00b`, `/v1/spaces/${space}/locales/d%00e`]) {
      expectError(await t.request(path.includes('tokens') || path.includes('locales') ? 'DELETE' : 'GET', path, { token: owner }), 404, 'not_found')
    }
  })
})

describe('path parameters and query numbers', () => {
  test('a version number that is not a positive integer names no version: 404', async () => {
    for (const n of ['1.5', '1e300', '%20', '0', '-1', '99999999999']) {
      expectError(await t.request('GET', `/v1/spaces/${space}/stories/${story.uuid}/versions/${n}`, { token: owner }), 404, 'not_found')
    }
  })

  test('page, per_page, depth and limit out of range or not integers: 422 naming the parameter', async () => {
    const cases: [string, string][] = [
      [`/v1/spaces/${space}/stories?page=0`, 'page'],
      [`/v1/spaces/${space}/stories?page=-1`, 'page'],
      [`/v1/spaces/${space}/stories?page=1.5`, 'page'],
      [`/v1/spaces/${space}/stories?page=Infinity`, 'page'],
      [`/v1/spaces/${space}/stories?per_page=0`, 'per_page'],
      [`/v1/spaces/${space}/stories/tree?depth=0`, 'depth'],
      [`/v1/spaces/${space}/stories/tree?page=-1`, 'page'],
      [`/v1/spaces/${space}/stories/${story.uuid}/children?depth=1.5`, 'depth'],
      [`/v1/spaces/${space}/stories/${story.uuid}/versions?page=0`, 'page'],
      [`/v1/spaces/${space}/webhooks/${hookId}/deliveries?limit=1.5`, 'limit'],
      [`/v1/spaces/${space}/webhooks/${hookId}/deliveries?limit=0`, 'limit'],
      [`/v1/cdn/${space}/search?q=x&per_page=0`, 'per_page'],
    ]
    for (const [path, param] of cases) {
      const r = await t.request('GET', path, { token: owner })
      expect({ path, status: r.status, keys: Object.keys(r.body?.errors ?? {}) }).toEqual({ path, status: 422, keys: [param] })
    }
  })
})

describe('strict bodies', () => {
  test('unknown properties are refused, not dropped', async () => {
    const r = await t.request('PATCH', `/v1/spaces/${space}`, { token: owner, body: { name: 'x', owner_id: 1 } })
    expectError(r, 422, 'validation_failed')
    expect(Object.keys(r.body.errors)).toEqual(['owner_id'])
  })

  test('a bulk request without an action is 422 and publishes nothing; a token without a role is 422', async () => {
    const r = await t.request('POST', `/v1/spaces/${space}/stories/bulk`, { token: owner, body: { uuids: [story.uuid], parent_uuid: null } })
    expectError(r, 422, 'validation_failed')
    expect((await t.request('GET', `/v1/spaces/${space}/stories/${story.uuid}`, { token: owner })).body.data.status).toBe('draft')
    expectError(await t.request('POST', `/v1/spaces/${space}/tokens`, { token: owner, body: { name: 'x' } }), 422, 'validation_failed')
  })

  test('a blueprint schema of the wrong type is refused and the stored one kept', async () => {
    for (const schema of [1, true, [], 'x', null]) {
      const r = await t.request('PUT', `/v1/spaces/${space}/components/hero`, { token: owner, body: { schema } })
      expect({ schema, status: r.status }).toEqual({ schema, status: 422 })
    }
    const got = await t.request('GET', `/v1/spaces/${space}/components/hero`, { token: owner })
    expect(Object.keys(got.body.data.schema)).toEqual(['headline'])
  })

  test('non-object bodies are refused where an object is expected, and save nothing', async () => {
    const before = (await t.request('GET', `/v1/spaces/${space}/stories/${story.uuid}`, { token: owner })).body.data.version_no
    for (const raw of ['[]', '"s"', '123', 'true', 'null']) {
      for (const [method, path] of [
        ['PATCH', `/v1/spaces/${space}`],
        ['PUT', `/v1/spaces/${space}/stories/${story.uuid}`],
        ['PUT', `/v1/spaces/${space}/components/hero`],
        ['PATCH', `/v1/spaces/${space}/webhooks/${hookId}`],
      ]) {
        const r = await t.request(method, path, { token: owner, ...json(raw) })
        expect({ method, path, raw, status: r.status }).toEqual({ method, path, raw, status: 422 })
      }
    }
    expect((await t.request('GET', `/v1/spaces/${space}/stories/${story.uuid}`, { token: owner })).body.data.version_no).toBe(before)
  })

  test('expected_version_no must be a JSON integer in range', async () => {
    for (const v of ['"1"', '1e300', '1.5', '0']) {
      const r = await t.request('PUT', `/v1/spaces/${space}/stories/${story.uuid}`, { token: owner, ...json(`{"name":"Home","expected_version_no":${v}}`) })
      expect({ v, status: r.status }).toEqual({ v, status: 422 })
    }
  })
})

describe('a listening server', () => {
  test('never serves a development error page, answers the error shape, and closes idle and trickling connections', async () => {
    const kernel = await createKernel({ ...t.config, httpIdleTimeoutSeconds: 2 }, { database: t.kernel.db, clock: t.clock, migrate: false })
    const runtime = createRuntime(kernel)
    const server = runtime.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 20, idleTimeout: 2 })
    const port = server.port!
    try {
      const base = `http://127.0.0.1:${port}`
      const r = await fetch(`${base}/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: `{"email":${'['.repeat(5000)}${']'.repeat(5000)}}` })
      expect(r.status).toBe(400)
      expect(r.headers.get('content-type')).toContain('application/json')

      // Dot segments are resolved before routing (RFC 3986; Bun does it for request.url): the route, its parameters
      // and the response all see the same normalised path, so a request can never be routed as one Space and served
      // as another.
      const raw = await rawRequest(port, `GET /v1/cdn/${space}/stories/%2e%2e/%2e%2e/other/stories/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
      expect(raw.split('\r\n')[0]).toContain('404')

      const idle = await closedAfter(port, 'GET /v1/version HTTP/1.1\r\nHost: x\r\n\r\n', null)
      // Closed within the idle timeout (2 s) plus the server's sweep interval; how early depends on where in that
      // sweep the connection started, so there is no lower bound to check.
      expect(idle).toBeLessThan(6000)
      const trickle = await closedAfter(port, 'POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n', '{')
      expect(trickle).toBeLessThan(8000)
    } finally {
      server.stop(true)
      await runtime.close()
    }
  }, 30_000)
})

async function rawRequest(port: number, text: string): Promise<string> {
  let out = ''
  const done = Promise.withResolvers<void>()
  const sock = await Bun.connect({
    hostname: '127.0.0.1',
    port,
    socket: { data: (_s, d) => void (out += new TextDecoder().decode(d)), close: () => done.resolve(), error: () => done.resolve() },
  })
  sock.write(text)
  // The server closes the connection (Connection: close): wait for that, with a bound generous enough for a loaded machine.
  await Promise.race([done.promise, Bun.sleep(30_000)])
  sock.end()
  return out
}

/** Ms until the server closes a connection that sent `first` and then (if `drip`) one byte a second. */
async function closedAfter(port: number, first: string, drip: string | null): Promise<number> {
  const t0 = performance.now()
  let closed = -1
  const sock = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {}, close: () => void (closed = performance.now() - t0) } })
  sock.write(first)
  while (closed < 0 && performance.now() - t0 < 15_000) {
    await Bun.sleep(500)
    if (drip && closed < 0) sock.write(drip)
  }
  sock.end()
  return closed < 0 ? Number.POSITIVE_INFINITY : closed
}
