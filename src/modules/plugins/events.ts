import type { EventDeclarations } from '../../kernel/events'

/** Internal: a plugin of the Space was added, changed, removed or deactivated (the per-Space plugin cache). */
export interface PluginChangedPayload {
  space_id: number
}

/** A plugin failed 20 times in a row and was deactivated. */
export interface PluginDeactivatedPayload {
  plugin: { id: number; name: string; url: string }
  reason: string
  consecutive_failures: number
}

declare module '../../kernel/events' {
  interface EventMap {
    'plugin.changed': PluginChangedPayload
    'plugin.deactivated': PluginDeactivatedPayload
  }
}

export const pluginEvents: EventDeclarations = {
  'plugin.changed': { description: 'Internal: a plugin of the Space was added, changed or removed (plugin cache).' },
  'plugin.deactivated': {
    description: 'A plugin failed 20 times in a row (errors and timeouts) and was deactivated.',
    webhook: (p) => ({ plugin: p.plugin, reason: p.reason, consecutive_failures: p.consecutive_failures }),
    body: '`plugin: {id, name, url}`, `reason`, `consecutive_failures`',
  },
}
