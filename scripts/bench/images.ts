// bun scripts/bench/images.ts [--driver=pglite|postgres] [--samples=7] [--seconds=5] [--concurrency=8]
//                             [--image-concurrency=<cores>] [--pg=postgres://postgres@127.0.0.1:5432] [--only=upload]
//
// Image transforms and uploads measured against the built executable (rebuilt first), on an embedded database:
// 1. A 2000×1333 JPEG → 800 px WebP and AVIF: time per transform (new variants, so each request runs one; medians
//    after a warm-up request per format).
// 2. Transforms per second with --concurrency clients asking for new variants at once.
// 3. Public Story read throughput (same clients count, fetch loops) alone, then during a transform burst: the ratio.
// 4. Peak RSS of the server process while a 100 MB file streams in (chunked), against its RSS before, and how long
//    a small request waits meanwhile (a stalled event loop: long collections, long synchronous database calls).
// --only=upload runs the upload part alone (a short run; the server has done nothing but start and one small upload).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { jpegOf, photo } from '../../test/helpers/images'
import { emitBenchJson, type Figures } from './json'
import { scratchDatabase } from './scratch'
import { pct } from './wrk'

const { values: args } = parseArgs({
  options: { samples: { type: 'string', default: '7' }, seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '8' },
    'image-concurrency': { type: 'string' },
    driver: { type: 'string', default: 'pglite' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
    only: { type: 'string' },
  },
})
const SAMPLES = Number(args.samples)
const SECONDS = Number(args.seconds)
const CONC = Number(args.concurrency)
const root = join(import.meta.dir, '..', '..')

