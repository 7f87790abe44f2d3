// bun scripts/bench/search-rss.ts [--db=scale_rss] [--pg=postgres://postgres@127.0.0.1:5432] [--budget-mb=128]
//                                 [--passes=3] [--spaces=0] [--gc-every-mb=0] [--gc=bun|jsc]
//
// The search side of bench:scale's memory checks, in this process and without HTTP: one SearchRegistry with a memory
// budget over a database seeded by `bun scripts/bench/scale.ts --seed-only` walks every Space (a search index built on
// demand, the least recently used dropped beyond the budget) `--passes` times in a random order, and prints the RSS
// (max and at the end of each pass), the JS heap, and the cost of the collections asked for:
// --gc-every-mb=N runs a full collection after every N MB of Story rows read into indexes (0: never; JavaScriptCore
// alone). A quick A/B for what index churn leaves resident (about a minute at --scale=0.05).
import { heapSize, heapStats } from 'bun:jsc'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import { loadConfig } from '../../src/config'
import { createKernel } from '../../src/kernel/kernel'
import { SearchRegistry } from '../../src/modules/search/registry'

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'scale_rss' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
    'budget-mb': { type: 'string', default: '128' },
    passes: { type: 'string', default: '3' },
    spaces: { type: 'string', default: '0' },
    'gc-every-mb': { type: 'string', default: '0' },
    gc: { type: 'string', default: 'bun' },
    seed: { type: 'string', default: '7' },
  },
})
const url = `${args.pg}/${args.db}`
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024
const mb = (b: number) => Math.round(b / 2 ** 20)

let state = Number(args.seed) >>> 0
const rand = () => {
  state = (state + 0x6d2b79f5) >>> 0
  let t = state
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const sql = postgres(url, { max: 1, onnotice: () => {} })
const rows = await sql<{ space_id: number; bytes: number }[]>`
  select s.space_id, sum(octet_length(p.content::text))::bigint as bytes
  from stories s join story_published p on p.story_id = s.id where s.status = 'published' group by s.space_id`
await sql.end()
const bytesOf = new Map(rows.map((r) => [r.space_id, Number(r.bytes)]))
let ids = rows.map((r) => r.space_id)
if (Number(args.spaces) > 0) ids = ids.slice(0, Number(args.spaces))

const config = loadConfig({ DATABASE_URL: url, SERVICE_SECRET_KEY: 'b'.repeat(64), SEARCH_MEMORY_MB: args['budget-mb'], LOG_LEVEL: 'warn', SEARCH_RECONCILE_SECONDS: '0' })
const kernel = await createKernel(config)
const registry = new SearchRegistry(kernel)
registry.start()

let max = 0
const sampler = setInterval(() => {
  const r = rss()
  if (r > max) max = r
}, 50)
const gcEvery = Number(args['gc-every-mb']) * 2 ** 20
const collect = args.gc === 'jsc' ? () => require('bun:jsc').fullGC() : () => Bun.gc(true)
let debt = 0
const pauses: number[] = []
const t0 = performance.now()
console.log(`search-rss: ${ids.length} Spaces, budget ${args['budget-mb']} MB, gc every ${args['gc-every-mb']} MB (${args.gc}); RSS at start ${Math.round(rss())} MB`)
for (let pass = 1; pass <= Number(args.passes); pass++) {
  const order = [...ids]
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1))
    ;[order[i], order[j]] = [order[j], order[i]]
  }
  const tp = performance.now()
  for (const id of order) {
    const cold = registry.readyIndex(id, 'en') === undefined
    await registry.index(id, 'en')
    if (cold) debt += bytesOf.get(id) ?? 0
    if (gcEvery > 0 && debt >= gcEvery) {
      debt = 0
      const t = performance.now()
      collect()
      pauses.push(performance.now() - t)
    }
  }
  const m = registry.memory()
  pauses.sort((a, b) => a - b)
  console.log(
    `  pass ${pass}: ${Math.round(performance.now() - tp)} ms; RSS ${Math.round(rss())} MB, max ${Math.round(max)} MB; JS heap ${mb(heapSize())} MB; ` +
      `search ${mb(m.bytes)} MB, evictions ${m.evictions}; collections ${pauses.length}, pause p50 ${(pauses[pauses.length >> 1] ?? 0).toFixed(1)} ms, max ${(pauses[pauses.length - 1] ?? 0).toFixed(1)} ms`,
  )
}
clearInterval(sampler)
const before = rss()
Bun.gc(true)
await Bun.sleep(500)
console.log(`  after Bun.gc(true): RSS ${Math.round(before)} -> ${Math.round(rss())} MB, JS heap ${mb(heapSize())} MB; total ${Math.round(performance.now() - t0)} ms`)
// What the resident indexes really hold against their estimate: the heap (incl. extra memory) with them, then after
// dropping every one (released as eviction does) and collecting.
const heapWith = heapStats()
const estimate = registry.memory().bytes
const internals = registry as unknown as { spaces: Map<number, { indexes: Map<string, { release(): number }> | null }> }
for (const e of internals.spaces.values()) for (const idx of e.indexes?.values() ?? []) idx.release()
internals.spaces.clear()
Bun.gc(true)
await Bun.sleep(200)
Bun.gc(true)
const heapWithout = heapStats()
// heapSize counts the extra memory (typed arrays' buffers, large strings) too.
console.log(
  `  resident indexes: estimate ${mb(estimate)} MB, in the heap ${mb(heapWith.heapSize - heapWithout.heapSize)} MB; heap with them ${mb(heapWith.heapSize)} MB (extra ${mb(heapWith.extraMemorySize ?? 0)}), ` +
    `without ${mb(heapWithout.heapSize)} MB (extra ${mb(heapWithout.extraMemorySize ?? 0)}); RSS ${Math.round(rss())} MB`,
)
const grew = Object.entries(heapWith.objectTypeCounts as Record<string, number>)
  .map(([k, v]) => [k, v - ((heapWithout.objectTypeCounts as Record<string, number>)[k] ?? 0)] as const)
  .filter(([, d]) => d > 1000)
  .sort((a, b) => b[1] - a[1])
  .slice(0, 12)
console.log('  objects held by them: ' + grew.map(([k, d]) => `${k} ${d}`).join(', '))
console.log(`SEARCH_RSS_JSON ${JSON.stringify({ max_rss_mb: Math.round(max), end_rss_mb: Math.round(before), collections: pauses.length, pause_max_ms: pauses[pauses.length - 1] ?? 0 })}`)
await registry.close()
await kernel.close()
process.exit(0)
