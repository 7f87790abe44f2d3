// The load harness of the HTTP benchmarks: wrk (a C load generator; a Node one saturates a core of its own on this
// 2-core machine and hides the server's cost), a raw Bun.serve baseline in its own process answering the same bytes
// and headers, and alternating rounds so that both see the same machine. Figures are reported as ratios to the
// baseline. `bun scripts/bench/wrk.ts --self-test` runs two identical baselines against each other (ratio ≈ 1).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface WrkTarget {
  name: string
  base: string
}

export interface WrkOptions {
  /**
   * Request paths (with a leading slash), rotated across requests; or [path, value] pairs: the value of header
   * `headerName` for GET, the request body for POST.
   */
  paths: (string | [string, string])[]
  headerName?: string
  /** GET (default) or POST. */
  method?: 'GET' | 'POST'
  /** Fixed headers on every request. */
  headers?: Record<string, string>
  /** Milliseconds each connection waits after a response before its next request (paces the offered rate). */
  delayMs?: number
  /** Each request from another X-Forwarded-For address, rotating over this many (0: no header). */
  rotateForwardedFor?: number
  connections?: number
  threads?: number
  durationSeconds?: number
  /** More environment for the script. */
  env?: Record<string, string>
}

export interface WrkResult {
  rps: number
  p50Ms: number
  p90Ms: number
  p99Ms: number
  requests: number
  non2xx3xx: number
  socketErrors: number
}

function wrkBinary(): string {
  const found = Bun.which('wrk')
  if (!found) throw new Error('wrk is not installed: apt-get install -y wrk')
  return found
}

