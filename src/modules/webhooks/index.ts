import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { registerWebhookJobs } from './delivery'
import { webhookRoutes } from './routes'

/**
 * Outbound webhooks (spec 4.11, 6): subscriptions, signed deliveries as durable jobs fed by the outbox, the delivery
 * log. Which events exist and what their bodies hold comes from the modules' event declarations (kernel.events).
 */
export const webhooksModule = defineModule({
  name: 'webhooks',
  routes: ({ kernel, guards }) => webhookRoutes(kernel, guards),
  jobs: (jobs, _self, kernel) => registerWebhookJobs(jobs, kernel),
  rateLimits: [
    // Not stated by the spec; bounds the outbound requests one caller can trigger on demand.
    { id: 'webhooks.ping', method: 'POST', path: '/v1/spaces/:space/webhooks/:id/ping', limit: 60, windowSeconds: MIN },
    {
      id: 'webhooks.redeliver',
      method: 'POST',
      path: '/v1/spaces/:space/webhooks/:id/deliveries/:delivery/redeliver',
      limit: 60,
      windowSeconds: MIN,
    },
  ],
})
