import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRuntime } from '../src/app'
import { loadConfig } from '../src/config'
import { createKernel } from '../src/kernel/kernel'
import { createLogger } from '../src/kernel/logger'
import { searchModule } from '../src/modules/search'
import { type TestApp, testApp } from './helpers/app'
import { freshDatabase } from './helpers/db'
import { SERVICE_COMMAND } from './helpers/command'

setDefaultTimeout(60_000)

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(async () => {
  await t?.close()
})

let n = 0
const unique = () => `${++n}-${Math.random().toString(36).slice(2, 6)}`
const body = (over: Record<string, unknown> = {}) => {
  const u = unique()
  return {
    email: `owner${u}@example.com`,
    password: 'correct horse battery staple',
    name: 'Olga Owner',
    tenant_name: 'Acme',
    space: { slug: `acme-${u}`, name: 'Acme Site' },
    ...over,
  }
}

async function counts() {
  const rows = await t.kernel.db.query<{ users: string; tenants: string; spaces: string; memberships: string; tokens: string }>(
    `select (select count(*) from users) as users, (select count(*) from tenants) as tenants, (select count(*) from spaces) as spaces,
            (select count(*) from memberships) as memberships, (select count(*) from api_tokens) as tokens`,
  )
  return Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, Number(v)]))
}

