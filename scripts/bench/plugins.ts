// bun run bench:plugins [--driver=pglite|postgres] [--rounds=10] [--per-round=40] [--delay=0]
//                       [--pg=postgres://postgres@127.0.0.1:5432]
//
// What a plugin costs a Story save beyond the plugin's own latency (issue 35: target < 5 ms).
// 1. A fresh database (PGlite folder or Postgres database) and the app in this process; two Spaces with one Story
//    each: A has no plugin, B one plugin on story.before_save that answers {allow: true} (after --delay ms).
// 2. The plugin is a Bun.serve in its own process on 127.0.0.1, so its work does not share this event loop.
// 3. Interleaved steps (--rounds × --per-round): a save in A (no plugin), a save in B (one plugin), and a direct POST to
//    the plugin of a like body (its own latency, as the service sees it: request, answer). Medians and p95.
//    added = median(save with plugin) - median(save without) - median(direct POST): the signing, the outbound guard,
//    the answer parsing and the call log write.
import { parseArgs } from 'node:util'
import { createRuntime } from '../../src/app'
import { loadConfig } from '../../src/config'
import { createKernel } from '../../src/kernel/kernel'
import { emitBenchJson } from './json'
import { scratchDatabase } from './scratch'

const { values: args } = parseArgs({
  options: {
    driver: { type: 'string', default: 'pglite' },
    rounds: { type: 'string', default: '10' },
    'per-round': { type: 'string', default: '40' },
    delay: { type: 'string', default: '0' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
  },
})
const driver = args.driver === 'postgres' ? 'postgres' : 'pglite'
const rounds = Number(args.rounds)
const perRound = Number(args['per-round'])
const delay = Number(args.delay)

const RECEIVER = `
const delay = ${delay}
const server = Bun.serve({ port: 0, hostname: '127.0.0.1', async fetch(req) {
  await req.arrayBuffer()
  if (delay) await Bun.sleep(delay)
  return Response.json({ allow: true })
} })
console.log(server.port)
`

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b)
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]
  return { median: at(0.5), p95: at(0.95), n: s.length }
}
const ms = (x: number) => `${x.toFixed(2)} ms`

const scratch = await scratchDatabase(driver, args.pg!, 'bench_plugins')
const receiver = Bun.spawn(['bun', '-e', RECEIVER], { stdout: 'pipe', stderr: 'inherit' })
try {
  const reader = receiver.stdout.getReader()
  const { value } = await reader.read()
  const port = Number(new TextDecoder().decode(value).trim())
  const pluginUrl = `http://127.0.0.1:${port}/hook`

  const config = loadConfig({ ...scratch.env, LOG_LEVEL: 'error', SERVICE_OUTBOUND_ALLOW_PRIVATE: 'true' })
  const kernel = await createKernel(config)
  const app = createRuntime(kernel)
  await app.start()
  const call = async (method: string, path: string, body?: unknown, token?: string) => {
    const headers: Record<string, string> = { 'X-Forwarded-For': '10.0.0.1' }
    if (token) headers.Authorization = `Bearer ${token}`
    if (body !== undefined) headers['Content-Type'] = 'application/json'
    const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }))
    const text = await res.text()
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return text ? JSON.parse(text) : null
  }
  const reg = await call('POST', '/v1/auth/register', { email: 'bench@example.com', password: 'correct horse battery staple', name: 'Bench' })
  const token = reg.data.token as string
  const content = (i: number) => ({
    type: 'doc',
    blocks: [{ component: 'hero', _uid: 'h1', headline: `Headline ${i}`, body: 'A paragraph of body text. '.repeat(20) }],
  })
  const spaces: { slug: string; uuid: string }[] = []
  for (const slug of ['bench-none', 'bench-plugin']) {
    await call('POST', '/v1/spaces', { slug, name: slug }, token)
    await call('POST', `/v1/spaces/${slug}/components`, { name: 'hero', schema: { headline: { type: 'text' }, body: { type: 'textarea' } } }, token)
    const story = await call('POST', `/v1/spaces/${slug}/stories`, { name: 'Bench', slug: 'bench', content: content(0) }, token)
    spaces.push({ slug, uuid: story.data.uuid })
  }
  await call('POST', '/v1/spaces/bench-plugin/plugins', { name: 'Allow all', url: pluginUrl, hooks: ['story.before_save'] }, token)

  const sample = JSON.stringify({ hook: 'story.before_save', space: { slug: 'bench-plugin' }, actor: { type: 'user', user_id: 1 }, data: { changes: { content: content(1) } } })
  const without: number[] = []
  const withPlugin: number[] = []
  const direct: number[] = []
  let i = 0
  const timeSave = async (s: { slug: string; uuid: string }, into: number[]) => {
    const t0 = performance.now()
    await call('PUT', `/v1/spaces/${s.slug}/stories/${s.uuid}`, { content: content(++i) }, token)
    into.push(performance.now() - t0)
  }
  // Warm-up: caches, JIT, connections.
  for (let w = 0; w < 20; w++) {
    await timeSave(spaces[0], [])
    await timeSave(spaces[1], [])
  }
  // Interleaved, one of each per step: the plugin's process is woken at the same rhythm in both measurements (on a
  // loaded machine a sleeping process takes a while to be scheduled again, and that is the plugin's own latency).
  for (let r = 0; r < rounds; r++) {
    for (let n = 0; n < perRound; n++) {
      await timeSave(spaces[0], without)
      await timeSave(spaces[1], withPlugin)
      const t0 = performance.now()
      const res = await fetch(pluginUrl, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: sample })
      await res.text()
      direct.push(performance.now() - t0)
    }
  }
  const a = stats(without)
  const b = stats(withPlugin)
  const c = stats(direct)
  const added = b.median - a.median - c.median
  console.log(`bench:plugins — driver ${driver}, ${rounds} rounds × ${perRound}, plugin delay ${delay} ms (machine shared with other work: figures are noisy)`)
  console.log(`  save, no plugin:           median ${ms(a.median)}  p95 ${ms(a.p95)}  (n=${a.n})`)
  console.log(`  save, one allowing plugin: median ${ms(b.median)}  p95 ${ms(b.p95)}  (n=${b.n})`)
  console.log(`  the plugin's own latency:  median ${ms(c.median)}  p95 ${ms(c.p95)}  (direct POST of a like body)`)
  console.log(`  added by the service:      ${ms(added)} (target < 5 ms: ${added < 5 ? 'met' : 'NOT met'})`)
  emitBenchJson('plugins', { driver, without_median_ms: a.median, with_median_ms: b.median, plugin_median_ms: c.median, added_ms: added })
  await app.close()
} finally {
  receiver.kill()
  await scratch.cleanup()
}
