/**
 * Shared set-up of the admin app's browser tests: the whole runtime behind Bun.serve, Debian's Chromium driven by
 * playwright-core, users signed in per browser context (their token in that context's sessionStorage), the API as the
 * test's own client, and axe-core in a page.
 */
import { expect } from 'bun:test'
import { join } from 'node:path'
import type { Server } from 'bun'
import { eq } from 'drizzle-orm'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { apiTokens, memberships, users } from '../../src/kernel/tables'
import type { Config } from '../../src/config'
import { type TestApp, testApp } from '../helpers/app'
import { launchChromium } from '../helpers/browser'

export { CHROMIUM, hasChromium, warnNoChromium } from '../helpers/browser'

export const TOKEN_KEY = 'content-service.token'

export interface AdminHarness {
  t: TestApp
  origin: string
  browser: Browser
  /** The API as the test's own client. */
  call(method: string, path: string, token: string | null, body?: unknown): Promise<{ status: number; headers: Headers; body: any }>
  /** A browser context signed in with `token`; page errors and unexpected dialogs are collected in `errors`. */
  signedIn(token: string): Promise<{ context: BrowserContext; page: Page; errors: string[] }>
  close(): Promise<void>
}

/**
 * `env`: more configuration (SMTP_URL of a sink); `config`: overrides of the parsed configuration (outboundAllowPrivate). `publicUrl`: the server's own origin is PUBLIC_URL, the base of
 * mailed links (the server listens first, so its port is known).
 */
export async function startAdmin(opts: { env?: Record<string, string>; publicUrl?: boolean; config?: Partial<Config> } = {}): Promise<AdminHarness> {
  let app: TestApp | null = null
  const server: Server<undefined> = Bun.serve({ port: 0, hostname: '127.0.0.1', development: false, idleTimeout: 0, fetch: (request, s) => app!.app.fetch(request, s) })
  const origin = `http://127.0.0.1:${server.port}`
  const t = (app = await testApp({ ...opts.config, ...(opts.publicUrl ? { publicUrl: origin } : {}) }, opts.env ?? {}))
  const browser = await launchChromium()
  const contexts: BrowserContext[] = []
  return {
    t,
    origin,
    browser,
    async call(method, path, token, body) {
      const res = await fetch(`${origin}${path}`, {
        method,
        headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await res.text()
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null }
    },
    async signedIn(token) {
      const context = await browser.newContext({ baseURL: origin, viewport: { width: 1280, height: 900 } })
      contexts.push(context)
      await context.addInitScript(([key, value]) => sessionStorage.setItem(key, value), [TOKEN_KEY, token] as const)
      const page = await context.newPage()
      const errors: string[] = []
      page.on('pageerror', (e) => errors.push(String(e)))
      page.on('dialog', (d) => {
        errors.push(`unexpected dialog: ${d.message()}`)
        void d.dismiss()
      })
      return { context, page, errors }
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => {})
      await browser.close().catch(() => {})
      server.stop(true)
      await t.close()
    },
  }
}

/**
 * A new user named `name`, member of `space` with `role` (moved into the Space's tenant in the database, as
 * testApp().member does). Returns the user's token and id.
 */
export async function memberNamed(t: TestApp, tenantId: number, space: string, role: 'viewer' | 'editor' | 'admin', name: string) {
  const u = await t.register({ name })
  const db = t.kernel.db.db
  await db.update(users).set({ tenantId }).where(eq(users.id, u.user.id))
  await db.update(apiTokens).set({ tenantId }).where(eq(apiTokens.userId, u.user.id))
  const [s] = await t.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [space])
  if (!s) throw new Error(`memberNamed: no Space ${space}`)
  await db.insert(memberships).values({ userId: u.user.id, spaceId: s.id, role, createdAt: new Date() } as never)
  return { token: u.token, id: u.user.id }
}

/** ADMIN_SCREENSHOTS=<folder>: screens as PNGs, for the docs. */
export async function shot(p: Page, name: string) {
  const dir = process.env.ADMIN_SCREENSHOTS
  if (dir) await p.screenshot({ path: join(dir, `${name}.png`), fullPage: true })
}

/** Polls until `read()` gives `want` (the UI updates after an answer arrives), or fails with the last value. */
export async function until<T>(read: () => Promise<T>, want: T, ms = 15_000): Promise<void> {
  const end = Date.now() + ms
  let last = await read()
  while (last !== want && Date.now() < end) {
    await Bun.sleep(50)
    last = await read()
  }
  expect(last as unknown).toBe(want as unknown)
}

type Heard = { heard?: string[] }

/**
 * From now on, records each message the page's live region (`data-testid="announcer"`) shows, in order: two quick
 * announcements may follow each other before the test reads the region, and both must have been there.
 */
export async function listen(p: Page): Promise<void> {
  await p.evaluate(() => {
    const region = document.querySelector('[data-testid="announcer"]')
    if (!region) throw new Error('no live region')
    const heard: string[] = []
    ;(window as Heard).heard = heard
    let last = region.textContent ?? ''
    new MutationObserver(() => {
      const now = region.textContent ?? ''
      if (now && now !== last) heard.push(now)
      last = now
    }).observe(region, { childList: true, subtree: true, characterData: true })
  })
}

/** The messages recorded since `listen`. */
export const heard = (p: Page): Promise<string[]> => p.evaluate(() => (window as Heard).heard ?? [])

/** axe-core in the page: the serious and critical violations (rule id and the first element of each). */
export async function axeViolations(p: Page): Promise<string[]> {
  const source = await Bun.file(join(import.meta.dir, '..', '..', 'node_modules', 'axe-core', 'axe.min.js')).text()
  // Evaluated through the DevTools protocol, not an inline <script>: the page's CSP stays as served.
  await p.evaluate(source)
  const result = await p.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe
    const r = await axe.run(document, { resultTypes: ['violations'] })
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, target: v.nodes[0]?.target.join(' ') }))
  })
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) at ${v.target}`)
}

const ADMIN_SRC = join(import.meta.dir, '..', '..', 'admin', 'src')

/** Every screen's own catalog: `features/<feature>/messages.ts` exporting `en` and `de`. */
export async function featureCatalogs(): Promise<{ file: string; en: Record<string, string>; de: Record<string, string> }[]> {
  const files = [...new Bun.Glob('features/*/messages.ts').scanSync({ cwd: ADMIN_SRC })].sort()
  return Promise.all(files.map(async (file) => ({ file, ...((await import(join(ADMIN_SRC, file))) as { en: Record<string, string>; de: Record<string, string> }) })))
}