const build = Bun.spawnSync(['bun', 'run', 'build'], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
if (build.exitCode !== 0) throw new Error('build failed')
const dir = mkdtempSync(join(tmpdir(), 'cs-images-'))
const scratch = await scratchDatabase(args.driver === 'postgres' ? 'postgres' : 'pglite', args.pg!, 'bench_images')
const port = 20_000 + Math.floor(Math.random() * 1000)
const WIDTHS = [640, 750, 800, 828, 1080, 1200]
const server = Bun.spawn([join(root, 'dist', 'content-service'), 'serve'], {
  cwd: dir,
  env: {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    DATA_DIR: join(dir, 'data'),
    ...scratch.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    TRUSTED_PROXIES: '127.0.0.1',
    IMAGE_WIDTHS: WIDTHS.join(' '),
    ...(args['image-concurrency'] ? { IMAGE_CONCURRENCY: args['image-concurrency'] } : {}),
  },
  stdout: 'ignore',
  stderr: 'inherit',
})
const base = `http://127.0.0.1:${port}`
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
let ipn = 0
const ip = () => `10.${(++ipn >> 16) & 255}.${(ipn >> 8) & 255}.${ipn & 255}`
const PROBE = `
let stop = false
;(async () => { for await (const _ of Bun.stdin.stream()) {} stop = true })()
const waits = []
await (await fetch(process.env.PROBE_URL)).arrayBuffer() // a cold first request (connection, JIT) is not a stall
console.log('ready')
while (!stop) {
  const t = performance.now()
  await (await fetch(process.env.PROBE_URL)).arrayBuffer()
  waits.push(performance.now() - t)
  await Bun.sleep(20)
}
console.log(JSON.stringify(waits))`
const rssKb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1] ?? 0)

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
      headers: { 'content-type': 'application/json', 'x-forwarded-for': ip(), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return text ? JSON.parse(text) : null
  }
  const { data: session } = await call('POST', '/v1/auth/register', null, { email: `i${Date.now()}@example.com`, password: 'bench bench bench bench', name: 'Bench' })
  const token = session.token as string
  await call('POST', '/v1/spaces', token, { slug: 'bench', name: 'Bench', default_lang: 'en' })
  await call('POST', '/v1/spaces/bench/components', token, { name: 'hero', is_root: true, schema: { headline: { type: 'text' } } })
  const blocks = Array.from({ length: 20 }, (_, i) => ({ component: 'hero', _uid: `b${i}`, headline: `Block ${i}` }))
  const { data: story } = await call('POST', '/v1/spaces/bench/stories', token, { name: 'Home', slug: 'home', content: { type: 'doc', blocks } })
  await call('POST', `/v1/spaces/bench/stories/${story.uuid}/publish`, token)

  const jpeg = await jpegOf(photo(2000, 1333), 90)
  const fd = new FormData()
  fd.append('file', new Blob([jpeg as BlobPart], { type: 'image/jpeg' }), 'photo.jpg')
  const up = await fetch(`${base}/v1/spaces/bench/assets`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': ip() }, body: fd })
  const asset = ((await up.json()) as { data: { uuid: string } }).data
  console.log(`${args.driver}; source: 2000×1333 JPEG, ${(jpeg.length / 1024).toFixed(0)} KB; IMAGE_CONCURRENCY = ${args['image-concurrency'] ?? `cores (${navigator.hardwareConcurrency})`}; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)

  const figures: Figures = { driver: args.driver }
  if (args.only !== 'upload') await transforms()
  async function transforms() {
    // Every call asks for a variant not made before (q walks down from 99).
    let qn = 100
    const variant = async (format: string, w = 800) => {
      const q = --qn > 0 ? qn : ((qn = 99), 99)
      const wi = w === 800 ? 800 : WIDTHS[(qn * 7) % WIDTHS.length]!
      const t0 = performance.now()
      const res = await fetch(`${base}/v1/cdn/bench/assets/${asset.uuid}.${format}?w=${wi}&q=${q}&fit=${['inside', 'cover', 'contain'][qn % 3]}`, {
        headers: { 'x-forwarded-for': ip() },
      })
      await res.arrayBuffer()
      if (res.status !== 200) throw new Error(`transform answered ${res.status}`)
      return performance.now() - t0
    }

    // 1. Time per transform.
    for (const format of ['webp', 'avif', 'jpg']) {
      await variant(format) // warm-up
      const times: number[] = []
      for (let i = 0; i < SAMPLES; i++) times.push(await variant(format))
      figures[`${format}_ms`] = median(times)
      console.log(`2000×1333 JPEG → 800 px ${format}: median ${median(times).toFixed(0)} ms (min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)}, n=${SAMPLES})`)
    }

    // 3a. Story reads alone.
    const storyUrl = `${base}/v1/cdn/bench/stories/home`
    const readLoop = async (until: number) => {
      let n = 0
      while (performance.now() < until) {
        const r = await fetch(storyUrl, { headers: { 'x-forwarded-for': ip() } })
        await r.arrayBuffer()
        if (r.status === 200) n++
      }
      return n
    }
    const reads = async () => {
      const until = performance.now() + SECONDS * 1000
      const counts = await Promise.all(Array.from({ length: CONC }, () => readLoop(until)))
      return counts.reduce((a, b) => a + b, 0) / SECONDS
    }
    const alone = await reads()

    // 2 + 3b. A transform burst (CONC clients asking for new WebP variants), with the Story reads running beside it.
    let transforms = 0
    let burstOn = true
    const burst = Array.from({ length: CONC }, async () => {
      while (burstOn) {
        await variant('webp', 0)
        transforms++
      }
    })
    const t0 = performance.now()
    const during = await reads()
    burstOn = false
    await Promise.all(burst)
    const tps = transforms / ((performance.now() - t0) / 1000)
    Object.assign(figures, { transforms_per_s: tps, reads_alone_rps: alone, reads_during_rps: during })
    console.log(`transforms under ${CONC} concurrent requests: ${tps.toFixed(1)}/s (WebP, 640–1200 px, mixed fits)`)
    console.log(`Story reads (${CONC} fetch loops): ${alone.toFixed(0)}/s alone, ${during.toFixed(0)}/s during the burst: ratio ${(during / alone).toFixed(2)}`)
  }

  // 4. Peak RSS while 100 MB stream in, three times in a row: the first upload may grow pools that stay (the embedded
  // database's buffer pool lives in its WASM memory, which never shrinks); the later ones show whether memory grows
  // with each upload or stays flat.
  await Bun.sleep(500)
  const start = rssKb()
  for (let n = 1; n <= 3; n++) {
    const before = rssKb()
    let peak = before
    const sampler = setInterval(() => (peak = Math.max(peak, rssKb())), 20)
    // A small request every 20 ms meanwhile, from a process of its own (this one is busy sending the body): its
    // slowest answer is about the longest the server's event loop was held.
    const probe = Bun.spawn(['bun', '-e', PROBE], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit', env: { ...process.env, PROBE_URL: `${base}/v1/version` } })
    const probeOut = probe.stdout.getReader()
    let probeText = ''
    while (!probeText.includes('ready\n')) {
      const { done, value } = await probeOut.read()
      if (done) throw new Error('the probe process ended before it was ready')
      probeText += new TextDecoder().decode(value)
    }
    const boundary = 'benchboundary'
    const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\n`)
    const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`)
    const total = 100 * 1024 * 1024 - 1024
    // Pseudo-random bytes: a repeated byte would be compressed away by the database and measure nothing.
    const piece = new Uint8Array(256 * 1024)
    crypto.getRandomValues(piece.subarray(0, 65536))
    for (let k = 65536; k < piece.length; k += 65536) piece.set(piece.subarray(0, 65536).map((x) => x ^ (k >> 16)), k)
    let sent = 0
    let stage = 0
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (stage === 0) {
          stage = 1
          return c.enqueue(head)
        }
        if (sent < total) {
          const len = Math.min(piece.length, total - sent)
          sent += len
          return c.enqueue(len === piece.length ? piece : piece.subarray(0, len))
        }
        c.enqueue(tail)
        c.close()
      },
    })
    const t1 = performance.now()
    const big = await fetch(`${base}/v1/spaces/bench/assets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'x-forwarded-for': ip() },
      body,
    })
    const bigBody = await big.text()
    clearInterval(sampler)
    probe.stdin.end()
    for (;;) {
      const { done, value } = await probeOut.read()
      if (done) break
      probeText += new TextDecoder().decode(value)
    }
    const waits = (JSON.parse(probeText.slice(probeText.indexOf('ready\n') + 6)) as number[]).sort((a, b) => a - b)
    if (big.status !== 201) throw new Error(`100 MB upload answered ${big.status}: ${bigBody}`)
    console.log(
      `100 MB upload #${n} (chunked): ${((performance.now() - t1) / 1000).toFixed(1)} s; server RSS ${(before / 1024).toFixed(0)} MB before, peak ${(peak / 1024).toFixed(0)} MB (+${((peak - before) / 1024).toFixed(0)} MB; +${((peak - start) / 1024).toFixed(0)} MB over the first upload's start); a small request meanwhile: median ${pct(waits, 50).toFixed(0)} ms, p99 ${pct(waits, 99).toFixed(0)} ms, max ${waits[waits.length - 1]!.toFixed(0)} ms (n=${waits.length})`,
    )
    Object.assign(figures, { upload_rss_growth_mb: (peak - before) / 1024, upload_small_p99_ms: pct(waits, 99) })
    await Bun.sleep(1000)
  }
  emitBenchJson('images', figures)
} finally {
  server.kill('SIGTERM')
  await server.exited
  rmSync(dir, { recursive: true, force: true })
  await scratch.cleanup()
}
