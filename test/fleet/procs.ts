// Processes of the service for the fleet and fault tests: `serve` and `worker` as separate processes (the built
// executable when SERVICE_BINARY names it, else `bun bin/content-service.ts`) on a fresh database of the Postgres
// server of TEST_DATABASE_URL, a round-robin proxy in front, and HTTP calls with a rotating client address.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { SERVICE_COMMAND } from '../helpers/command'

export const serverUrl = process.env.TEST_DATABASE_URL
/** Generous bounds: conditions are waited for, never timed. */
export const BOUND_MS = 120_000
export const CMD = SERVICE_COMMAND
export const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36'

export interface Proc {
  child: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  /** `http://127.0.0.1:<port>/v1`; empty for a worker. */
  base: string
  port: number
  /** Everything the process wrote to standard error so far. */
  stderr(): string
}

export const sleep = (ms: number) => Bun.sleep(ms)
export const pct = (xs: number[], p: number) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : Number.NaN

let ipCounter = 0
/** A new client address per call (X-Forwarded-For; the instances trust 127.0.0.1 as a proxy). */
export const nextIp = () => `10.${(++ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, boundMs = BOUND_MS): Promise<T> {
  const deadline = Date.now() + boundMs
  let last: unknown
  for (;;) {
    try {
      const v = await probe()
      if (v !== undefined) return v
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`)
    await sleep(200)
  }
}

/** A fresh database on the test server; `drop()` removes it. */
export async function freshDatabase(prefix: string): Promise<{ url: string; sql: ReturnType<typeof postgres>; drop(): Promise<void> }> {
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`
  const admin = postgres(serverUrl!, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  await admin.end()
  const u = new URL(serverUrl!)
  u.pathname = `/${name}`
  const sql = postgres(u.toString(), { max: 2, onnotice: () => {} })
  return {
    url: u.toString(),
    sql,
    async drop() {
      await sql.end({ timeout: 1 })
      const a = postgres(serverUrl!, { max: 1, onnotice: () => {} })
      await a.unsafe(`drop database if exists ${name} with (force)`)
      await a.end()
    },
  }
}

/** What every process of a fleet shares. */
export function fleetEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    DATABASE_URL: databaseUrl,
    SERVICE_SECRET_KEY: '5a'.repeat(32),
    RATE_LIMIT_STORE: 'postgres',
    // The address visitors use, the same for every instance (links in answers, such as meta.beacon_url, name it).
    PUBLIC_URL: 'https://cms.example.test',
    TRUSTED_PROXIES: '127.0.0.1',
    SERVICE_OUTBOUND_ALLOW_PRIVATE: 'true',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'cs-fleet-')),
    ...extra,
  }
}

function collect(stream: ReadableStream<Uint8Array>): () => string {
  let text = ''
  void (async () => {
    const decoder = new TextDecoder()
    const reader = stream.getReader()
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      text += decoder.decode(value, { stream: true })
    }
  })().catch(() => {})
  return () => text
}

/** Starts `serve` on a free port; resolves once it listens and answers ready. */
export async function startServe(env: Record<string, string>): Promise<Proc> {
  const child = Bun.spawn([...CMD, 'serve', '--port', '0', '--host', '127.0.0.1'], { env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  const stderr = collect(child.stderr)
  const reader = child.stdout.getReader()
  let out = ''
  const deadline = Date.now() + BOUND_MS
  while (Date.now() < deadline) {
    const { value, done } = await reader.read()
    if (done) {
      await child.exited
      throw new Error(`serve exited before listening (${child.exitCode}): ${out}${stderr()}`)
    }
    out += new TextDecoder().decode(value)
    const port = /listening on http:\/\/[^:]+:(\d+)/.exec(out)?.[1]
    if (port) {
      void (async () => {
        for (;;) if ((await reader.read()).done) return
      })().catch(() => {})
      const base = `http://127.0.0.1:${port}/v1`
      // As a load balancer does: traffic once the instance is ready (migrations checked, search indexes built).
      while (Date.now() < deadline && (await fetch(`${base}/health/ready`).then((r) => r.status, () => 0)) !== 200) await sleep(20)
      return { child, base, port: Number(port), stderr }
    }
  }
  child.kill('SIGKILL')
  throw new Error(`serve did not listen: ${out}`)
}

