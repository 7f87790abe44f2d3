import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { defineModule } from '../../src/kernel/module'
import { cacheControls, etagMatches, etagOf, jsonAnswer, MAX_IF_NONE_MATCH } from '../../src/kernel/public-answer'
import { type ReadStep, readVary } from '../../src/kernel/read'
import { MODULES } from '../../src/modules'
import { type TestApp, testApp } from '../helpers/app'

setDefaultTimeout(60_000)

/**
 * The public answer of the kernel (src/kernel/public-answer.ts): the ETag of a body, the conditional GET with its
 * If-None-Match cap, the Cache-Control values from the configuration, the JSON answer with its charset, and `Vary`
 * built from what the read steps declare (kernel/read.ts `ReadStep.headers`).
 */

const get = (headers: Record<string, string> = {}) => new Request('http://localhost/x', { headers })

describe('the ETag of a body', () => {
  test('is a quoted 27-character base64url SHA-256 prefix, the same for a string and its UTF-8 bytes', () => {
    const e = etagOf('{"data":"grüße"}')
    expect(e).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
    expect(etagOf(new TextEncoder().encode('{"data":"grüße"}'))).toBe(e)
    expect(etagOf('{"data":"grüsse"}')).not.toBe(e)
  })
})

describe('the conditional GET', () => {
  const etag = etagOf('body')
  test('matches the ETag itself, its weak form, one of a list, and *; nothing else', () => {
    expect(etagMatches(etag, etag)).toBe(true)
    expect(etagMatches(`W/${etag}`, etag)).toBe(true)
    expect(etagMatches(`"a", ${etag} ,"b"`, etag)).toBe(true)
    expect(etagMatches(' * ', etag)).toBe(true)
    expect(etagMatches(null, etag)).toBe(false)
    expect(etagMatches('', etag)).toBe(false)
    expect(etagMatches(etag.slice(1, -1), etag)).toBe(false)
    expect(etagMatches('"other"', etag)).toBe(false)
  })

  test(`a header longer than ${MAX_IF_NONE_MATCH} characters never matches, even when it holds the ETag`, () => {
    const at = (n: number) => `${'"x",'.repeat(Math.ceil(n / 4))}`.slice(0, n - etag.length - 1) + `,${etag}`
    expect(at(MAX_IF_NONE_MATCH).length).toBe(MAX_IF_NONE_MATCH)
    expect(etagMatches(at(MAX_IF_NONE_MATCH), etag)).toBe(true)
    expect(etagMatches(at(MAX_IF_NONE_MATCH + 1), etag)).toBe(false)
    expect(etagMatches(`*${' '.repeat(MAX_IF_NONE_MATCH)}`, etag)).toBe(false)
  })
})

describe('the JSON answer', () => {
  const cc = cacheControls({ cdnMaxAge: 60, cdnStaleWhileRevalidate: 300 })

  test('Cache-Control values come from the configuration', () => {
    expect(cc).toEqual({ public: 'public, max-age=60, stale-while-revalidate=300', private: 'private, max-age=60', draft: 'private, no-store' })
  })

  test('200: JSON with charset, nosniff, ETag of the bytes sent, Cache-Control and Vary', async () => {
    const res = jsonAnswer(get(), { data: [1, 'ü'] }, { cacheControl: cc.public, vary: 'Accept-Language' })
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).toBe('{"data":[1,"ü"]}')
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('etag')).toBe(etagOf(text))
    expect(res.headers.get('cache-control')).toBe(cc.public)
    expect(res.headers.get('vary')).toBe('Accept-Language')
  })

  test('304 on a matching If-None-Match: no body, no Content-Type, the same ETag, Cache-Control and Vary', async () => {
    const etag = etagOf('{"data":1}')
    const res = jsonAnswer(get({ 'If-None-Match': `W/${etag}` }), { data: 1 }, { cacheControl: cc.private, vary: 'Accept-Language', headers: { 'Content-Language': 'de' } })
    expect(res.status).toBe(304)
    expect(await res.text()).toBe('')
    expect(res.headers.get('content-type')).toBeNull()
    expect(res.headers.get('etag')).toBe(etag)
    expect(res.headers.get('cache-control')).toBe(cc.private)
    expect(res.headers.get('vary')).toBe('Accept-Language')
    expect(res.headers.get('content-language')).toBe('de')
  })

  test('a capped-out If-None-Match gets the body', async () => {
    const etag = etagOf('{"data":1}')
    const res = jsonAnswer(get({ 'If-None-Match': `${'"x", '.repeat(1000)}${etag}` }), { data: 1 }, { cacheControl: cc.public })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ data: 1 })
  })
})

