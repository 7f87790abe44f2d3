import { join } from 'node:path'
import { type Config, ConfigError } from '../config'
import { type Clock, systemClock } from './clock'
import { loadOrCreateKeyFile, parseSecretKey, randomBytes, SecretBox } from './crypto'
import { restrictNewFiles, StartupError } from './data-dir'
import { type Database, type DbOptions, openDatabase } from './db'
import { EventBus, EventCatalog } from './events'
import { FilterHooks } from './filters'
import { ClientIpResolver } from './http'
import { JobQueue } from './jobs'
import { createLogger, type Logger } from './logger'
import { Mailer, registerMailQueue } from './mail'
import { Metrics } from './metrics'
import { migrate, type MigrateResult } from './migrate'
import type { Admission } from './auth'
import type { GraphQLContribution } from './graphql'
import type { ReadStep } from './read'
import type { PreviewTokenVerifier } from './preview'
import { MemoryRateLimitStore, PostgresRateLimitStore, RateLimiter, RateLimitTable } from './rate-limit'
import { ReplicaRouter } from './replicas'

/**
 * What every module may use, made once at start-up and handed down; there are no module-level singletons. The kernel
 * imports no module: a module's own state (caches, indexes) lives in the value its `setup` returns.
 */
export interface Kernel {
  config: Config
  /** This process, as other instances see it in NOTIFY messages (it ignores its own). */
  instanceId: string
  db: Database
  /**
   * Where the public reads that miss the caches run (kernel/replicas.ts): `replicas.read(spaceId, (db) => ...)` runs
   * on a read replica (DATABASE_REPLICA_URLS) that has replayed the Space's last change, else on `db`.
   */
  replicas: ReplicaRouter
  clock: Clock
  logger: Logger
  /** Committed events, here and from other instances (kernel/events.ts). */
  bus: EventBus
  /** Every event the modules declare (names, descriptions, webhook projections). */
  events: EventCatalog
  /**
   * Filter hooks (kernel/filters.ts): declared by the modules that own them, handled by any module, run before a
   * change with no transaction open (`filters.run(name, payload, actor)`: allow, amend or veto).
   */
  filters: FilterHooks
  /** The durable job queue; workers run only after startWorkers(kernel) (kernel/jobs). */
  jobs: JobQueue
  /** Outgoing mail: `enqueue` in a transaction (sent by the durable `mail.send` job), `send` from job handlers (kernel/mail.ts). */
  mail: Mailer
  /** Seals and opens stored secrets (AES-256-GCM under SERVICE_SECRET_KEY). */
  secrets: SecretBox
  /** Per-IP limits; the rows come from the modules (createRuntime) and the kernel's defaults. */
  rateLimiter: RateLimiter
  clientIp: ClientIpResolver
  /** Steps of the public Story read, from the modules (createRuntime), in module-list order (kernel/read.ts). */
  readSteps: ReadStep[]
  /** The modules' GraphQL fields (createRuntime), in module-list order; the graphql module builds the schema from them. */
  graphql: GraphQLContribution[]
  /** Prometheus metrics (kernel/metrics.ts) when METRICS=on or METRICS_PORT is set; null: off, and nothing is measured. */
  metrics: Metrics | null
  /** The modules' readiness checks (createRuntime), in module-list order: null when ready, else why not. */
  readiness: { module: string; check(): string | null }[]
  /**
   * The modules' admission hooks (createRuntime), in module-list order: run by the guards on every request they let
   * in; a hook that throws an AppError refuses the request with it (billing: usage counting, the request limit).
   */
  admissions: { module: string; admit(request: Admission): void | Promise<void> }[]
  /**
   * The verifier of preview tokens, from the one module that provides it (`previewTokens` in kernel/module.ts; set by
   * createRuntime), or null. Draft reads ask it through `requireDraftReader` (kernel/preview.ts).
   */
  previewTokens: PreviewTokenVerifier | null
  /** Stops the workers and the bus, then closes the database if the kernel opened it. */
  close(): Promise<void>
}

