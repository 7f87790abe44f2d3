import { createRuntime } from '../app'
import type { Config } from '../config'
import { AppError } from '../kernel/errors'
import { seedSpace } from '../modules/onboarding/service'
import { openCommandKernel } from './kernel'

/** A refusal the operator can fix (unknown Space, sample content there already): one message, exit 1. */
export class SeedError extends Error {}

/**
 * `content-service seed --space <slug>`: the onboarding module's sample content (blueprints, published Stories in
 * every locale, a form, a datasource) written into an existing Space through the module services. The runtime is
 * built (not started) so the in-transaction hooks of every module run as they would in a server.
 */
export async function runSeed(config: Config, opts: { space: string }): Promise<string> {
  const kernel = await openCommandKernel(config)
  const runtime = createRuntime(kernel)
  try {
    const r = await seedSpace(kernel, opts.space)
    return `seeded the Space "${opts.space}": ${r.components.length} blueprints, ${r.stories.length} Stories (${r.stories.join(', ')}) in ${r.locales.join(', ')}, form ${r.forms.join(', ')}, datasource ${r.datasources.join(', ')}`
  } catch (err) {
    if (err instanceof AppError) {
      throw new SeedError(err.status === 404 ? `no live Space with the slug "${opts.space}"` : `the Space "${opts.space}" cannot take the sample content: ${err.message}`)
    }
    throw err
  } finally {
    await runtime.close()
  }
}
