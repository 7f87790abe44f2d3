import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { segmentsModule } from '../segments'
import { spacesModule } from '../spaces'
import { storiesModule } from '../stories'
import { overlayCdnRoutes, overlayFastRoute } from './cdn'
import { overlayEvents } from './events'
import { overlayGraphql } from './graphql'
import { OverlayReader } from './public'
import { overlayRoutes } from './routes'

/**
 * DOM overlay (issue 30): rules that embed.js applies to a site's own pages — replace or insert content, set an
 * attribute, hide an element — chosen by a path glob, a CSS selector, the locale and the audience segment. The public
 * read resolves segments and locales exactly as the Story read does (through the segments module's resolution and the
 * stories module's locale chain) and is answered on the fast path from memory.
 */
export const overlayModule = defineModule({
  name: 'overlay',
  setup: (kernel, use) => {
    const pipeline = use(storiesModule).pipeline
    const segments = use(segmentsModule)
    const reader = new OverlayReader(kernel, use(spacesModule).publicSpaces, pipeline.chain.bind(pipeline), segments.resolve)
    return { reader, isSegmentKey: segments.isSegmentKey, segmentHeader: segments.header }
  },
  routes: ({ kernel, guards, self }) => overlayRoutes(kernel, guards, self.isSegmentKey, self.reader),
  publicRoutes: (ctx) => overlayCdnRoutes(ctx, ctx.self.reader, ctx.self.segmentHeader),
  fast: ({ self }) => [overlayFastRoute(self.reader)],
  graphql: (builder, self, kernel) => overlayGraphql(builder, self.reader, kernel.readSteps),
  events: overlayEvents,
  caches: (self) => [self.reader.cache],
  // Memoised whole reads follow every change of their Space (its locales, segments, rules), as Story reads do.
  memos: (self) => [self.reader.memo],
  rateLimits: [
    // Spec 4.2.
    { id: 'cdn.dom-overlay', method: 'GET', path: '/v1/cdn/:space/dom-overlay', limit: 600, windowSeconds: MIN },
  ],
})
