// The only module that reads process.env. Every variable here is in the README's configuration table.
import { join } from 'node:path'
import { isIP } from 'node:net'
import type { PasswordHashCost } from './kernel/crypto'
import { parseCron } from './kernel/jobs/cron'

export const RELEASE_CHANNELS = ['pre-alpha', 'alpha', 'beta', 'stable'] as const
export type ReleaseChannel = (typeof RELEASE_CHANNELS)[number]

export interface Config {
  port: number
  host: string
  /** Absolute base for URLs the service hands out, without a trailing slash; null = the request's origin. */
  publicUrl: string | null
  /** Set → real Postgres through the `postgres` driver; unset → embedded PGlite in dataDir. */
  databaseUrl: string | null
  dataDir: string
  /** In-memory PGlite (tests only). */
  memoryDb: boolean
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent'
  /**
   * The client address in request log lines: `full` (as seen), `hash` (a daily-salted hash, the salt in memory only),
   * `off` (`-`). Private routes (a module's `privatePaths`: form submits, subscribe, confirm, unsubscribe,
   * registration) never log the address as seen: the hash, or `-` with `off`.
   */
  logClientIp: 'full' | 'hash' | 'off'
  /** Origins allowed to call the management API from a browser; ['*'] allows any. */
  corsOrigins: string[]
  /** Peers whose X-Forwarded-For is believed (IPs or CIDRs). */
  trustedProxies: string[]
  rateLimitStore: 'memory' | 'postgres'
  releaseChannel: ReleaseChannel
  beaconEnabled: boolean
  userTokenTtlDays: number
  /** Days a pitch demo Tenant lives after it is provisioned; a daily job then archives its Spaces and revokes its tokens. */
  pitchTtlDays: number
  /**
   * Who may sign up through `POST /v1/auth/register`: `open` (anyone), `first-user` (only while the service has no
   * user at all), `closed` (nobody; accounts come from `content-service user create`).
   */
  registration: Registration
  /**
   * REGISTRATION_VERIFY: a sign-up through the API (register, onboard) becomes an account only once the link mailed
   * to its address was followed (the first account of the service excepted). Default on; needs PUBLIC_URL.
   */
  registrationVerify: boolean
  /** PITCH_DEMOS: the pitch demo routes answer (default off: 403 pitch_unavailable). */
  pitchDemos: boolean
  jsonBodyLimit: number
  /** Seconds an HTTP connection may sit idle (between keep-alive requests, or mid-request) before it is closed. */
  httpIdleTimeoutSeconds: number
  /**
   * Seconds a SIGTERM/SIGINT shutdown may take in all. In-flight requests get three quarters of it (event streams
   * are ended at once), then open connections are cut; at the full time the process exits anyway (status 1).
   */
  shutdownTimeoutSeconds: number
  cdnMaxAge: number
  cdnStaleWhileRevalidate: number
  /** Memory budget of the public Story read cache (rendered bodies and snapshots), in bytes. */
  cdnCacheBytes: number
  /** Request header carrying the visitor's country code, set by the edge; believed only from TRUSTED_PROXIES peers. */
  segmentCountryHeader: string
  /**
   * 32-byte key sealing stored secrets (webhook signing secrets) with AES-256-GCM, as 64 hex characters or base64.
   * Unset: generated once into `<dataDir>/secret.key` on the embedded database; required with DATABASE_URL.
   */
  secretKey: string | null
  /** Let outbound calls (webhooks) reach loopback, private, link-local and other internal addresses. */
  outboundAllowPrivate: boolean
  /** `serve` also runs the job workers (webhook deliveries, cron schedules); `--no-worker` turns it off. */
  workerEnabled: boolean
  /** How long a worker's claim on a job lasts without renewal; a crashed worker's jobs are retried after it. */
  jobLeaseSeconds: number
  /** How often idle workers look for due jobs (new jobs also wake them at once through LISTEN/NOTIFY). */
  jobPollIntervalMs: number
  /** Webhook deliveries one worker process sends at once. */
  webhookConcurrency: number
  /** Deadline of one webhook attempt (spec: 10 s). Not an environment variable: tests shorten it. */
  webhookTimeoutMs: number
  /**
   * How often each instance compares its search indexes with the published Stories in the database and repairs the
   * difference (a safety net for index updates lost while its LISTEN connection was down); 0 turns it off.
   */
  searchReconcileSeconds: number
  /** How long `content-service reindex` waits for the running instances to finish rebuilding. */
  searchReindexTimeoutSeconds: number
  /** SMTP server for outgoing mail (`smtp://user:pass@host:587`, `smtps://...`); null: mail is written as .eml files under `<dataDir>/mail/`. */
  smtpUrl: string | null
  /** The sender of outgoing mail. */
  mailFrom: string
  /** Cloudflare Turnstile's siteverify endpoint (forms with spam_provider `turnstile`). */
  turnstileVerifyUrl: string
  /** hCaptcha's siteverify endpoint (forms with spam_provider `hcaptcha`). */
  hcaptchaVerifyUrl: string
  /** Widths (and heights) a public image transform may ask for without a signature (`s=`). */
  imageWidths: number[]
  /** Image transforms running at once in this process (one Worker each); default: the number of cores. */
  imageConcurrency: number
  /** Nice value (0–19) of the transform Workers' threads: public reads on the main thread keep a busy core first. */
  imageNice: number
  /** Disk budget of the transformed-variant cache under `<dataDir>/cache`, in bytes (least recently used go first). */
  imageCacheBytes: number
  /** Largest asset upload in bytes (spec 8: 100 MB). Not an environment variable: tests shorten it. */
  assetMaxBytes: number
  /** Images above this many pixels are refused at upload (422) and never decoded. Not an environment variable. */
  imageMaxPixels: number
  /** Where new uploads go (ASSET_STORE): `postgres` (1 MiB rows, the default) or `s3` (S3_* below). */
  assetStore: 'postgres' | 's3'
  /** The S3-compatible bucket (S3_*), when S3_BUCKET is set: needed by ASSET_STORE=s3, and to read assets kept there. */
  s3: S3Config | null
  /**
   * Public reads of originals kept in S3 (ASSET_DELIVERY): `proxy` (default) streams the bytes through the service,
   * `redirect` answers 302 to a presigned URL valid for s3PresignSeconds.
   */
  assetDelivery: 'proxy' | 'redirect'
  /** Lifetime of presigned URLs of ASSET_DELIVERY=redirect. Not an environment variable. */
  s3PresignSeconds: number
  /** Five-field cron expression (UTC) of scheduled backups through the job queue; null (default): none. */
  backupCron: string | null
  /** Scheduled backups kept in backupDir (the oldest beyond it are deleted after each new one). */
  backupKeep: number
  /** Folder of scheduled backups; default: `backups` beside DATA_DIR (outside it, so the data folder stays lean). */
  backupDir: string
  /** Prometheus metrics: `GET /metrics` on the main listener (METRICS=on), or on metricsPort only. */
  metrics: boolean
  /** A separate listener (on HOST) answering only `GET /metrics`; null: none. Setting it turns metrics on. */
  metricsPort: number | null
  /** PGlite flushes each commit to the disk (PGLITE_FSYNC, default on); off trades crash safety for write speed. */
  pgliteFsync: boolean
  /**
   * The embedded database's page cache (Postgres shared_buffers), in MB (PGLITE_SHARED_BUFFERS_MB, default 32). Resident
   * from the start: each MB here is about a MB of the process's memory.
   */
  pgliteSharedBuffersMb: number
  /** Seconds to wait for a Postgres connection before start-up fails (DATABASE_CONNECT_TIMEOUT). */
  databaseConnectTimeoutSeconds: number
  /**
   * A direct (session) connection for LISTEN when DATABASE_URL goes through a pooler (DATABASE_LISTEN_URL); null:
   * LISTEN uses DATABASE_URL like every other query.
   */
  databaseListenUrl: string | null
  /**
   * What sits between the service and Postgres (DATABASE_POOLER): `none`, or `transaction` for a pooler in
   * transaction mode (PgBouncer, Supavisor, RDS Proxy): no prepared statements, and LISTEN through DATABASE_LISTEN_URL.
   */
  databasePooler: 'none' | 'transaction'
  /**
   * Postgres: connections of this process's pool (DATABASE_POOL_MAX; default 10), plus one for LISTEN. The fleet's
   * sum must fit the server's max_connections (or the pooler's pool): docs/operations.md "Many tenants".
   */
  databasePoolMax: number
  /**
   * Read replicas (DATABASE_REPLICA_URLS, comma-separated postgres:// URLs of hot standbys of DATABASE_URL): they
   * serve the public reads that miss the caches, nothing else (kernel/replicas.ts). Empty: every read on the primary.
   * The embedded database ignores it.
   */
  databaseReplicaUrls: string[]
  /**
   * A replica further behind the primary than this (REPLICA_MAX_LAG_MS, default 2000) serves nothing until it catches
   * up: reads go to the primary.
   */
  replicaMaxLagMs: number
  /**
   * Search indexes resident on demand within this many bytes (SEARCH_MEMORY_MB); null (unset): every Space's index is
   * built at start-up and stays resident, as an embedded install wants.
   */
  searchMemoryBytes: number | null
  /**
   * With SEARCH_MEMORY_MB set: Spaces with at least this many published Stories keep a snapshot of their search index
   * in the database, so a cold Space is loaded instead of rebuilt (SEARCH_SNAPSHOT_MIN_STORIES, default 50; 0: never).
   */
  searchSnapshotMinStories: number
  /**
   * The argon2id cost of new password hashes: memory in KiB (PASSWORD_HASH_MEMORY_KIB, default 65536) and passes
   * (PASSWORD_HASH_PASSES, default 2), never below OWASP's floor of 19456 KiB and 2 passes from the environment. A hash
   * keeps the cost it was made with, so a change applies to passwords set from then on and every hash still verifies.
   */
  passwordHash: PasswordHashCost
  /** Hours a relayed outbox event is kept before the hourly `events.prune` deletes it (EVENTS_RETENTION_HOURS). */
  eventsRetentionHours: number
  /** Let several processes listen on the same port (SO_REUSEPORT); off by default, so a second bind fails. */
  reusePort: boolean
  /** Log lines as JSON (one object per line) or pretty (for a person at a terminal). */
  logFormat: 'json' | 'pretty'
  /** Plans by name: the built-in `free`, `pro` and `unlimited`, merged with PLANS (docs/billing.md). */
  plans: Record<string, PlanLimits>
  /** The plan of a Tenant that has none recorded (DEFAULT_PLAN; default `unlimited`: a self-hoster is never limited). */
  defaultPlan: string
  /** Tenant admins may change their plan through `PATCH /v1/spaces/{space}/billing` (BILLING_SELF_SERVE). */
  billingSelfServe: boolean
  /** How often each instance writes its counted API requests to the database (BILLING_FLUSH_SECONDS). */
  billingFlushSeconds: number
  /** Live streams (`GET …/live`) one person (all their sessions) or one Space token may hold open on one instance (LIVE_STREAMS_PER_PRINCIPAL). */
  liveStreamsPerPrincipal: number
  /** Seconds a live stream stays open before the server ends it and the client reconnects (LIVE_STREAM_MAX_SECONDS). */
  liveStreamMaxSeconds: number
  /** Base URL of an OpenAI-compatible chat-completions API (`…/v1`: `/chat/completions` is appended); null: AI is off. */
  aiBaseUrl: string | null
  /** Bearer key of the AI provider (AI_API_KEY); null: none sent (a local Ollama or llama.cpp server needs none). */
  aiApiKey: string | null
  /** The chat model (AI_MODEL); null: AI is off. */
  aiModel: string | null
  /** The model for images (AI_VISION_MODEL); null: alt-text suggestions are off (503). */
  aiVisionModel: string | null
  /** Tokens (prompt + completion) one Space may use per calendar month (AI_MONTHLY_TOKENS); null: unlimited. */
  aiMonthlyTokens: number | null
  /** Deadline of one provider call without progress (60 s; a flowing stream keeps it open). Not an environment variable: tests shorten it. */
  aiTimeoutMs: number
  /** Delays before the retries of a provider call answered 429 or 5xx (at most 2). Not an environment variable. */
  aiRetryDelaysMs: number[]
  /** An AI job running longer than this is failed by the job queue (the queue's timeoutMs; 10 min). Not an environment variable. */
  aiJobMaxMs: number
  /** Stripe secret key serving every Space without its own keys (STRIPE_SECRET_KEY; docs/commerce.md). */
  stripeSecretKey: string | null
  /** Signing secret of the instance-wide Stripe webhook endpoint (STRIPE_WEBHOOK_SECRET). */
  stripeWebhookSecret: string | null
  /** Stripe's API base URL without `/v1` (STRIPE_API_BASE; default https://api.stripe.com). */
  stripeApiBase: string
  /** Whether STRIPE_API_BASE was set: an operator-named API host may be a private address (a local fake, a proxy). */
  stripeApiBaseSet: boolean
}

