#!/usr/bin/env bun
// A real server process for the crash test: config from the environment (DATA_DIR, DATABASE_URL, PORT,
// SERVICE_OUTBOUND_ALLOW_PRIVATE, ...), the HTTP app and the job workers, exactly as `content-service serve` wires
// them. Prints one JSON line `{"port": N}` once it listens.
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/config'
import { createDeps } from '../../src/deps'
import { startWorkers } from '../../src/kernel/jobs'

const config = loadConfig()
const deps = await createDeps(config)
const app = createApp(deps)
app.listen({ port: config.port, hostname: '127.0.0.1' })
const workers = config.workerEnabled ? await startWorkers(deps) : null
console.log(JSON.stringify({ port: app.server!.port, pid: process.pid, workers: !!workers }))

process.once('SIGTERM', async () => {
  await app.server?.stop()
  await workers?.stop()
  await deps.close()
  process.exit(0)
})
