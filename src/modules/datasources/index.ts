import { defineModule } from '../../kernel/module'
import { spacesModule } from '../spaces'
import { datasourceEvents } from './events'
import { datasourceGraphql } from './graphql'
import { DatasourceErrors } from './model'
import { markerStep } from './read-step'
import { datasourceRoutes } from './routes'
import { claimDueDatasources, entriesPage, maintainDatasources, scheduleUnscheduled, syncDatasource } from './service'
import { DatasourceStore } from './store'
import './jobs'

/**
 * Datasources (spec 2, 4.5 markers, 4.13): http_json pulls on a cron schedule, signed webhook pushes, and `$ds:`
 * markers resolved in every Story read from an in-memory copy per (Space, key, revision).
 *
 * State: the store (refs and entries in memory) and `entries(spaceId, key, {page, perPage, q})`, the entries
 * listing other surfaces (GraphQL) serve.
 */
export const datasourcesModule = defineModule({
  name: 'datasources',
  setup: (kernel, use) => {
    const store = new DatasourceStore(kernel)
    return {
      store,
      // The GraphQL fields resolve their `space` argument through the cache the public routes' `publicSpace` uses.
      publicSpaces: use(spacesModule).publicSpaces,
      /** A page of a datasource's entries as the public surface sees them; null when the Space has no such key. */
      entries: (spaceId: number, key: string, opts: { page?: number; perPage?: number; q?: string } = {}) => entriesPage(store, spaceId, key, opts),
    }
  },
  routes: ({ kernel, guards, self, requestInfo }) => datasourceRoutes(kernel, guards, self.store, requestInfo),
  errors: Object.values(DatasourceErrors),
  events: datasourceEvents,
  caches: (self) => self.store.caches,
  jobs: (jobs, self, kernel) => {
    // One tick a minute across all instances (the queue's cron: one instance wins it). It claims the http_json
    // datasources whose `next_run_at` has passed (FOR UPDATE SKIP LOCKED, so two claims never take one row), moves
    // them on to their cron's next tick and enqueues their pulls in the same transaction, deduplicated per datasource
    // and due time. Before that it gives unscheduled http_json rows their next tick (rows stored before the column),
    // forgets push signatures past their window and seals URLs stored before URLs were sealed.
    jobs.define('datasources.tick', {
      handler: async () => {
        const now = kernel.clock.now()
        await maintainDatasources(kernel)
        await scheduleUnscheduled(kernel, now)
        await claimDueDatasources(kernel, now)
      },
    })
    jobs.define('datasources.sync', {
      concurrency: 4,
      handler: async ({ job }) => {
        await syncDatasource(kernel, self.store, job.payload.datasourceId)
      },
    })
    jobs.schedule({ name: 'datasources.tick', cron: '* * * * *', queue: 'datasources.tick', payload: {} })
  },
  readSteps: (self) => [markerStep(self.store)],
  graphql: (builder, self) => datasourceGraphql(builder, self, self.publicSpaces),
})
