import { defineModule } from '../../kernel/module'
import { spacesModule } from '../spaces'
import { datasourceEvents } from './events'
import { datasourceGraphql } from './graphql'
import { DatasourceErrors } from './model'
import { markerStep } from './read-step'
import { datasourceRoutes } from './routes'
import { dueDatasources, entriesPage, maintainDatasources, syncDatasource } from './service'
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
    // One tick a minute across all instances (the queue's cron: one instance wins it); it enqueues a pull for every
    // http_json datasource whose own cron fires in that minute, deduplicated per datasource and minute. It also forgets
    // push signatures past their window and seals URLs stored before URLs were sealed.
    jobs.define('datasources.tick', {
      handler: async ({ job }) => {
        const tick = new Date(Math.floor(job.runAt.getTime() / 60_000) * 60_000)
        await maintainDatasources(kernel)
        const due = await dueDatasources(kernel, tick)
        if (!due.length) return
        await jobs.enqueueMany(
          kernel.db.db,
          due.map((id) => ({ queue: 'datasources.sync', payload: { datasourceId: id }, dedupeKey: `ds:${id}:${tick.toISOString()}` })),
        )
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