export async function runWrk(target: WrkTarget, opts: WrkOptions): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'cs-wrk-'))
  try {
    const file = join(dir, 'paths.txt')
    // One request line per client address: a short path list is repeated so every address in the rotation is used.
    const lines = opts.paths.map((p) => (Array.isArray(p) ? `${p[0]}\t${p[1]}` : p))
    const want = Math.max(lines.length, opts.rotateForwardedFor ?? 0)
    writeFileSync(file, Array.from({ length: want }, (_, k) => lines[k % lines.length]).join('\n') + '\n')
    const args = [
      wrkBinary(),
      `-t${opts.threads ?? 2}`,
      `-c${opts.connections ?? 64}`,
      `-d${opts.durationSeconds ?? 10}s`,
      '--timeout',
      '5s',
      '-s',
      join(import.meta.dir, 'wrk.lua'),
      target.base,
    ]
    const env: Record<string, string> = { ...process.env, ...opts.env, WRK_PATHS: file, WRK_IPS: String(opts.rotateForwardedFor ?? 0) } as Record<string, string>
    if (opts.headerName) env.WRK_HEADER_NAME = opts.headerName
    if (opts.method) env.WRK_METHOD = opts.method
    if (opts.delayMs) env.WRK_DELAY_MS = String(opts.delayMs)
    if (opts.headers) env.WRK_HEADERS = Object.entries(opts.headers).map(([k, v]) => `${k}: ${v}`).join('\n')
    const p = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe', env })
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
    const line = out.split('\n').find((l) => l.startsWith('WRK_RESULT '))
    if (code !== 0 || !line) throw new Error(`wrk failed (${code}): ${err || out}`)
    const r = JSON.parse(line.slice('WRK_RESULT '.length))
    return {
      rps: Math.round(r.requests / (r.duration_us / 1e6)),
      p50Ms: r.p50_us / 1000,
      p90Ms: r.p90_us / 1000,
      p99Ms: r.p99_us / 1000,
      requests: r.requests,
      non2xx3xx: r.non2xx3xx,
      socketErrors: r.socket_errors,
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

export interface AlternateResult {
  perTarget: Record<string, WrkResult[]>
  median: Record<string, WrkResult>
  /** Median rps of each target over the baseline's. */
  ratio: Record<string, number>
}

/** Rounds in which every target runs once, the order rotated each round so that none always goes first. */
export async function alternate(
  targets: WrkTarget[],
  opts: WrkOptions & {
    rounds: number
    baselineName: string
    pauseMs?: number
    onRound?: (round: number, name: string, r: WrkResult) => void
    /** Each target's own request paths (default: `paths` for all), e.g. two routes of one server compared. */
    pathsOf?: (name: string) => WrkOptions['paths']
  },
): Promise<AlternateResult> {
  const perTarget: Record<string, WrkResult[]> = Object.fromEntries(targets.map((t) => [t.name, []]))
  for (let round = 0; round < opts.rounds; round++) {
    for (let k = 0; k < targets.length; k++) {
      const target = targets[(round + k) % targets.length]
      const r = await runWrk(target, opts.pathsOf ? { ...opts, paths: opts.pathsOf(target.name) } : opts)
      perTarget[target.name].push(r)
      opts.onRound?.(round + 1, target.name, r)
      await Bun.sleep(opts.pauseMs ?? 500)
    }
  }
  const med: Record<string, WrkResult> = {}
  for (const [name, list] of Object.entries(perTarget)) {
    med[name] = {
      rps: Math.round(median(list.map((r) => r.rps))),
      p50Ms: median(list.map((r) => r.p50Ms)),
      p90Ms: median(list.map((r) => r.p90Ms)),
      p99Ms: median(list.map((r) => r.p99Ms)),
      requests: list.reduce((a, r) => a + r.requests, 0),
      non2xx3xx: list.reduce((a, r) => a + r.non2xx3xx, 0),
      socketErrors: list.reduce((a, r) => a + r.socketErrors, 0),
    }
  }
  const base = med[opts.baselineName].rps
  const ratio = Object.fromEntries(Object.entries(med).map(([name, r]) => [name, Math.round((r.rps / base) * 1000) / 1000]))
  return { perTarget, median: med, ratio }
}

/**
 * A raw Bun.serve in its own process answering every request with exactly `body` and `headers` (status 200), or 304
 * without a body when `notModified` is set. The floor any server on this machine can reach for these bytes.
 */
export async function startRawBaseline(opts: { body: Uint8Array; headers: Record<string, string>; notModified?: boolean }) {
  const dir = mkdtempSync(join(tmpdir(), 'cs-raw-'))
  const bodyFile = join(dir, 'body')
  writeFileSync(bodyFile, opts.body)
  const code = `
    const body = new Uint8Array(await Bun.file(${JSON.stringify(bodyFile)}).arrayBuffer());
    const headers = ${JSON.stringify(opts.headers)};
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => ${opts.notModified ? 'new Response(null, { status: 304, headers })' : 'new Response(body, { headers })'} });
    console.log(server.port);`
  return spawnRawServer(code, dir, 'the raw baseline')
}

/** Runs `code` (a Bun.serve that prints its port) in its own process; stop() ends it and removes `dir`. */
async function spawnRawServer(code: string, dir: string, what: string) {
  const proc = Bun.spawn(['bun', '-e', code], { stdout: 'pipe', stderr: 'inherit' })
  const reader = proc.stdout.getReader()
  const { value } = await reader.read()
  const port = Number(new TextDecoder().decode(value).trim())
  if (!port) throw new Error(`${what} did not start`)
  return {
    base: `http://127.0.0.1:${port}`,
    async stop() {
      proc.kill()
      await proc.exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * A raw Bun.serve in its own process answering each path with that path's own bytes and headers (a Map lookup by
 * path, then the Response), 404 for any other path. Beside the one-body baseline it separates what serving many
 * distinct bodies costs any server (memory traffic) from what the service's own code costs.
 */
export async function startRawPathBaseline(entries: { path: string; body: Uint8Array; headers: Record<string, string> }[]) {
  const dir = mkdtempSync(join(tmpdir(), 'cs-raw-'))
  const bodyFile = join(dir, 'bodies')
  const indexFile = join(dir, 'index.json')
  let offset = 0
  const index = entries.map((e) => {
    const row = { path: e.path, offset, length: e.body.byteLength, headers: e.headers }
    offset += e.body.byteLength
    return row
  })
  writeFileSync(bodyFile, Buffer.concat(entries.map((e) => e.body)))
  writeFileSync(indexFile, JSON.stringify(index))
  const code = `
    const all = new Uint8Array(await Bun.file(${JSON.stringify(bodyFile)}).arrayBuffer());
    const byPath = new Map();
    for (const r of await Bun.file(${JSON.stringify(indexFile)}).json()) byPath.set(r.path, { body: new Blob([all.subarray(r.offset, r.offset + r.length)]), headers: r.headers });
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch(req) {
      const url = req.url;
      const e = byPath.get(url.slice(url.indexOf('/', 8)));
      return e ? new Response(e.body, { headers: e.headers }) : new Response(null, { status: 404 });
    } });
    console.log(server.port);`
  return spawnRawServer(code, dir, 'the per-path raw baseline')
}

export function formatTable(title: string, r: AlternateResult): string {
  const rows = Object.entries(r.median).map(
    ([name, m]) =>
      `${name.padEnd(28)} ${String(m.rps).padStart(8)} req/s   p50 ${m.p50Ms.toFixed(2).padStart(6)} ms   p99 ${m.p99Ms.toFixed(2).padStart(6)} ms   ` +
      `non-2xx/3xx ${m.non2xx3xx}   rounds: ${r.perTarget[name].map((x) => x.rps).join(', ')}`,
  )
  const ratios = Object.entries(r.ratio).map(([name, x]) => `${name}: ${x.toFixed(3)}`)
  return [`== ${title}`, ...rows, `ratio of medians to the baseline: ${ratios.join('   ')}`].join('\n')
}

if (import.meta.main && process.argv.includes('--self-test')) {
  const body = new TextEncoder().encode(JSON.stringify({ hello: 'x'.repeat(5000) }))
  const headers = { 'content-type': 'application/json' }
  const a = await startRawBaseline({ body, headers })
  const b = await startRawBaseline({ body, headers })
  try {
    const r = await alternate(
      [
        { name: 'raw A', base: a.base },
        { name: 'raw B', base: b.base },
      ],
      { paths: ['/x', '/y'], rotateForwardedFor: 1000, rounds: 3, durationSeconds: 3, baselineName: 'raw A' },
    )
    console.log(formatTable('self-test: two identical raw baselines', r))
  } finally {
    await a.stop()
    await b.stop()
  }
}

/** Waits until `url` answers 2xx (a server process starting), or throws after `ms`. */
export async function waitFor(url: string, ms = 60_000): Promise<void> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    try {
      if ((await fetch(url)).ok) return
    } catch {}
    await Bun.sleep(100)
  }
  throw new Error(`server did not come up at ${url}`)
}

/** The p-th percentile of an ascending list. */
export const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
