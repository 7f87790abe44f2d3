import { Gauge } from 'prom-client'
import { Elysia } from 'elysia'
import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { spacesModule } from '../spaces'
import { StoryCache } from './cache'
import { storyCdnRoutes, storyFastRoute } from './cdn'
import { storyEvents } from './events'
import { storyGraphql } from './graphql'
import { storyFilterHooks } from './hooks'
import { StoryErrors } from './model'
import { PublishedStoryIndex } from './published-index'
import { ReadMemo } from './read-memo'
import { StoryReadPipeline } from './read-pipeline'
import { componentRoutes, storyRoutes } from './routes'

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
    const pipeline: StoryReadPipeline = new StoryReadPipeline(kernel, cache, use(spacesModule).publicSpaces)
    // Which Stories are published, per Space (the beacon's Story check; other modules read it through this state).
    const published = new PublishedStoryIndex(kernel)
    // Whole reads memoised per URL on the fast path; any event anywhere (and a resync) drops them all.
    const memo = new ReadMemo(() => kernel.readSteps, () => cache.generation)
    kernel.bus.subscribe('*', () => memo.dropAll())
    kernel.bus.onResync(() => memo.dropAll())
    return { cache, pipeline, published, memo }
  },
  routes: ({ kernel, guards }) => new Elysia().use(storyRoutes(kernel, guards)).use(componentRoutes(kernel, guards)),
  publicRoutes: (ctx) => storyCdnRoutes(ctx, ctx.self.pipeline),
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
  caches: (self) => [self.cache.entries],
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
  onResync: (self) => {
    self.published.clear()
  },
  rateLimits: [
    // 4.2 (specific rows; the rest of /cdn has the kernel's 600/min default)
    { id: 'cdn.og', method: 'GET', path: '/v1/cdn/:space/stories/:uuid/og.svg', limit: 300, windowSeconds: MIN },
    { id: 'cdn.stories', method: 'GET', path: '/v1/cdn/:space/stories/*', limit: 600, windowSeconds: MIN },
  ],
})
