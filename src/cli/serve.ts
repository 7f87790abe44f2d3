import { createRuntime } from '../app'
import type { Config } from '../config'
import { startWorkers } from '../kernel/jobs'
import { createKernel } from '../kernel/kernel'
import { describeRegistration } from '../modules/auth/service'

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
  const workers = (opts.workers ?? config.workerEnabled) ? await startWorkers(kernel) : null
  const shownHost = server.hostname === '0.0.0.0' || server.hostname === '::' ? 'localhost' : server.hostname
  const url = `http://${shownHost}:${server.port}`
  const mode = kernel.db.driver === 'postgres' ? 'Postgres (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`
  const registration = await describeRegistration(kernel)
  const everywhere = server.hostname === '0.0.0.0' || server.hostname === '::'
  // Where it listens, said plainly: a wildcard bind is reachable from every network the host is on.
  const bind = `${server.hostname}:${server.port}${everywhere ? ', every network interface' : ''}`
  kernel.logger.info('listening', {
    url,
    bind: `${server.hostname}:${server.port}`,
    database: kernel.db.driver,
    workers: !!workers,
    registration: config.registration,
  })
  console.log(
    `content-service listening on ${url} (bound to ${bind}) — database: ${mode}${workers ? '' : ' — job workers off'} — registration: ${registration}`,
  )
  let stopping: Promise<void> | null = null
  return {
    url,
    stop() {
      stopping ??= (async () => {
        await server.stop() // stop accepting; resolves once in-flight requests have finished
        await workers?.stop() // let attempts in flight settle; unfinished jobs go back to the queue
        await runtime.close()
      })()
      return stopping
    },
  }
}
