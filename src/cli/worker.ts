import type { Config } from '../config'
import { ConfigError } from '../config'
import { createDeps } from '../deps'
import { startWorkers } from '../kernel/jobs'

/** `content-service worker`: job workers only (webhook deliveries, schedules), no HTTP. */
export async function startWorkerProcess(config: Config): Promise<{ stop(): Promise<void> }> {
  if (!config.databaseUrl) {
    // The embedded database belongs to one process: a separate worker needs a shared Postgres.
    throw new ConfigError('worker needs DATABASE_URL: on the embedded database `serve` runs the workers itself')
  }
  const deps = await createDeps(config)
  const workers = await startWorkers(deps)
  console.log('content-service worker running — database: Postgres (DATABASE_URL)')
  return {
    async stop() {
      await workers.stop()
      await deps.close()
    },
  }
}
