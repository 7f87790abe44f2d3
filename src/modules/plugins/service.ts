import { and, count, desc, eq, max, sql } from 'drizzle-orm'
import { pluginCalls, plugins } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { randomSecret } from '../../kernel/crypto'
import { notFound } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import { checkReceiverUrl } from '../../kernel/outbound'
import type { PluginRow } from './cache'
import { SECRET_CONTEXT } from './caller'
import { MAX_PLUGINS_PER_SPACE, PluginErrors, type PluginCallView, type PluginView, TIMEOUT } from './model'

/** The call log is kept this long (pruned daily by `plugins.prune-log`). */
export const LOG_KEEP_DAYS = 14

function view(row: PluginRow): PluginView {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    hooks: row.hooks,
    timeout_ms: row.timeoutMs,
    failure_mode: row.failureMode,
    active: row.active,
    order: row.position,
    consecutive_failures: row.consecutiveFailures,
    deactivated_at: row.deactivatedAt?.toISOString() ?? null,
    deactivated_reason: row.deactivatedReason,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

async function requirePlugin(kernel: Kernel, access: SpaceAccess, id: number): Promise<PluginRow> {
  const [row] = await kernel.db.db
    .select()
    .from(plugins)
    .where(and(eq(plugins.id, id), eq(plugins.spaceId, access.space.id)))
    .limit(1)
  if (!row) throw notFound('Plugin')
  return row
}

const newSecret = () => randomSecret('plsec_')
const changed = (spaceId: number) => ({ type: 'plugin.changed' as const, spaceId, payload: { space_id: spaceId } })

export interface PluginInput {
  name: string
  url: string
  hooks: string[]
  timeout_ms?: number
  failure_mode?: 'open' | 'closed'
  active?: boolean
  order?: number
}

export async function createPlugin(kernel: Kernel, access: SpaceAccess, input: PluginInput): Promise<PluginView & { secret: string }> {
  const url = await checkReceiverUrl(input.url, { allowPrivate: kernel.config.outboundAllowPrivate })
  const secret = newSecret()
  const spaceId = access.space.id
  const row = await transact(kernel, async (tx, emit) => {
    // Serialises creates in the Space (the count and the default order).
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('plugins'), ${spaceId})`)
    const [{ n, last }] = await tx.select({ n: count(), last: max(plugins.position) }).from(plugins).where(eq(plugins.spaceId, spaceId))
    if (n >= MAX_PLUGINS_PER_SPACE) throw PluginErrors.limit(`A Space has at most ${MAX_PLUGINS_PER_SPACE} plugins.`)
    const now = kernel.clock.now()
    const [row] = await tx
      .insert(plugins)
      .values({
        spaceId,
        name: input.name,
        url,
        hooks: [...new Set(input.hooks)],
        timeoutMs: input.timeout_ms ?? TIMEOUT.default,
        failureMode: input.failure_mode ?? 'open',
        active: input.active ?? true,
        position: input.order ?? (last === null ? 1 : Math.min(last + 1, 1_000_000)),
        secretSealed: kernel.secrets.seal(secret, SECRET_CONTEXT),
        createdAt: now,
        updatedAt: now,
      })
      .returning()
    emit(changed(spaceId))
    return row
  })
  return { ...view(row), secret }
}

export async function listPlugins(kernel: Kernel, access: SpaceAccess): Promise<PluginView[]> {
  const rows = await kernel.db.db.select().from(plugins).where(eq(plugins.spaceId, access.space.id)).orderBy(plugins.position, plugins.id)
  return rows.map(view)
}

export async function getPlugin(kernel: Kernel, access: SpaceAccess, id: number): Promise<PluginView> {
  return view(await requirePlugin(kernel, access, id))
}

export async function updatePlugin(kernel: Kernel, access: SpaceAccess, id: number, input: Partial<PluginInput>): Promise<PluginView> {
  const current = await requirePlugin(kernel, access, id)
  const patch: Partial<typeof plugins.$inferInsert> = { updatedAt: kernel.clock.now() }
  if (input.name !== undefined) patch.name = input.name
  if (input.url !== undefined) patch.url = await checkReceiverUrl(input.url, { allowPrivate: kernel.config.outboundAllowPrivate })
  if (input.hooks !== undefined) patch.hooks = [...new Set(input.hooks)]
  if (input.timeout_ms !== undefined) patch.timeoutMs = input.timeout_ms
  if (input.failure_mode !== undefined) patch.failureMode = input.failure_mode
  if (input.order !== undefined) patch.position = input.order
  if (input.active !== undefined) {
    patch.active = input.active
    // Switched on again (after a deactivation, say): a fresh run of failures.
    if (input.active && !current.active) Object.assign(patch, { consecutiveFailures: 0, deactivatedAt: null, deactivatedReason: null })
  }
  const row = await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .update(plugins)
      .set(patch)
      .where(and(eq(plugins.id, current.id), eq(plugins.spaceId, access.space.id)))
      .returning()
    if (!row) throw notFound('Plugin')
    emit(changed(access.space.id))
    return row
  })
  return view(row)
}

/** Removes the plugin with its call log. */
export async function deletePlugin(kernel: Kernel, access: SpaceAccess, id: number): Promise<void> {
  const current = await requirePlugin(kernel, access, id)
  await transact(kernel, async (tx, emit) => {
    await tx.delete(plugins).where(eq(plugins.id, current.id))
    emit(changed(access.space.id))
  })
}

/** A new signing secret, shown this once; the next call is signed with it (every instance: plugin.changed). */
export async function rotatePluginSecret(kernel: Kernel, access: SpaceAccess, id: number): Promise<PluginView & { secret: string }> {
  const current = await requirePlugin(kernel, access, id)
  const secret = newSecret()
  const row = await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .update(plugins)
      .set({ secretSealed: kernel.secrets.seal(secret, SECRET_CONTEXT), updatedAt: kernel.clock.now() })
      .where(eq(plugins.id, current.id))
      .returning()
    if (!row) throw notFound('Plugin')
    emit(changed(access.space.id))
    return row
  })
  return { ...view(row), secret }
}

/** The plugin's calls, newest first. */
export async function pluginLog(
  kernel: Kernel,
  access: SpaceAccess,
  id: number,
  query: { limit?: number; outcome?: 'allow' | 'amend' | 'veto' | 'error' },
): Promise<PluginCallView[]> {
  const plugin = await requirePlugin(kernel, access, id)
  const where = query.outcome ? and(eq(pluginCalls.pluginId, plugin.id), eq(pluginCalls.outcome, query.outcome)) : eq(pluginCalls.pluginId, plugin.id)
  const rows = await kernel.db.db
    .select()
    .from(pluginCalls)
    .where(where)
    .orderBy(desc(pluginCalls.calledAt), desc(pluginCalls.id))
    .limit(query.limit ?? 50)
  return rows.map((r) => ({
    id: r.id,
    hook: r.hook,
    time: r.calledAt.toISOString(),
    latency_ms: r.latencyMs,
    status: r.responseStatus,
    outcome: r.outcome,
    message: r.message,
  }))
}

/** Deletes log entries older than LOG_KEEP_DAYS. */
export async function pruneLog(kernel: Kernel): Promise<number> {
  const before = new Date(kernel.clock.ms() - LOG_KEEP_DAYS * 86_400_000)
  const [row] = await kernel.db.query<{ n: number }>(
    'with gone as (delete from plugin_calls where called_at < $1::timestamptz returning 1) select count(*)::int as n from gone',
    [before.toISOString()],
  )
  return row?.n ?? 0
}
