import { eq } from 'drizzle-orm'
import { apiTokens, memberships, users } from '../../src/kernel/tables'
import { createRuntime, type Runtime } from '../../src/app'
import { type Config, loadConfig } from '../../src/config'
import { ManualClock } from '../../src/kernel/clock'
import { createKernel, type Kernel } from '../../src/kernel/kernel'
import type { Logger } from '../../src/kernel/logger'
import type { Module } from '../../src/kernel/module'
import { MODULES } from '../../src/modules'
import { searchModule } from '../../src/modules/search'
import { freshDatabase } from './db'

export interface TestResponse<T = any> {
  status: number
  headers: Headers
  body: T
  text: string
}

export interface RequestOptions {
  body?: unknown
  /** Sent verbatim instead of JSON.stringify(body). */
  raw?: RequestInit['body']
  token?: string
  headers?: Record<string, string>
  /** Client IP (sent as X-Forwarded-For; tests trust loopback as a proxy). Random per request by default. */
  ip?: string
}

let ipCounter = 0
const nextIp = () => {
  ipCounter++
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`
}

export type TestApp = Awaited<ReturnType<typeof testApp>>

/**
 * Test apps hash passwords with argon2id at a small cost (1 MiB, one pass) instead of the 64 MiB and two passes a
 * service uses: the suites sign up thousands of users, and at full cost the hashing was about a third of their CPU.
 * test/password-hash.test.ts checks the service's own cost (the environment cannot go below OWASP's floor).
 */
export const TEST_PASSWORD_HASH = { memoryCost: 1024, timeCost: 1 }

/** A whole app on a fresh database, driven through app.handle(new Request(...)). */
export async function testApp(
  overrides: Partial<Config> = {},
  env: Record<string, string> = {},
  opts: { logger?: Logger; /** Another module list (e.g. MODULES plus a probe module). */ modules?: readonly Module[] } = {},
) {
  const tdb = await freshDatabase()
  const clock = new ManualClock(Date.now())
  // REGISTRATION_VERIFY=off: most tests sign up many users and need no mailbox (tests of confirmation turn it on).
  const config = loadConfig(
    { LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent', TRUSTED_PROXIES: '127.0.0.1', REGISTRATION_VERIFY: 'off', ...env },
    { databaseUrl: tdb.url, memoryDb: true, passwordHash: TEST_PASSWORD_HASH, ...overrides },
  )
  const kernel: Kernel = await createKernel(config, { clock, database: tdb.database, migrate: false, logger: opts.logger })
  const app: Runtime = createRuntime(kernel, { modules: opts.modules })
  await app.start()
  // Until the start-up search build has run, a search answers 503 index_warming: wait for it (a few ms on a fresh
  // database), as a load balancer waits for readiness, so no test races it.
  if ((opts.modules ?? MODULES).includes(searchModule)) await app.state(searchModule).registry.initialBuild

  async function request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { 'X-Forwarded-For': opts.ip ?? nextIp(), ...opts.headers }
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`
    let body: RequestInit['body'] | undefined = opts.raw
    if (opts.body !== undefined && body === undefined) {
      body = JSON.stringify(opts.body)
      headers['Content-Type'] ??= 'application/json'
    }
    const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }))
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = text ? JSON.parse(text) : null
    } catch {}
    return { status: res.status, headers: res.headers, body: parsed as T, text }
  }

  let userCounter = 0
  type Registered = { token: string; user: { id: number; email: string; name: string }; tenant: { id: number; name: string } }
  async function register(input: Partial<{ email: string; password: string; name: string; tenant_name: string }> = {}): Promise<Registered> {
    userCounter++
    const body = {
      email: `user${userCounter}-${Math.random().toString(36).slice(2, 8)}@example.com`,
      password: 'correct horse battery staple',
      name: `User ${userCounter}`,
      ...input,
    }
    const res = await request('POST', '/v1/auth/register', { body })
    // The first account of the service answers with its session; later ones 202 (the same for every address): with
    // REGISTRATION_VERIFY=off (the test default) the account exists, so sign in.
    if (res.status === 201) return res.body.data as Registered
    if (res.status !== 202) throw new Error(`register failed: ${res.status} ${res.text}`)
    const login = await request('POST', '/v1/auth/login', { body: { email: body.email, password: body.password } })
    if (login.status !== 200) throw new Error(`register: sign-in after sign-up failed: ${login.status} ${login.text}`)
    const me = await request('GET', '/v1/auth/me', { token: login.body.data.token })
    return { token: login.body.data.token, user: login.body.data.user, tenant: me.body.data.tenant }
  }

  let spaceCounter = 0
  async function createSpace(token: string, input: Record<string, unknown> = {}) {
    spaceCounter++
    const res = await request('POST', '/v1/spaces', {
      token,
      body: { slug: `space-${spaceCounter}-${Math.random().toString(36).slice(2, 6)}`, name: `Space ${spaceCounter}`, ...input },
    })
    if (res.status !== 201) throw new Error(`create space failed: ${res.status} ${res.text}`)
    return res.body.data as { slug: string; name: string; default_lang: string; locales: string[]; role: string }
  }

  async function spaceToken(token: string, space: string, role: 'viewer' | 'editor' | 'admin') {
    const res = await request('POST', `/v1/spaces/${space}/tokens`, { token, body: { name: `${role} token`, role } })
    if (res.status !== 201) throw new Error(`create token failed: ${res.status} ${res.text}`)
    return res.body.data as { id: string; token: string; role: string }
  }

  /**
   * A new user who is a member of `space` with `role` inside the tenant `tenantId` (there is no membership API yet:
   * the user and their token move into that tenant in the database). Returns the user's token.
   */
  async function member(tenantId: number, space: string, role: 'viewer' | 'editor' | 'admin') {
    const u = await register()
    const db = kernel.db.db
    await db.update(users).set({ tenantId }).where(eq(users.id, u.user.id))
    await db.update(apiTokens).set({ tenantId }).where(eq(apiTokens.userId, u.user.id))
    const [s] = await kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [space])
    if (!s) throw new Error(`member: no Space ${space}`)
    await db.insert(memberships).values({ userId: u.user.id, spaceId: s.id, role, createdAt: new Date() } as never)
    return u.token
  }

  /**
   * Another instance on the same database — its own kernel (bus, rate limiter, instance id) and module states (caches,
   * indexes) — as another process would be, as far as caching and events go.
   */
  async function instance(overrides: Partial<Config> = {}) {
    const k = await createKernel({ ...config, ...overrides }, { clock, database: tdb.database, migrate: false })
    const rt = createRuntime(k)
    await rt.start()
    return {
      kernel: k,
      runtime: rt,
      state: <S extends object>(m: Module<S>) => rt.state(m),
      async get(path: string, headers: Record<string, string> = {}) {
        const res = await rt.handle(new Request(`http://localhost${path}`, { headers: { 'X-Forwarded-For': nextIp(), ...headers } }))
        const text = await res.text()
        let body: any = null
        try {
          body = text ? JSON.parse(text) : null
        } catch {}
        return { status: res.status, headers: res.headers, text, body }
      },
      close: () => rt.close(),
    }
  }

  return {
    app,
    kernel,
    state: <S extends object>(m: Module<S>) => app.state(m),
    instance,
    clock,
    config,
    request,
    register,
    createSpace,
    spaceToken,
    member,
    async close() {
      await app.close()
      await tdb.drop()
    },
  }
}
