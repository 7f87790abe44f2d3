import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pkg from '../package.json'
import { createRuntime } from '../src/app'
import { loadConfig } from '../src/config'
import { createKernel } from '../src/kernel/kernel'
import { freshDatabase } from './helpers/db'
import { SERVICE_COMMAND } from './helpers/command'

setDefaultTimeout(60_000)


function run(args: string[], env: Record<string, string> = {}, stdin?: string) {
  const r = Bun.spawnSync([...SERVICE_COMMAND, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'silent', ...env },
    stdin: stdin === undefined ? 'ignore' : Buffer.from(stdin),
  })
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() }
}

describe('content-service CLI', () => {
  test('--help lists every subcommand and the serve options', () => {
    const r = run(['--help'])
    expect(r.code).toBe(0)
    for (const word of ['serve', 'worker', 'migrate', 'version', 'reindex', 'user create', '--password-stdin', '--port', '--host', '--no-worker']) {
      expect(r.out).toContain(word)
    }
  })

  test('each subcommand has its own --help', () => {
    for (const cmd of ['serve', 'worker', 'migrate', 'version', 'reindex', 'user', 'assets']) {
      const r = run([cmd, '--help'])
      expect(r.code).toBe(0)
      expect(r.out).toContain(`content-service ${cmd}`)
    }
  })

  test('version prints the package version, the channel and the database mode', () => {
    const r = run(['version'], { SERVICE_RELEASE_CHANNEL: 'beta', DATA_DIR: '/nonexistent/cs' })
    expect(r.code).toBe(0)
    expect(r.out).toContain(`content-service ${pkg.version} (beta)`)
    expect(r.out).toContain('embedded PGlite in /nonexistent/cs')
  })

  test('an unknown command, an unknown option and a bad config value exit 2 with a message', () => {
    expect(run(['frobnicate']).code).toBe(2)
    const opt = run(['serve', '--colour'])
    expect(opt.code).toBe(2)
    expect(opt.err).toContain('--colour')
    const cfg = run(['version'], { SERVICE_RELEASE_CHANNEL: 'nightly' })
    expect(cfg.code).toBe(2)
    expect(cfg.err).toContain('SERVICE_RELEASE_CHANNEL')
  })

  test('worker refuses the embedded database', () => {
    const r = run(['worker'], { DATA_DIR: '/nonexistent/cs' })
    expect(r.code).toBe(2)
    expect(r.err).toContain('DATABASE_URL')
  })

  test('migrate creates the data folder, applies every migration with progress, and is idempotent', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cs-cli-'))
    try {
      // Progress goes through the logger (JSON lines when stdout is not a terminal).
      const first = run(['migrate'], { DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'info' })
      expect(first.code).toBe(0)
      expect(first.out).toMatch(/"applying migration 0000_init","migration":"0000_init","step":"1\/\d+"/)
      expect(first.out).toMatch(/applied \d+ migration\(s\)/)
      const again = run(['migrate'], { DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'info' })
      expect(again.code).toBe(0)
      expect(again.out).toContain('database up to date')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('user create makes accounts that log in while REGISTRATION=closed (--password-stdin, or a generated password printed once); user set-password replaces one', async () => {
    // On Postgres when TEST_DATABASE_URL is set (a fresh database), else on embedded PGlite in a temp DATA_DIR.
    const tdb = process.env.TEST_DATABASE_URL ? await freshDatabase() : null
    const dir = mkdtempSync(join(tmpdir(), 'cs-cli-user-'))
    const env: Record<string, string> = tdb
      ? { DATABASE_URL: tdb.url!, SERVICE_SECRET_KEY: 'a'.repeat(64), REGISTRATION: 'closed' }
      : { DATA_DIR: join(dir, 'data'), REGISTRATION: 'closed' }
    try {
      const a = run(['user', 'create', '--email', 'Admin@Example.com', '--name', 'Admin', '--tenant', 'Acme', '--password-stdin'], env, 'admin passphrase\n')
      expect(a.err).toBe('')
      expect(a.code).toBe(0)
      expect(a.out).toContain('<admin@example.com>')
      expect(a.out).toContain('"Acme"')
      expect(a.out).not.toContain('admin passphrase')

      const b = run(['user', 'create', '--email', 'second@example.com', '--name', 'Second'], env)
      expect(b.code).toBe(0)
      const generated = b.out.trim().split('\n').pop()!
      expect(generated).toMatch(/^[A-Za-z0-9_-]{24}$/)

      const dup = run(['user', 'create', '--email', 'ADMIN@example.com', '--name', 'Again', '--password-stdin'], env, 'another passphrase')
      expect(dup.code).toBe(1)
      expect(dup.err).toContain('already exists')
      const bad = run(['user', 'create', '--email', 'not-an-address', '--name', 'X', '--password-stdin'], env, 'short')
      expect(bad.code).toBe(1)
      expect(bad.err).toContain('--email')
      expect(bad.err).toContain('--password')
      expect(run(['user', 'create', '--email', 'x@example.com'], env).code).toBe(2)
      expect(run(['user', 'remove'], env).code).toBe(2)

      // The operator's reset: set-password on a third account.
      expect(run(['user', 'create', '--email', 'third@example.com', '--name', 'Third', '--password-stdin'], env, 'third passphrase').code).toBe(0)
      const set = run(['user', 'set-password', '--email', 'THIRD@example.com', '--password-stdin'], env, 'operator set passphrase\n')
      expect(set.err).toBe('')
      expect(set.code).toBe(0)
      expect(set.out).toContain('<third@example.com>')
      const unknown = run(['user', 'set-password', '--email', 'nobody@example.com', '--password-stdin'], env, 'operator set passphrase')
      expect(unknown.code).toBe(1)
      expect(unknown.err).toContain('not found')

      // A server on that database: both accounts log in; sign-up stays closed.
      const kernel = await createKernel(loadConfig({ ...env, LOG_LEVEL: 'silent' }))
      const rt = createRuntime(kernel)
      try {
        const post = (path: string, body: unknown) =>
          rt.handle(new Request(`http://localhost${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }))
        expect((await post('/v1/auth/login', { email: 'admin@example.com', password: 'admin passphrase' })).status).toBe(200)
        expect((await post('/v1/auth/login', { email: 'second@example.com', password: generated })).status).toBe(200)
        expect((await post('/v1/auth/login', { email: 'third@example.com', password: 'third passphrase' })).status).toBe(401)
        expect((await post('/v1/auth/login', { email: 'third@example.com', password: 'operator set passphrase' })).status).toBe(200)
        const reg = await post('/v1/auth/register', { email: 'walk-in@example.com', password: 'walk-in passphrase', name: 'W' })
        expect(reg.status).toBe(403)
        expect((await reg.json()).error).toBe('registration_closed')
      } finally {
        await rt.close()
      }
    } finally {
      if (tdb) await tdb.drop().catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000) // nine child processes, each opening (and the first migrating) the database

  test('serve says on its start line where it listens, whether sign-up is open and whether mail links can be built', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cs-cli-serve-'))
    // On Postgres a fresh database of its own (never the server's shared one), else PGlite in a temp DATA_DIR.
    const tdb = process.env.TEST_DATABASE_URL ? await freshDatabase() : null
    const db: Record<string, string> = tdb ? { DATABASE_URL: tdb.url!, SERVICE_SECRET_KEY: 'b'.repeat(64) } : { DATA_DIR: join(dir, 'data') }
    const proc = Bun.spawn([...SERVICE_COMMAND, 'serve', '--port', '0', '--no-worker'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', REGISTRATION: 'closed', ...db },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    try {
      const reader = proc.stdout.getReader()
      let out = ''
      while (!out.includes('\n')) {
        const { done, value } = await reader.read()
        if (done) break
        out += new TextDecoder().decode(value)
      }
      const line = out.split('\n')[0]
      expect(line).toContain('content-service listening on http://localhost:')
      expect(line).toMatch(/bound to 0\.0\.0\.0:\d+, every network interface/)
      expect(line).toContain('registration: closed')
      // No PUBLIC_URL: mails that need a link are not sent, and the line says so.
      expect(line).toContain('mail links: off (PUBLIC_URL unset:')
    } finally {
      proc.kill('SIGTERM')
      await proc.exited
      if (tdb) await tdb.drop().catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
