import { migrations } from '../../../db/migrations'
import { rowsOf } from '../../kernel/db'
import type { Kernel } from '../../kernel/kernel'
import { HealthErrors, READY_RETRY_AFTER_SECONDS } from './model'

/** A database that does not answer a trivial query within this long counts as unreachable. */
const DB_PROBE_TIMEOUT_MS = 2_000

export interface HealthState {
  /** Every migration this binary knows was found applied (checked until true, then only `select 1`). */
  migrated: boolean
}

function timeout(ms: number): { promise: Promise<never>; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms)
  })
  return { promise, cancel: () => clearTimeout(timer) }
}

/** `p`, with its late failure (after a timeout won the race) kept from surfacing as an unhandled rejection. */
function settledLater<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {})
  return p
}

/** Why this instance cannot serve, or null: the database answers, the migrations are applied, every module is ready. */
export async function notReadyReason(kernel: Kernel, self: HealthState): Promise<string | null> {
  const limit = timeout(DB_PROBE_TIMEOUT_MS)
  try {
    if (self.migrated) {
      await Promise.race([settledLater(kernel.db.query('select 1')), limit.promise])
    } else {
      const applied = await Promise.race([settledLater(kernel.db.query<{ tag: string }>('select tag from _migrations')), limit.promise])
      const done = new Set(rowsOf<{ tag: string }>(applied).map((r) => r.tag))
      const missing = migrations.filter((m) => !done.has(m.tag)).length
      if (missing) return `${missing} database migration(s) not applied yet`
      self.migrated = true
    }
  } catch (err) {
    // The driver's message can name hosts or SQL: the probe says only what failed.
    kernel.logger.warn('readiness: database check failed', { error: String(err) })
    return self.migrated || !/_migrations/.test(String(err)) ? 'the database is not reachable' : 'database migrations not applied yet'
  } finally {
    limit.cancel()
  }
  for (const r of kernel.readiness) {
    const reason = r.check()
    if (reason !== null) return reason
  }
  return null
}

/** Throws the 503 `not_ready` (with Retry-After) unless the instance is ready. */
export async function requireReady(kernel: Kernel, self: HealthState): Promise<void> {
  const reason = await notReadyReason(kernel, self)
  if (reason !== null) {
    throw HealthErrors.notReady(`Not ready: ${reason}.`, undefined, { 'Retry-After': String(READY_RETRY_AFTER_SECONDS) })
  }
}