/** A plan's limits; null: unlimited. */
export interface PlanLimits {
  spaces: number | null
  stories_per_space: number | null
  asset_bytes: number | null
  members_per_space: number | null
  requests_per_month: number | null
}
export const PLAN_LIMIT_KEYS = ['spaces', 'stories_per_space', 'asset_bytes', 'members_per_space', 'requests_per_month'] as const

const GiB = 1024 * 1024 * 1024
export const BUILT_IN_PLANS: Record<string, PlanLimits> = {
  free: { spaces: 1, stories_per_space: 100, asset_bytes: GiB, members_per_space: 3, requests_per_month: 100_000 },
  pro: { spaces: 10, stories_per_space: 10_000, asset_bytes: 100 * GiB, members_per_space: 25, requests_per_month: 5_000_000 },
  unlimited: { spaces: null, stories_per_space: null, asset_bytes: null, members_per_space: null, requests_per_month: null },
}

export const REGISTRATION_MODES = ['open', 'first-user', 'closed'] as const
export type Registration = (typeof REGISTRATION_MODES)[number]

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>

function int(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`)
  }
  return n
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase()
  if (raw === undefined || raw === '') return fallback
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true
  if (['0', 'false', 'no', 'off'].includes(raw)) return false
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`)
}

function list(env: Env, name: string, fallback: string[]): string[] {
  const raw = env[name]
  if (raw === undefined) return fallback
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

/**
 * TRUSTED_PROXIES: IP addresses or CIDR ranges. A wildcard (`*`, or a /0 range) is refused: every client could then
 * write its own X-Forwarded-For and pick the address rate limits and logs see.
 */
function trustedProxies(env: Env, name: string): string[] {
  const entries = list(env, name, [])
  for (const entry of entries) {
    const [addr, bits, extra] = entry.split('/')
    const family = isIP(addr ?? '')
    const max = family === 6 ? 128 : 32
    if (entry === '*' || (family && bits !== undefined && /^0+$/.test(bits))) {
      throw new ConfigError(
        `${name}="${entry}" would believe an X-Forwarded-For header that any client can write (every address could be forged for rate limits and logs). ` +
          `Set ${name} to the addresses or CIDR ranges of your reverse proxies or load balancers only, e.g. ${name}=127.0.0.1 or ${name}=10.0.0.0/8`,
      )
    }
    if (!family || extra !== undefined || (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= max))) {
      throw new ConfigError(`${name}: "${entry}" is not an IP address or CIDR range (e.g. 127.0.0.1, 10.0.0.0/8, fd00::/8)`)
    }
  }
  return entries
}

