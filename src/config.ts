// The only module that reads process.env. Every variable here is in the README's configuration table.

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
  /** Origins allowed to call the management API from a browser; ['*'] allows any. */
  corsOrigins: string[]
  /** Peers whose X-Forwarded-For is believed (IPs or CIDRs). */
  trustedProxies: string[]
  rateLimitStore: 'memory' | 'postgres'
  releaseChannel: ReleaseChannel
  beaconEnabled: boolean
  userTokenTtlDays: number
  jsonBodyLimit: number
  cdnMaxAge: number
  cdnStaleWhileRevalidate: number
}

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

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`)
  }
  return raw as T
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

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const config: Config = {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '0.0.0.0',
    publicUrl: url(env, 'PUBLIC_URL'),
    databaseUrl: env.DATABASE_URL || null,
    dataDir: env.DATA_DIR || './data',
    memoryDb: false,
    logLevel: oneOf(env, 'LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'] as const, 'info'),
    corsOrigins: list(env, 'CORS_ORIGINS', ['*']),
    trustedProxies: list(env, 'TRUSTED_PROXIES', []),
    rateLimitStore: oneOf(env, 'RATE_LIMIT_STORE', ['memory', 'postgres'] as const, 'memory'),
    releaseChannel: oneOf(env, 'SERVICE_RELEASE_CHANNEL', RELEASE_CHANNELS, 'stable'),
    beaconEnabled: bool(env, 'SERVICE_BEACON_ENABLED', true),
    userTokenTtlDays: int(env, 'USER_TOKEN_TTL_DAYS', 30, 1, 3650),
    jsonBodyLimit: int(env, 'JSON_BODY_LIMIT', 1024 * 1024, 1024),
    cdnMaxAge: int(env, 'CDN_MAX_AGE', 60),
    cdnStaleWhileRevalidate: int(env, 'CDN_STALE_WHILE_REVALIDATE', 300),
  }
  return { ...config, ...overrides }
}
