import { plugins } from './tables'
import { and, eq } from 'drizzle-orm'
import { transact } from '../../kernel/events'
import type { FilterActor, FilterCall } from '../../kernel/filters'
import type { Kernel } from '../../kernel/kernel'
import { signedPost } from '../../kernel/signed-post'
import type { PluginCache, PluginRow } from './cache'
import { PluginErrors } from './model'

/**
 * Calling plugins (spec 6: "plugins run synchronously and can veto"): the handler of every filter hook. For each
 * active plugin of the Space on the hook, in plugin order, one POST signed exactly like a webhook delivery (same
 * headers, same HMAC), through the outbound guard, with no transaction open — the owning module calls the hook before
 * its transaction. Every call is logged; errors and timeouts count toward deactivation (20 in a row).
 */

export const SECRET_CONTEXT = 'plugin-secret'
/** An amended document comes back in the answer: read up to this much of it. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024
/** Errors and timeouts in a row that deactivate a plugin (vetoes are answers, not failures). */
export const MAX_CONSECUTIVE_FAILURES = 20
const MAX_MESSAGE = 1000
const MAX_FIELDS = 100

export interface PluginsState {
  cache: PluginCache
  log: CallLog
}

/**
 * Log writes of plugin calls, made after the change rather than before it: the entry (and the run of failures) is
 * written on the next turn of the event loop, so it does not add a database round trip to the change the plugin
 * filtered (on the embedded database it queues behind that change's transaction). Reads of the log and of plugins on
 * this instance wait for the writes in flight (`settled`); shutdown too.
 */
export class CallLog {
  private pending = new Set<Promise<void>>()

  constructor(private kernel: Kernel) {}

  write(entry: () => Promise<void>) {
    const p: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(entry)
      .catch((err) => this.kernel.logger.error('plugin call could not be logged', { error: String((err as Error)?.message ?? err) }))
      .finally(() => this.pending.delete(p))
    this.pending.add(p)
  }

  async settled(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending])
  }
}

/** The body a plugin receives: the hook, the Space (its slug only), who acts, and the hook's payload. */
export function requestBody(hook: string, actor: FilterActor, data: unknown): string {
  const who =
    actor.kind === 'user'
      ? { type: 'user', user_id: actor.userId }
      : actor.kind === 'token'
        ? { type: 'token', token_id: actor.tokenId }
        : { type: 'public' }
  return JSON.stringify({ hook, space: { slug: actor.space.slug }, actor: who, data })
}

type Answer =
  | { outcome: 'allow' }
  | { outcome: 'amend'; data: Record<string, unknown> }
  | { outcome: 'veto'; message: string; errors: Record<string, string[]> | undefined }
  | { outcome: 'error'; message: string }

const cut = (s: string, n = MAX_MESSAGE) => (s.length > n ? `${s.slice(0, n - 1)}…` : s)
const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/** A veto's field errors, keyed like validation errors: `{field: [messages]}` (a single string is taken as one message). */
function fieldErrors(raw: unknown): Record<string, string[]> | undefined | null {
  if (raw === undefined || raw === null) return undefined
  if (!isObject(raw)) return null
  const out: Record<string, string[]> = Object.create(null)
  for (const [k, v] of Object.entries(raw).slice(0, MAX_FIELDS)) {
    const list = typeof v === 'string' ? [v] : Array.isArray(v) && v.every((m) => typeof m === 'string') ? (v as string[]) : null
    if (!list) return null
    out[cut(k, 200)] = list.slice(0, 20).map((m) => cut(m))
  }
  return out
}

/** Reads a plugin's answer: `{allow: true}`, `{allow: true, data}` (amend), `{allow: false, message, errors?}`. */
export function parseAnswer(body: string, amendable: boolean): Answer {
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return { outcome: 'error', message: 'the answer is not JSON' }
  }
  if (!isObject(json) || typeof json.allow !== 'boolean') return { outcome: 'error', message: 'the answer has no boolean `allow`' }
  if (json.allow) {
    if (json.data === undefined || !amendable) return { outcome: 'allow' }
    if (!isObject(json.data)) return { outcome: 'error', message: '`data` must be an object (the amended payload)' }
    return { outcome: 'amend', data: json.data }
  }
  const errors = fieldErrors(json.errors)
  if (errors === null) return { outcome: 'error', message: '`errors` must map field names to lists of messages' }
  const message = typeof json.message === 'string' && json.message.trim() ? cut(json.message.trim()) : 'The change was refused by a plugin.'
  return { outcome: 'veto', message, errors }
}