describe('Vary from the read steps’ declarations', () => {
  test('Accept-Language first, then each declared header once, in step order', () => {
    const a: ReadStep = { name: 'a', headers: [{ name: 'X-A' }] }
    const b: ReadStep = { name: 'b', headers: [{ name: 'x-a' }, { name: 'X-B' }] }
    expect(readVary([])).toBe('Accept-Language')
    expect(readVary([{ name: 'none' }, a, b])).toBe('Accept-Language, X-A, X-B')
  })
})

/**
 * A probe module, not part of the product: its read step reads `X-Probe-Variant` (declared, with the GraphQL argument
 * `variant`) and writes what it saw into the Story's meta. Stories, GraphQL and the overlay know it only through the
 * declaration.
 */
const probeStep: ReadStep = {
  name: 'probe',
  headers: [
    {
      name: 'X-Probe-Variant',
      argument: { name: 'variant', description: 'A probe variant (as the X-Probe-Variant header)', check: (v) => (/^[a-z]{1,8}$/.test(v) ? null : 'must be 1 to 8 letters') },
    },
  ],
  select(ctx) {
    const v = ctx.req.request.headers.get('x-probe-variant')
    if (v) ctx.keyParts.push(`probe:${v}`)
    ctx.decisions.probe = v
  },
  vary: (request) => request.headers.get('x-probe-variant') ?? '',
  transform(ctx, draft) {
    draft.contentJson = JSON.stringify({ ...JSON.parse(draft.contentJson), probe: ctx.decisions.probe ?? null })
  },
}
const probeModule = defineModule({ name: 'probe', readSteps: () => [probeStep] })

