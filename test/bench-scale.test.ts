// `bun run bench:scale` (scripts/bench/scale.ts) at 1/100 of its size, so the harness cannot rot: it seeds a fresh
// Postgres database by COPY (500 Spaces, 10,000 Stories), starts the server against it (the built executable when
// SERVICE_BINARY names it, else from source), drives every step for a second or so and prints its checks. Nothing is
// timed here: the checks may PASS or FAIL (that is the bench's verdict, recorded in docs/performance.md); the test
// asserts that every step ran, that the seeded rows are valid for the server's reads and search (every answer 200),
// and that the summary parses. Postgres only: the simulation is about a fleet over one Postgres; on PGlite the file
// skips with a message.
import { expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'

setDefaultTimeout(300_000)

const url = process.env.TEST_DATABASE_URL
const CHECKS = [
  'seed_minutes',
  'database_gb',
  'start_to_ready',
  'rss_at_ready',
  'rss_after_200_spaces',
  'cached_read_p99',
  'cached_read_vs_raw',
  'cold_search_p50',
  'cold_search_p99',
  'cold_search_no_503',
  'walk_max_rss',
  'search_resident_within_budget',
  'walk_no_creep',
  'rebuild_from_rows',
  'rebuild_from_snapshot',
]

if (!url) {
  test('bench:scale --scale=0.01 (Postgres only)', () => {
    console.log('bench-scale.test.ts: skipped: the scale simulation runs on Postgres only (set TEST_DATABASE_URL)')
  })
} else {
  test('bench:scale --scale=0.01 seeds, serves every step with 200s, and prints every check and a JSON summary', async () => {
    const pg = url.slice(0, url.lastIndexOf('/'))
    const db = `cs_scale_test_${Date.now().toString(36)}`
    const p = Bun.spawn(
      ['bun', join(import.meta.dir, '..', 'scripts', 'bench', 'scale.ts'), '--scale=0.01', `--pg=${pg}`, `--db=${db}`, '--drop', `--server=${process.env.SERVICE_BINARY ?? 'source'}`, '--duration=1', '--rounds=1', '--ready-timeout=180'],
      { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, BENCH_JSON: '1' } },
    )
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
    if (code !== 0) console.error(out, err)
    expect(code).toBe(0)
    for (const name of CHECKS) expect(out).toMatch(new RegExp(`^(PASS|FAIL) ${name} \\S+ \\S+$`, 'm'))
    const line = out.split('\n').find((l) => l.startsWith('SCALE_JSON '))!
    const summary = JSON.parse(line.slice('SCALE_JSON '.length))
    expect(summary.checks.map((c: { name: string }) => c.name)).toEqual(CHECKS)
    const f = summary.figures
    expect(f).toMatchObject({ scale: 0.01, spaces: 500, tenants: 50, stories: 10_000 })
    expect(f.published_rows).toBeGreaterThan(10_000) // the Spaces with two locales publish both
    // The seeded rows are what the server reads and searches: every answer of every step was a 200.
    const statuses = JSON.parse(f.statuses) as Record<string, number>
    expect(Object.keys(statuses).length).toBeGreaterThan(0)
    for (const key of Object.keys(statuses)) expect(key).toMatch(/:200$/)
    expect(f.cached_non2xx).toBe(0)
    expect(f.rebuild_rows_ms).toBeGreaterThan(0)
    // The Spaces of 50+ Stories got their snapshots before the run; the rebuilt Space's loaded from its own.
    expect(f.snapshots).toBeGreaterThan(0)
    expect(f.rebuild_snapshot_ms).toBeGreaterThanOrEqual(0)
    expect(f.cold_from_snapshot + f.cold_from_rows).toBeGreaterThan(0)
    expect(out).toContain('BENCH_JSON {"bench":"scale"')
  })
}