function widths(env: Env, name: string, fallback: number[]): number[] {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const out = raw.split(/[\s,]+/).filter(Boolean).map(Number)
  if (out.some((n) => !Number.isInteger(n) || n < 1 || n > 8192)) {
    throw new ConfigError(`${name} must be integers from 1 to 8192 separated by spaces or commas, got "${raw}"`)
  }
  return [...new Set(out)].sort((a, b) => a - b)
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`)
  }
  return raw as T
}

function headerName(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim()
  if (!raw) return fallback
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/.test(raw)) throw new ConfigError(`${name} must be an HTTP header name, got "${raw}"`)
  return raw
}

function url(env: Env, name: string): string | null {
  const raw = env[name]
  if (raw === undefined || raw === '') return null
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got "${raw}"`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an http or https URL, got "${raw}"`)
  }
  return raw.replace(/\/+$/, '')
}

export interface S3Config {
  /** Absolute http(s) URL of the S3 API; null: AWS S3 for the region. */
  endpoint: string | null
  bucket: string
  region: string
  accessKeyId: string
  secretAccessKey: string
  /** Prepended to every key: '' or ending in '/'. */
  prefix: string
}

/**
 * The S3_* settings: all or nothing once S3_BUCKET is set, required by ASSET_STORE=s3. Messages name the variables,
 * never the key values.
 */
function s3Config(env: Env, store: 'postgres' | 's3'): S3Config | null {
  const v = (name: string) => env[name]?.trim() || ''
  const bucket = v('S3_BUCKET')
  if (!bucket) {
    if (store === 's3') throw new ConfigError('ASSET_STORE=s3 needs S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (and S3_ENDPOINT for a store other than AWS S3)')
    return null
  }
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new ConfigError(`S3_BUCKET must be a bucket name (3–63 lower-case letters, digits, dots and hyphens), got "${bucket}"`)
  }
  const missing = ['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'].filter((n) => !v(n))
  if (missing.length) throw new ConfigError(`S3_BUCKET is set: ${missing.join(' and ')} must be set too`)
  const endpoint = url(env, 'S3_ENDPOINT')
  if (endpoint) {
    const u = new URL(endpoint)
    if (u.username || u.password) throw new ConfigError('S3_ENDPOINT must not carry credentials: set S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY')
    if (u.search || u.hash) throw new ConfigError(`S3_ENDPOINT must be a plain URL without query or fragment, got "${u.origin}${u.pathname}"`)
  }
  const region = v('S3_REGION') || 'us-east-1'
  if (!/^[a-z0-9-]{1,64}$/.test(region)) throw new ConfigError(`S3_REGION must be a region name such as us-east-1, got "${region}"`)
  let prefix = v('S3_PREFIX').replace(/^\/+/, '')
  if (prefix && !prefix.endsWith('/')) prefix += '/'
  if (prefix.length > 512 || /[\u0000-\u001f\u007f\\]/.test(prefix) || prefix.split('/').some((p, i, all) => (p === '' && i < all.length - 1) || p === '.' || p === '..')) {
    throw new ConfigError(`S3_PREFIX must be a key prefix such as cms/ (no empty, . or .. segments, no control characters), got "${v('S3_PREFIX')}"`)
  }
  return { endpoint, bucket, region, accessKeyId: v('S3_ACCESS_KEY_ID'), secretAccessKey: v('S3_SECRET_ACCESS_KEY'), prefix }
}

function smtpUrl(env: Env, name: string): string | null {
  const raw = env[name]?.trim()
  if (!raw) return null
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(`${name} must be an smtp:// or smtps:// URL, got "${raw}"`)
  }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') {
    throw new ConfigError(`${name} must be an smtp:// or smtps:// URL, got "${raw}"`)
  }
  return raw
}