describe('POST /v1/onboard', () => {
  test('the first account of the service: user, Tenant, Space (admin) and a working token in one call; emits space.created', async () => {
    const b = body({ space: { slug: `shop-${unique()}`, name: 'Shop', default_lang: 'en', locales: ['en', 'de'] } })
    const r = await t.request('POST', '/v1/onboard', { body: b })
    expect(r.status).toBe(201)
    expect(r.body.data).toMatchObject({
      user: { email: b.email, name: 'Olga Owner' },
      tenant: { name: 'Acme' },
      space: { slug: b.space.slug, name: 'Shop', default_lang: 'en', locales: ['en', 'de'], role: 'admin' },
      sample_content: null,
      warnings: [],
    })
    const token = r.body.data.token
    const spaces = await t.request('GET', '/v1/spaces', { token })
    expect(spaces.body.data.map((s: any) => [s.slug, s.role])).toEqual([[b.space.slug, 'admin']])
    const me = await t.request('GET', '/v1/auth/me', { token })
    expect(me.body.data.tenant).toEqual(r.body.data.tenant)
    expect((await t.request('POST', '/v1/auth/login', { body: { email: b.email, password: b.password } })).status).toBe(200)
    const events = await t.kernel.db.query<{ type: string; payload: any }>(`select type, payload from events where type = 'space.created' order by id desc limit 1`)
    expect(events[0].payload.space.slug).toBe(b.space.slug)
  })

  test('a taken Space slug is 409 and leaves nothing behind; a taken e-mail answers as any sign-up (202) and makes nothing', async () => {
    const first = body()
    // Not the service's first account: 202 like a sign-up (REGISTRATION_VERIFY=off here: made at once).
    const made = await t.request('POST', '/v1/onboard', { body: first })
    expect(made.status).toBe(202)
    expect(made.body.data.confirmation).toBe('none')
    expect((await t.request('POST', '/v1/auth/login', { body: { email: first.email, password: first.password } })).status).toBe(200)
    const before = await counts()
    const slugTaken = await t.request('POST', '/v1/onboard', { body: body({ space: first.space }) })
    expect(slugTaken.status).toBe(409)
    expect(slugTaken.body.error).toBe('slug_taken')
    expect(await counts()).toEqual(before)
    const emailTaken = await t.request('POST', '/v1/onboard', { body: body({ email: first.email.toUpperCase() }) })
    expect(emailTaken.status).toBe(202)
    expect(emailTaken.body).toEqual(made.body)
    expect(await counts()).toEqual(before)
    // A slug taken by a Space made the ordinary way, too.
    const other = await t.register()
    const sp = await t.createSpace(other.token)
    const before2 = await counts()
    expect((await t.request('POST', '/v1/onboard', { body: body({ space: { slug: sp.slug, name: 'X' } }) })).status).toBe(409)
    expect(await counts()).toEqual(before2)
  })

  test('bad input is 422 naming the field and creates nothing', async () => {
    const before = await counts()
    const cases: [Record<string, unknown>, string][] = [
      [body({ email: 'not-an-address' }), 'email'],
      [body({ password: 'short' }), 'password'],
      [body({ space: { slug: 'Bad Slug', name: 'X' } }), 'space'],
      [body({ space: { slug: `ok-${unique()}`, name: 'X', default_lang: 'not a tag!' } }), 'default_lang'],
      [body({ sample_content: 'yes' }), 'sample_content'],
      [body({ extra: 1 }), ''],
    ]
    for (const [b, field] of cases) {
      const r = await t.request('POST', '/v1/onboard', { body: b })
      expect(r.status).toBe(422)
      if (field) expect(JSON.stringify(r.body.errors ?? {})).toContain(field)
    }
    const noSpace = body()
    delete (noSpace as any).space
    expect((await t.request('POST', '/v1/onboard', { body: noSpace })).status).toBe(422)
    expect(await counts()).toEqual(before)
  })

  test('obeys REGISTRATION like sign-up: closed answers 403 registration_closed', async () => {
    const closed = await testApp({ registration: 'closed' })
    try {
      const r = await closed.request('POST', '/v1/onboard', { body: body() })
      expect(r.status).toBe(403)
      expect(r.body.error).toBe('registration_closed')
      // As register: an invalid body is 422 (invited addresses may still sign up, so the body is read first).
      expect((await closed.request('POST', '/v1/onboard', { body: {} })).status).toBe(422)
      expect((await closed.request('POST', '/v1/auth/register', { body: {} })).status).toBe(422)
      expect(await closed.kernel.db.query('select id from users')).toEqual([])
    } finally {
      await closed.close()
    }
    const firstUser = await testApp({ registration: 'first-user' })
    try {
      expect((await firstUser.request('POST', '/v1/onboard', { body: body() })).status).toBe(201)
      const second = await firstUser.request('POST', '/v1/onboard', { body: body() })
      expect(second.status).toBe(403)
      expect(second.body.error).toBe('registration_closed')
    } finally {
      await firstUser.close()
    }
  })

  test('5 per 60 minutes per IP', async () => {
    const ip = '203.0.113.77'
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push((await t.request('POST', '/v1/onboard', { ip, body: { nope: true } })).status)
    expect(statuses.slice(0, 5).every((s) => s === 422)).toBe(true)
    expect(statuses[5]).toBe(429)
  })

  test('sample content: the CDN, search and GraphQL answer for the new Space at once, in every locale', async () => {
    const b = body({ space: { slug: `demo-${unique()}`, name: 'Demo Site', default_lang: 'en', locales: ['en', 'de', 'fr'] }, sample_content: true })
    const r = await t.request('POST', '/v1/onboard', { body: b })
    expect(r.status).toBe(202)
    const s = b.space.slug
    const session = await t.request('POST', '/v1/auth/login', { body: { email: b.email, password: b.password } })
    const token = session.body.data.token as string
    const components = await t.request('GET', `/v1/spaces/${s}/components`, { token })
    expect(components.body.data.map((c: any) => c.name).sort()).toEqual(['author', 'page', 'post', 'text_block'])
    const expected: Record<string, { home: string; post: string; word: string }> = {
      en: { home: 'Welcome to Demo Site', post: 'Hello world', word: 'hello' },
      de: { home: 'Willkommen bei Demo Site', post: 'Hallo Welt', word: 'hallo' },
      fr: { home: 'Bienvenue sur Demo Site', post: 'Bonjour le monde', word: 'bonjour' },
    }
    for (const [lang, e] of Object.entries(expected)) {
      const home = await t.request('GET', `/v1/cdn/${s}/stories/home?lang=${lang}`)
      expect(home.status).toBe(200)
      expect(home.body.data.lang).toBe(lang)
      expect(home.body.data.content.blocks[0].headline).toBe(e.home)
      // The datasource marker resolved from the sample datasource.
      expect(home.body.data.content.blocks[0].body[1].text).toBe('Content for every channel')
      const post = await t.request('GET', `/v1/cdn/${s}/stories/blog/hello-world?lang=${lang}`)
      expect(post.status).toBe(200)
      expect(post.body.data.content.blocks[0].headline).toBe(e.post)
      expect((await t.request('GET', `/v1/cdn/${s}/stories/authors/sample-author?lang=${lang}`)).status).toBe(200)

      const search = await t.request('GET', `/v1/cdn/${s}/search?q=${encodeURIComponent(e.word)}&lang=${lang}`)
      expect(search.status).toBe(200)
      expect(search.body.meta.total).toBeGreaterThanOrEqual(1)
      expect(JSON.stringify(search.body.data)).toContain('hello-world')

      const gql = await t.request('POST', '/v1/graphql', {
        body: { query: `query($s: String!, $l: String) { story(space: $s, path: "blog/hello-world", lang: $l) { lang name } }`, variables: { s, l: lang } },
      })
      expect(gql.status).toBe(200)
      expect(gql.body.errors).toBeUndefined()
      expect(gql.body.data.story).toEqual({ lang, name: e.post })
    }
    // The sample form takes submissions.
    const submit = await t.request('POST', `/v1/cdn/${s}/forms/contact`, { body: { _hp: '', data: { name: 'Ada', email: 'ada@example.com', message: 'Hi' } } })
    expect(submit.status).toBe(201)
    // The owner sees the content in the management API.
    const stories = await t.request('GET', `/v1/spaces/${s}/stories`, { token })
    expect(stories.status).toBe(200)
  })

  test('the request log keeps no client address for the onboard route (the daily-salted hash instead)', async () => {
    const lines: Record<string, unknown>[] = []
    const logged = await testApp({}, {}, { logger: createLogger('info', (line) => void lines.push(JSON.parse(line))) })
    try {
      const ip = '198.51.100.23'
      const r = await logged.request('POST', '/v1/onboard', { ip, body: body(), headers: { 'X-Request-Id': 'onboard-private' } })
      expect(r.status).toBe(201)
      const mine = () => lines.filter((l) => l.msg === 'request' && l.request_id === 'onboard-private')
      for (let waited = 0; mine().length === 0 && waited < 2000; waited += 10) await Bun.sleep(10)
      expect(mine()).toHaveLength(1)
      expect(mine()[0].ip).toMatch(/^[0-9a-f]{16}$/)
      expect(JSON.stringify(lines)).not.toContain(ip)
    } finally {
      await logged.close()
    }
  })
})

