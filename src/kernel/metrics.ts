import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client'
import type { Database } from './db'
import type { Logger } from './logger'
import { registerMemoryMetrics } from './memory'
import type { ReplicaRouter } from './replicas'

/**
 * Prometheus metrics (prom-client), made only when METRICS=on or METRICS_PORT is set: with metrics off the kernel has
 * none and the request path pays nothing. Request counts and latencies are labelled by route template (never the raw
 * path, so hostile URLs cannot grow the label set); the rest is read at scrape time (`collect`), from memory or with
 * one grouped query per table.
 */
export class Metrics {
  readonly registry = new Registry()
  /** Requests by route template and method: counted in plain objects, read by the registry at scrape time. */
  private routes = new Map<string, Map<string, RouteStats>>()
  /** Fast-path reads by route template: [hits, misses]. */
  private fastReads = new Map<string, [number, number]>()

  constructor(db: Database, logger: Logger, replicas?: ReplicaRouter) {
    const registry = this.registry
    // Process: event-loop lag, heap, resident memory, CPU, open files (prom-client's default set).
    collectDefaultMetrics({ register: registry })
    registerMemoryMetrics(registry)
    // The request path only counts (no label hashing, nothing allocated once a route, method and status were seen);
    // the registry builds the series from these counts when scraped.
    const routes = this.routes
    new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
      collect() {
        this.reset()
        for (const [route, byMethod] of routes)
          for (const [method, r] of byMethod) for (const [status, n] of r.statuses) this.inc({ method, route, status }, n)
      },
    })
    registry.registerMetric(new RequestDurations(routes) as never)
    const fastReads = this.fastReads
    new Counter({
      name: 'content_service_read_cache_total',
      help: 'Public reads offered to the in-memory fast path: result="hit" answered from memory, "miss" went on to the database. Hit ratio = hit / (hit + miss)',
      labelNames: ['route', 'result'],
      registers: [registry],
      collect() {
        this.reset()
        for (const [route, [hit, miss]] of fastReads) {
          if (miss) this.inc({ route, result: 'miss' }, miss)
          if (hit) this.inc({ route, result: 'hit' }, hit)
        }
      },
    })
    const query = async <T>(text: string): Promise<T[] | null> => {
      try {
        return await db.query<T>(text)
      } catch (err) {
        logger.warn('metrics: a query failed', { error: String(err) })
        return null
      }
    }
    new Gauge({
      name: 'content_service_jobs',
      help: 'Jobs in the durable queue by queue and status: pending (depth), running, failed (kept 7 days)',
      labelNames: ['queue', 'status'],
      registers: [registry],
      async collect() {
        this.reset()
        const rows = await query<{ queue: string; status: string; n: number }>(
          `select queue, status, count(*)::int as n from jobs where status in ('pending', 'running', 'failed') group by queue, status`,
        )
        for (const r of rows ?? []) this.set({ queue: r.queue, status: r.status }, r.n)
      },
    })
    new Gauge({
      name: 'content_service_database_pool_connections',
      help: 'Connections the database driver may open (PGlite: 1; Postgres: the pool size)',
      registers: [registry],
      collect() {
        this.set(db.driver === 'pglite' ? 1 : POSTGRES_POOL_MAX)
      },
    })
    if (replicas?.enabled) replicaMetrics(registry, replicas)
    new Gauge({
      name: 'content_service_database_up',
      help: '1 when the database answered `select 1` during this scrape, else 0',
      registers: [registry],
      async collect() {
        this.set((await query('select 1')) ? 1 : 0)
      },
    })
  }

  /**
   * The bytes, budget, entries and evictions of every cache and memo the modules declare (`caches`, `memos`), one
   * label per cache, read at scrape time.
   */
  caches(list: readonly { name: string; stats: { bytes: number; entries: number; maxBytes: number; evictions: number } }[]): void {
    const registry = this.registry
    const gauge = (name: string, help: string, read: (s: (typeof list)[number]['stats']) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['cache'],
        registers: [registry],
        collect() {
          for (const c of list) this.set({ cache: c.name }, read(c.stats))
        },
      })
    gauge('content_service_cache_bytes', 'Bytes held by each in-memory cache and memo (as its size function counts them)', (s) => s.bytes)
    gauge('content_service_cache_max_bytes', 'The byte budget of each in-memory cache and memo', (s) => s.maxBytes)
    gauge('content_service_cache_entries', 'Entries in each in-memory cache and memo', (s) => s.entries)
    new Counter({
      name: 'content_service_cache_evictions_total',
      help: 'Entries each in-memory cache and memo evicted to stay within its byte budget (SIEVE)',
      labelNames: ['cache'],
      registers: [registry],
      collect() {
        this.reset()
        for (const c of list) this.inc({ cache: c.name }, c.stats.evictions)
      },
    })
  }

  /** One answered request (route: the template, or null when no route matched). */
  request(method: string, route: string | null, status: number, ms: number): void {
    const r = route ?? 'unmatched'
    let byMethod = this.routes.get(r)
    if (byMethod === undefined) this.routes.set(r, (byMethod = new Map()))
    let stats = byMethod.get(method)
    if (stats === undefined) byMethod.set(method, (stats = new RouteStats()))
    stats.statuses.set(status, (stats.statuses.get(status) ?? 0) + 1)
    const seconds = ms / 1000
    const bounds = DURATION_BUCKETS
    let i = 0
    while (i < bounds.length && seconds > bounds[i]) i++
    stats.buckets[i]++
    stats.sum += seconds
    stats.count++
  }

  /** A public read the fast path answered from memory (hit) or passed on (miss). */
  fastRead(route: string, hit: boolean): void {
    let c = this.fastReads.get(route)
    if (c === undefined) this.fastReads.set(route, (c = [0, 0]))
    c[hit ? 0 : 1]++
  }

  /** The exposition text. */
  async response(): Promise<Response> {
    const body = await this.registry.metrics()
    return new Response(body, { headers: { 'Content-Type': this.registry.contentType, 'Cache-Control': 'no-store' } })
  }
}