/** Calls every active plugin of the Space on the hook; returns the amended payload, or undefined (allowed unchanged). */
export async function runPlugins(kernel: Kernel, state: PluginsState, payload: unknown, call: FilterCall): Promise<unknown> {
  const spacePlugins = await state.cache.get(call.actor.space.id)
  const list = spacePlugins.byHook.get(call.hook)
  if (!list?.length) return undefined
  const amendable = kernel.filters.declaration(call.hook)?.amend ?? false
  let current = payload
  let amended = false
  for (const plugin of list) {
    const answer = await callPlugin(kernel, state.log, plugin, call, current, amendable)
    if (answer.outcome === 'amend') {
      current = answer.data
      amended = true
    } else if (answer.outcome === 'veto') {
      throw PluginErrors.veto(answer.message, answer.errors, undefined, { plugin: { id: plugin.id, name: plugin.name } })
    } else if (answer.outcome === 'error' && plugin.failureMode === 'closed') {
      throw PluginErrors.unavailable(`The plugin "${plugin.name}" did not answer usably (${answer.message}); nothing was changed.`, undefined, undefined, {
        plugin: { id: plugin.id, name: plugin.name },
      })
    }
  }
  return amended ? current : undefined
}

async function callPlugin(kernel: Kernel, log: CallLog, plugin: PluginRow, call: FilterCall, data: unknown, amendable: boolean): Promise<Answer> {
  const at = kernel.clock.now()
  const started = performance.now()
  let answer: Answer
  let status: number | null = null
  let latencyMs: number | null = null
  let secret: string
  try {
    secret = kernel.secrets.open(plugin.secretSealed, SECRET_CONTEXT)
  } catch {
    answer = { outcome: 'error', message: 'the signing secret cannot be opened (SERVICE_SECRET_KEY changed?)' }
    log.write(() => record(kernel, plugin, call.hook, at, null, null, answer))
    return answer
  }
  const res = await signedPost(kernel, {
    url: plugin.url,
    body: requestBody(call.hook, call.actor, data),
    secret,
    at,
    event: call.hook,
    deliveryId: crypto.randomUUID(),
    timeoutMs: plugin.timeoutMs,
    maxResponseBytes: MAX_ANSWER_BYTES,
  })
  status = res.status
  latencyMs = res.latencyMs ?? Math.round(performance.now() - started)
  if (res.outcome !== 'delivered') answer = { outcome: 'error', message: cut(res.error) }
  else if (res.truncated) answer = { outcome: 'error', message: `the answer is larger than ${MAX_ANSWER_BYTES} bytes` }
  else answer = parseAnswer(res.body, amendable)
  log.write(() => record(kernel, plugin, call.hook, at, latencyMs, status, answer))
  return answer
}

/**
 * Logs the call, and keeps the plugin's run of failures in the same statement: an answer (allow, amend, veto) ends
 * it, an error extends it; the 20th in a row deactivates the plugin. A logging failure never changes the outcome.
 */
async function record(kernel: Kernel, plugin: PluginRow, hook: string, at: Date, latencyMs: number | null, status: number | null, answer: Answer) {
  const message = answer.outcome === 'veto' || answer.outcome === 'error' ? answer.message : null
  const insert = `with logged as (
      insert into plugin_calls (plugin_id, hook, called_at, latency_ms, response_status, outcome, message)
      values ($1, $2, $3::timestamptz, $4, $5, $6, $7))`
  const params = [plugin.id, hook, at.toISOString(), latencyMs, status, answer.outcome, message]
  try {
    if (answer.outcome !== 'error') {
      await kernel.db.query(`${insert} update plugins set consecutive_failures = 0 where id = $1 and consecutive_failures <> 0`, params)
      return
    }
    const [row] = await kernel.db.query<{ failures: number; active: boolean }>(
      `${insert} update plugins set consecutive_failures = consecutive_failures + 1 where id = $1
       returning consecutive_failures as failures, active`,
      params,
    )
    if (row && row.active && row.failures >= MAX_CONSECUTIVE_FAILURES) await deactivate(kernel, plugin, row.failures, answer.message)
  } catch (err) {
    kernel.logger.error('plugin call could not be logged', { plugin: plugin.id, error: String((err as Error)?.message ?? err) })
  }
}

async function deactivate(kernel: Kernel, plugin: PluginRow, failures: number, last: string) {
  const reason = cut(`${failures} consecutive failures (errors and timeouts); the last: ${last}`)
  await transact(kernel, async (tx, emit) => {
    const now = kernel.clock.now()
    const [row] = await tx
      .update(plugins)
      .set({ active: false, deactivatedAt: now, deactivatedReason: reason, updatedAt: now })
      .where(and(eq(plugins.id, plugin.id), eq(plugins.active, true)))
      .returning({ id: plugins.id })
    if (!row) return // another call (or instance) deactivated it first
    emit({ type: 'plugin.changed', spaceId: plugin.spaceId, payload: { space_id: plugin.spaceId } })
    emit({
      type: 'plugin.deactivated',
      spaceId: plugin.spaceId,
      payload: { plugin: { id: plugin.id, name: plugin.name, url: plugin.url }, reason, consecutive_failures: failures },
    })
  })
  kernel.logger.warn('plugin deactivated', { plugin: plugin.id, space_id: plugin.spaceId, reason })
}
