import { createRuntime } from '../app'
import type { Config } from '../config'
import { startControlSocket, writeBackup } from '../kernel/backup'
import { startWorkers } from '../kernel/jobs'
import { StartupError } from '../kernel/data-dir'
import { MAX_URL_BYTES, PARSER_HEADER_BYTES, PARSER_HEADER_LIMIT } from '../kernel/http'
import { checkEventDelivery, createKernel } from '../kernel/kernel'
import { describeRegistration } from '../modules/auth/service'
import { UPLOAD_ENVELOPE_BYTES } from '../modules/assets/upload'
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


/** Opens the database, migrates, listens. Returns a handle whose stop() drains requests and closes the db. */
export async function startServer(config: Config, opts: ServeOptions = {}): Promise<RunningServer> {
  const kernel = await createKernel(config)
  try {
    await checkEventDelivery(kernel)
  } catch (err) {
    await kernel.db.close().catch(() => {})
    throw err
  }
  const runtime = createRuntime(kernel)
  const port = opts.port ?? config.port
  const hostname = opts.host ?? config.host
  let server: ReturnType<typeof runtime.listen>
  try {
    server = runtime.listen({
      port,
      hostname,
      // The largest body a route takes: an asset upload (JSON bodies have their own, smaller limit).
      maxRequestBodySize: config.assetMaxBytes + UPLOAD_ENVELOPE_BYTES,
      idleTimeout: config.httpIdleTimeoutSeconds,
      reusePort: config.reusePort,
    })
  } catch (err) {
    await runtime.close().catch(() => {})
    // Bun's own message ("Is port N in use?") does not say what to do; two servers on one port split the traffic.
    throw new StartupError(
      `cannot listen on ${hostname}:${port} (${err instanceof Error ? err.message : String(err)}): another process holds ` +
        'the port. Stop it or choose another PORT; REUSE_PORT=true lets several processes share a port on purpose.',
    )
  }
  void runtime.start()
  // `content-service backup` asks this process for a consistent snapshot of the embedded database it holds.
  const control = config.memoryDb
    ? null
    : startControlSocket(kernel.db, config.dataDir, (out) => writeBackup(kernel.db, SERVICE_VERSION, out, { clockNow: kernel.clock.now(), s3: config.s3 }), kernel.logger)
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
  const registration = await describeRegistration(kernel)
  const everywhere = server.hostname === '0.0.0.0' || server.hostname === '::'
  // Where it listens, said plainly: a wildcard bind is reachable from every network the host is on.
  const bind = `${server.hostname}:${server.port}${everywhere ? ', every network interface' : ''}`
  // Mail links are built from PUBLIC_URL only (a request's Host can be forged): without it, say what does not mail.
  const mailLinks = kernel.mail.linkBase()
    ? `mail links: ${kernel.mail.linkBase()}`
    : 'mail links: off (PUBLIC_URL unset: newsletter sign-up, invitations, password resets and pitch demos are refused; event mails go without links)'
  // The start line is printed whatever LOG_LEVEL says: where the server listens is never optional.
  kernel.logger.notice(
    `content-service listening on ${url} (bound to ${bind}) — database: ${mode}${workers ? '' : ' — job workers off'} — registration: ${registration} — ${mailLinks}`,
    {
    url,
    bind: `${server.hostname}:${server.port}`,
    database: kernel.db.driver,
    workers: !!workers,
    registration: config.registration,
    mail_links: kernel.mail.linkBase() !== null,
    },
  )
  if (config.pitchDemos && !config.publicUrl) {
    kernel.logger.warn('PITCH_DEMOS=on but PUBLIC_URL is unset: demo links cannot be mailed, so the pitch routes answer 403 pitch_unavailable. Set PUBLIC_URL.')
  }
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
        await control?.stop()
        await metricsServer?.stop()
        await workers?.stop() // let attempts in flight settle; unfinished jobs go back to the queue
        await runtime.close()
      })()
      return stopping
    },
  }
}
