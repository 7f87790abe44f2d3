import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { spacesModule } from '../spaces'
import { storiesModule } from '../stories'
import { galleryEvents } from './events'
import { galleryGraphql } from './graphql'
import { GalleryErrors } from './model'
import { GalleryCache } from './public'
import { galleryCdnRoutes, galleryRoutes } from './routes'

/**
 * Galleries (issue 30): ordered images of a Space with captions and alt texts per locale, managed by editors and
 * answered publicly by slug with sizes and ready-made transform URLs. Assets are the assets module's: checked through
 * its service at save, read through it into the public cache, which follows the asset events.
 */
export const galleriesModule = defineModule({
  name: 'galleries',
  setup: (kernel, use) => {
    const pipeline = use(storiesModule).pipeline
    return {
      cache: new GalleryCache(kernel),
      spaces: use(spacesModule).publicSpaces,
      // The Story read's locale chain (and its per-Space memo): one rule for every public read.
      chainOf: pipeline.chain.bind(pipeline),
    }
  },
  routes: ({ kernel, guards }) => galleryRoutes(kernel, guards),
  publicRoutes: ({ kernel, guards, self }) => galleryCdnRoutes(kernel, guards, self.cache, self.chainOf),
  graphql: (builder, self, kernel) => galleryGraphql(builder, kernel, self),
  errors: Object.values(GalleryErrors),
  events: galleryEvents,
  caches: (self) => [self.cache.cache],
  rateLimits: [
    // Spec 4.2.
    { id: 'cdn.galleries', method: 'GET', path: '/v1/cdn/:space/galleries/:slug', limit: 600, windowSeconds: MIN },
  ],
})
