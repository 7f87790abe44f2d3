// bun scripts/bench/heap.ts [--stories=10000]
//
// What the JS side holds with N published Stories (embedded PGlite, in this process): seeds a scratch database the way
// bench:startup does, starts the runtime (index builds), warms up like bench:startup (the search answered, one read of
// every 100th Story), collects garbage and prints the JS heap (bun:jsc heapStats: size and the object types that
// grew most) and the RSS at each step. PGlite's WASM memory is part of the RSS, not of the heap.
import { heapStats } from 'bun:jsc'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { scratchDatabase } from './scratch'
import { seedStories } from './seed-stories'
import { loadConfig } from '../../src/config'
import { createKernel } from '../../src/kernel/kernel'
import { createRuntime } from '../../src/app'

const { values: args } = parseArgs({ options: { stories: { type: 'string', default: '10000' } } })
const N = Number(args.stories)
const rss = () => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024)
const snap = (label: string, before?: Record<string, number>) => {
  Bun.gc(true)
  const h = heapStats()
  const counts = h.objectTypeCounts as Record<string, number>
  console.log(`${label}: heap ${(h.heapSize / 2 ** 20).toFixed(1)} MB (capacity ${(h.heapCapacity / 2 ** 20).toFixed(1)} MB, extra ${((h.extraMemorySize ?? 0) / 2 ** 20).toFixed(1)} MB), objects ${h.objectCount}, RSS ${rss()} MB`)
  if (before) {
    const grew = Object.entries(counts)
      .map(([k, v]) => [k, v - (before[k] ?? 0)] as const)
      .filter(([, d]) => d > 1000)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
    console.log('  grew: ' + grew.map(([k, d]) => `${k} +${d}`).join(', '))
  }
  return { ...counts }
}



const db = await scratchDatabase('pglite', '', 'cs-heap')
try {
  const env = { ...db.env, LOG_LEVEL: 'warn' }
  await seedStories(env, N)
  const kernel = await createKernel(loadConfig({ ...process.env, ...env, PORT: '0' }))
  const c0 = snap('kernel open')
  const runtime = createRuntime(kernel)
  await runtime.start()
  const server = runtime.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 20, idleTimeout: 30 })
  const base = `http://127.0.0.1:${server.port}`
  const c1 = snap('runtime started', c0)
  for (let i = 0; i < 600; i++) {
    const r = await fetch(`${base}/v1/cdn/bench/search?q=w17`, { headers: { 'x-forwarded-for': '10.0.0.1' } })
    await r.arrayBuffer()
    if (r.status === 200) break
    await Bun.sleep(100)
  }
  const c2 = snap('search answered', c1)
  for (let i = 0; i < N; i += 100) {
    const r = await fetch(`${base}/v1/cdn/bench/stories/section-${i % 20}/article-${i}`, { headers: { 'x-forwarded-for': '10.0.0.2' } })
    await r.arrayBuffer()
  }
  snap(`read every 100th Story`, c2)
  server.stop(true)
  await runtime.close?.()
} finally {
  await db.cleanup()
}
process.exit(0)
