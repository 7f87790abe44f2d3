import { MailErrors } from '../../kernel/mail'
import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { subscriberCdnRoutes, subscriberRoutes } from './routes'

/**
 * Newsletter subscribers (spec 4.2): public subscribe with double opt-in by mail (kernel mailer), confirm and
 * unsubscribe links, management and CSV export. Forms with `submit_action: lead` call `requestSubscription`.
 */
export const subscribersModule = defineModule({
  name: 'subscribers',
  routes: ({ kernel, guards }) => subscriberRoutes(kernel, guards),
  publicRoutes: ({ kernel, guards }) => subscriberCdnRoutes(kernel, guards),
  errors: [MailErrors.linksUnavailable],
  rateLimits: [
    // Spec 4.2.
    { id: 'cdn.subscribe', method: 'POST', path: '/v1/cdn/:space/subscribe', limit: 20, windowSeconds: MIN },
    { id: 'cdn.subscribe.confirm', method: 'GET', path: '/v1/cdn/:space/subscribe/confirm/:token', limit: 60, windowSeconds: MIN },
    { id: 'cdn.unsubscribe', method: 'GET', path: '/v1/cdn/:space/unsubscribe/:token', limit: 60, windowSeconds: MIN },
    // Not stated by the spec: the POSTs behind the links' pages (and RFC 8058 one-click), as their GETs.
    { id: 'cdn.subscribe.confirm.post', method: 'POST', path: '/v1/cdn/:space/subscribe/confirm/:token', limit: 60, windowSeconds: MIN },
    { id: 'cdn.unsubscribe.post', method: 'POST', path: '/v1/cdn/:space/unsubscribe/:token', limit: 60, windowSeconds: MIN },
  ],
  // Subscribers are promised that no IP is kept: the request log writes none for these routes.
  privatePaths: ['/v1/cdn/:space/subscribe', '/v1/cdn/:space/subscribe/confirm/:token', '/v1/cdn/:space/unsubscribe/:token'],
})
