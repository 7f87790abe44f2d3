import { createRuntime } from '../app'
import type { Config } from '../config'
import { startWorkers } from '../kernel/jobs'
import { MAX_URL_BYTES, PARSER_HEADER_BYTES, PARSER_HEADER_LIMIT } from '../kernel/http'
import { createKernel } from '../kernel/kernel'
import { UPLOAD_ENVELOPE_BYTES } from '../modules/assets/upload'

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


/** Opens the database, migrates, listens. Returns a handle whose stop() drains requests and closes the db. */
export async function startServer(config: Config, opts: ServeOptions = {}): Promise<RunningServer> {
  const kernel = await createKernel(config)
  const runtime = createRuntime(kernel)
  const server = runtime.listen({
    port: opts.port ?? config.port,
    hostname: opts.host ?? config.host,
    // The largest body a route takes: an asset upload (JSON bodies have their own, smaller limit).
    maxRequestBodySize: config.assetMaxBytes + UPLOAD_ENVELOPE_BYTES,
    idleTimeout: config.httpIdleTimeoutSeconds,
  })
  void runtime.start()
  const workers = (opts.workers ?? config.workerEnabled) ? await startWorkers(kernel) : null
  const shownHost = server.hostname === '0.0.0.0' || server.hostname === '::' ? 'localhost' : server.hostname
  const url = `http://${shownHost}:${server.port}`
  const mode = kernel.db.driver === 'postgres' ? 'Postgres (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`
  kernel.logger.info('listening', { url, bind: `${server.hostname}:${server.port}`, database: kernel.db.driver, workers: !!workers })
  console.log(`content-service listening on ${url} — database: ${mode}${workers ? '' : ' — job workers off'}`)
  if (PARSER_HEADER_LIMIT <= MAX_URL_BYTES) {
    kernel.logger.warn(
      `Bun's HTTP parser takes request lines and headers of at most ${PARSER_HEADER_LIMIT} bytes: longer URLs get an empty 431 instead of the service's 414 at ${MAX_URL_BYTES}. Run with --max-http-header-size=${PARSER_HEADER_BYTES} (the executable is built with it).`,
    )
  }
  let stopping: Promise<void> | null = null
  return {
    url,
    stop() {
      stopping ??= (async () => {
        const drained = server.stop() // stop accepting; resolves once in-flight requests have finished
        await runtime.drain() // end the event streams: they never finish by themselves
        // A client that stops reading keeps its response unfinished for ever: past the drain window, cut it off.
        const cut = setTimeout(() => void server.stop(true), config.shutdownTimeoutSeconds * 750)
        await drained
        clearTimeout(cut)
        await workers?.stop() // let attempts in flight settle; unfinished jobs go back to the queue
        await runtime.close()
      })()
      return stopping
    },
  }
}