describe('content-service seed', () => {
  const run = (args: string[], env: Record<string, string>) => {
    const r = Bun.spawnSync([...SERVICE_COMMAND, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'silent', ...env } })
    return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() }
  }

  test('writes the sample content into an existing Space; the server then serves it', async () => {
    // On Postgres when TEST_DATABASE_URL is set (a fresh database), else on embedded PGlite in a temp DATA_DIR.
    const tdb = process.env.TEST_DATABASE_URL ? await freshDatabase() : null
    const dir = mkdtempSync(join(tmpdir(), 'cs-seed-'))
    const env: Record<string, string> = tdb ? { DATABASE_URL: tdb.url!, SERVICE_SECRET_KEY: 'c'.repeat(64) } : { DATA_DIR: join(dir, 'data') }
    const open = async () => {
      const kernel = await createKernel(loadConfig({ ...env, LOG_LEVEL: 'silent' }))
      const rt = createRuntime(kernel)
      await rt.start()
      await rt.state(searchModule).registry.initialBuild // searches answer 503 index_warming until then
      const call = async (method: string, path: string, b?: unknown, token?: string) => {
        const res = await rt.handle(
          new Request(`http://localhost${path}`, {
            method,
            headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
            body: b === undefined ? undefined : JSON.stringify(b),
          }),
        )
        return { status: res.status, body: (await res.json().catch(() => null)) as any }
      }
      return { rt, call }
    }
    try {
      // A Space made by onboarding without sample content; then the server stops (one owner of a data folder).
      let s = await open()
      const made = await s.call('POST', '/v1/onboard', {
        email: 'seed@example.com',
        password: 'correct horse battery staple',
        name: 'Seeder',
        tenant_name: 'Seeds',
        space: { slug: 'garden', name: 'Garden', locales: ['en', 'de'] },
      })
      expect(made.status).toBe(201)
      await s.rt.close()

      const r = run(['seed', '--space', 'garden'], env)
      expect(r.err).toBe('')
      expect(r.code).toBe(0)
      expect(r.out).toContain('seeded the Space "garden"')
      expect(run(['seed', '--space', 'no-such-space'], env).code).toBe(1)
      const again = run(['seed', '--space', 'garden'], env)
      expect(again.code).toBe(1)
      expect(again.err).toContain('garden')
      expect(run(['seed'], env).code).toBe(2)

      s = await open()
      try {
        for (const lang of ['en', 'de']) {
          const home = await s.call('GET', `/v1/cdn/garden/stories/home?lang=${lang}`)
          expect(home.status).toBe(200)
          expect(home.body.data.lang).toBe(lang)
        }
        const search = await s.call('GET', '/v1/cdn/garden/search?q=hallo&lang=de')
        expect(search.status).toBe(200)
        expect(search.body.meta.total).toBeGreaterThanOrEqual(1)
        const gql = await s.call('POST', '/v1/graphql', { query: '{ story(space: "garden", path: "blog/getting-started", lang: "en") { name } }' })
        expect(gql.body.data.story.name).toBe('Getting started')
      } finally {
        await s.rt.close()
      }
    } finally {
      if (tdb) await tdb.drop().catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)
})