function secretKey(env: Env, name: string): string | null {
  const raw = env[name]?.trim()
  if (!raw) return null
  // Same forms as kernel/crypto parseSecretKey: 64 hex characters, or base64/base64url of 32 bytes.
  const hex = /^[0-9a-fA-F]{64}$/.test(raw)
  const b64 = /^[A-Za-z0-9+/_-]{43}=?$/.test(raw) && Buffer.from(raw.replace(/-/g, '+').replace(/_/g, '/'), 'base64').length === 32
  if (!hex && !b64) {
    throw new ConfigError(`${name} must be a 32-byte key: 64 hex characters or 44 base64 characters (openssl rand -hex 32)`)
  }
  return raw
}

/** A comma-separated list of postgres:// URLs (each checked as databaseUrl checks one). */
function databaseUrls(env: Env, name: string): string[] {
  return list(env, name, []).map((raw, i) => databaseUrl({ [`${name}[${i}]`]: raw }, `${name}[${i}]`)!)
}

function databaseUrl(env: Env, name: string): string | null {
  const raw = env[name]?.trim()
  if (!raw) return null
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(`${name} must be a postgres:// URL (postgres://user:password@host:5432/database)`)
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    // Never echo the URL: it may carry a password.
    throw new ConfigError(
      `${name} must be a postgres:// or postgresql:// URL, got a ${parsed.protocol.replace(/:$/, '')}:// one: the service runs on PostgreSQL only (unset ${name} for the embedded database)`,
    )
  }
  return raw
}

