#!/usr/bin/env bun
// The CLI entry and the compiled executable's main.
import { parseArgs } from 'node:util'
import { COMMAND_HELP, HELP } from '../src/cli/help'
import { runMigrate } from '../src/cli/migrate'
import { ReindexError, runReindex } from '../src/cli/reindex'
import { startServer } from '../src/cli/serve'
import { startWorkerProcess } from '../src/cli/worker'
import { type Config, ConfigError, loadConfig } from '../src/config'
import { StartupError } from '../src/kernel/data-dir'
import { createLogger, flushLogs } from '../src/kernel/logger'
import { SERVICE_VERSION } from '../src/modules/system/service'

const COMMANDS = ['serve', 'worker', 'migrate', 'reindex', 'version'] as const

/** Once the config is read, refusals and shutdown go through the logger (LOG_FORMAT=json: JSON lines only). */
let loaded: Config | null = null

function fail(message: string, code = 2): never {
  if (loaded) {
    // Errors are written at once (stderr); buffered lines before them first.
    createLogger(loaded.logLevel === 'silent' ? 'error' : loaded.logLevel, undefined, loaded.logFormat).error(message)
    flushLogs()
  } else console.error(`content-service: ${message}`)
  process.exit(code)
}

async function main(argv: string[]) {
  const first = argv[0]
  if (first === '--help' || first === '-h' || first === 'help') {
    const topic = argv[1]
    console.log(topic && COMMAND_HELP[topic] ? COMMAND_HELP[topic] : HELP)
    return
  }
  if (first === '--version' || first === '-v') {
    console.log(SERVICE_VERSION)
    return
  }
  const command = first && !first.startsWith('-') ? first : 'serve'
  const rest = first && !first.startsWith('-') ? argv.slice(1) : argv
  if (!(COMMANDS as readonly string[]).includes(command)) fail(`unknown command "${command}". Run content-service --help.`)

  let values: Record<string, string | boolean | undefined>
  try {
    values = parseArgs({
      args: rest,
      options: {
        help: { type: 'boolean', short: 'h' },
        ...(command === 'serve'
          ? { port: { type: 'string' }, host: { type: 'string' }, 'no-worker': { type: 'boolean' } }
          : {}),
        ...(command === 'reindex' ? { space: { type: 'string' } } : {}),
      },
      strict: true,
      allowPositionals: false,
    }).values
  } catch (err) {
    fail(`${(err as Error).message}\n\n${COMMAND_HELP[command]}`)
  }
  if (values.help) {
    console.log(COMMAND_HELP[command])
    return
  }

  let config
  try {
    config = loadConfig()
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message)
    throw err
  }
  loaded = config
  const logger = createLogger(config.logLevel, undefined, config.logFormat)

  if (command === 'version') {
    console.log(`content-service ${SERVICE_VERSION} (${config.releaseChannel})`)
    console.log(`database: ${config.databaseUrl ? 'Postgres (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`}`)
    return
  }
  if (command === 'migrate') {
    await runMigrate(config)
    return
  }
  if (command === 'reindex') {
    try {
      const report = await runReindex(config, { space: typeof values.space === 'string' ? values.space : undefined })
      // No running instance answered: nothing was rebuilt, which a deploy script must be able to tell.
      if (!report.instances.length) process.exitCode = 3
    } catch (err) {
      if (err instanceof ReindexError) fail(err.message)
      throw err
    }
    return
  }

  let running: { stop(): Promise<void> }
  if (command === 'worker') {
    running = await startWorkerProcess(config)
  } else {
    let port: number | undefined
    if (typeof values.port === 'string') {
      port = Number(values.port)
      if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be a port number, got "${values.port}"`)
    }
    running = await startServer(config, {
      port,
      host: typeof values.host === 'string' ? values.host : undefined,
      workers: values['no-worker'] ? false : undefined,
    })
  }
  const shutdown = async (signal: string) => {
    logger.info(`${signal} received: finishing in-flight work, then closing the database`, { signal })
    await running.stop()
    // Request lines of the last answers are written on the next turn: let them in before the final flush.
    await new Promise((resolve) => setImmediate(resolve))
    flushLogs()
    process.exit(0)
  }
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  process.once('SIGINT', () => void shutdown('SIGINT'))
}

main(process.argv.slice(2)).catch((err) => {
  const code = err instanceof StartupError ? err.exitCode : err instanceof ConfigError ? 2 : 1
  fail(err instanceof Error ? err.message : String(err), code)
})
