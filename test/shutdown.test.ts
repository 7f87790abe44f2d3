// Shutdown of a real `content-service serve` process (bin/content-service.ts) with event streams open: SIGTERM must
// end every stream (a last `shutdown` event, then the end of the stream) and the process must exit, also when a
// client stopped reading. On PGlite (default) the server runs in a temporary data folder; with TEST_DATABASE_URL on
// a fresh database of that server.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { SERVICE_COMMAND } from './helpers/command'

setDefaultTimeout(180_000)

/** Generous bounds: conditions are waited for, never timed. */
const START_BOUND_MS = 90_000
const EXIT_BOUND_MS = 60_000

const cleanups: (() => Promise<void> | void)[] = []
const children: Bun.Subprocess[] = []
const sockets: net.Socket[] = []

afterAll(async () => {
  for (const s of sockets) s.destroy()
  for (const c of children) if (c.exitCode === null && !c.killed) c.kill('SIGKILL')
  for (const c of cleanups) await c()
})

async function environment(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cs-shutdown-'))
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
  const base: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    SERVICE_WORKER_ENABLED: 'false',
    ...extra,
  }
  const serverUrl = process.env.TEST_DATABASE_URL
  if (!serverUrl) return base
  const name = `cs_shutdown_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  await admin.end()
  cleanups.push(async () => {
    const a = postgres(serverUrl, { max: 1, onnotice: () => {} })
    await a.unsafe(`drop database if exists ${name} with (force)`)
    await a.end()
  })
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return { ...base, DATABASE_URL: url.toString(), SERVICE_SECRET_KEY: '5a'.repeat(32) }
}

/** Starts `content-service serve` on a free port; resolves with its base URL once it listens. */
async function startServe(env: Record<string, string>) {
  const child = Bun.spawn([...SERVICE_COMMAND, 'serve', '--port', '0', '--host', '127.0.0.1'], { env, stdout: 'pipe', stderr: 'pipe' })
  children.push(child)
  const reader = child.stdout.getReader()
  let out = ''
  const deadline = Date.now() + START_BOUND_MS
  while (Date.now() < deadline) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`server exited before listening (code ${child.exitCode}): ${out}`)
    out += new TextDecoder().decode(value)
    const port = /listening on http:\/\/[^:]+:(\d+)/.exec(out)?.[1]
    if (port) {
      // Keep collecting its stdout (the shutdown line) so the child never blocks on a full pipe.
      const rest = (async () => {
        for (;;) {
          const r = await reader.read()
          if (r.done) return out
          out += new TextDecoder().decode(r.value)
        }
      })()
      return { child, port: Number(port), base: `http://127.0.0.1:${port}`, stdout: () => rest }
    }
  }
  throw new Error(`server did not listen in time: ${out}`)
}

/** Opens the stream on a raw socket, waits for its first bytes, then stops reading for good. */
function openUnreadStream(port: number, path: string, token: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`)
    })
    sockets.push(socket)
    let seen = ''
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('latin1')
      if (!seen.includes(': connected')) return
      socket.off('data', onData)
      socket.pause() // never read again: the server's writes pile up in the socket buffers
      if (!seen.startsWith('HTTP/1.1 200')) reject(new Error(`stream did not open: ${seen.slice(0, 200)}`))
      else resolve(socket)
    }
    socket.on('data', onData)
    socket.on('error', reject)
  })
}

/** A user with a Space, through the API. */
async function setUp(base: string) {
  const api = async (method: string, path: string, token: string | null, body: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    })
    const json = (await res.json()) as any
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
    return json.data
  }
  const { token } = await api('POST', '/v1/auth/register', null, { email: 'ops@example.com', password: 'correct horse battery staple', name: 'Ops' })
  const { slug } = await api('POST', '/v1/spaces', token, { slug: 'shutdown', name: 'Shutdown' })
  return { api, token: token as string, slug: slug as string }
}

test('SIGTERM ends every /live stream with a shutdown event and the process exits, although a client never reads', async () => {
  const server = await startServe(await environment())
  const { api, token, slug } = await setUp(server.base)
  await api('POST', `/v1/spaces/${slug}/components`, token, { name: 'page', is_root: true, schema: { title: { type: 'text' } } })
  const story = await api('POST', `/v1/spaces/${slug}/stories`, token, {
    name: 'Home',
    slug: 'home',
    content: { type: 'doc', blocks: [{ component: 'page', _uid: 'a', title: 'Hi' }] },
  })
  const livePath = `/v1/spaces/${slug}/stories/${story.uuid}/live`

  // One client that reads, one that stops reading after the first bytes.
  const reading = await fetch(`${server.base}${livePath}`, { headers: { Authorization: `Bearer ${token}` } })
  expect(reading.status).toBe(200)
  const reader = reading.body!.getReader()
  const decoder = new TextDecoder()
  let received = ''
  while (!received.includes(': connected')) {
    const r = await reader.read()
    if (r.done) throw new Error('the reading stream ended before it opened')
    received += decoder.decode(r.value, { stream: true })
  }
  await openUnreadStream(server.port, livePath, token)

  server.child.kill('SIGTERM')

  // The reading client gets the shutdown event, then the end of its stream.
  const ended = (async () => {
    for (;;) {
      const r = await reader.read()
      if (r.done) return true
      received += decoder.decode(r.value, { stream: true })
    }
  })().catch(() => false)
  const exited = await Promise.race([server.child.exited, Bun.sleep(EXIT_BOUND_MS).then(() => 'still running' as const)])
  expect(exited).toBe(0)
  expect(await ended).toBe(true)
  const shutdown = /event: shutdown\ndata: (.*)\n\n/.exec(received)
  expect(shutdown).not.toBeNull()
  expect(JSON.parse(shutdown![1])).toEqual({ reason: 'server_shutdown', retry_ms: 3000 })
  expect(await server.stdout()).toContain('SIGTERM received')
})

test('a request that never finishes is cut off once the drain window of SHUTDOWN_TIMEOUT is over, and the process exits', async () => {
  // The connection would otherwise stay for HTTP_IDLE_TIMEOUT (255 s here), far beyond the exit bound below.
  const server = await startServe(await environment({ SHUTDOWN_TIMEOUT: '2', HTTP_IDLE_TIMEOUT: '255' }))
  const { token, slug } = await setUp(server.base)
  // An upload that announces 1 MB and sends a few bytes: the route waits for the rest, which never comes.
  const socket = net.connect(server.port, '127.0.0.1')
  sockets.push(socket)
  socket.on('error', () => {})
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
  socket.write(
    `POST /v1/spaces/${slug}/assets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
      'Content-Type: multipart/form-data; boundary=XX\r\nContent-Length: 1000000\r\n\r\n--XX\r\n',
  )
  // Its headers are on the wire before this probe is sent: by the probe's answer the server has dispatched it.
  await new Promise<void>((resolve) => socket.write('', () => resolve()))
  const probe = await fetch(`${server.base}/v1/version`)
  expect(probe.status).toBe(200)

  server.child.kill('SIGTERM')
  const exited = await Promise.race([server.child.exited, Bun.sleep(EXIT_BOUND_MS).then(() => 'still running' as const)])
  expect(exited).toBe(0)
  await closed
})
