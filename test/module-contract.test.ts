import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { Elysia, t as tb } from 'elysia'
import { createRuntime } from '../src/app'
import { ScopedCache } from '../src/kernel/cache'
import { createKernel } from '../src/kernel/kernel'
import { defineModule } from '../src/kernel/module'
import { MODULES } from '../src/modules'
import { spacesModule } from '../src/modules/spaces'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(30_000)

/**
 * What a module gets by declaration (kernel/module.ts): public CORS for its anonymous paths and headers, and a cache
 * the runtime keeps fresh from the events it names. The probe module below is not part of the product.
 */
let loads = 0
const probeModule = defineModule({
  name: 'probe',
  setup: (kernel) => ({
    cache: new ScopedCache<number, number>({
      name: 'probe',
      scopeOf: (spaceId) => spaceId,
      idOf: String,
      load: async () => ++loads,
      now: () => kernel.clock.ms(),
      maxBytes: 1 << 16,
      sizeOf: () => 8,
      invalidateOn: { 'space.updated': (e) => e.spaceId },
    }),
  }),
  caches: (self) => [self.cache],
  routes: () =>
    new Elysia().get('/probe-public', ({ set }) => {
      set.headers['x-probe'] = 'yes'
      return { ok: true }
    }, { response: tb.Object({ ok: tb.Boolean() }) }),
  publicCors: { paths: ['/v1/probe-public'], exposeHeaders: ['X-Probe'] },
  // Anonymous routes naming a Space: the guards' publicSpace macro resolves it (the spaces module provides the lookup).
  publicRoutes: ({ guards }) =>
    new Elysia({ prefix: '/cdn/:space' })
      .use(guards)
      .get('/probe-space', ({ space, origin }) => ({ id: space.id, slug: space.slug, name: space.name, origin }), {
        publicSpace: true,
        params: tb.Object({ space: tb.String() }),
      })
      .get('/probe-thing', ({ space }) => ({ slug: space.slug }), {
        publicSpace: { notFound: 'Thing', headers: { 'Cache-Control': 'private, no-store' } },
        params: tb.Object({ space: tb.String() }),
        query: tb.Object({ n: tb.Optional(tb.String({ maxLength: 3 })) }),
      }),
})

let t: TestApp
beforeAll(async () => {
  // Management routes open to one origin only: public paths must then answer `*` because they are declared public.
  t = await testApp({ corsOrigins: ['https://admin.example'] }, {}, { modules: [...MODULES, probeModule] })
}, 120_000)
afterAll(async () => {
  await t?.close()
})

const FOREIGN = { Origin: 'https://elsewhere.example' }

describe('public CORS is declared by the modules that own the paths and headers', () => {
  test('a module-declared path answers any origin and exposes the module-declared header', async () => {
    const r = await t.request('GET', '/v1/probe-public', { headers: FOREIGN })
    expect(r.status).toBe(200)
    expect(r.headers.get('access-control-allow-origin')).toBe('*')
    expect((r.headers.get('access-control-expose-headers') ?? '').toLowerCase()).toContain('x-probe')
  })

  test("the product's own declarations: GraphQL, the embed scripts and X-Service-Segment", async () => {
    const gql = await t.request('GET', '/v1/graphql?query=%7B__typename%7D', { headers: FOREIGN })
    expect(gql.headers.get('access-control-allow-origin')).toBe('*')
    const exposed = (gql.headers.get('access-control-expose-headers') ?? '').toLowerCase()
    for (const h of ['etag', 'x-request-id', 'x-service-segment', 'retry-after', 'ratelimit-limit']) expect(exposed).toContain(h)
    const script = await t.request('GET', '/embed.js', { headers: FOREIGN })
    expect(script.headers.get('access-control-allow-origin')).toBe('*')
    const preflight = await t.request('OPTIONS', '/v1/cdn/some-space/stories/home', {
      headers: { ...FOREIGN, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-service-segment' },
    })
    expect((preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase()).toContain('x-service-segment')
    // Management routes stay closed to origins not in CORS_ORIGINS.
    const mgmt = await t.request('GET', '/v1/spaces', { headers: FOREIGN })
    expect(mgmt.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('a declared cache is wired by the runtime', () => {
  test('the events its invalidateOn names drop it on commit; a resync clears it', async () => {
    const owner = await t.register()
    const slug = (await t.createSpace(owner.token)).slug
    const [row] = await t.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [slug])
    const cache = t.state(probeModule).cache
    const first = await cache.get(row.id)
    expect(cache.get(row.id)).toBe(first)
    expect((await t.request('PATCH', `/v1/spaces/${slug}`, { token: owner.token, body: { name: 'Renamed' } })).status).toBe(200)
    const second = await cache.get(row.id)
    expect(second).not.toBe(first)
    expect(cache.get(row.id)).toBe(second)
    t.kernel.bus.resync()
    expect(cache.get(row.id)).toBeInstanceOf(Promise)
  })
})

describe('the public side resolves a Space through one macro (publicSpace)', () => {
  test('a live Space resolves to {space, origin}; unknown, archived and malformed ones are 404 in the shared shape', async () => {
    const owner = await t.register()
    const live = await t.createSpace(owner.token, { name: 'Probe Space' })
    const ok = await t.request('GET', `/v1/cdn/${live.slug}/probe-space`)
    expect(ok.status).toBe(200)
    expect(ok.body).toMatchObject({ slug: live.slug, name: 'Probe Space', origin: 'http://localhost' })
    expect(typeof ok.body.id).toBe('number')

    const archived = await t.createSpace(owner.token)
    expect((await t.request('GET', `/v1/cdn/${archived.slug}/probe-space`)).status).toBe(200)
    expect((await t.request('POST', `/v1/spaces/${archived.slug}/archive`, { token: owner.token })).status).toBe(200)
    for (const slug of ['no-such-space', archived.slug, 'NOT A SLUG']) {
      const r = await t.request('GET', `/v1/cdn/${encodeURIComponent(slug)}/probe-space`)
      expect(r.status).toBe(404)
      expect(r.body).toEqual({ error: 'not_found', message: 'Space not found.' })
      expect(r.headers.get('cache-control')).toBe('no-store')
    }
  })

  test('a route names what its 404 says and carries, and still validates before the lookup', async () => {
    const r = await t.request('GET', '/v1/cdn/no-such-space/probe-thing')
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ error: 'not_found', message: 'Thing not found.' })
    expect(r.headers.get('cache-control')).toBe('private, no-store')
    // Invalid input is 422 whatever the Space: the lookup runs after validation.
    expect((await t.request('GET', '/v1/cdn/no-such-space/probe-thing?n=toolong')).status).toBe(422)
  })

  test('one module provides the resolver: two are refused, and a publicSpace route without one fails to build', async () => {
    const twice = defineModule({ name: 'second-spaces', setup: () => ({}), publicSpaceResolver: () => ({ get: () => null }) })
    const k1 = await createKernel(t.config, { clock: t.clock, database: t.kernel.db, migrate: false })
    try {
      expect(() => createRuntime(k1, { modules: [spacesModule, twice] })).toThrow(/publicSpaceResolver/)
    } finally {
      await k1.close()
    }
    const k2 = await createKernel(t.config, { clock: t.clock, database: t.kernel.db, migrate: false })
    try {
      expect(() => createRuntime(k2, { modules: [probeModule] })).toThrow(/publicSpaceResolver/)
    } finally {
      await k2.close()
    }
  })
})