function cron(env: Env, name: string): string | null {
  const raw = env[name]?.trim()
  if (!raw) return null
  try {
    parseCron(raw)
  } catch (err) {
    throw new ConfigError(`${name} must be a five-field cron expression (minute hour day month weekday, UTC): ${(err as Error).message}`)
  }
  return raw
}

/**
 * PLANS: a JSON object `{"<name>": {"spaces": 3, "stories_per_space": null, ...}}` merged over the built-in plans
 * (a name of its own adds a plan, a built-in name replaces it). Every limit is a non-negative integer or null
 * (unlimited); a limit left out is unlimited.
 */
function plans(env: Env, name: string): Record<string, PlanLimits> {
  const raw = env[name]?.trim()
  if (!raw) return BUILT_IN_PLANS
  const fail = (why: string): never => {
    throw new ConfigError(`${name} must be a JSON object of plans, e.g. {"team":{"spaces":3,"stories_per_space":500,"asset_bytes":null,"members_per_space":10,"requests_per_month":1000000}}: ${why}`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch (err) {
    return fail(`not valid JSON (${(err as Error).message})`)
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return fail('not an object')
  const out: Record<string, PlanLimits> = { ...BUILT_IN_PLANS }
  for (const [plan, limits] of Object.entries(parsed as Record<string, unknown>)) {
    if (!/^[a-z0-9][a-z0-9_-]{0,39}$/.test(plan)) fail(`plan name "${plan}" must be 1-40 of a-z, 0-9, _ and -`)
    if (!limits || typeof limits !== 'object' || Array.isArray(limits)) fail(`plan "${plan}" is not an object`)
    const entry = limits as Record<string, unknown>
    for (const key of Object.keys(entry)) {
      if (!(PLAN_LIMIT_KEYS as readonly string[]).includes(key)) fail(`plan "${plan}" has an unknown limit "${key}" (known: ${PLAN_LIMIT_KEYS.join(', ')})`)
    }
    const plan_ = {} as PlanLimits
    for (const key of PLAN_LIMIT_KEYS) {
      const v = entry[key] ?? null
      if (v !== null && !(Number.isSafeInteger(v) && (v as number) >= 0)) fail(`plan "${plan}": ${key} must be a non-negative integer or null, got ${JSON.stringify(v)}`)
      plan_[key] = v as number | null
    }
    out[plan] = plan_
  }
  return out
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const config: Config = {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '0.0.0.0',
    publicUrl: url(env, 'PUBLIC_URL'),
    databaseUrl: databaseUrl(env, 'DATABASE_URL'),
    dataDir: env.DATA_DIR || './data',
    memoryDb: false,
    logLevel: oneOf(env, 'LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'] as const, 'info'),
    logClientIp: oneOf(env, 'LOG_CLIENT_IP', ['full', 'hash', 'off'] as const, 'full'),
    corsOrigins: list(env, 'CORS_ORIGINS', ['*']),
    trustedProxies: trustedProxies(env, 'TRUSTED_PROXIES'),
    rateLimitStore: oneOf(env, 'RATE_LIMIT_STORE', ['memory', 'postgres'] as const, 'memory'),
    releaseChannel: oneOf(env, 'SERVICE_RELEASE_CHANNEL', RELEASE_CHANNELS, 'stable'),
    beaconEnabled: bool(env, 'SERVICE_BEACON_ENABLED', true),
    userTokenTtlDays: int(env, 'USER_TOKEN_TTL_DAYS', 30, 1, 3650),
    pitchTtlDays: int(env, 'PITCH_TTL_DAYS', 14, 1, 3650),
    registration: oneOf(env, 'REGISTRATION', REGISTRATION_MODES, 'open'),
    registrationVerify: bool(env, 'REGISTRATION_VERIFY', true),
    pitchDemos: bool(env, 'PITCH_DEMOS', false),
    jsonBodyLimit: int(env, 'JSON_BODY_LIMIT', 1024 * 1024, 1024),
    httpIdleTimeoutSeconds: int(env, 'HTTP_IDLE_TIMEOUT', 30, 1, 255),
    shutdownTimeoutSeconds: int(env, 'SHUTDOWN_TIMEOUT', 10, 1, 3600),
    cdnMaxAge: int(env, 'CDN_MAX_AGE', 60),
    cdnStaleWhileRevalidate: int(env, 'CDN_STALE_WHILE_REVALIDATE', 300),
    cdnCacheBytes: int(env, 'CDN_CACHE_MB', 256, 1, 65536) * 1024 * 1024,
    segmentCountryHeader: headerName(env, 'SEGMENT_COUNTRY_HEADER', 'CF-IPCountry'),
    secretKey: secretKey(env, 'SERVICE_SECRET_KEY'),
    outboundAllowPrivate: bool(env, 'SERVICE_OUTBOUND_ALLOW_PRIVATE', false),
    workerEnabled: bool(env, 'SERVICE_WORKER_ENABLED', true),
    jobLeaseSeconds: int(env, 'JOB_LEASE_SECONDS', 30, 2, 3600),
    jobPollIntervalMs: int(env, 'JOB_POLL_INTERVAL_MS', 1000, 50, 60_000),
    webhookConcurrency: int(env, 'WEBHOOK_CONCURRENCY', 32, 1, 256),
    webhookTimeoutMs: 10_000,
    searchReconcileSeconds: int(env, 'SEARCH_RECONCILE_SECONDS', 300, 0, 86_400),
    searchReindexTimeoutSeconds: int(env, 'SEARCH_REINDEX_TIMEOUT_SECONDS', 900, 1, 86_400),
    smtpUrl: smtpUrl(env, 'SMTP_URL'),
    mailFrom: env.MAIL_FROM?.trim() || 'Content Service <no-reply@localhost>',
    turnstileVerifyUrl: url(env, 'TURNSTILE_VERIFY_URL') ?? 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
    hcaptchaVerifyUrl: url(env, 'HCAPTCHA_VERIFY_URL') ?? 'https://api.hcaptcha.com/siteverify',
    imageWidths: widths(env, 'IMAGE_WIDTHS', [16, 32, 48, 64, 96, 128, 256, 384, 640, 750, 828, 1080, 1200, 1920, 2048, 3840]),
    imageConcurrency: int(env, 'IMAGE_CONCURRENCY', Math.max(1, navigator.hardwareConcurrency || 1), 1, 64),
    imageNice: int(env, 'IMAGE_NICE', 10, 0, 19),
    imageCacheBytes: int(env, 'IMAGE_CACHE_MB', 1024, 1, 1_048_576) * 1024 * 1024,
    assetMaxBytes: 100 * 1024 * 1024,
    imageMaxPixels: 50_000_000,
    assetStore: oneOf(env, 'ASSET_STORE', ['postgres', 's3'] as const, 'postgres'),
    s3: null,
    assetDelivery: oneOf(env, 'ASSET_DELIVERY', ['proxy', 'redirect'] as const, 'proxy'),
    s3PresignSeconds: 300,
    backupCron: cron(env, 'BACKUP_CRON'),
    backupKeep: int(env, 'BACKUP_KEEP', 7, 1, 10_000),
    backupDir: env.BACKUP_DIR || join(env.DATA_DIR || './data', '..', 'backups'),
    metrics: bool(env, 'METRICS', false),
    metricsPort: env.METRICS_PORT ? int(env, 'METRICS_PORT', 0, 1, 65535) : null,
    pgliteFsync: bool(env, 'PGLITE_FSYNC', true),
    pgliteSharedBuffersMb: int(env, 'PGLITE_SHARED_BUFFERS_MB', 32, 1, 65_536),
    databaseConnectTimeoutSeconds: int(env, 'DATABASE_CONNECT_TIMEOUT', 10, 1, 600),
    databaseListenUrl: databaseUrl(env, 'DATABASE_LISTEN_URL'),
    databasePooler: oneOf(env, 'DATABASE_POOLER', ['none', 'transaction'] as const, 'none'),
    databasePoolMax: int(env, 'DATABASE_POOL_MAX', 10, 1, 1000),
    databaseReplicaUrls: databaseUrls(env, 'DATABASE_REPLICA_URLS'),
    replicaMaxLagMs: int(env, 'REPLICA_MAX_LAG_MS', 2000, 100, 3_600_000),
    eventsRetentionHours: int(env, 'EVENTS_RETENTION_HOURS', 24, 1, 24 * 365),
    passwordHash: {
      memoryCost: int(env, 'PASSWORD_HASH_MEMORY_KIB', 65_536, 19_456, 4_194_304),
      timeCost: int(env, 'PASSWORD_HASH_PASSES', 2, 2, 64),
    },
    searchSnapshotMinStories: int(env, 'SEARCH_SNAPSHOT_MIN_STORIES', 50, 0, 1_000_000_000),
    searchMemoryBytes: env.SEARCH_MEMORY_MB?.trim() ? int(env, 'SEARCH_MEMORY_MB', 128, 1, 1_048_576) * 1024 * 1024 : null,
    reusePort: bool(env, 'REUSE_PORT', false),
    logFormat: oneOf(env, 'LOG_FORMAT', ['json', 'pretty'] as const, process.stdout.isTTY ? 'pretty' : 'json'),
    plans: BUILT_IN_PLANS,
    defaultPlan: 'unlimited',
    billingSelfServe: bool(env, 'BILLING_SELF_SERVE', false),
    billingFlushSeconds: int(env, 'BILLING_FLUSH_SECONDS', 10, 1, 3600),
    liveStreamsPerPrincipal: int(env, 'LIVE_STREAMS_PER_PRINCIPAL', 16, 1, 1000),
    liveStreamMaxSeconds: int(env, 'LIVE_STREAM_MAX_SECONDS', 900, 10, 86_400),
    aiBaseUrl: url(env, 'AI_BASE_URL'),
    aiApiKey: env.AI_API_KEY?.trim() || null,
    aiModel: env.AI_MODEL?.trim() || null,
    aiVisionModel: env.AI_VISION_MODEL?.trim() || null,
    aiMonthlyTokens: env.AI_MONTHLY_TOKENS?.trim() ? int(env, 'AI_MONTHLY_TOKENS', 0, 1) : null,
    aiTimeoutMs: 60_000,
    aiRetryDelaysMs: [1000, 4000],
    aiJobMaxMs: 10 * 60_000,
    stripeSecretKey: env.STRIPE_SECRET_KEY?.trim() || null,
    stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET?.trim() || null,
    stripeApiBase: url(env, 'STRIPE_API_BASE') ?? 'https://api.stripe.com',
    stripeApiBaseSet: !!url(env, 'STRIPE_API_BASE'),
  }
  config.s3 = s3Config(env, config.assetStore)
  if (config.assetDelivery === 'redirect' && !config.s3) {
    throw new ConfigError('ASSET_DELIVERY=redirect answers with presigned URLs of the S3 bucket: set S3_BUCKET and its keys (ASSET_STORE=s3)')
  }
  config.plans = plans(env, 'PLANS')
  config.defaultPlan = env.DEFAULT_PLAN?.trim() || 'unlimited'
  if (!Object.hasOwn(config.plans, config.defaultPlan)) {
    throw new ConfigError(`DEFAULT_PLAN must name a plan (${Object.keys(config.plans).join(', ')}), got "${config.defaultPlan}"`)
  }
  if (!config.databaseUrl && (config.databaseListenUrl || config.databasePooler !== 'none')) {
    throw new ConfigError('DATABASE_LISTEN_URL and DATABASE_POOLER apply to a Postgres server: set DATABASE_URL too (or unset them for the embedded database)')
  }
  if (config.databasePooler === 'transaction' && !config.databaseListenUrl) {
    throw new ConfigError(
      'DATABASE_POOLER=transaction needs DATABASE_LISTEN_URL: LISTEN keeps a session, which a pooler in transaction mode does not. Point it at Postgres directly (or at a session-mode pool)',
    )
  }
  return { ...config, ...overrides }
}
