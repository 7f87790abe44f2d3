#!/usr/bin/env bun
// The CLI entry and the compiled executable's main.
import { parseArgs } from 'node:util'
import { COMMAND_HELP, HELP } from '../src/cli/help'
import { runMigrate } from '../src/cli/migrate'
import { ReindexError, runReindex } from '../src/cli/reindex'
import { startServer } from '../src/cli/serve'
import { passwordFromStdin, runUserCreate, runUserSetPassword, UserCreateError } from '../src/cli/user'
import { startWorkerProcess } from '../src/cli/worker'
import { ConfigError, loadConfig } from '../src/config'
import { flushLogs } from '../src/kernel/logger'
import { SERVICE_VERSION } from '../src/modules/system/service'

const COMMANDS = ['serve', 'worker', 'migrate', 'reindex', 'user', 'version'] as const

function fail(message: string): never {
  console.error(`content-service: ${message}`)
  process.exit(2)
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
  let action = ''
  if (command === 'user' && rest[0] !== '--help' && rest[0] !== '-h') {
    // `user <action>`: create, set-password.
    action = rest[0] ?? ''
    if (action !== 'create' && action !== 'set-password') fail(`unknown or missing action "user ${action}".\n\n${COMMAND_HELP.user}`)
    rest = rest.slice(1)
  }

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
        ...(command === 'user'
          ? { email: { type: 'string' }, name: { type: 'string' }, tenant: { type: 'string' }, 'password-stdin': { type: 'boolean' } }
          : {}),
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
    console.log(`${signal} received: finishing in-flight work, then closing the database`)
    await running.stop()
    flushLogs()
    process.exit(0)
  }
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  process.once('SIGINT', () => void shutdown('SIGINT'))
}

main(process.argv.slice(2)).catch((err) => {
  console.error(`content-service: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(err instanceof ConfigError ? 2 : 1)
})
