import { Gauge } from 'prom-client'
import type { Tx } from '../../kernel/db'
import type { Kernel } from '../../kernel/kernel'
import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { spacesModule } from '../spaces'
import { SearchMemo, searchFastRoute } from './fast'
import { searchGraphql } from './graphql'
import { SearchErrors } from './model'
import { SearchRegistry } from './registry'
import { searchCdnRoutes } from './routes'

/**
 * Public full-text search (spec 4.4): one in-memory index per Space and locale of the published Stories, built at
 * start-up and kept in step through the Story events (every instance keeps its own).
 */
declare module '../../kernel/jobs' {
  interface JobMap {
    'search.snapshot': { spaceId: number }
  }
}

const SNAPSHOT_QUEUE = 'search.snapshot'
/** How long after a change its Space's snapshot is written (later changes meanwhile ride along). */
const SNAPSHOT_DELAY_MS = 60_000

function queueSnapshot(tx: Tx, spaceId: number | null, registry: SearchRegistry, kernel: Kernel) {
  if (spaceId === null || !registry.snapshotsOn) return
  return kernel.jobs
    .enqueue(SNAPSHOT_QUEUE, { spaceId }, { tx, runAt: new Date(kernel.clock.now().getTime() + SNAPSHOT_DELAY_MS), dedupeKey: String(spaceId) })
    .then(() => {})
}

export const searchModule = defineModule({
  name: 'search',
  // `spaces`: the GraphQL field resolves its `space` argument through the same cache as the public routes.
  // `memo`: recent answers of the fast path (fast.ts), each valid while its index's revision holds.
  setup: (kernel, use) => ({ registry: new SearchRegistry(kernel), spaces: use(spacesModule).publicSpaces, memo: new SearchMemo() }),
  start: (self) => self.registry.start(),
  close: (self) => self.registry.close(),
  errors: Object.values(SearchErrors),
  ready: (self) => (self.registry.warm ? null : 'the search indexes are still being built'),
  metrics: (registry, self) => {
    new Gauge({
      name: 'content_service_search_documents',
      help: 'Documents (Story × locale) in this instance\'s search indexes',
      registers: [registry],
      collect() {
        this.set(self.registry.stats().documents)
      },
    })
    new Gauge({
      name: 'content_service_search_indexes',
      help: 'Search indexes (Space × locale) in this instance',
      registers: [registry],
      collect() {
        this.set(self.registry.stats().indexes)
      },
    })
    new Gauge({
      name: 'content_service_search_resident_bytes',
      help: 'Estimated bytes of the search indexes resident in this instance (SEARCH_MEMORY_MB is their budget when set)',
      registers: [registry],
      collect() {
        this.set(self.registry.memory().bytes)
      },
    })
    new Gauge({
      name: 'content_service_search_loads',
      help: 'Cold loads of a Space\'s search indexes since start, by source (a snapshot, or the Stories\' rows)',
      labelNames: ['source'],
      registers: [registry],
      collect() {
        const l = self.registry.loads
        this.set({ source: 'snapshot' }, l.snapshot)
        this.set({ source: 'rows' }, l.rows)
      },
    })
    new Gauge({
      name: 'content_service_search_load_seconds',
      help: 'Time spent in cold loads of search indexes since start, by source',
      labelNames: ['source'],
      registers: [registry],
      collect() {
        const l = self.registry.loads
        this.set({ source: 'snapshot' }, l.snapshotMs / 1000)
        this.set({ source: 'rows' }, l.rowsMs / 1000)
      },
    })
    new Gauge({
      name: 'content_service_search_evictions',
      help: 'Spaces whose search indexes were dropped to stay within SEARCH_MEMORY_MB since start',
      registers: [registry],
      collect() {
        this.set(self.registry.memory().evictions)
      },
    })
    new Gauge({
      name: 'content_service_search_released_bytes',
      help: 'Bytes of evicted search indexes freed at eviction since start (the rest goes with the collector)',
      registers: [registry],
      collect() {
        this.set(self.registry.releasedBytes)
      },
    })
  },
  publicRoutes: ({ guards, self }) => searchCdnRoutes(guards, self.registry),
  fast: ({ self }) => [searchFastRoute(self.registry, self.spaces, self.memo)],
  memos: (self) => [self.memo.memo],
  graphql: (builder, self) => searchGraphql(builder, self),
  // Snapshots for changed Spaces (SEARCH_MEMORY_MB): each public change queues the Space's `search.snapshot` job a
  // minute ahead, deduplicated while it waits, so a burst of publishes costs one snapshot.
  inTx: {
    'story.published': (tx, e, _emit, self, kernel) => queueSnapshot(tx, e.spaceId, self.registry, kernel),
    'story.unpublished': (tx, e, _emit, self, kernel) => queueSnapshot(tx, e.spaceId, self.registry, kernel),
    'story.moved': (tx, e, _emit, self, kernel) => queueSnapshot(tx, e.spaceId, self.registry, kernel),
  },
  jobs: (jobs, self) => {
    jobs.define(SNAPSHOT_QUEUE, {
      timeoutMs: 10 * 60_000,
      handler: async ({ job }) => {
        await self.registry.writeSnapshotOf(job.payload.spaceId)
      },
    })
  },
  on: {
    'story.published': (e, self) => self.registry.onStoryEvent(e),
    'story.unpublished': (e, self) => self.registry.onStoryEvent(e),
    'story.deleted': (e, self) => self.registry.onStoryEvent(e),
    'version.created': (e, self) => self.registry.onSaved(e),
    'space.archived': (e, self) => {
      if (e.spaceId !== null) self.registry.dropSpace(e.spaceId)
    },
  },
  rateLimits: [
    // Spec 4.2/8 state 60/min (route listing) and 600/min/IP (search description) for search. 600: search-as-you-type
    // sends a request per pause in typing and visitors share IPs behind NAT; a query costs ~1 ms (docs/search.md).
    { id: 'cdn.search', method: 'GET', path: '/v1/cdn/:space/search', limit: 600, windowSeconds: MIN },
  ],
})
