import type { Config } from './config'
import { type Clock, systemClock } from './kernel/clock'
import { type Database, openDatabase } from './kernel/db'
import { EventBus } from './kernel/events'
import { ClientIpResolver } from './kernel/http'
import { createLogger, type Logger } from './kernel/logger'
import { migrate } from './kernel/migrate'
import {
  MemoryRateLimitStore,
  PostgresRateLimitStore,
  RATE_LIMITS,
  RateLimiter,
  RateLimitTable,
} from './kernel/rate-limit'

/** Everything a module may use, made once at start-up and handed down; there are no module-level singletons. */
export interface Deps {
  config: Config
  db: Database
  clock: Clock
  logger: Logger
  bus: EventBus
  rateLimiter: RateLimiter
  clientIp: ClientIpResolver
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

export async function createDeps(config: Config, opts: DepsOptions = {}): Promise<Deps> {
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
  return {
    config,
    db,
    clock,
    logger,
    bus,
    rateLimiter,
    clientIp: new ClientIpResolver(config.trustedProxies),
    async close() {
      await bus.idle()
      await db.close()
    },
  }
}
