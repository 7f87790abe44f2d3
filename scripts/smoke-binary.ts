// The single-executable check (CI runs it): copy dist/content-service alone into an empty folder, start it, use it,
// stop it with SIGTERM, start it again on the same data folder and check the data survived.
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const binary = join(import.meta.dir, '..', 'dist', 'content-service')
if (!existsSync(binary)) {
  console.error('dist/content-service is missing: run `bun run build` first')
  process.exit(1)
}
const dir = mkdtempSync(join(tmpdir(), 'content-service-smoke-'))
copyFileSync(binary, join(dir, 'content-service'))
Bun.spawnSync(['chmod', '+x', join(dir, 'content-service')])

function freePort(): number {
  const s = Bun.serve({ port: 0, fetch: () => new Response() })
  const p = s.port!
  s.stop(true)
  return p
}

async function start(port: number) {
  // A clean environment: nothing from this checkout leaks in (no DATABASE_URL: the embedded default).
  const proc = Bun.spawn([join(dir, 'content-service'), 'serve', '--port', String(port), '--host', '127.0.0.1'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LOG_LEVEL: 'warn', HOME: dir },
    stdout: 'inherit',
    stderr: 'inherit',
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 300; i++) {
    try {
      const r = await fetch(`${base}/v1/version`)
      if (r.ok) return { proc, base }
    } catch {}
    if (proc.exitCode !== null) throw new Error(`the executable exited with ${proc.exitCode}`)
    await Bun.sleep(100)
  }
  proc.kill()
  throw new Error('the executable did not answer within 30 s')
}

/** Sends `request` verbatim on a new connection (fetch would set Host and Content-Length itself); the answer as text. */
function rawRequest(port: number, request: string): Promise<string> {
  const { connect } = require('node:net') as typeof import('node:net')
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request))
    let out = ''
    socket.on('data', (d: Buffer) => (out += d.toString('latin1')))
    socket.on('error', reject)
    socket.on('close', () => resolve(out))
  })
}

/** A tiny uncompressed PNG made by hand (the smoke test imports nothing from src/). */
function solidPng(width: number, height: number): Uint8Array {
  const { deflateSync } = require('node:zlib') as typeof import('node:zlib')
  const chunk = (type: string, body: Uint8Array) => {
    const out = new Uint8Array(12 + body.length)
    const dv = new DataView(out.buffer)
    dv.setUint32(0, body.length)
    out.set(new TextEncoder().encode(type), 4)
    out.set(body, 8)
    dv.setUint32(8 + body.length, Bun.hash.crc32(out.subarray(4, 8 + body.length)) >>> 0)
    return out
  }
  const ihdr = new Uint8Array(13)
  new DataView(ihdr.buffer).setUint32(0, width)
  new DataView(ihdr.buffer).setUint32(4, height)
  ihdr.set([8, 2, 0, 0, 0], 8)
  const raw = new Uint8Array((width * 3 + 1) * height)
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) raw.set([x * 4, y * 5, 128], y * (width * 3 + 1) + 1 + x * 3)
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', new Uint8Array(0))]
  return new Uint8Array(parts.flatMap((p) => [...p]))
}

function check(cond: unknown, what: string) {
  if (!cond) {
    console.error(`FAIL: ${what}`)
    process.exit(1)
  }
  console.log(`ok: ${what}`)
}

