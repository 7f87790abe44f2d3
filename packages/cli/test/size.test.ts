/**
 * The built command's size budgets, in bytes (not time: start-up cost is what `node dist/cli.js` has to load before it
 * runs anything, so it is measured as the entry plus the chunks it imports statically — the commands, the SDK and
 * openapi-fetch are imported only when a command runs).
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

setDefaultTimeout(120_000)

const PKG = join(import.meta.dir, '..')
const dist = join(PKG, 'dist')
/** Start-up: what --help or --version loads. */
const STARTUP_BUDGET = 16 * 1024
/** Every .js file of the package. */
const TOTAL_BUDGET = 110 * 1024

beforeAll(() => {
  const build = Bun.spawnSync(['bun', join(PKG, 'scripts', 'build.ts')], { stdout: 'pipe', stderr: 'pipe' })
  if (build.exitCode !== 0) throw new Error(build.stderr.toString())
})

/** The file and every file it imports statically (`import … from "./x.js"`), once each. */
function staticClosure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen
  seen.add(file)
  const src = readFileSync(join(dist, file), 'utf8')
  for (const m of src.matchAll(/(?:^|[;\s}])(?:import|export)\s*(?:[\w*{}\s,$]*?\s*from\s*)?["'](\.\/[^"']+)["']/g)) staticClosure(m[1].slice(2), seen)
  return seen
}

describe('content-service-cli size', () => {
  test('start-up loads only the entry and what it needs; the whole package stays within its budget', () => {
    const startup = [...staticClosure('cli.js')]
    const startupBytes = startup.reduce((n, f) => n + statSync(join(dist, f)).size, 0)
    const all = readdirSync(dist).filter((f) => f.endsWith('.js'))
    const totalBytes = all.reduce((n, f) => n + statSync(join(dist, f)).size, 0)
    console.log(`cli sizes (bytes): start-up ${startupBytes} (${startup.join(', ')}), all ${totalBytes}`)
    expect(startupBytes).toBeLessThan(STARTUP_BUDGET)
    expect(totalBytes).toBeLessThan(TOTAL_BUDGET)
    // The commands (with the SDK) are a dynamic import of the entry, not a static one.
    const entry = readFileSync(join(dist, 'cli.js'), 'utf8')
    expect(entry).toMatch(/import\("\.\/chunk-[\w-]+\.js"\)/)
    expect(startup.some((f) => readFileSync(join(dist, f), 'utf8').includes('ContentServiceError'))).toBe(false)
  })
})
