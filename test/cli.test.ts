import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pkg from '../package.json'

const BIN = join(import.meta.dir, '..', 'bin', 'content-service.ts')

function run(args: string[], env: Record<string, string> = {}) {
  const r = Bun.spawnSync(['bun', BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'silent', ...env },
  })
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() }
}

describe('content-service CLI', () => {
  test('--help lists every subcommand and the serve options', () => {
    const r = run(['--help'])
    expect(r.code).toBe(0)
    for (const word of ['serve', 'worker', 'migrate', 'version', 'reindex', '--port', '--host', '--no-worker']) {
      expect(r.out).toContain(word)
    }
  })

  test('each subcommand has its own --help', () => {
    for (const cmd of ['serve', 'worker', 'migrate', 'version', 'reindex']) {
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
})
