// bun scripts/bench/ai.ts [--requests=200] [--first-delay-ms=20]
//
// What `POST /v1/spaces/{space}/ai/stream-text` adds to a provider's time to first token. A fake OpenAI-compatible
// server (test/helpers/fake-ai.ts) in this process streams 5 chunks after --first-delay-ms; the service runs from
// source in its own process on a fresh embedded database, with AI_BASE_URL pointing at the fake. Requests run one at
// a time, alternating: straight to the fake (its own TTFT), then through the service (bearer check, Space and role,
// budget query, the outbound guard, the upstream request, SSE re-framing). Reports median and p95 of both and the
// difference; the target is < 5 ms added at the median.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startFakeAi } from '../../test/helpers/fake-ai'

const { values: args } = parseArgs({
  options: { requests: { type: 'string', default: '200' }, 'first-delay-ms': { type: 'string', default: '20' } },
})
const N = Number(args.requests)
const firstDelayMs = Number(args['first-delay-ms'])
const root = join(import.meta.dir, '..', '..')
const fake = startFakeAi()
fake.respond(() => ({ kind: 'stream', chunks: ['Hello', ' from', ' the', ' fake', ' model'], firstDelayMs }))

const dir = mkdtempSync(join(tmpdir(), 'cs-ai-'))
const port = 19_000 + Math.floor(Math.random() * 1000)
const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  DATA_DIR: dir,
  PORT: String(port),
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  TRUSTED_PROXIES: '127.0.0.1',
  PGLITE_FSYNC: 'off',
  AI_BASE_URL: fake.url,
  AI_MODEL: 'bench-model',
}
const server = Bun.spawn(['bun', '--max-http-header-size=131072', join(root, 'bin', 'content-service.ts'), 'serve', '--no-worker'], { env, stdout: 'ignore', stderr: 'inherit' })
const base = `http://127.0.0.1:${port}`

/** Milliseconds from sending the request to the first `data:` line with text. */
async function ttft(url: string, init: RequestInit): Promise<number> {
  const t0 = performance.now()
  const res = await fetch(url, init)
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`)
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  let seen = ''
  let at = -1
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    seen += dec.decode(value, { stream: true })
    if (at < 0 && /data: \{"(text|id)"/.test(seen)) at = performance.now() - t0
  }
  if (at < 0) throw new Error(`no token from ${url}: ${seen.slice(0, 200)}`)
  return at
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}

try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/v1/version`)).ok) break
    } catch {}
    if (i > 600) throw new Error('server did not start')
    await Bun.sleep(100)
  }
  const call = async (method: string, path: string, token: string | null, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), 'x-forwarded-for': '10.250.0.1' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return text ? JSON.parse(text) : null
  }
  const { data: session } = await call('POST', '/v1/auth/register', null, { email: `ai${Date.now()}@example.com`, password: 'bench bench bench bench', name: 'Bench' })
  await call('POST', '/v1/spaces', session.token, { slug: 'bench', name: 'Bench', default_lang: 'en' })
  const direct: number[] = []
  const through: number[] = []
  const floor: number[] = []
  const upstreamBody = JSON.stringify({ model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'Say hello' }] })
  for (let i = 0; i < N + 10; i++) {
    const d = await ttft(`${fake.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: upstreamBody })
    // A new client address per request: the route's 10/min limit is per address (trusted proxy).
    const s = await ttft(`${base}/v1/spaces/bench/ai/stream-text`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${session.token}`, 'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
      body: JSON.stringify({ prompt: 'Say hello' }),
    })
    // The floor of any authenticated Space route on this machine now: bearer, Space and role, a small JSON answer.
    const f0 = performance.now()
    const st = await fetch(`${base}/v1/spaces/bench/ai/status`, { headers: { authorization: `Bearer ${session.token}`, 'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` } })
    await st.arrayBuffer()
    const f = performance.now() - f0
    if (i >= 10) {
      direct.push(d)
      through.push(s)
      floor.push(f)
    }
  }
  const row = (name: string, xs: number[]) => `${name.padEnd(22)} median ${pct(xs, 50).toFixed(2)} ms   p95 ${pct(xs, 95).toFixed(2)} ms`
  console.log(`stream-text time to first token, ${N} requests each (fake provider's first token after ${firstDelayMs} ms)`)
  console.log(row('fake provider direct', direct))
  console.log(row('through stream-text', through))
  console.log(row('GET ai/status (floor)', floor))
  console.log(`added: median ${(pct(through, 50) - pct(direct, 50)).toFixed(2)} ms, p95 ${(pct(through, 95) - pct(direct, 95)).toFixed(2)} ms (target < 5 ms at the median)`)
  // bun run bench (scripts/bench/all.ts): the machine-readable summary.
  if (process.env.BENCH_JSON === '1') console.log(`BENCH_JSON ${JSON.stringify({ bench: 'ai', figures: { direct_median_ms: pct(direct, 50), through_median_ms: pct(through, 50), floor_median_ms: pct(floor, 50), added_median_ms: pct(through, 50) - pct(direct, 50) } })}`)
} finally {
  server.kill()
  await server.exited
  await fake.stop()
  rmSync(dir, { recursive: true, force: true })
}
