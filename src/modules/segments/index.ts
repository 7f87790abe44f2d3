import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { segmentCache } from './cache'
import { segmentCdnRoutes } from './cdn'
import { segmentEvents } from './events'
import { SegmentErrors } from './model'
import { type Resolution, resolve, SEGMENT_READ_HEADER, segmentReadStep } from './read'
import { segmentRoutes } from './routes'
import { publishVariants, withdrawVariants } from './service'

/**
 * Personalisation (spec 4.5, 4.9): audience segments, resolved on every public Story read from memory, pick a
 * per-Story variant. Segments are cached per Space and refreshed through the module's events on every instance;
 * variants are content, published with their Story (the `inTx` hooks below run in the publish transaction).
 */
export const segmentsModule = defineModule({
  name: 'segments',
  setup: (kernel) => {
    const cache = segmentCache(kernel)
    const countryHeader = kernel.config.segmentCountryHeader
    return {
      cache,
      /** The request header that names a segment (as the read step declares it), for other modules' descriptions. */
      header: SEGMENT_READ_HEADER.name,
      /**
       * §4.9 on one request, exactly as a Story read resolves it (the X-Service-Segment short-cut, else the request's
       * signals; `fromSignals` then says the answer must be `private`), for other modules' public reads. Synchronous
       * when the Space's segments are cached.
       */
      resolve(spaceId: number, request: Request, viaTrustedProxy: boolean, lang: string | undefined): Resolution | Promise<Resolution> {
        const set = cache.get(spaceId)
        if (set instanceof Promise) return set.then((s) => resolve(s, request, viaTrustedProxy, countryHeader, lang))
        return resolve(set, request, viaTrustedProxy, countryHeader, lang)
      },
      /** Whether `key` names a segment of the Space (active or not), from the in-memory cache (for other modules). */
      isSegmentKey(spaceId: number, key: string): boolean | Promise<boolean> {
        const set = cache.get(spaceId)
        return set instanceof Promise ? set.then((s) => s.keys.has(key)) : set.keys.has(key)
      },
    }
  },
  routes: ({ kernel, guards }) => segmentRoutes(kernel, guards),
  publicRoutes: ({ kernel, guards, self, requestInfo }) => segmentCdnRoutes(kernel, guards, self.cache, requestInfo),
  readSteps: (self, kernel) => [segmentReadStep(kernel, self.cache)],
  errors: Object.values(SegmentErrors),
  events: segmentEvents,
  caches: (self) => [self.cache],
  // Browsers name a segment (resolved once through /cdn/{space}/segment) and read which one a Story read served.
  publicCors: { allowHeaders: ['X-Service-Segment'], exposeHeaders: ['X-Service-Segment'] },
  inTx: {
    // Guarded: an event emitted without a Story id (a test or a plugin's hand-made event) must not veto its change.
    'story.published': (tx, e) => (typeof e.payload.story?.id === 'number' ? publishVariants(tx, e.payload.story.id) : undefined),
    'story.unpublished': (tx, e) => (typeof e.payload.story?.id === 'number' ? withdrawVariants(tx, e.payload.story.id) : undefined),
  },
  rateLimits: [
    // Spec 4.8: POST audience-segments 60/min; 4.2's public default for the resolve endpoint.
    { id: 'segments.create', method: 'POST', path: '/v1/spaces/:space/audience-segments', limit: 60, windowSeconds: MIN },
    { id: 'cdn.segment', method: 'GET', path: '/v1/cdn/:space/segment', limit: 600, windowSeconds: MIN },
  ],
})
