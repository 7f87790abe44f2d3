import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildSdk } from '../../sdk/test/fixture'

const PKG = join(import.meta.dir, '..')
const ROOT = join(PKG, '..', '..')

/** The installed Astro's version (the one the build test covers). */
export function astroVersion(): string {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules', 'astro', 'package.json'), 'utf8')).version
  } catch {
    return 'not installed'
  }
}

/**
 * Builds the SDK's dist/ and this package's (as they are packed), once per content of their sources: test files
 * running side by side share one build (a lock folder serialises them, a stamp of the sources skips a rebuild).
 */
export async function buildPackages() {
  await buildSdk()
  const hasher = new Bun.CryptoHasher('sha256')
  const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]))
  for (const f of [...walk(join(PKG, 'src')), join(PKG, 'scripts', 'build.ts'), join(PKG, 'package.json')].sort()) hasher.update(f).update(readFileSync(f))
  const stamp = hasher.digest('hex')
  const stampFile = join(PKG, 'dist', '.stamp')
  const lock = join(PKG, '.build-lock')
  for (let i = 0; ; i++) {
    try {
      mkdirSync(lock)
      break
    } catch {
      if (i > 1200) throw new Error(`${lock} held for 10 minutes: remove it`)
      await Bun.sleep(500)
    }
  }
  try {
    if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return
    const b = Bun.spawn(['bun', join(PKG, 'scripts', 'build.ts')], { stdout: 'pipe', stderr: 'pipe' })
    const [err, code] = await Promise.all([new Response(b.stderr).text(), b.exited])
    if (code !== 0) throw new Error(`build failed: ${err}`)
    writeFileSync(stampFile, stamp)
  } finally {
    rmdirSync(lock)
  }
}
