import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { spacesModule } from '../spaces'
import { PublishedEventCache } from './cache'
import { eventCdnRoutes } from './cdn'
import { eventEvents } from './events'
import { eventGraphql } from './graphql'
import { eventListSeek } from './public'
import { EventErrors } from './model'
import { eventRoutes } from './routes'
import { FieldValidators } from './schema'
import { RegistrationWriter } from './writer'

/**
 * Events (issue 30): management CRUD, public list and detail (cacheable, locale chain), registration with capacity
 * taken in one transaction, waitlist and promotion, mails with calendar and cancel links, per-registration ICS
 * files, registrations and their CSV export, webhooks and GraphQL fields.
 */
export const eventsModule = defineModule({
  name: 'events',
  setup: (kernel, use) => ({
    validators: new FieldValidators(),
    writer: new RegistrationWriter(kernel),
    published: new PublishedEventCache(kernel),
    listSeek: eventListSeek(kernel),
    // The GraphQL fields resolve their `space` argument through the cache the public routes' `publicSpace` uses.
    publicSpaces: use(spacesModule).publicSpaces,
  }),
  routes: ({ kernel, guards }) => eventRoutes(kernel, guards),
  publicRoutes: ({ kernel, guards, self }) => eventCdnRoutes(kernel, guards, self),
  errors: Object.values(EventErrors),
  events: eventEvents,
  caches: (self) => [self.published.cache, self.listSeek.cache],
  graphql: (builder, self, kernel) => eventGraphql(builder, kernel, self.publicSpaces, self.listSeek),
  rateLimits: [
    // Spec 4.2.
    { id: 'cdn.events.register', method: 'POST', path: '/v1/cdn/:space/events/:slug/register', limit: 20, windowSeconds: MIN },
    { id: 'cdn.events.cancel', method: 'POST', path: '/v1/cdn/:space/events/:slug/cancel/:token', limit: 20, windowSeconds: MIN },
    // Not stated by the spec: the page of the mailed cancel link (its button POSTs above), as the ICS link.
    { id: 'cdn.events.cancel.page', method: 'GET', path: '/v1/cdn/:space/events/:slug/cancel/:token', limit: 60, windowSeconds: MIN },
    { id: 'cdn.events.ics', method: 'GET', path: '/v1/cdn/:space/events/:slug/ics/:icsToken', limit: 60, windowSeconds: MIN },
    { id: 'cdn.events.detail', method: 'GET', path: '/v1/cdn/:space/events/:slug', limit: 600, windowSeconds: MIN },
    { id: 'cdn.events.list', method: 'GET', path: '/v1/cdn/:space/events', limit: 600, windowSeconds: MIN },
  ],
  // Registrants are promised that no address is kept: the request log writes none for these routes.
  privatePaths: ['/v1/cdn/:space/events/:slug/register', '/v1/cdn/:space/events/:slug/cancel/:token'],
})
