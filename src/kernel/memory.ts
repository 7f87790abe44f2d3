import { heapSize, memoryUsage as mallocUsage } from 'bun:jsc'
import { Gauge, type Registry } from 'prom-client'

// How much memory an instance holds beyond its budgets (SEARCH_MEMORY_MB, CDN_CACHE_MB).
//
// JavaScriptCore collects the old generation again only once its heap has grown to a multiple of what the previous
// full collection kept: in Bun, `1 + heapGrowthMaxIncrease × e^(−heap/RAM)`, about 3× on a host with 16 GB of RAM or
// more (heapGrowthMaxIncrease = 2), and `smallHeapGrowthFactor` (2×) below 16 GB. Its count includes what cells hold
// outside the heap (typed arrays, large strings). With search indexes and caches filled to their budgets, most of the
// heap is long-lived, and the churn through them — each index built from rows parses Story JSON and fills arrays, each
// evicted index is dropped whole — is garbage that piles up to that multiple before it goes. Measured on
// `bun run bench:scale --scale=0.05` (128 MB of search indexes, 64 MB of read cache; docs/performance.md), peak RSS of
// the walk over every Space and the server's CPU for it: Bun's default 1,072 MB / 58 s, a growth of 1.75× 811 MB /
// 64 s, 1.5× 702 MB / 84 s. At 1.5× and below every young collection also schedules a full one (JavaScriptCore's
// floor), hence the CPU: 1.75× is the default, 1.5× a choice for memory-tight hosts.
//
// The heap's growth can only be set before JavaScriptCore starts, through `BUN_JSC_*` environment variables. So the
// long-running commands (`serve`, `worker`) re-execute themselves once, at the very start — same process id, same
// arguments — with the settings below added to the environment (`memoryEnvironment`); settings already in the
// environment win, and JS_HEAP_GROWTH=default leaves Bun's own. Measured alternatives that did not pay: a full
// synchronous collection paced by heap growth or by the bytes of rows indexed (pauses of 90–360 ms on the loaded
// 2-core bench machine, and little less RSS), MIMALLOC_PURGE_DELAY=0 (no change), `--smol` (−12%). What did pay: the
// allocator's hole sweep at every wait (MIMALLOC_PURGE_HOLES_MIN_INTERVAL=0, below) and young collections after busy
// intervals (gc-pacer.ts).

/** The environment variable that marks a process already re-executed with the memory settings (never loops). */
export const MEMORY_ENV_MARK = 'CONTENT_SERVICE_MEMORY_ENV'

/** JS_HEAP_GROWTH when unset: JavaScriptCore collects the old generation when the heap reaches 1.75× what it kept. */
export const DEFAULT_HEAP_GROWTH = 1.75

/**
 * The `BUN_JSC_*` settings for a heap growth factor (JS_HEAP_GROWTH: a number in [1.1, 4], or `default` for Bun's
 * own) and the allocator's hole sweep (`MIMALLOC_PURGE_HOLES_MIN_INTERVAL`), without those the environment already
 * sets. Empty when nothing is to be added. Throws on a malformed value.
 */
export function memoryEnvironment(env: Record<string, string | undefined>): Record<string, string> {
  const raw = env.JS_HEAP_GROWTH?.trim().toLowerCase()
  const wanted: Record<string, string> = {
    // Bun's allocator discards the free blocks inside pages still in use ("holes": what an evicted search index or a
    // collected string leaves between live objects) when the thread is about to wait, at most every 100 ms by
    // default; a busy server rarely waited that long, and kept those pages resident. 0: at every wait.
    MIMALLOC_PURGE_HOLES_MIN_INTERVAL: '0',
  }
  if (raw !== 'default') {
    const growth = raw ? Number(raw) : DEFAULT_HEAP_GROWTH
    if (!Number.isFinite(growth) || growth < 1.1 || growth > 4) throw new Error(`JS_HEAP_GROWTH must be a number from 1.1 to 4, or "default" (got "${env.JS_HEAP_GROWTH}")`)
    // Hosts with 16 GB of RAM or more: the growth is 1 + heapGrowthMaxIncrease (for a heap much smaller than RAM).
    wanted.BUN_JSC_heapGrowthMaxIncrease = String(Math.round((growth - 1) * 1000) / 1000)
    // Smaller hosts: a flat factor until the process's footprint reaches most of RAM.
    wanted.BUN_JSC_smallHeapGrowthFactor = String(growth)
  }
  const add: Record<string, string> = {}
  for (const [k, v] of Object.entries(wanted)) if (env[k] === undefined) add[k] = v
  return add
}

/** The command line that starts this very program again: the executable's own arguments, or bun's and the script's. */
export function ownCommandLine(): string[] {
  // A compiled executable's argv is ['bun', '/$bunfs/root/<name>', ...user arguments]; its execArgv is built in.
  const compiled = Bun.main.startsWith('/$bunfs/') || Bun.main.startsWith('B:\\~BUN\\')
  return compiled ? [process.execPath, ...process.argv.slice(2)] : [process.execPath, ...process.execArgv, ...process.argv.slice(1)]
}

/**
 * Re-executes this process (same pid, same arguments) with `memoryEnvironment` added, once; does not return then.
 * Returns why it did not (nothing to add, already applied, execve unavailable); throws on a malformed JS_HEAP_GROWTH.
 * Must run before the process opens anything (listening sockets, database connections, files): execve keeps none.
 */
export function applyMemoryEnvironment(
  env: Record<string, string | undefined> = process.env,
  execve: ((file: string, args: string[], env: Record<string, string | undefined>) => never) | undefined = process.execve,
): string {
  if (env[MEMORY_ENV_MARK] !== undefined) return 'already applied'
  const add = memoryEnvironment(env)
  if (!Object.keys(add).length) return 'nothing to add'
  if (typeof execve !== 'function') return 'process.execve is unavailable'
  const args = ownCommandLine()
  try {
    execve(args[0], args, { ...env, ...add, [MEMORY_ENV_MARK]: Object.keys(add).join(',') })
  } catch (err) {
    // Not supported here (Windows): the process goes on with Bun's own heap growth.
    return `execve failed: ${err instanceof Error ? err.message : String(err)}`
  }
  return 'execve returned'
}

/** What the process's memory is made of, read at scrape time: where RSS goes beyond the budgets. */
export function memoryBreakdown(): Record<string, number> {
  const m = process.memoryUsage()
  const malloc = mallocUsage()
  return {
    // JavaScriptCore's heap size as it schedules collections: cells plus the memory they hold outside (extra).
    js_heap: heapSize(),
    js_heap_capacity: m.heapTotal,
    js_extra: m.external,
    // The allocator (mimalloc) under everything: bytes in use (close to the RSS) and committed (address space).
    malloc_in_use: malloc.current,
    malloc_committed: malloc.currentCommit,
  }
}

/** The memory breakdown as a gauge (registered with the kernel's metrics). */
export function registerMemoryMetrics(registry: Registry): void {
  new Gauge({
    name: 'content_service_memory_bytes',
    help: 'Process memory by part: js_heap (JavaScriptCore heap incl. extra memory), js_heap_capacity, js_extra (typed arrays, strings outside the heap), malloc_in_use and malloc_committed (mimalloc)',
    labelNames: ['part'],
    registers: [registry],
    collect() {
      for (const [part, bytes] of Object.entries(memoryBreakdown())) this.set({ part }, bytes)
    },
  })
}
