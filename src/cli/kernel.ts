import type { Config } from '../config'
import { createKernel, type Kernel } from '../kernel/kernel'

/**
 * The kernel of a one-shot command (`user create`): opens the configured database (applying pending migrations, as
 * `serve` does) and hands back the kernel; `close()` releases it. Every one-shot command that runs module services
 * opens the database here, so a data-folder lock on the embedded database (PGlite allows one process) is taken in
 * this one place.
 */
export async function openCommandKernel(config: Config): Promise<Kernel> {
  return createKernel(config)
}
