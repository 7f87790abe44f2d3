import { defineModule } from '../../kernel/module'
import { HealthErrors } from './model'
import { healthRoutes } from './routes'
import type { HealthState } from './service'

/**
 * Liveness and readiness probes (`/v1/health/live`, `/v1/health/ready`). Readiness asks the database and every
 * module's `ready` hook. Public and anonymous, outside /cdn: no rate-limit row, so never limited.
 */
export const healthModule = defineModule<HealthState>({
  name: 'health',
  setup: () => ({ migrated: false }),
  publicRoutes: ({ kernel, self }) => healthRoutes(kernel, self),
  errors: Object.values(HealthErrors),
})
