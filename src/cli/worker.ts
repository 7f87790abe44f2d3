import { createRuntime } from '../app'
import type { Config } from '../config'
import { ConfigError } from '../config'
import { startWorkers } from '../kernel/jobs'
import { checkEventDelivery, createKernel } from '../kernel/kernel'

/** `content-service worker`: job workers only (webhook deliveries, schedules), no HTTP. */
export async function startWorkerProcess(config: Config): Promise<{ stop(): Promise<void> }> {
  if (!config.databaseUrl) {
    // The embedded database belongs to one process: a separate worker needs a shared Postgres.
    throw new ConfigError('worker needs DATABASE_URL: on the embedded database `serve` runs the workers itself')
  }
  const kernel = await createKernel(config)
  try {
    await checkEventDelivery(kernel)
  } catch (err) {
    await kernel.db.close().catch(() => {})
    throw err
  }
  // The modules register their queues, schedules and outbox consumers; nothing is started that only serving needs.
  const runtime = createRuntime(kernel)
  const workers = await startWorkers(kernel)
  kernel.logger.info('content-service worker running — database: Postgres (DATABASE_URL)', { database: kernel.db.driver })
  return {
    async stop() {
      await workers.stop()
      await runtime.close()
    },
  }
}
