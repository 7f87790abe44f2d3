import { createRuntime } from '../app'
import type { Config } from '../config'
import { startWorkers } from '../kernel/jobs'
import { StartupError } from '../kernel/data-dir'
import { createKernel } from '../kernel/kernel'

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
  const port = opts.port ?? config.port
  const hostname = opts.host ?? config.host
  let server: ReturnType<typeof runtime.listen>
  try {
    server = runtime.listen({ port, hostname, maxRequestBodySize: MAX_BODY, idleTimeout: config.httpIdleTimeoutSeconds, reusePort: config.reusePort })
  } catch (err) {
    await runtime.close().catch(() => {})
    // Bun's own message ("Is port N in use?") does not say what to do; two servers on one port split the traffic.
    throw new StartupError(
      `cannot listen on ${hostname}:${port} (${err instanceof Error ? err.message : String(err)}): another process holds ` +
        'the port. Stop it or choose another PORT; REUSE_PORT=true lets several processes share a port on purpose.',
    )
  }
  void runtime.start()
  const workers = (opts.workers ?? config.workerEnabled) ? await startWorkers(kernel) : null
  const shownHost = server.hostname === '0.0.0.0' || server.hostname === '::' ? 'localhost' : server.hostname
  const url = `http://${shownHost}:${server.port}`
  const mode = kernel.db.driver === 'postgres' ? 'Postgres (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`
  kernel.logger.info(`content-service listening on ${url} — database: ${mode}${workers ? '' : ' — job workers off'}`, {
    url,
    bind: `${server.hostname}:${server.port}`,
    database: kernel.db.driver,
    workers: !!workers,
  })
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
