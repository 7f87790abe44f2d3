// The disk under the embedded database fills up: a real `content-service serve` process whose DATA_DIR is a small
// tmpfs the test mounts (root only), filled with a file until Story saves no longer fit. Writes then answer 507
// `insufficient_storage` (never a 500), reads keep answering, and once space is freed writes work again; after a
// restart on the same folder every acknowledged Story is there. Runs on the embedded-database suite.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync, statfsSync, unlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SERVICE_COMMAND } from './helpers/command'

setDefaultTimeout(60_000)

const BOUND_MS = 90_000
const asRoot = process.getuid?.() === 0
const enabled = !process.env.TEST_DATABASE_URL && asRoot
if (!process.env.TEST_DATABASE_URL && !asRoot) console.error('\n!! not root: cannot mount a small tmpfs; the disk-full test is SKIPPED\n')

let mountDir = ''
let mounted = false
const children: Bun.Subprocess[] = []

async function run(...cmd: string[]) {
  const p = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe' })
  if ((await p.exited) !== 0) throw new Error(`${cmd.join(' ')}: ${await new Response(p.stderr).text()}`)
}

async function serve(dataDir: string) {
  const child = Bun.spawn([...SERVICE_COMMAND, 'serve', '--port', '0', '--host', '127.0.0.1'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', LOG_FORMAT: 'json', DATA_DIR: dataDir, SERVICE_WORKER_ENABLED: 'false' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  children.push(child)
  const reader = child.stdout.getReader()
  let out = ''
  const deadline = Date.now() + BOUND_MS
  while (Date.now() < deadline) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`server exited before listening: ${out}${await new Response(child.stderr).text()}`)
    out += new TextDecoder().decode(value)
    const port = /listening on http:\/\/[^:]+:(\d+)/.exec(out)?.[1]
    if (port) {
      void (async () => {
        for (;;) if ((await reader.read()).done) return
      })()
      const stderr = new Response(child.stderr).text()
      return { child, base: `http://127.0.0.1:${port}/v1`, stderr }
    }
  }
  throw new Error(`server did not listen: ${out}`)
}

async function call(base: string, method: string, path: string, token: string | null, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(BOUND_MS),
  })
  return { status: res.status, body: (await res.json()) as any }
}

/** Incompressible content (random base64), so each save really needs new pages on the disk. */
const noise = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('base64')
const doc = (headline: string) => ({ type: 'doc', blocks: [{ component: 'page', _uid: 'b1', headline }] })

describe.skipIf(!enabled)('the embedded database on a full disk', () => {
  beforeAll(async () => {
    mountDir = mkdtempSync(join(tmpdir(), 'cs-diskfull-'))
    await run('mount', '-t', 'tmpfs', '-o', 'size=160m,mode=0700', 'tmpfs', mountDir)
    mounted = true
  })

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
    await Promise.all(children.map((c) => c.exited))
    if (mounted) await run('umount', '-l', mountDir).catch(() => {})
    rmSync(mountDir, { recursive: true, force: true })
  })

  test('writes answer 507 while reads keep working; freed space brings writes back; nothing acknowledged is lost', async () => {
    const dataDir = join(mountDir, 'data')
    let server = await serve(dataDir)
    const reg = await call(server.base, 'POST', '/auth/register', null, { email: 'full@example.com', password: 'a long password', name: 'Full' })
    expect(reg.status).toBe(201)
    const token = reg.body.data.token as string
    expect((await call(server.base, 'POST', '/spaces', token, { slug: 'site', name: 'Site' })).status).toBe(201)
    expect((await call(server.base, 'POST', '/spaces/site/components', token, { name: 'page', schema: { headline: { type: 'text' } } })).status).toBe(201)
    const home = await call(server.base, 'POST', '/spaces/site/stories', token, { name: 'Home', slug: 'home', content: doc('home') })
    expect(home.status).toBe(201)
    expect((await call(server.base, 'POST', `/spaces/site/stories/${home.body.data.uuid}/publish`, token)).status).toBe(200)

    // Leave about 256 KB free, then save Stories of 300 KB of noise until one no longer fits.
    const filler = join(mountDir, 'filler')
    const free = Number(statfsSync(mountDir).bavail) * Number(statfsSync(mountDir).bsize)
    await run('fallocate', '-l', String(Math.max(0, free - 256 * 1024)), filler)
    const acknowledged = ['home']
    let refused: { status: number; body: any } | null = null
    for (let i = 0; i < 100 && !refused; i++) {
      const r = await call(server.base, 'POST', '/spaces/site/stories', token, { name: `Big ${i}`, slug: `big-${i}`, content: doc(noise(225_000)) })
      if (r.status === 201) acknowledged.push(`big-${i}`)
      else refused = r
    }
    expect(refused?.status).toBe(507)
    expect(refused?.body.error).toBe('insufficient_storage')

    // Reads keep working on a full disk.
    expect((await call(server.base, 'GET', '/spaces/site/stories', token)).status).toBe(200)
    expect((await call(server.base, 'GET', '/cdn/site/stories/home', null)).status).toBe(200)

    // Space freed: writes work again.
    unlinkSync(filler)
    const after = await call(server.base, 'POST', '/spaces/site/stories', token, { name: 'After', slug: 'after', content: doc('after') })
    expect(after.status).toBe(201)
    acknowledged.push('after')

    // A restart on the same folder opens it and finds every acknowledged Story.
    server.child.kill('SIGTERM')
    await server.child.exited
    expect(await server.stderr).toContain('database disk full')
    server = await serve(dataDir)
    const login = await call(server.base, 'POST', '/auth/login', null, { email: 'full@example.com', password: 'a long password' })
    expect(login.status).toBe(200)
    const list = await call(server.base, 'GET', '/spaces/site/stories?per_page=100', login.body.data.token)
    expect(list.status).toBe(200)
    expect(list.body.data.map((s: { slug: string }) => s.slug).sort()).toEqual([...acknowledged].sort())
    expect((await call(server.base, 'GET', '/cdn/site/stories/home', null)).status).toBe(200)
  })
})
