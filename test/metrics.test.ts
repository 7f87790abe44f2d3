// Prometheus metrics (METRICS=on, METRICS_PORT): the exposition is parsed with a Prometheus text-format parser.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import parsePrometheusTextFormat, { type Family } from 'parse-prometheus-text-format'
import { loadConfig } from '../src/config'
import { startServer } from '../src/cli/serve'
import { type TestApp, testApp } from './helpers/app'
import { freshDatabase } from './helpers/db'

setDefaultTimeout(60_000)

let t: TestApp
let space: string
let token: string

beforeAll(async () => {
  t = await testApp({}, { METRICS: 'on' })
  const owner = await t.register()
  token = owner.token
  space = (await t.createSpace(token)).slug
  expect((await t.request('POST', `/v1/spaces/${space}/components`, { token, body: { name: 'hero', schema: { headline: { type: 'text' } } } })).status).toBe(201)
  const s = await t.request('POST', `/v1/spaces/${space}/stories`, {
    token,
    body: { slug: 'home', name: 'Home', content: { type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline: 'Hi' }] } },
  })
  expect(s.status).toBe(201)
  expect((await t.request('POST', `/v1/spaces/${space}/stories/${s.body.data.uuid}/publish`, { token })).status).toBe(200)
})
afterAll(() => t.close())

async function until(what: string, check: () => Promise<boolean>, ms = 30_000) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

async function scrape(app: TestApp = t): Promise<Map<string, Family>> {
  const r = await app.request('GET', '/metrics')
  expect(r.status).toBe(200)
  expect(r.headers.get('content-type')).toContain('text/plain')
  return new Map(parsePrometheusTextFormat(r.text).map((f) => [f.name, f]))
}

const sum = (f: Family | undefined, labels: Record<string, string>) =>
  (f?.metrics ?? []).filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v)).reduce((n, m) => n + Number(m.value ?? m.count), 0)

