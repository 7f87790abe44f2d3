import { Gauge } from 'prom-client'
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
  metrics: (registry, _self, kernel) => {
    new Gauge({
      name: 'content_service_webhook_deliveries',
      help: 'Webhook deliveries in the log (kept 30 days) by outcome: pending, delivered, failed',
      labelNames: ['outcome'],
      registers: [registry],
      async collect() {
        this.reset()
        for (const o of ['pending', 'delivered', 'failed']) this.set({ outcome: o }, 0)
        const rows = await kernel.db
          .query<{ status: string; n: number }>('select status, count(*)::int as n from webhook_deliveries group by status')
          .catch(() => [])
        for (const r of rows) this.set({ outcome: r.status }, r.n)
      },
    })
  },
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
