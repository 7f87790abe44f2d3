// The command line that starts the service in the tests that run it as a process (the CLI, operations, backups,
// shutdown, the fleet): the built executable when SERVICE_BINARY names it — CI builds it first, so these tests prove
// the executable users run, and each start skips transpiling the sources — else `bun bin/content-service.ts`.
import { join } from 'node:path'

export const BIN_SOURCE = join(import.meta.dir, '..', '..', 'bin', 'content-service.ts')

export const SERVICE_COMMAND: readonly string[] = process.env.SERVICE_BINARY ? [process.env.SERVICE_BINARY] : ['bun', BIN_SOURCE]
