import { Gauge } from 'prom-client'
import { Elysia } from 'elysia'
import { cacheShare } from '../../kernel/cache'
import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { spacesModule } from '../spaces'
import { StoryCache } from './cache'
import { storyCdnRoutes, storyFastRoute, storyListRoutes } from './cdn'
import { recordMoved, recordPublished, recordWithdrawn } from './changes'
import { storyEvents } from './events'
import { storyGraphql } from './graphql'
import { storyFilterHooks } from './hooks'
import { StoryErrors } from './model'
import { PublishedStoryIndex } from './published-index'
import { PublicLists } from './public-list'
import { ReadMemo } from './read-memo'
import { StoryReadPipeline } from './read-pipeline'
import { componentRoutes, storyRoutes } from './routes'
import { registerScheduleJobs } from './schedule'
import { scheduleRoutes } from './schedule-routes'
import { contentVersions } from './versions'

/**
 * Stories (block documents with versions, locales and publishing), component blueprints, and the public read with
 * its in-memory cache. The cache follows the committed events (this instance at commit, the others through the
 * kernel's event bus), so no other module touches it.
 */
export const storiesModule = defineModule({
  name: 'stories',
  setup(kernel, use) {
    const load = (spaceId: number, fullPath: string) => pipeline.loadStory(spaceId, fullPath)
    const cache = new StoryCache({ maxBytes: kernel.config.cdnCacheBytes, now: () => kernel.clock.ms(), load })
    // The Space content version (meta.cv) of every read, from memory after one query per change.
    const versions = contentVersions(kernel)
    const pipeline: StoryReadPipeline = new StoryReadPipeline(kernel, cache, use(spacesModule).publicSpaces, versions)
    // The public list and the change feed, read through the pipeline (the list's pages of paths cached per Space).
    const lists = new PublicLists(kernel, pipeline)
    // Which Stories are published, per Space (the beacon's Story check; other modules read it through this state).
    const published = new PublishedStoryIndex(kernel)
    // Whole reads memoised per URL on the fast path; an event drops its Space's (the `memos` slot), a resync all.
    const memo = new ReadMemo(() => kernel.readSteps, cacheShare(kernel.config, 1 / 8), cache)
    return { cache, pipeline, published, memo, versions, lists }
  },
  // The schedule routes first: `/stories/schedules` is a static segment beside `/stories/:uuid`.
  routes: ({ kernel, guards }) =>
    new Elysia().use(scheduleRoutes(kernel, guards)).use(storyRoutes(kernel, guards)).use(componentRoutes(kernel, guards)),
  // Scheduled publish and unpublish (schedule.ts).
  jobs: (jobs, _self, kernel) => registerScheduleJobs(jobs, kernel),
  publicRoutes: (ctx) => new Elysia().use(storyListRoutes(ctx, ctx.self.lists, ctx.self.pipeline)).use(storyCdnRoutes(ctx, ctx.self.pipeline, ctx.self.lists)),
  fast: (ctx) => [storyFastRoute(ctx, ctx.self.pipeline, ctx.self.memo)],
  metrics: (registry, self) => {
    new Gauge({
      name: 'content_service_story_cache_bytes',
      help: 'Memory held by the public Story read cache (CDN_CACHE_MB is its budget)',
      registers: [registry],
      collect() {
        this.set(self.cache.stats.bytes)
      },
    })
    new Gauge({
      name: 'content_service_story_cache_entries',
      help: 'Stories in the public read cache',
      registers: [registry],
      collect() {
        this.set(self.cache.stats.stories)
      },
    })
  },
  graphql: (builder, self, kernel) => storyGraphql(builder, self, kernel),
  errors: Object.values(StoryErrors),
  events: storyEvents,
  filterHooks: storyFilterHooks,
  caches: (self) => [self.cache.entries, self.versions.cache, self.lists.pages, self.published.cache],
  memos: (self) => [self.memo.memo],
  // The public change feed and the Space content version, in the transaction of each change (changes.ts).
  inTx: {
    'story.published': (tx, e, _emit, _self, kernel) => recordPublished(tx, e, kernel.clock.now()).then(() => {}),
    'story.unpublished': (tx, e, _emit, _self, kernel) => recordWithdrawn(tx, e, kernel.clock.now()).then(() => {}),
    'story.moved': (tx, e, _emit, _self, kernel) => recordMoved(tx, e, kernel.clock.now()).then(() => {}),
  },
  on: {
    'story.published': (e, self) => {
      self.published.published(e.spaceId!, e.payload.story.uuid)
    },
    'story.unpublished': (e, self) => {
      self.published.removed(e.spaceId!, e.payload.story.uuid)
    },
    'story.deleted': (e, self) => {
      self.published.removed(e.spaceId!, e.payload.story.uuid)
    },
  },
  rateLimits: [
    // 4.2 (specific rows; the rest of /cdn has the kernel's 600/min default)
    { id: 'cdn.og', method: 'GET', path: '/v1/cdn/:space/stories/:uuid/og.svg', limit: 300, windowSeconds: MIN },
    { id: 'cdn.stories', method: 'GET', path: '/v1/cdn/:space/stories/*', limit: 600, windowSeconds: MIN },
    { id: 'cdn.stories.list', method: 'GET', path: '/v1/cdn/:space/stories', limit: 600, windowSeconds: MIN },
    { id: 'cdn.changes', method: 'GET', path: '/v1/cdn/:space/changes', limit: 600, windowSeconds: MIN },
  ],
})
