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
