#!/usr/bin/env bun
// The CLI entry and the compiled executable's main.
import { parseArgs } from 'node:util'
import { AssetsCommandError, runAssetsMigrate } from '../src/cli/assets'
import { formatBytes, runBackup, runRestore } from '../src/cli/backup'
import { runHealthCheck } from '../src/cli/health'
import { COMMAND_HELP, HELP } from '../src/cli/help'
import { runMigrate } from '../src/cli/migrate'
import { ReindexError, runReindex } from '../src/cli/reindex'
import { runSeed, SeedError } from '../src/cli/seed'
import { startServer } from '../src/cli/serve'
import { passwordFromStdin, runUserCreate, runUserSetPassword, UserCreateError } from '../src/cli/user'
import { startWorkerProcess } from '../src/cli/worker'
import { type Config, ConfigError, loadConfig } from '../src/config'
import { BackupError } from '../src/kernel/backup'
import { StartupError } from '../src/kernel/data-dir'
import { createLogger, flushLogs } from '../src/kernel/logger'
import { applyMemoryEnvironment } from '../src/kernel/memory'
import { SERVICE_VERSION } from '../src/modules/system/service'

const COMMANDS = ['serve', 'worker', 'migrate', 'reindex', 'seed', 'user', 'version', 'backup', 'restore', 'health', 'assets'] as const

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
  let rest = first && !first.startsWith('-') ? argv.slice(1) : argv
  if (!(COMMANDS as readonly string[]).includes(command)) fail(`unknown command "${command}". Run content-service --help.`)
  // The long-running commands start again at once (same pid and arguments) with the JavaScript heap's growth set
  // (JS_HEAP_GROWTH, kernel/memory.ts): it can only be set before the engine starts, and it decides the RSS under churn.
  if ((command === 'serve' || command === 'worker') && !rest.includes('--help') && !rest.includes('-h')) {
    try {
      applyMemoryEnvironment()
    } catch (err) {
      fail(err instanceof Error ? err.message : String(err))
    }
  }
  let action = ''
  if (command === 'user' && rest[0] !== '--help' && rest[0] !== '-h') {
    // `user <action>`: create, set-password.
    action = rest[0] ?? ''
    if (action !== 'create' && action !== 'set-password') fail(`unknown or missing action "user ${action}".\n\n${COMMAND_HELP.user}`)
    rest = rest.slice(1)
  }
  if (command === 'assets' && rest[0] !== '--help' && rest[0] !== '-h') {
    // `assets <action>`: migrate.
    action = rest[0] ?? ''
    if (action !== 'migrate') fail(`unknown or missing action "assets ${action}".\n\n${COMMAND_HELP.assets}`)
    rest = rest.slice(1)
  }

  let values: Record<string, string | boolean | undefined>
  let positionals: string[] = []
  try {
    ;({ values, positionals } = parseArgs({
      args: rest,
      options: {
        help: { type: 'boolean', short: 'h' },
        ...(command === 'serve'
          ? { port: { type: 'string' }, host: { type: 'string' }, 'no-worker': { type: 'boolean' } }
          : {}),
        ...(command === 'reindex' || command === 'seed' ? { space: { type: 'string' } } : {}),
        ...(command === 'user'
          ? { email: { type: 'string' }, name: { type: 'string' }, tenant: { type: 'string' }, 'password-stdin': { type: 'boolean' } }
          : {}),
        ...(command === 'backup' ? { out: { type: 'string', short: 'o' } } : {}),
        ...(command === 'restore' ? { force: { type: 'boolean' } } : {}),
        ...(command === 'health' ? { url: { type: 'string' }, live: { type: 'boolean' } } : {}),
        ...(command === 'assets' ? { to: { type: 'string' } } : {}),
      },
      strict: true,
      allowPositionals: command === 'restore',
    }))
    if (command === 'restore' && positionals.length !== 1) throw new Error('restore takes one backup file')
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
  if (command === 'health') {
    process.exitCode = (await runHealthCheck(config, { url: values.url as string | undefined, live: !!values.live })) ? 0 : 1
    return
  }
  if (command === 'backup' || command === 'restore') {
    try {
      if (command === 'backup') {
        const r = await runBackup(config, { out: values.out as string | undefined })
        console.log(`backup written to ${r.file} (${formatBytes(r.bytes)}, from the ${r.source})`)
      } else {
        const r = await runRestore(config, { file: positionals[0], force: !!values.force })
        const where = r.driver === 'postgres' ? 'the database at DATABASE_URL' : config.dataDir
        console.log(`restored the backup of ${r.createdAt} into ${where} (${formatBytes(r.bytes)}); start the server to use it`)
        if (r.assetStore) {
          const at = r.assetStore.endpoint ? ` at ${r.assetStore.endpoint}` : ''
          console.log(`asset bytes are not in the backup: they are in S3 bucket ${r.assetStore.bucket}${at}, prefix "${r.assetStore.prefix}"; set S3_* to it`)
        }
      }
    } catch (err) {
      if (err instanceof BackupError) {
        console.error(`content-service: ${command} failed: ${err.message}`)
        process.exit(1)
      }
      throw err
    }
    return
  }
  if (command === 'assets') {
    if (typeof values.to !== 'string') fail(`assets migrate needs --to s3 or --to postgres.\n\n${COMMAND_HELP.assets}`)
    try {
      await runAssetsMigrate(config, { to: values.to })
    } catch (err) {
      if (err instanceof AssetsCommandError) {
        console.error(`content-service: assets migrate: ${err.message}`)
        process.exit(1)
      }
      throw err
    }
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

  if (command === 'seed') {
    if (typeof values.space !== 'string') fail(`seed needs --space.\n\n${COMMAND_HELP.seed}`)
    try {
      console.log(await runSeed(config, { space: values.space }))
    } catch (err) {
      if (err instanceof SeedError) {
        console.error(`content-service: ${err.message}`)
        process.exit(1)
      }
      throw err
    }
    return
  }

  if (command === 'user') {
    if (typeof values.email !== 'string') fail(`user ${action} needs --email.\n\n${COMMAND_HELP.user}`)
    if (action === 'create' && typeof values.name !== 'string') fail(`user create needs --name.\n\n${COMMAND_HELP.user}`)
    if (action === 'set-password' && (values.name !== undefined || values.tenant !== undefined)) fail(`user set-password takes --email and --password-stdin only.`)
    const password = values['password-stdin'] ? passwordFromStdin(await Bun.stdin.text()) : null
    try {
      if (action === 'create') {
        await runUserCreate(config, {
          email: values.email,
          name: String(values.name),
          tenant: typeof values.tenant === 'string' ? values.tenant : undefined,
          password,
        })
      } else {
        await runUserSetPassword(config, { email: values.email, password })
      }
    } catch (err) {
      if (err instanceof UserCreateError) {
        console.error(`content-service: ${err.message}`)
        process.exit(1)
      }
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
    logger.notice(`${signal} received: finishing in-flight work, then closing the database`, { signal })
    // Whatever clients or jobs do, the process is gone after SHUTDOWN_TIMEOUT: an orchestrator's own kill comes later.
    setTimeout(() => {
      logger.error(`shutdown took longer than SHUTDOWN_TIMEOUT (${config.shutdownTimeoutSeconds} s): exiting anyway`)
      flushLogs()
      process.exit(1)
    }, config.shutdownTimeoutSeconds * 1000).unref()
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