const port = freePort()
try {
  let t0 = performance.now()
  let { proc, base } = await start(port)
  check(true, `started alone from an empty folder in ${Math.round(performance.now() - t0)} ms`)
  check(existsSync(join(dir, 'data', 'PG_VERSION')), 'created its data folder ./data with an embedded database')
  const reg = await fetch(`${base}/v1/auth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: 'smoke@example.com', password: 'smoke-test-password', name: 'Smoke' }),
  })
  check(reg.status === 201, `register answers 201 (got ${reg.status})`)
  const { data } = (await reg.json()) as { data: { token: string } }
  const sp = await fetch(`${base}/v1/spaces`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${data.token}` },
    body: JSON.stringify({ slug: 'smoke', name: 'Smoke' }),
  })
  check(sp.status === 201, `create space answers 201 (got ${sp.status})`)
  // The HTTP layer of the executable: a short Host, a long GraphQL GET (the parser's limit is set at build time),
  // a Content-Length over every limit — the last two answered in the shared error shape, never an empty 431/413.
  const short = await rawRequest(port, 'GET /v1/version HTTP/1.1\r\nHost: web\r\nConnection: close\r\n\r\n')
  check(short.startsWith('HTTP/1.1 200'), `a short Host header (web) reaches the routes (got ${short.split('\r\n')[0]})`)
  const longQuery = `{__typename}${'+'.repeat(30_000)}`
  const gq = await fetch(`${base}/v1/graphql?query=${longQuery}`)
  check(gq.status === 200, `a 30 KB GraphQL GET query answers 200 (got ${gq.status})`)
  const huge = await rawRequest(port, 'GET /v1/version?q=' + 'a'.repeat(70_000) + ' HTTP/1.1\r\nHost: cms\r\nConnection: close\r\n\r\n')
  check(huge.startsWith('HTTP/1.1 414') && huge.includes('"uri_too_long"') && /x-request-id/i.test(huge), 'a 70 KB URL answers 414 in the error shape')
  const big = await rawRequest(port, 'POST /v1/auth/login HTTP/1.1\r\nHost: cms\r\nContent-Type: application/json\r\nContent-Length: 999999999999\r\n\r\n')
  check(big.startsWith('HTTP/1.1 413') && big.includes('"payload_too_large"') && /x-request-id/i.test(big), 'a Content-Length over every limit answers 413 in the error shape')
  // Assets: an upload, then WebP and AVIF variants — the transform Worker and the AVIF wasm must be inside the binary.
  const png = await new Bun.Image(solidPng(64, 48)).png().bytes()
  const fd = new FormData()
  fd.append('file', new Blob([png as BlobPart], { type: 'image/png' }), 'smoke.png')
  const up = await fetch(`${base}/v1/spaces/smoke/assets`, { method: 'POST', headers: { Authorization: `Bearer ${data.token}` }, body: fd })
  check(up.status === 201, `asset upload answers 201 (got ${up.status})`)
  const asset = ((await up.json()) as { data: { uuid: string } }).data
  for (const format of ['webp', 'avif'] as const) {
    const v = await fetch(`${base}/v1/cdn/smoke/assets/${asset.uuid}.${format}?w=32`)
    const bytes = new Uint8Array(await v.arrayBuffer())
    check(v.status === 200 && v.headers.get('content-type') === `image/${format}` && bytes.length > 0, `${format} variant answers 200 (got ${v.status})`)
  }
  proc.kill('SIGTERM')
  const code = await proc.exited
  check(code === 0, `SIGTERM stops it cleanly (exit ${code})`)

  t0 = performance.now()
  ;({ proc, base } = await start(port))
  check(true, `restarted on the same data folder in ${Math.round(performance.now() - t0)} ms`)
  const login = await fetch(`${base}/v1/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: 'smoke@example.com', password: 'smoke-test-password' }),
  })
  check(login.status === 200, 'the user survived the restart (login 200)')
  const token = ((await login.json()) as { data: { token: string } }).data.token
  const list = await fetch(`${base}/v1/spaces`, { headers: { Authorization: `Bearer ${token}` } })
  const spaces = ((await list.json()) as { data: { slug: string }[] }).data
  check(spaces.some((s) => s.slug === 'smoke'), 'the Space survived the restart')
  proc.kill('SIGTERM')
  await proc.exited
} finally {
  rmSync(dir, { recursive: true, force: true })
}
console.log('single-executable check passed')