export interface KernelOptions {
  clock?: Clock
  logger?: Logger
  /** An already open database (tests, a second instance in one process); the kernel then leaves it open at close. */
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

/** How `config` opens the database, with start-up progress and the fsync warning through `logger`. */
export function databaseOptions(config: Config, logger: Logger): DbOptions {
  const embeddedOnDisk = !config.databaseUrl && !config.memoryDb
  if (embeddedOnDisk && !config.pgliteFsync) {
    logger.warn('PGLITE_FSYNC=off: commits are not flushed to the disk; a power loss or host crash can lose or corrupt the embedded database', {
      data_dir: config.dataDir,
    })
  }
  return {
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    memory: config.memoryDb,
    fsync: config.pgliteFsync,
    sharedBuffersMb: config.pgliteSharedBuffersMb,
    connectTimeoutSeconds: config.databaseConnectTimeoutSeconds,
    listenUrl: config.databaseListenUrl,
    pooler: config.databasePooler,
    poolMax: config.databasePoolMax,
    onProgress: (msg, fields) => logger.info(msg, fields),
    onWarning: (msg, fields) => logger.warn(msg, fields),
  }
}

/** Applies pending migrations, logging each one and a summary line. */
export async function migrateAndReport(db: Database, logger: Logger): Promise<MigrateResult> {
  const t0 = performance.now()
  const r = await migrate(db, (s) => logger.info(`applying migration ${s.tag}`, { migration: s.tag, step: `${s.index}/${s.total}` }))
  const ms = Math.round(performance.now() - t0)
  if (r.applied.length) {
    logger.info(`database migrated: applied ${r.applied.length} migration(s) in ${ms} ms; ${r.total} in all`, {
      applied: r.applied.length,
      total: r.total,
      ms,
    })
  } else {
    logger.info(`database up to date (${r.total} migration(s))`, { applied: 0, total: r.total })
  }
  return r
}

/**
 * A server or worker lives on the other instances' notifications (caches, search, job wake-ups). Through a pooler in
 * transaction mode LISTEN silently receives nothing, so on Postgres this proves, before serving, that a NOTIFY sent
 * through the pool arrives; otherwise start-up stops and names the settings that fix it.
 */
export async function checkEventDelivery(kernel: Pick<Kernel, 'db'>, timeoutMs = 5_000): Promise<void> {
  if (!kernel.db.probeNotify || (await kernel.db.probeNotify(timeoutMs))) return
  throw new StartupError(
    `LISTEN/NOTIFY does not work through this connection: a notification sent through DATABASE_URL did not arrive within ${timeoutMs / 1000} s. ` +
      'A connection pooler in transaction mode (PgBouncer, Supavisor, RDS Proxy) cannot carry LISTEN, and instances would miss each ' +
      "other's changes. Set DATABASE_POOLER=transaction and DATABASE_LISTEN_URL to a direct connection to Postgres (or a session-mode pool).",
  )
}

export async function createKernel(config: Config, opts: KernelOptions = {}): Promise<Kernel> {
  // The key file lives in the data folder: read or create it only once the database holds the folder's lock.
  const keyInDataDir = !config.secretKey && !config.memoryDb && !config.databaseUrl && !opts.database
  const early = keyInDataDir ? null : secretBoxFor(config)
  // Files the process writes under DATA_DIR (mail, image cache; the embedded database) are its user's only.
  if (!config.memoryDb) restrictNewFiles()
  const logger = opts.logger ?? createLogger(config.logLevel, undefined, config.logFormat)
  const clock = opts.clock ?? systemClock
  const ownsDatabase = !opts.database
  const db = opts.database ?? (await openDatabase(databaseOptions(config, logger)))
  if (opts.migrate !== false) {
    try {
      await migrateAndReport(db, logger)
    } catch (err) {
      if (ownsDatabase) await db.close().catch(() => {})
      throw err
    }
  }
  const secrets = early ?? secretBoxFor(config)
  const instanceId = crypto.randomUUID()
  const bus = new EventBus(instanceId, (err, event) =>
    logger.error('event handler failed', { event: event.type, event_id: event.id, error: String(err) }),
  )
  const store =
    config.rateLimitStore === 'postgres'
      ? new PostgresRateLimitStore(db, secrets.derive('rate-limit-keys'), (err) =>
          logger.warn('rate limits: Postgres cannot be reached; counting in this process until it is back', { error: String((err as Error)?.message ?? err) }),
        )
      : new MemoryRateLimitStore()
  const jobs = new JobQueue({
    db,
    clock,
    logger,
    leaseMs: config.jobLeaseSeconds * 1000,
    pollIntervalMs: config.jobPollIntervalMs,
    eventsRetentionHours: config.eventsRetentionHours,
  })
  const mail = new Mailer(config, logger, clock, jobs)
  registerMailQueue(jobs, mail, clock, secrets)
  // Committed events wake the outbox relay (here, or on the worker instances through NOTIFY). Only the committing
  // instance does: the others learn of the outbox row from that NOTIFY or their own polling.
  bus.subscribe('*', (_e, { origin }) => {
    if (origin === 'local') jobs.outboxWritten()
  })
  if (config.databaseReplicaUrls.length && db.driver !== 'postgres') {
    logger.warn('DATABASE_REPLICA_URLS is ignored: the embedded database (PGlite) has no replicas, every read is served by it', {
      replicas: config.databaseReplicaUrls.length,
    })
  }
  const replicas = new ReplicaRouter(db, db.driver === 'postgres' ? config.databaseReplicaUrls : [], config.replicaMaxLagMs, logger, {
    poolMax: config.databasePoolMax,
    connectTimeoutSeconds: config.databaseConnectTimeoutSeconds,
  })
  // Every committed change of a Space (here, or on another instance through NOTIFY) keeps its reads on the primary
  // until the replicas have replayed it; missed events (a resync) do so for every Space.
  if (replicas.enabled) {
    bus.subscribe('*', (e) => {
      if (e.spaceId !== null) replicas.changed(e.spaceId)
    })
    bus.onResync(() => replicas.resync())
  }
  let closing: Promise<void> | null = null
  return {
    config,
    instanceId,
    db,
    replicas,
    clock,
    logger,
    bus,
    events: new EventCatalog(),
    filters: new FilterHooks(),
    jobs,
    mail,
    secrets,
    rateLimiter: new RateLimiter(new RateLimitTable(), store, clock),
    clientIp: new ClientIpResolver(config.trustedProxies),
    readSteps: [],
    graphql: [],
    readiness: [],
    admissions: [],
    previewTokens: null,
    metrics: config.metrics || config.metricsPort !== null ? new Metrics(db, logger, replicas) : null,
    close() {
      closing ??= (async () => {
        await jobs.stop()
        mail.close()
        await bus.close()
        await replicas.close()
        if (ownsDatabase) await db.close()
      })()
      return closing
    },
  }
}