describe('a read step’s declared header, on every public surface that runs the steps', () => {
  let t: TestApp
  let space: string
  let owner: string
  const VARY = 'Accept-Language, X-Service-Segment, X-Probe-Variant'

  beforeAll(async () => {
    t = await testApp({}, {}, { modules: [...MODULES, probeModule] })
    owner = (await t.register()).token
    space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en'] })).slug
    const r = await t.request('POST', `/v1/spaces/${space}/stories`, { token: owner, body: { name: 'Hello', slug: 'hello' } })
    expect(r.status).toBe(201)
    expect((await t.request('POST', `/v1/spaces/${space}/stories/${r.body.data.uuid}/publish`, { token: owner })).status).toBe(200)
  })
  afterAll(async () => {
    await t?.close()
  })

  test('the Story read, the list and its 304 carry it in Vary; the header selects the body', async () => {
    const plain = await t.request('GET', `/v1/cdn/${space}/stories/hello`)
    expect(plain.status).toBe(200)
    expect(plain.headers.get('vary')).toBe(VARY)
    expect(plain.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(plain.body.data.content.probe).toBeNull()
    const b = await t.request('GET', `/v1/cdn/${space}/stories/hello`, { headers: { 'X-Probe-Variant': 'blue' } })
    expect(b.body.data.content.probe).toBe('blue')
    expect(b.headers.get('etag')).not.toBe(plain.headers.get('etag'))
    const nm = await t.request('GET', `/v1/cdn/${space}/stories/hello`, { headers: { 'X-Probe-Variant': 'blue', 'If-None-Match': b.headers.get('etag')! } })
    expect(nm.status).toBe(304)
    expect(nm.headers.get('vary')).toBe(VARY)
    expect((await t.request('GET', `/v1/cdn/${space}/stories`)).headers.get('vary')).toBe(VARY)
  })

  test('the Story read past the If-None-Match cap answers the body', async () => {
    const plain = await t.request('GET', `/v1/cdn/${space}/stories/hello`)
    const long = `${'"x", '.repeat(1000)}${plain.headers.get('etag')}`
    expect((await t.request('GET', `/v1/cdn/${space}/stories/hello`, { headers: { 'If-None-Match': long } })).status).toBe(200)
    expect((await t.request('GET', `/v1/cdn/${space}/stories/hello`, { headers: { 'If-None-Match': plain.headers.get('etag')! } })).status).toBe(304)
  })

  test('GraphQL: Vary of a GET answer, and the declared argument stands in for the header (checked)', async () => {
    const q = encodeURIComponent(`{ story(space: "${space}", path: "hello", variant: "red") { content } }`)
    const r = await t.request('GET', `/v1/graphql?query=${q}`)
    expect(r.status).toBe(200)
    expect(r.body.data.story.content.probe).toBe('red')
    expect(r.headers.get('vary')).toBe(VARY)
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8')
    const bad = await t.request('POST', '/v1/graphql', { body: { query: `{ story(space: "${space}", path: "hello", variant: "RED!") { content } }` } })
    expect(bad.body.errors[0].extensions).toMatchObject({ code: 'validation_failed', errors: { variant: ['must be 1 to 8 letters'] } })
    const sdl = (await t.request('GET', '/v1/graphql/schema.gql')).text
    expect(sdl).toContain('"""A probe variant (as the X-Probe-Variant header)"""\n    variant: String')
  })

  test('the overlay read carries it in Vary, and its OpenAPI description says so', async () => {
    const r = await t.request('GET', `/v1/cdn/${space}/dom-overlay?path=/`)
    expect(r.status).toBe(200)
    expect(r.headers.get('vary')).toBe(VARY)
    const doc = (await t.request('GET', '/v1/openapi.json')).body
    expect(doc.paths['/v1/cdn/{space}/dom-overlay'].get.description).toContain(`\`Vary: ${VARY}\``)
    expect(doc.paths['/v1/cdn/{space}/stories/{path}'].get.description).toContain(`\`Vary: ${VARY}\``)
  })
})

describe('drifts converged on the strictest variant', () => {
  let t: TestApp
  let space: string
  let owner: string
  beforeAll(async () => {
    t = await testApp()
    owner = (await t.register()).token
    space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en'] })).slug
  })
  afterAll(async () => {
    await t?.close()
  })

  test('an asset original answers the body past the If-None-Match cap, 304 within it', async () => {
    const bytes = new Uint8Array(2048)
    bytes.set(new TextEncoder().encode('%PDF-1.7\n'))
    const fd = new FormData()
    fd.append('file', new Blob([bytes], { type: 'application/pdf' }), 'menu.pdf')
    const up = await t.request('POST', `/v1/spaces/${space}/assets`, { token: owner, raw: fd })
    expect(up.status).toBe(201)
    const path = `/v1/cdn/${space}/assets/${up.body.data.uuid}`
    const etag = (await t.request('GET', path)).headers.get('etag')!
    expect((await t.request('GET', path, { headers: { 'If-None-Match': etag } })).status).toBe(304)
    expect((await t.request('GET', path, { headers: { 'If-None-Match': `${'"x", '.repeat(1000)}${etag}` } })).status).toBe(200)
  })

  test('public product and event lists answer JSON with its charset', async () => {
    for (const path of [`/v1/cdn/${space}/products`, `/v1/cdn/${space}/events`]) {
      const r = await t.request('GET', path)
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(r.headers.get('vary')).toBe('Accept-Language')
      expect((await t.request('GET', path, { headers: { 'If-None-Match': r.headers.get('etag')! } })).status).toBe(304)
    }
  })
})
