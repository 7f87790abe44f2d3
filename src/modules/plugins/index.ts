import { defineModule } from '../../kernel/module'
import { PluginCache } from './cache'
import { CallLog, type PluginsState, runPlugins } from './caller'
import { pluginEvents } from './events'
import './jobs'
import { PluginErrors } from './model'
import { pluginRoutes } from './routes'
import { pruneLog } from './service'

/**
 * Plugins (spec 4.8, 6): HTTP endpoints a Space registers, called synchronously and signed like webhooks before the
 * changes their hooks name — they allow, amend or veto. The module handles every filter hook the modules declare
 * (`filters['*']`) and names none of them; a Space without plugins costs a cached Map lookup per change.
 */
export const pluginsModule = defineModule<PluginsState>({
  name: 'plugins',
  setup: (kernel) => ({ cache: new PluginCache(kernel), log: new CallLog(kernel) }),
  // Log entries still being written are written before the database closes.
  close: (self) => self.log.settled(),
  routes: ({ kernel, guards, self }) => pluginRoutes(kernel, guards, self.log),
  errors: [PluginErrors.limit],
  filterErrors: [PluginErrors.veto, PluginErrors.unavailable],
  events: pluginEvents,
  caches: (self) => [self.cache.cache],
  filters: {
    '*': {
      wants: (call, self) => self.cache.mayHave(call.actor.space.id, call.hook),
      run: (payload, call, self, kernel) => runPlugins(kernel, self, payload, call) as never,
    },
  },
  jobs: (jobs, _self, kernel) => {
    jobs.define('plugins.prune-log', {
      handler: async () => {
        const n = await pruneLog(kernel)
        if (n) kernel.logger.info('pruned the plugin call log', { entries: n })
      },
    })
    jobs.schedule({ name: 'plugins.prune-log', cron: '23 3 * * *', queue: 'plugins.prune-log', payload: {} })
  },
})
