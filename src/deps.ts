import { join } from 'node:path'
import { type Config, ConfigError } from './config'
import { type Clock, systemClock } from './kernel/clock'
import { type Database, openDatabase } from './kernel/db'
import { EventBus } from './kernel/events'
import { loadOrCreateKeyFile, parseSecretKey, randomBytes, SecretBox } from './kernel/crypto'
import { ClientIpResolver } from './kernel/http'
import { JobQueue } from './kernel/jobs'
import { createLogger, type Logger } from './kernel/logger'
import { migrate } from './kernel/migrate'
import {
  MemoryRateLimitStore,
  PostgresRateLimitStore,
  RATE_LIMITS,
  RateLimiter,
  RateLimitTable,
} from './kernel/rate-limit'
import { SearchRegistry } from './modules/search/registry'
import { StoryCache } from './modules/stories/cache'
import { registerWebhookJobs } from './modules/webhooks/delivery'

/** Every module's job queues, schedules and outbox consumers, registered on deps.jobs at start-up. */
const JOB_MODULES: ((deps: Deps) => void)[] = [registerWebhookJobs]

/** Everything a module may use, made once at start-up and handed down; there are no module-level singletons. */
export interface Deps {
  config: Config
  db: Database
  clock: Clock
  logger: Logger
  bus: EventBus
  rateLimiter: RateLimiter
  clientIp: ClientIpResolver
  /** The durable job queue; workers run only after startWorkers(deps) (src/kernel/jobs.ts). */
  jobs: JobQueue
  /** Seals and opens stored secrets (AES-256-GCM under SERVICE_SECRET_KEY). */
  secrets: SecretBox
  /** The public Story read cache of this process (see modules/stories/cache.ts). */
  storyCache: StoryCache
  /** This process's search indexes, one per Space and locale (modules/search/registry.ts); started by createApp. */
  search: SearchRegistry
  close(): Promise<void>
}

export interface DepsOptions {
  clock?: Clock
  logger?: Logger
  /** An already open database (tests share one per file); otherwise opened from config. */
  database?: Database
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean
}

/**
 * The key for stored secrets: SERVICE_SECRET_KEY; else, on the embedded database, a key generated once into the data
 * folder; in-memory databases (tests) get a throw-away key. Shared Postgres needs the variable: every instance must
 * hold the same key.
 */
function secretBoxFor(config: Config): SecretBox {
  if (config.secretKey) return new SecretBox(parseSecretKey(config.secretKey)!)
  if (config.memoryDb) return new SecretBox(randomBytes(32))
  if (config.databaseUrl) {
    throw new ConfigError('SERVICE_SECRET_KEY is required with DATABASE_URL (every instance needs the same key): openssl rand -hex 32')
  }
  return new SecretBox(loadOrCreateKeyFile(join(config.dataDir, 'secret.key')))
}

export async function createDeps(config: Config, opts: DepsOptions = {}): Promise<Deps> {
  const secrets = secretBoxFor(config)
  const logger = opts.logger ?? createLogger(config.logLevel)
  const clock = opts.clock ?? systemClock
  const db =
    opts.database ??
    (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, memory: config.memoryDb }))
  if (opts.migrate !== false) {
    const r = await migrate(db, (s) => logger.info('applying migration', { migration: s.tag, step: `${s.index}/${s.total}` }))
    if (r.applied.length) logger.info('database migrated', { applied: r.applied.length, total: r.total })
  }
  const bus = new EventBus((err, event) =>
    logger.error('event handler failed', { event: event.type, event_id: event.id, error: String(err) }),
  )
  const store = config.rateLimitStore === 'postgres' ? new PostgresRateLimitStore(db) : new MemoryRateLimitStore()
  const rateLimiter = new RateLimiter(new RateLimitTable(RATE_LIMITS), store, clock)
  const storyCache = new StoryCache(db, logger, { maxBytes: config.cdnCacheBytes, now: () => clock.now().getTime() })
  const search = new SearchRegistry()
  const jobs = new JobQueue({
    db,
    clock,
    logger,
    leaseMs: config.jobLeaseSeconds * 1000,
    pollIntervalMs: config.jobPollIntervalMs,
  })
  const deps: Deps = {
    config,
    db,
    clock,
    logger,
    bus,
    rateLimiter,
    clientIp: new ClientIpResolver(config.trustedProxies),
    storyCache,
    search,
    jobs,
    secrets,
    async close() {
      await jobs.stop()
      await bus.idle()
      await search.close()
      await storyCache.close()
      await db.close()
    },
  }
  for (const register of JOB_MODULES) register(deps)
  // Committed events wake the outbox relay (here, or on the worker instances through NOTIFY).
  bus.subscribe('*', () => jobs.outboxWritten())
  return deps
}
