import { createRuntime } from '../app'
import type { Config } from '../config'
import { createBackup, startControlSocket } from '../kernel/backup'
import { startWorkers } from '../kernel/jobs'
import { createKernel } from '../kernel/kernel'
import { SERVICE_VERSION } from '../modules/system/service'

export interface ServeOptions {
  port?: number
  host?: string
  /** Run the job workers in this process (default: config.workerEnabled). */
  workers?: boolean
}

export interface RunningServer {
  url: string
  stop(): Promise<void>
}

const MAX_BODY = 128 * 1024 * 1024 // above the 100 MB asset cap; JSON bodies have their own 1 MB limit

/** Opens the database, migrates, listens. Returns a handle whose stop() drains requests and closes the db. */
export async function startServer(config: Config, opts: ServeOptions = {}): Promise<RunningServer> {
  const kernel = await createKernel(config)
  const runtime = createRuntime(kernel)
  const server = runtime.listen({
    port: opts.port ?? config.port,
    hostname: opts.host ?? config.host,
    maxRequestBodySize: MAX_BODY,
    idleTimeout: config.httpIdleTimeoutSeconds,
  })
  void runtime.start()
  // `content-service backup` asks this process for a consistent snapshot of the embedded database it holds.
  const control = config.memoryDb
    ? null
    : startControlSocket(kernel.db, config.dataDir, () => createBackup(kernel.db, SERVICE_VERSION, { clockNow: kernel.clock.now() }), kernel.logger)
  // METRICS_PORT: Prometheus scrapes a listener of its own, which answers nothing else.
  const metrics = kernel.metrics
  const metricsServer =
    metrics && config.metricsPort !== null
      ? Bun.serve({
          port: config.metricsPort,
          hostname: opts.host ?? config.host,
          development: false,
          fetch: (request) =>
            request.method === 'GET' && new URL(request.url).pathname === '/metrics' ? metrics.response() : new Response('Not found\n', { status: 404 }),
        })
      : null
  const workers = (opts.workers ?? config.workerEnabled) ? await startWorkers(kernel) : null
  const shownHost = server.hostname === '0.0.0.0' || server.hostname === '::' ? 'localhost' : server.hostname
  const url = `http://${shownHost}:${server.port}`
  const mode = kernel.db.driver === 'postgres' ? 'Postgres (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`
  kernel.logger.info('listening', { url, bind: `${server.hostname}:${server.port}`, database: kernel.db.driver, workers: !!workers })
  console.log(`content-service listening on ${url} — database: ${mode}${workers ? '' : ' — job workers off'}`)
  let stopping: Promise<void> | null = null
  return {
    url,
    stop() {
      stopping ??= (async () => {
        await server.stop() // stop accepting; resolves once in-flight requests have finished
        await control?.stop()
        await metricsServer?.stop()
        await workers?.stop() // let attempts in flight settle; unfinished jobs go back to the queue
        await runtime.close()
      })()
      return stopping
    },
  }
}
