import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import type { FilterHooks } from '../../kernel/filters'
import { Int, IntId, intString, NullableTimestamp, oneOf, SpaceSlug, Timestamp } from '../../kernel/schemas'

export const PluginErrors = {
  veto: defineError(
    'plugin_veto',
    422,
    'A plugin refused the change: `message` and `errors` (field errors) are its own, `details.plugin` names it.',
  ),
  unavailable: defineError(
    'plugin_unavailable',
    503,
    'A plugin with failure_mode `closed` did not answer usably (timeout, connection error, non-2xx, unparsable answer); nothing was changed.',
  ),
  limit: defineError('plugin_limit', 409, 'The Space has as many plugins as it may (20).'),
}

/** Plugins per Space: each one is a synchronous call before the changes it hooks. */
export const MAX_PLUGINS_PER_SPACE = 20
export const TIMEOUT = { min: 100, max: 5000, default: 2000 }

const Name = t.String({ minLength: 1, maxLength: 200, error: 'is required (1 to 200 characters)' })
const Url = t.String({ minLength: 1, maxLength: 2048, error: 'must be an http or https URL (at most 2048 characters)' })
const Timeout = Int({ minimum: TIMEOUT.min, maximum: TIMEOUT.max, error: `must be an integer from ${TIMEOUT.min} to ${TIMEOUT.max} (milliseconds)` })
const FailureMode = oneOf(['open', 'closed'], { error: 'must be open or closed' })
const Active = t.Boolean({ error: 'must be true or false' })
const Order = Int({ minimum: 0, maximum: 1_000_000, error: 'must be an integer from 0 to 1000000' })

/** Bodies that name hooks: built from the filter hooks the modules declare. */
export function pluginBodies(filters: FilterHooks) {
  const names = filters.names()
  const list = names.join(', ')
  const Hook = names.length
    ? oneOf(names as [string, ...string[]], { error: `must be one of: ${list}` })
    : t.String({ maxLength: 0, error: 'no filter hooks are declared' })
  const Hooks = t.Array(Hook, { minItems: 1, maxItems: 32, error: `must be a non-empty list of hook names from: ${list}` })
  return {
    CreatePluginBody: t.Object({
      name: Name,
      url: Url,
      hooks: Hooks,
      timeout_ms: t.Optional(Timeout),
      failure_mode: t.Optional(FailureMode),
      active: t.Optional(Active),
      order: t.Optional(Order),
    }),
    UpdatePluginBody: t.Object({
      name: t.Optional(Name),
      url: t.Optional(Url),
      hooks: t.Optional(Hooks),
      timeout_ms: t.Optional(Timeout),
      failure_mode: t.Optional(FailureMode),
      active: t.Optional(Active),
      order: t.Optional(Order),
    }),
  }
}

export const PluginParams = t.Object({ space: SpaceSlug, id: IntId })

export const OUTCOMES = ['allow', 'amend', 'veto', 'error'] as const
export const PluginLogQuery = t.Object({
  limit: t.Optional(intString(1, 200, { description: 'Entries, 1 to 200 (default 50)' })),
  outcome: t.Optional(oneOf(OUTCOMES, { error: 'must be allow, amend, veto or error' })),
})

export const PluginModel = t.Object({
  id: Int(),
  name: t.String(),
  url: t.String(),
  hooks: t.Array(t.String()),
  timeout_ms: Int(),
  failure_mode: oneOf(['open', 'closed']),
  active: t.Boolean(),
  order: Int({ description: 'Plugins run in ascending order (then by id)' }),
  consecutive_failures: Int({ description: 'Errors and timeouts since the last answer; at 20 the plugin is deactivated' }),
  deactivated_at: NullableTimestamp,
  deactivated_reason: t.Union([t.String(), t.Null()], { description: 'Why the service deactivated the plugin (null: it did not)' }),
  created_at: Timestamp,
  updated_at: Timestamp,
})
export type PluginView = typeof PluginModel.static

export const PluginWithSecretModel = t.Composite([
  PluginModel,
  t.Object({ secret: t.String({ description: 'The HMAC signing secret: shown this once (create and rotate-secret)' }) }),
])

export const PluginCallModel = t.Object({
  id: Int(),
  hook: t.String(),
  time: Timestamp,
  latency_ms: t.Union([Int(), t.Null()]),
  status: t.Union([Int(), t.Null()], { description: "The plugin's HTTP status (null: no answer)" }),
  outcome: oneOf(OUTCOMES),
  message: t.Union([t.String(), t.Null()], { description: "The veto's message, or what went wrong" }),
})
export type PluginCallView = typeof PluginCallModel.static
