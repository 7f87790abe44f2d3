// bun run bench:overlay [--driver=pglite|postgres] [--server=binary|source] [--paths=1000] [--rules=50]
//                       [--duration=10] [--rounds=5] [--connections=64] [--pg=postgres://postgres@127.0.0.1:5432]
//
// DOM overlay reads against Story reads, in the same run, on the same server process (issue 30: overlay reads at
// ≥ 0.9 of Story read throughput).
// 1. Starts the server as its own process on a fresh PGlite folder or Postgres database: the built executable
//    (dist/content-service, rebuilt first) or, with --server=source, `bun bin/content-service.ts serve`.
// 2. Seeds through the public API: a Space with --paths published Stories (/section-N/article-M, about 2 KB each) and
//    --rules DOM overlay rules (path globs such as /section-3/**, /**/article-1*, /** and exact paths; every action).
// 3. Warms both reads over every path, checks their answers, then drives GET /v1/cdn/{space}/stories/{path} and
//    GET /v1/cdn/{space}/dom-overlay?path=/{path}&lang=en over the same paths with wrk (scripts/bench/wrk.ts), in
//    alternating rounds (the order rotated each round). The ratio of the medians (overlay / Story) is printed last.
// Requests rotate X-Forwarded-For over 16,384 addresses (the server trusts loopback as a proxy) so the per-IP limit of
// 600/min does not turn the run into a 429 benchmark; the limiter still runs on every request.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { emitBenchJson } from './json'
import { scratchDatabase } from './scratch'
import { alternate, formatTable, waitFor } from './wrk'

const root = join(import.meta.dir, '..', '..')
const { values: args } = parseArgs({
  options: {
    driver: { type: 'string', default: 'pglite' },
    server: { type: 'string', default: 'binary' },
    paths: { type: 'string', default: '1000' },
    rules: { type: 'string', default: '50' },
    duration: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '64' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
  },
})
const N_PATHS = Number(args.paths)
const N_RULES = Number(args.rules)
const CLIENT_ADDRESSES = 16_384
const SPACE = 'bench-overlay'

function serverCommand(): string[] {
  if (args.server === 'source') return ['bun', '--max-http-header-size=131072', join(root, 'bin', 'content-service.ts'), 'serve']
  // Always rebuild: a stale executable would measure old code.
  const b = Bun.spawnSync(['bun', 'run', 'build'], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
  const bin = join(root, 'dist', 'content-service')
  if (b.exitCode !== 0 || !existsSync(bin)) throw new Error('build failed; run with --server=source to bench from source')
  return [bin, 'serve']
}

let ipCounter = 0
const nextIp = () => {
  ipCounter++
  return `10.200.${(ipCounter >> 8) & 255}.${ipCounter & 255}`
}

async function call(base: string, method: string, path: string, token: string | null, body?: unknown) {
  const headers: Record<string, string> = { 'x-forwarded-for': nextIp() }
  if (token) headers.authorization = `Bearer ${token}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`)
  return text ? JSON.parse(text) : null
}

const LOREM = 'Content lives in Spaces as Stories: block documents with versions, locales and a publishing status. '