describe('POST /v1/spaces/{space}/sample-content', () => {
  test('an admin fills an empty Space with the starter set; a second call, a Space with Stories or an editor are refused, nothing written', async () => {
    const owner = (await t.register()).token
    const space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })).slug
    const editor = (await t.spaceToken(owner, space, 'editor')).token
    const denied = await t.request('POST', `/v1/spaces/${space}/sample-content`, { token: editor })
    expect(denied.status).toBe(403)
    expect((await t.request('GET', `/v1/spaces/${space}/components`, { token: owner })).body.data).toEqual([])

    const r = await t.request('POST', `/v1/spaces/${space}/sample-content`, { token: owner })
    expect(r.status).toBe(201)
    expect(r.body.data).toMatchObject({ components: ['text_block', 'page', 'post', 'author'], locales: ['en', 'de'], forms: ['contact'], datasources: ['site_facts'] })
    expect(r.body.data.stories.length).toBe(6)
    const home = await t.request('GET', `/v1/cdn/${space}/stories/home?lang=de`)
    expect(home.status).toBe(200)
    expect(home.body.data.content.blocks[0].headline).toContain('Willkommen')

    const storiesBefore = (await t.request('GET', `/v1/spaces/${space}/stories?per_page=100`, { token: owner })).body.meta.total
    const again = await t.request('POST', `/v1/spaces/${space}/sample-content`, { token: owner })
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ error: 'conflict' })
    expect(again.body.message).toContain('6 Stories')
    expect((await t.request('GET', `/v1/spaces/${space}/stories?per_page=100`, { token: owner })).body.meta.total).toBe(storiesBefore)

    // Only blueprints in the way (no Story): still refused before anything is written.
    const other = (await t.createSpace(owner)).slug
    await t.request('POST', `/v1/spaces/${other}/components`, { token: owner, body: { name: 'post', is_root: true, schema: { x: { type: 'text' } } } })
    const blocked = await t.request('POST', `/v1/spaces/${other}/sample-content`, { token: owner })
    expect([blocked.status, blocked.body.message]).toEqual([409, expect.stringContaining('the blueprints post')])
    expect((await t.request('GET', `/v1/spaces/${other}/components`, { token: owner })).body.data.map((c: any) => c.name)).toEqual(['post'])
    expect((await t.request('POST', `/v1/spaces/no-such-space-x/sample-content`, { token: owner })).status).toBe(404)
  })
})
