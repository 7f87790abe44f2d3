#!/usr/bin/env bun
// A real server process for the crash test: config from the environment (DATA_DIR, DATABASE_URL, PORT,
// SERVICE_OUTBOUND_ALLOW_PRIVATE, ...), the HTTP app and the job workers, exactly as `content-service serve` wires
// them. Prints one JSON line `{"port": N}` once it listens.
import { createRuntime } from '../../src/app'
import { loadConfig } from '../../src/config'
import { startWorkers } from '../../src/kernel/jobs'
import { createKernel } from '../../src/kernel/kernel'

const config = loadConfig()
const kernel = await createKernel(config)
const runtime = createRuntime(kernel)
const server = runtime.listen({ port: config.port, hostname: '127.0.0.1', maxRequestBodySize: 1 << 20, idleTimeout: 30 })
void runtime.start()
const workers = config.workerEnabled ? await startWorkers(kernel) : null
console.log(JSON.stringify({ port: server.port, pid: process.pid, workers: !!workers }))

process.once('SIGTERM', async () => {
  // Idle keep-alive connections are closed too: a graceful stop would wait out their idle timeout (30 s).
  await server.stop(true)
  await workers?.stop()
  await runtime.close()
  process.exit(0)
})
