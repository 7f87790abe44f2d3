// `bun run bench` (scripts/bench/all.ts): the parsing of each bench's summary into the table's rows. No bench runs
// here and nothing is timed: each bench's output is given as the lines it prints (BENCH_JSON=1).
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { BENCHES, fmt, markdownTable, parseBenchJson, parseSearchOutput, rowsFor } from '../scripts/bench/all'
import { BENCH_JSON_PREFIX, emitBenchJson } from '../scripts/bench/json'

setDefaultTimeout(60_000)

const line = (bench: string, figures: Record<string, unknown>) => `${BENCH_JSON_PREFIX}${JSON.stringify({ bench, figures })}`
const bench = (name: string) => BENCHES.find((b) => b.name === name)!
const row = (rows: ReturnType<typeof rowsFor>, figure: string) => rows.find((r) => r.figure.includes(figure))!

/** What each bench prints, in the shape its BENCH_JSON line has (or, for search, its `JSON [...]` line). */
const outputs: Record<string, string> = {
  startup: [
    'start-up and memory of dist/content-service (pglite)',
    line('startup', { first_start_ms: 2500, first_start_cpu_ms: 2000, first_start_peak_mb: 420, first_start_idle_mb: 300, restart_ms: 250, restart_cpu_ms: 240, restart_idle_mb: 140, restart_10000_ms: 900, search_first_10000_ms: 950, search_ok_10000_ms: 4000, rss_10000_mb: 260 }),
  ].join('\n'),
  read: line('read', { driver: 'pglite', rps: 14000, raw_rps: 20000, p99_ms: 9, raw_p99_ms: 5, paced_p99_ms: 4, paced_raw_p99_ms: 2, rps_304: 18000, raw_rps_304: 24000 }),
  search: `search benchmark\nJSON ${JSON.stringify([
    {
      stories: 10000,
      driver: 'pglite',
      memory: { index_heap_mb: 25 },
      in_process: { word: { p99: 1, cpu_p99: 1 } },
      in_process_under_load: { word: { p99: 3 }, prefix: { p99: 4 } },
      executable: { rss_mb: 300, http: { word: { rps: 5000, p99: 20, raw_rps: 80000, raw_p99: 5 }, prefix: { rps: 3000, p99: 12, raw_rps: 90000, raw_p99: 4 } } },
    },
  ])}`,
  beacon: line('beacon', { driver: 'pglite', beacons_rps: 17000, beacons_p99_ms: 23, reads_rps: 5000, reads_p99_ms: 20, stored: 100, sent: 100, management_30d_p99_ms: 70 }),
  forms: [1, 2, 3].map((round) => line('forms', { driver: 'pglite', action: 'email', connections: 8, round, rps: 600 + round * 10, p50_ms: 5, p99_ms: [20, 45, 25][round - 1], non2xx: 0, errors: 0 })).join('\n'),
  webhooks: `{\n  "driver": "pglite"\n}\n${line('webhooks', { driver: 'pglite', expected: 6000, received: 6000, backlog_deliveries_per_s: 1200, live_deliveries_per_s: 300, live_p50_ms: 11, live_p99_ms: 35 })}`,
  presence: line('presence', { editors: 1000, per_story: 1000, listeners: 200, beats: 2000, errors: 0, p50_ms: 10, p99_ms: 60, fanout_reached: 10, fanout_probes: 10, fanout_p99_ms: 30 }),
  images: line('images', { driver: 'pglite', webp_ms: 120, avif_ms: 600, jpg_ms: 90, transforms_per_s: 8, reads_alone_rps: 3000, reads_during_rps: 2400, upload_rss_growth_mb: 20, upload_small_p99_ms: 40 }),
  events: [1, 2].map((round) => line('events', { driver: 'pglite', rate: 500, round, sent: 10000, achieved_rate: 500, p50_ms: 30, p99_ms: round * 40, statuses: '{"201":10000}' })).join('\n'),
  ai: line('ai', { direct_median_ms: 21, through_median_ms: 27.5, floor_median_ms: 5, added_median_ms: 6.5 }),
  checkout: [line('checkout', { driver: 'postgres', p99_ms: 1800, cold_p99_ms: 2500, exact: true }), line('checkout', { driver: 'pglite', p99_ms: 4000, exact: true })].join('\n'),
  plugins: line('plugins', { driver: 'pglite', without_median_ms: 5, with_median_ms: 7, plugin_median_ms: 1, added_ms: 1 }),
  overlay: line('overlay', { driver: 'pglite', overlay_rps: 12000, story_rps: 13000, ratio: 0.92 }),
}