/** The upper bounds (seconds) of the request duration histogram. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** One route template and method: answers by status, and the duration histogram (the last bucket: above every bound). */
class RouteStats {
  statuses = new Map<number, number>()
  buckets = new Float64Array(DURATION_BUCKETS.length + 1)
  sum = 0
  count = 0
}

type Labels = Record<string, string | number>
interface Sample {
  value: number
  labels: Labels
  sharedLabels?: Labels
  metricName: string
}

/**
 * `http_request_duration_seconds` for the registry: the series prom-client's Histogram would expose for the same
 * observations (cumulative `_bucket` series with `le` first, `+Inf`, `_sum`, `_count`), built at scrape time from the
 * counts `Metrics.request` keeps.
 */
class RequestDurations {
  readonly name = 'http_request_duration_seconds'
  readonly help = 'Time from the request reaching the service to its answer, by method and route template'
  readonly type = 'histogram'
  readonly aggregator = 'sum'

  constructor(private routes: Map<string, Map<string, RouteStats>>) {}

  private samples(split: boolean): Sample[] {
    const out: Sample[] = []
    const name = this.name
    const sample = (le: Labels, value: number, metricName: string, labels: Labels): Sample =>
      split ? { value, labels: le, sharedLabels: labels, metricName } : { value, labels: { ...le, ...labels }, metricName }
    for (const [route, byMethod] of this.routes) {
      for (const [method, r] of byMethod) {
        const labels = { method, route }
        let acc = 0
        for (let i = 0; i < DURATION_BUCKETS.length; i++) {
          acc += r.buckets[i]
          out.push(sample({ le: DURATION_BUCKETS[i] }, acc, `${name}_bucket`, labels))
        }
        out.push(sample({ le: '+Inf' }, r.count, `${name}_bucket`, labels))
        out.push(sample({}, r.sum, `${name}_sum`, labels))
        out.push(sample({}, r.count, `${name}_count`, labels))
      }
    }
    return out
  }

  /** What the registry's text exposition reads. */
  async getForPromString() {
    return { name: this.name, help: this.help, type: this.type, values: this.samples(true), aggregator: this.aggregator }
  }

  /** What the registry's JSON reads. */
  async get() {
    return { name: this.name, help: this.help, type: this.type, values: this.samples(false), aggregator: this.aggregator }
  }

  reset() {
    this.routes.clear()
  }
}

/** Read replicas (kernel/replicas.ts): where the public reads went, why some did not, each replica's state and lag. */
function replicaMetrics(registry: Registry, replicas: ReplicaRouter) {
  new Counter({
    name: 'content_service_db_public_reads_total',
    help: 'Public reads that missed the caches, by the database that served them: target="primary" or a replica (host:port/database)',
    labelNames: ['target'],
    registers: [registry],
    collect() {
      this.reset()
      for (const [target, n] of replicas.reads) this.inc({ target }, n)
    },
  })
  new Counter({
    name: 'content_service_db_replica_fallbacks_total',
    help: 'Public reads sent to the primary although replicas are configured, by reason: down (no replica answers), lagging (past REPLICA_MAX_LAG_MS), space_changed (the Space changed after what the replicas replayed), error (the query failed on a replica and ran again on the primary)',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset()
      for (const [reason, n] of replicas.fallbacks) this.inc({ reason }, n)
    },
  })
  new Gauge({
    name: 'content_service_db_replica_lag_seconds',
    help: 'How far each read replica is behind the primary, in seconds (time since the primary first showed a WAL position the replica has not replayed; -1 until known)',
    labelNames: ['replica'],
    registers: [registry],
    collect() {
      this.reset()
      for (const r of replicas.status()) this.set({ replica: r.name }, r.lagMs === null ? -1 : r.lagMs / 1000)
    },
  })
  new Gauge({
    name: 'content_service_db_replica_up',
    help: 'Whether each read replica serves reads: 1 up, 0 lagging past REPLICA_MAX_LAG_MS or down',
    labelNames: ['replica', 'state'],
    registers: [registry],
    collect() {
      this.reset()
      for (const r of replicas.status()) this.set({ replica: r.name, state: r.state }, r.state === 'up' ? 1 : 0)
    },
  })
}

/** The `postgres` driver's pool size (kernel/db.ts opens it with this many connections at most). */
export const POSTGRES_POOL_MAX = 10