describe('GET /metrics with METRICS=on', () => {
  test('counts requests and their latency by route template, never by raw path', async () => {
    for (let i = 0; i < 3; i++) expect((await t.request('GET', `/v1/cdn/${space}/stories/home`)).status).toBe(200)
    expect((await t.request('GET', '/v1/no/such/route/a8f3e1')).status).toBe(404)
    expect((await t.request('GET', `/v1/spaces/${space}`, { token })).status).toBe(200)
    // Elysia runs its after-response hooks once the answer is out: wait for them, with a generous bound.
    await until('the requests counted', async () => sum((await scrape()).get('http_requests_total'), { route: '/v1/spaces/:space' }) >= 1)
    const m = await scrape()
    const requests = m.get('http_requests_total')!
    expect(requests.type).toBe('COUNTER')
    expect(sum(requests, { method: 'GET', route: '/v1/cdn/:space/stories/*', status: '200' })).toBeGreaterThanOrEqual(3)
    expect(sum(requests, { method: 'GET', route: '/v1/spaces/:space', status: '200' })).toBeGreaterThanOrEqual(1)
    expect(sum(requests, { method: 'GET', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1)
    const routes = requests.metrics.map((x) => x.labels!.route)
    expect(routes.some((r) => r.includes('a8f3e1') || r.includes(space))).toBe(false)
    const duration = m.get('http_request_duration_seconds')!
    expect(duration.type).toBe('HISTOGRAM')
    expect(duration.metrics.length).toBeGreaterThan(0)
    // parse-prometheus-text-format 1.1.1 folds labelled histograms into one unlabelled sample: read their count lines.
    const text = (await t.request('GET', '/metrics')).text
    const count = /^http_request_duration_seconds_count\{method="GET",route="\/v1\/cdn\/:space\/stories\/\*"\} (\d+)$/m.exec(text)
    expect(Number(count?.[1])).toBeGreaterThanOrEqual(3)
    expect(text).toContain('http_request_duration_seconds_bucket{le="0.005",method="GET",route="/v1/cdn/:space/stories/*"}')
  })

  test('reports the read cache hit ratio, jobs, webhooks, search, database, event loop and heap', async () => {
    await t.request('GET', `/v1/cdn/${space}/stories/home`)
    await t.request('GET', `/v1/cdn/${space}/stories/home`)
    const m = await scrape()
    expect(sum(m.get('content_service_read_cache_total'), { result: 'hit' })).toBeGreaterThan(0)
    expect(m.get('content_service_read_cache_total')!.metrics.some((x) => x.labels?.result === 'miss')).toBe(true)
    expect(m.get('content_service_jobs')!.type).toBe('GAUGE')
    expect(sum(m.get('content_service_webhook_deliveries'), { outcome: 'failed' })).toBe(0)
    expect(Number(m.get('content_service_search_documents')!.metrics[0].value)).toBeGreaterThanOrEqual(0)
    expect(Number(m.get('content_service_story_cache_entries')!.metrics[0].value)).toBeGreaterThan(0)
    expect(Number(m.get('content_service_database_pool_connections')!.metrics[0].value)).toBeGreaterThan(0)
    expect(Number(m.get('content_service_database_up')!.metrics[0].value)).toBe(1)
    expect(m.has('nodejs_eventloop_lag_seconds')).toBe(true)
    expect(Number(m.get('nodejs_heap_size_used_bytes')!.metrics[0].value)).toBeGreaterThan(0)
  })

  test('reports bytes, budget, entries and evictions of every cache and memo, by name', async () => {
    await t.request('GET', `/v1/cdn/${space}/stories/home`)
    await t.request('GET', `/v1/cdn/${space}/stories/home`)
    const m = await scrape()
    const of = (name: string, cache: string) => m.get(name)!.metrics.find((x) => x.labels?.cache === cache)
    expect(Number(of('content_service_cache_bytes', 'stories.read')!.value)).toBeGreaterThan(0)
    expect(Number(of('content_service_cache_max_bytes', 'stories.read')!.value)).toBeGreaterThan(0)
    expect(Number(of('content_service_cache_entries', 'spaces.public')!.value)).toBeGreaterThan(0)
    expect(Number(of('content_service_cache_bytes', 'stories.read-memo')!.value)).toBeGreaterThan(0)
    expect(m.get('content_service_cache_evictions_total')!.type).toBe('COUNTER')
    expect(of('content_service_cache_evictions_total', 'search.memo')).toBeDefined()
  })

  test('the job queue depth is counted by queue', async () => {
    await t.kernel.jobs.enqueue('webhooks.prune', { olderThanDays: 30 }, { runAt: new Date(t.kernel.clock.ms() + 3_600_000) })
    const m = await scrape()
    expect(sum(m.get('content_service_jobs'), { queue: 'webhooks.prune', status: 'pending' })).toBeGreaterThanOrEqual(1)
  })
})

describe('metrics off (the default)', () => {
  test('GET /metrics is 404 and the kernel measures nothing', async () => {
    const off = await testApp()
    try {
      expect(off.kernel.metrics).toBeNull()
      const r = await off.request('GET', '/metrics')
      expect(r.status).toBe(404)
      expect(r.body.error).toBe('not_found')
    } finally {
      await off.close()
    }
  })
})

describe('METRICS_PORT', () => {
  test('serves the metrics on a listener of their own, and only there', async () => {
    const tdb = process.env.TEST_DATABASE_URL ? await freshDatabase() : null
    const port = 20_000 + Math.floor(Math.random() * 20_000)
    const config = loadConfig(
      { LOG_LEVEL: 'silent', METRICS_PORT: String(port), SERVICE_SECRET_KEY: 'ef'.repeat(32) },
      { databaseUrl: tdb?.url ?? null, memoryDb: !tdb },
    )
    const server = await startServer(config, { port: 0, host: '127.0.0.1', workers: false })
    try {
      const main = server.url.replace('localhost', '127.0.0.1')
      const r = await fetch(`http://127.0.0.1:${port}/metrics`)
      expect(r.status).toBe(200)
      const families = parsePrometheusTextFormat(await r.text())
      expect(families.some((f) => f.name === 'http_requests_total')).toBe(true)
      expect((await fetch(`http://127.0.0.1:${port}/v1/version`)).status).toBe(404)
      expect((await fetch(`${main}/metrics`)).status).toBe(404)
    } finally {
      await server.stop()
      await tdb?.drop()
    }
  })
})