describe('bun run bench: parsing each bench summary', () => {
  test('every bench of the runner has a sample here, and each gives rows with figures, not a failure row', () => {
    expect(Object.keys(outputs).sort()).toEqual(BENCHES.map((b) => b.name).sort())
    for (const b of BENCHES) {
      const rows = rowsFor(b, outputs[b.name])
      expect(rows.length).toBeGreaterThan(0)
      for (const r of rows) {
        expect(r.bench).toBe(b.name)
        expect(r.ours).not.toBe('—')
      }
    }
  })

  test('start-up: targets met and missed by the figures', () => {
    const rows = rowsFor(bench('startup'), outputs.startup)
    expect(row(rows, 'first start on an empty folder').met).toBe(true)
    expect(row(rows, 'first start: peak RSS').met).toBe(false)
    expect(row(rows, 'restart on existing data (empty)').ours).toBe('250 ms')
    expect(row(rows, 'restart on existing data (empty)').met).toBe(true)
    expect(row(rows, 'idle RSS, empty data').met).toBe(true)
    expect(row(rows, 'restart with 10,000 Stories → first 200').met).toBe(true)
    expect(row(rows, 'RSS with 10,000 Stories').met).toBe(false)
  })

  test('read: ratio to raw and the p99 ratio at equal load', () => {
    const rows = rowsFor(bench('read'), outputs.read)
    const rps = row(rows, 'req/s')
    expect([rps.ours, rps.raw, rps.ratio, rps.met]).toEqual(['14,000', '20,000', '0.700', true])
    const paced = row(rows, 'equal offered load')
    expect([paced.ratio, paced.met]).toEqual(['2.00', false])
  })

  test('search: the worst kind from its JSON line', () => {
    const f = parseSearchOutput(outputs.search)!
    expect(f.s10000_rps).toBe(3000)
    expect(f.s10000_raw_rps).toBe(80000)
    expect(f.s10000_p99_ms).toBe(20)
    expect(f.s10000_in_process_p99_ms).toBe(4)
    const rows = rowsFor(bench('search'), outputs.search)
    expect(row(rows, 'p99').met).toBe(false)
    expect(row(rows, 'in process').met).toBe(true)
    expect(parseSearchOutput('JSON [not json')).toBeNull()
  })

  test('per-round benches: the worst round p99, the median round rate', () => {
    const forms = rowsFor(bench('forms'), outputs.forms)
    expect(row(forms, 'req/s').ours).toBe('620')
    expect(row(forms, 'p99').ours).toBe('45.0 ms')
    expect(row(forms, 'p99').met).toBe(false)
    expect(row(forms, 'p99').figure).toContain('email action')
    const events = rowsFor(bench('events'), outputs.events)
    expect(events[0].ours).toBe('80.0 ms')
    expect(events[0].figure).toContain('500/s')
  })

  test('checkout: a row per driver and the invariant', () => {
    const rows = rowsFor(bench('checkout'), outputs.checkout)
    expect(row(rows, '(postgres)').met).toBe(false)
    expect(row(rows, '(postgres)').ours).toBe('1,800 ms (cold round 2,500 ms)')
    expect(row(rows, '(pglite)').met).toBeNull()
    expect(row(rows, 'exactly').met).toBe(true)
  })

  test('a bench that failed or printed no summary gets a row that says so', () => {
    const none = rowsFor(bench('overlay'), 'some output\nno summary', 'exited with 1')
    expect(none).toEqual([{ bench: 'overlay', figure: 'exited with 1', ours: '—', target: '—', met: null }])
    const partial = rowsFor(bench('overlay'), outputs.overlay, 'stopped after 120 s')
    expect(partial.at(-1)!.figure).toBe('stopped after 120 s')
    expect(partial[0].met).toBe(true)
  })

  test('BENCH_JSON lines: the last of the bench wins, other benches and broken lines are ignored', () => {
    const out = [line('ai', { added_median_ms: 1 }), `${BENCH_JSON_PREFIX}{broken`, line('plugins', { added_ms: 9 }), line('ai', { added_median_ms: 2 })].join('\n')
    expect(parseBenchJson(out, 'ai')).toEqual({ added_median_ms: 2 })
    expect(parseBenchJson(out, 'plugins')).toEqual({ added_ms: 9 })
    expect(parseBenchJson('nothing here', 'ai')).toBeNull()
  })

  test('emitBenchJson prints only with BENCH_JSON=1, and non-finite numbers as null', () => {
    const printed: string[] = []
    const log = console.log
    const before = process.env.BENCH_JSON
    console.log = (s: string) => printed.push(s)
    try {
      delete process.env.BENCH_JSON
      emitBenchJson('x', { a: 1 })
      process.env.BENCH_JSON = '1'
      emitBenchJson('x', { a: 1, b: Number.NaN, c: undefined, d: 'pglite' })
    } finally {
      console.log = log
      if (before === undefined) delete process.env.BENCH_JSON
      else process.env.BENCH_JSON = before
    }
    expect(printed).toHaveLength(1)
    expect(parseBenchJson(printed[0], 'x')).toEqual({ a: 1, b: null, c: null, d: 'pglite' })
  })

  test('the markdown table: one row per figure, pipes escaped, met / not met', () => {
    const md = markdownTable([
      { bench: 'a', figure: 'x | y', ours: '1', target: '< 2', met: true },
      { bench: 'b', figure: 'z', ours: '3', raw: '1', ratio: '3.00', target: '< 2', met: false },
      { bench: 'c', figure: 'w', ours: '—', target: '—', met: null },
    ])
    const lines = md.split('\n')
    expect(lines).toHaveLength(5)
    expect(lines[2]).toBe('| a | x \\| y | 1 |  |  | < 2 | met |')
    expect(lines[3]).toBe('| b | z | 3 | 1 | 3.00 | < 2 | **not met** |')
    expect(lines[4]).toBe('| c | w | — |  |  | — | — |')
    expect([fmt(12345.6), fmt(123.4, 'ms'), fmt(12.34), fmt(1.234), fmt(0.1234), fmt(null), fmt('n/a')]).toEqual(['12,346', '123 ms', '12.3', '1.23', '0.123', '—', 'n/a'])
  })
})