export function startWorker(env: Record<string, string>): Proc {
  const child = Bun.spawn([...CMD, 'worker'], { env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  collect(child.stdout)
  return { child, base: '', port: 0, stderr: collect(child.stderr) }
}

/** Ends processes: SIGTERM, then SIGKILL for any still running after 20 s. */
export async function stopAll(procs: Proc[]) {
  for (const p of procs) if (p.child.exitCode === null && !p.child.killed) p.child.kill('SIGTERM')
  await Promise.race([Promise.all(procs.map((p) => p.child.exited)), sleep(20_000)])
  for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL')
}

/**
 * A round-robin proxy on 127.0.0.1 over the instances `backends()` returns at each request. Like a load balancer
 * with passive health checks, a request whose instance refuses the connection goes to the next one.
 */
export function startProxy(backends: () => Proc[]) {
  let next = 0
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 120,
    async fetch(request) {
      const url = new URL(request.url)
      const headers = new Headers(request.headers)
      headers.delete('accept-encoding')
      headers.delete('host')
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer()
      const list = backends()
      let lastError: unknown
      const first = next++
      for (let tries = 0; tries < list.length; tries++) {
        const target = list[(first + tries) % list.length]
        let res: Response
        try {
          res = await fetch(`http://127.0.0.1:${target.port}${url.pathname}${url.search}`, { method: request.method, headers, body, redirect: 'manual' })
        } catch (err) {
          lastError = err // refused or reset before an answer: the instance is gone; try the next one
          continue
        }
        const out = new Headers(res.headers)
        out.delete('content-encoding')
        out.delete('content-length')
        return new Response(await res.arrayBuffer(), { status: res.status, headers: out })
      }
      return new Response(`no instance answered: ${String(lastError)}`, { status: 502 })
    },
  })
  return { server, base: `http://127.0.0.1:${server.port}/v1` }
}

export interface Answer {
  status: number
  body: any
  text: string
  etag: string | null
  headers: Headers
}

export async function call(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; ip?: string; raw?: BodyInit; type?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { 'User-Agent': UA, 'X-Forwarded-For': opts.ip ?? nextIp() }
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json'
  if (opts.type) headers['Content-Type'] = opts.type
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: opts.raw ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined),
    signal: AbortSignal.timeout(BOUND_MS),
  })
  const text = await res.text()
  let body: any = null
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: res.status, body, text, etag: res.headers.get('etag'), headers: res.headers }
}

export const doc = (headline: string) => ({
  type: 'doc',
  blocks: [{ component: 'page', _uid: 'b1', headline, body: `lighthouse keeper story ${headline}` }],
})

/** A user, a Space `site` with the `page` blueprint, and `n` published Stories `page-0` … through `base`. */
export async function seedSite(base: string, n: number) {
  const reg = await call(base, 'POST', '/auth/register', { body: { email: 'fleet@example.com', password: 'a long password', name: 'Fleet' } })
  if (reg.status !== 201) throw new Error(`register: ${reg.status} ${reg.text}`)
  const token = reg.body.data.token as string
  const must = async (a: Promise<Answer>, status: number, what: string) => {
    const r = await a
    if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text}`)
    return r
  }
  await must(call(base, 'POST', '/spaces', { token, body: { slug: 'site', name: 'Site', locales: ['en'] } }), 201, 'space')
  await must(call(base, 'POST', '/spaces/site/components', { token, body: { name: 'page', schema: { headline: { type: 'text' }, body: { type: 'text' } } } }), 201, 'component')
  const stories: { uuid: string; slug: string; version: number; headline: string }[] = []
  for (let i = 0; i < n; i++) {
    const r = await must(call(base, 'POST', '/spaces/site/stories', { token, body: { name: `Page ${i}`, slug: `page-${i}`, content: doc(`v0-${i}`) } }), 201, 'story')
    stories.push({ uuid: r.body.data.uuid, slug: `page-${i}`, version: r.body.data.version_no, headline: `v0-${i}` })
  }
  return { token, stories }
}