async function seed(base: string): Promise<string[]> {
  const t0 = performance.now()
  const reg = await call(base, 'POST', '/v1/auth/register', null, { email: `bench-${Date.now()}@example.com`, password: 'bench bench bench bench', name: 'Bench' })
  const token = reg.data.token as string
  await call(base, 'POST', '/v1/spaces', token, { slug: SPACE, name: 'Bench overlay', locales: ['en', 'de'] })
  await call(base, 'POST', `/v1/spaces/${SPACE}/components`, token, { name: 'hero', schema: { headline: { type: 'text' }, text: { type: 'textarea' } } })
  const sections = Math.max(1, Math.ceil(N_PATHS / 100))
  const paths: string[] = []
  for (let s = 0; s < sections; s++) {
    const folder = await call(base, 'POST', `/v1/spaces/${SPACE}/stories`, token, { name: `Section ${s}`, slug: `section-${s}`, is_folder: true })
    const count = Math.min(100, N_PATHS - s * 100)
    for (let k = 0; k < count; k += 16) {
      await Promise.all(
        Array.from({ length: Math.min(16, count - k) }, async (_, j) => {
          const i = s * 100 + k + j
          const blocks = Array.from({ length: 10 }, (_, b) => ({ component: 'hero', _uid: `h${i}-${b}`, headline: `Article ${i}`, text: `${b}: ${LOREM}` }))
          const story = await call(base, 'POST', `/v1/spaces/${SPACE}/stories`, token, {
            name: `Article ${i}`,
            slug: `article-${i}`,
            parent_uuid: folder.data.uuid,
            content: { type: 'doc', blocks },
          })
          await call(base, 'POST', `/v1/spaces/${SPACE}/stories/${story.data.uuid}/publish`, token)
          paths.push(`section-${s}/article-${i}`)
        }),
      )
    }
  }
  const actions = [
    { action: 'replace_text', content: { en: 'Sale', de: 'Angebot' } },
    { action: 'hide' },
    { action: 'insert_before', content: { en: '<span class="badge">New</span>' } },
    { action: 'insert_after', content: { en: '<p class="note">Shipping is <b>free</b> this week.</p>' } },
    { action: 'replace_html', content: { en: '<strong>Hello</strong> there' } },
    { action: 'set_attribute', attribute: 'href', content: { en: 'https://shop.example/sale' } },
  ]
  for (let r = 0; r < N_RULES; r++) {
    const pattern = r % 5 === 0 ? '/**' : r % 5 === 1 ? `/section-${r % sections}/**` : r % 5 === 2 ? `/**/article-${r % 10}*` : r % 5 === 3 ? `/section-*/article-${r}` : '/about'
    await call(base, 'POST', `/v1/spaces/${SPACE}/dom-overlays`, token, { name: `rule ${r}`, path_pattern: pattern, selector: `main .block-${r} > h2`, priority: r % 7, ...actions[r % actions.length] })
  }
  console.log(`  seeded ${paths.length} published Stories and ${N_RULES} overlay rules through the API in ${Math.round(performance.now() - t0)} ms`)
  return paths
}

async function run(driver: 'pglite' | 'postgres') {
  console.log(`\n== ${driver} ==`)
  const { env, cleanup } = await scratchDatabase(driver, args.pg, 'cs_bench_overlay')
  const port = 19_000 + Math.floor(Math.random() * 1000)
  const server = Bun.spawn(serverCommand(), {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', TRUSTED_PROXIES: '127.0.0.1' },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  const base = `http://127.0.0.1:${port}`
  try {
    await waitFor(`${base}/v1/version`)
    const paths = await seed(base)
    const story = paths.map((p) => `/v1/cdn/${SPACE}/stories/${p}`)
    const overlay = paths.map((p) => `/v1/cdn/${SPACE}/dom-overlay?path=${encodeURIComponent(`/${p}`)}&lang=en`)
    // Warm both over every path and check what they answer.
    let rulesServed = 0
    for (let k = 0; k < paths.length; k += 32) {
      await Promise.all(
        paths.slice(k, k + 32).map(async (_, j) => {
          for (const url of [story[k + j], overlay[k + j]]) {
            const res = await fetch(base + url, { headers: { 'x-forwarded-for': nextIp() } })
            if (res.status !== 200) throw new Error(`warm-up ${url}: ${res.status}`)
            const body = (await res.json()) as { data: { rules?: unknown[] } }
            if (body.data.rules) rulesServed += body.data.rules.length
          }
        }),
      )
    }
    const sample = await fetch(base + overlay[0], { headers: { 'x-forwarded-for': nextIp() } })
    console.log(
      `  overlay answers: ${(rulesServed / paths.length).toFixed(1)} rules per path on average; sample ${(await sample.arrayBuffer()).byteLength} bytes, ` +
        `cache-control ${sample.headers.get('cache-control')}`,
    )
    const r = await alternate(
      [
        { name: 'story read', base },
        { name: 'overlay read', base },
      ],
      {
        paths: story,
        rounds: Number(args.rounds),
        durationSeconds: Number(args.duration),
        connections: Number(args.connections),
        rotateForwardedFor: CLIENT_ADDRESSES,
        baselineName: 'story read',
        onRound: (round, name, x) => console.log(`  round ${round} ${name}: ${x.rps} req/s, p99 ${x.p99Ms.toFixed(2)} ms, non-2xx/3xx ${x.non2xx3xx}`),
        pathsOf: (name) => (name === 'story read' ? story : overlay),
      },
    )
    console.log(formatTable(`${driver}: overlay reads vs Story reads (same server, alternating rounds)`, r))
    console.log(`  overlay / Story throughput: ${r.ratio['overlay read'].toFixed(3)} (target ≥ 0.9)`)
    emitBenchJson('overlay', { driver, overlay_rps: r.median['overlay read'].rps, story_rps: r.median['story read'].rps, ratio: r.ratio['overlay read'] })
  } finally {
    server.kill()
    await server.exited
    await cleanup()
  }
}

for (const d of args.driver === 'both' ? (['pglite', 'postgres'] as const) : [args.driver as 'pglite' | 'postgres']) await run(d)
