import { t } from 'elysia'
import { defineError } from '../../kernel/errors'

export const HealthModel = t.Object({ status: t.Literal('ok') })

/** One read replica as readiness reports it (DATABASE_REPLICA_URLS). */
export const ReplicaHealth = t.Object({
  name: t.String({ description: 'host:port/database of the replica (never credentials)' }),
  state: t.Union([t.Literal('up'), t.Literal('lagging'), t.Literal('down')], {
    description: 'up: serves public reads; lagging: further behind the primary than REPLICA_MAX_LAG_MS; down: does not answer. Reads it cannot serve go to the primary.',
  }),
  lag_ms: t.Union([t.Integer(), t.Null()], { description: 'Milliseconds behind the primary; null until it first answered' }),
})

/**
 * Readiness: `replicas` only when read replicas are configured. A replica that is down or lagging does not make the
 * instance unready: its reads go to the primary.
 */
export const ReadyModel = t.Object({
  status: t.Literal('ok'),
  replicas: t.Optional(t.Array(ReplicaHealth, { description: 'Each read replica (DATABASE_REPLICA_URLS), when configured: reported, never failing readiness' })),
})

/** How long a load balancer should wait before asking again, in seconds (the Retry-After of a 503). */
export const READY_RETRY_AFTER_SECONDS = 5

export const HealthErrors = {
  notReady: defineError(
    'not_ready',
    503,
    'The instance cannot serve yet (database unreachable, migrations not applied, search indexes still building): the message says which; retry after Retry-After seconds.',
  ),
} as const
