// The machine-readable summary of a bench script, for `bun run bench` (scripts/bench/all.ts): with BENCH_JSON=1 in
// its environment a bench prints, after its usual human output, one line `BENCH_JSON {"bench":…,"figures":{…}}`.
// Without it nothing changes. An environment variable rather than a `--json` flag: the scripts parse their flags
// strictly, so a flag would need every script's option list changed.
export const BENCH_JSON_PREFIX = 'BENCH_JSON '

export type Figures = Record<string, number | string | boolean | null | undefined>

export function emitBenchJson(bench: string, figures: Figures): void {
  if (process.env.BENCH_JSON !== '1') return
  const clean: Record<string, number | string | boolean | null> = {}
  for (const [k, v] of Object.entries(figures)) clean[k] = typeof v === 'number' && !Number.isFinite(v) ? null : (v ?? null)
  console.log(BENCH_JSON_PREFIX + JSON.stringify({ bench, figures: clean }))
}
