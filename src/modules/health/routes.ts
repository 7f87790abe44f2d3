import { Elysia } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import { ErrorBody } from '../../kernel/schemas'
import { HealthModel, ReadyModel } from './model'
import { type HealthState, requireReady } from './service'

const NO_STORE = 'no-store'

/** GET /v1/health/live and /v1/health/ready: probes for load balancers and orchestrators (never rate limited). */
export function healthRoutes(kernel: Kernel, self: HealthState) {
  return new Elysia({ tags: ['Health'] })
    .get(
      '/health/live',
      ({ set }) => {
        set.headers['cache-control'] = NO_STORE
        return { status: 'ok' as const }
      },
      {
        response: { 200: HealthModel },
        detail: { summary: 'Liveness: the process answers HTTP (no database call; never rate limited)' },
      },
    )
    .get(
      '/health/ready',
      async ({ set }) => {
        set.headers['cache-control'] = NO_STORE
        await requireReady(kernel, self)
        if (!kernel.replicas.enabled) return { status: 'ok' as const }
        const replicas = kernel.replicas.status().map((r) => ({ name: r.name, state: r.state, lag_ms: r.lagMs }))
        return { status: 'ok' as const, replicas }
      },
      {
        response: { 200: ReadyModel, 503: ErrorBody },
        detail: {
          summary:
            'Readiness: the database answers, every migration is applied and the search indexes are built; 503 not_ready with the reason and Retry-After otherwise (never rate limited). With read replicas configured, `replicas` reports each one (a replica down or lagging never fails readiness: its reads go to the primary)',
        },
      },
    )
}
