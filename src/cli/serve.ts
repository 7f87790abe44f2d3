import { createApp } from '../app'
import type { Config } from '../config'
import { createDeps } from '../deps'
import { startWorkers } from '../kernel/jobs'

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
  const deps = await createDeps(config)
  const app = createApp(deps)
  // app.listen (not a bare Bun.serve) so handlers see the server and with it the peer address for rate limits.
  app.listen({ port: opts.port ?? config.port, hostname: opts.host ?? config.host, maxRequestBodySize: MAX_BODY })
  const server = app.server!
  const workers = (opts.workers ?? config.workerEnabled) ? await startWorkers(deps) : null
  const shownHost = server.hostname === '0.0.0.0' || server.hostname === '::' ? 'localhost' : server.hostname
  const url = `http://${shownHost}:${server.port}`
  const mode = deps.db.driver === 'postgres' ? 'Postgres (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`
  deps.logger.info('listening', { url, bind: `${server.hostname}:${server.port}`, database: deps.db.driver, workers: !!workers })
  console.log(`content-service listening on ${url} — database: ${mode}${workers ? '' : ' — job workers off'}`)
  let stopping: Promise<void> | null = null
  return {
    url,
    stop() {
      stopping ??= (async () => {
        await server.stop() // stop accepting; resolves once in-flight requests have finished
        await workers?.stop() // let attempts in flight settle; unfinished jobs go back to the queue
        await deps.close()
      })()
      return stopping
    },
  }
}
