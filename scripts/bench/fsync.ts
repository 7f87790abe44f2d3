// bun scripts/bench/fsync.ts [--seconds=5] [--concurrency=8]
//
// What fsync costs the embedded database: Story saves (PUT /v1/spaces/{space}/stories/{uuid}) through the HTTP API of
// `bun bin/content-service.ts serve` on PGlite, with PGLITE_FSYNC=off and then on (the default), same machine, one
// run. Each mode gets a copy of one freshly migrated data folder, then --seconds of sequential saves of one Story and
// --seconds of --concurrency clients each saving its own Story. Prints saves/s, p50 and p99 per mode and phase.
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { waitFor } from './wrk'

const { values: args } = parseArgs({
  options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '8' } },
})
const SECONDS = Number(args.seconds)
const CONCURRENCY = Number(args.concurrency)
const root = join(import.meta.dir, '..', '..')
const BIN = join(root, 'bin', 'content-service.ts')
const work = mkdtempSync(join(tmpdir(), 'cs-bench-fsync-'))

const baseEnv = { ...process.env, LOG_LEVEL: 'warn', LOG_FORMAT: 'json', TRUSTED_PROXIES: '127.0.0.1', HOST: '127.0.0.1' }
const ipOf = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN
}

interface Phase {
  saves: number
  perSecond: number
  p50: number
  p99: number
}

async function measure(fsync: 'on' | 'off', dataDir: string, port: number): Promise<{ sequential: Phase; concurrent: Phase }> {
  const proc = Bun.spawn(['bun', BIN, 'serve'], {
    env: { ...baseEnv, DATA_DIR: dataDir, PORT: String(port), PGLITE_FSYNC: fsync },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  const base = `http://127.0.0.1:${port}`
  let ip = 0
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(base + path, {
      method,
      headers: { 'content-type': 'application/json', 'x-forwarded-for': ipOf(ip++ % 60_000), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`)
    return text ? JSON.parse(text) : null
  }
  try {
    await waitFor(`${base}/v1/version`)
    const reg = await call('POST', '/v1/auth/register', { email: `fsync-${fsync}@example.com`, password: 'bench bench bench bench', name: 'Bench' })
    const auth = { authorization: `Bearer ${reg.data.token}` }
    await call('POST', '/v1/spaces', { slug: 'bench', name: 'Bench', default_lang: 'en' }, auth)
    const sp = '/v1/spaces/bench'
    await call('POST', `${sp}/components`, { name: 'paragraph', is_root: true, schema: { text: { type: 'markdown' } } }, auth)
    const doc = (n: number) => ({ type: 'doc', blocks: [{ component: 'paragraph', _uid: 'p1', text: `Save number ${n}. ${'Lorem ipsum dolor sit amet. '.repeat(40)}` }] })
    const uuids: string[] = []
    for (let i = 0; i < CONCURRENCY; i++) uuids.push((await call('POST', `${sp}/stories`, { name: `s${i}`, slug: `s${i}`, content: doc(0) }, auth)).data.uuid)

    const run = async (clients: number): Promise<Phase> => {
      const times: number[] = []
      const end = performance.now() + SECONDS * 1000
      let n = 0
      await Promise.all(
        Array.from({ length: clients }, async (_, c) => {
          while (performance.now() < end) {
            const t0 = performance.now()
            await call('PUT', `${sp}/stories/${uuids[c]}`, { content: doc(++n) }, auth)
            times.push(performance.now() - t0)
          }
        }),
      )
      times.sort((a, b) => a - b)
      return { saves: times.length, perSecond: times.length / SECONDS, p50: percentile(times, 50), p99: percentile(times, 99) }
    }
    // A short warm-up so both modes start from the same state (JIT, caches).
    for (let i = 0; i < 20; i++) await call('PUT', `${sp}/stories/${uuids[0]}`, { content: doc(-i) }, auth)
    const sequential = await run(1)
    const concurrent = await run(CONCURRENCY)
    return { sequential, concurrent }
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
  }
}

try {
  // One migrated folder, copied per mode: the first start (creating the database) is not what is measured.
  const seed = join(work, 'seed')
  const m = Bun.spawnSync(['bun', BIN, 'migrate'], { env: { ...baseEnv, DATA_DIR: seed }, stdout: 'ignore', stderr: 'inherit' })
  if (m.exitCode !== 0) throw new Error('migrate failed')
  const rows: string[] = []
  for (const [i, mode] of (['off', 'on'] as const).entries()) {
    const dir = join(work, mode)
    cpSync(seed, dir, { recursive: true })
    const r = await measure(mode, dir, 18_700 + i)
    for (const [phase, p] of Object.entries(r)) {
      rows.push(
        `| ${mode.padEnd(3)} | ${phase === 'sequential' ? 'sequential (1 client)' : `concurrent (${CONCURRENCY} clients)`} | ${p.perSecond.toFixed(0)} | ${p.p50.toFixed(1)} | ${p.p99.toFixed(1)} |`,
      )
    }
  }
  console.log(`\nStory saves (PUT, ~1.2 KB content) on PGlite, ${SECONDS} s per phase, ${new Date().toISOString().slice(0, 10)}`)
  console.log('| fsync | phase | saves/s | p50 ms | p99 ms |\n|---|---|---|---|---|')
  for (const r of rows) console.log(r)
} finally {
  rmSync(work, { recursive: true, force: true })
}
