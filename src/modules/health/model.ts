import { t } from 'elysia'
import { defineError } from '../../kernel/errors'

export const HealthModel = t.Object({ status: t.Literal('ok') })

/** How long a load balancer should wait before asking again, in seconds (the Retry-After of a 503). */
export const READY_RETRY_AFTER_SECONDS = 5

export const HealthErrors = {
  notReady: defineError(
    'not_ready',
    503,
    'The instance cannot serve yet (database unreachable, migrations not applied, search indexes still building): the message says which; retry after Retry-After seconds.',
  ),
} as const
