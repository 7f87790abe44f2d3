import { createRuntime } from '../../src/app'
import type { Config } from '../../src/config'
import { createKernel } from '../../src/kernel/kernel'
import { searchModule } from '../../src/modules/search'
import type { TestApp } from './app'

/**
 * A second instance on the test app's database and clock (a fleet of two), started, its search warm; `request` sends
 * JSON with a bearer token from `ip` (through X-Forwarded-For).
 */
export async function secondInstance(a: TestApp, overrides: Partial<Config>, ip: string) {
  const kernel = await createKernel({ ...a.config, ...overrides }, { database: a.kernel.db, clock: a.clock, migrate: false })
  const runtime = createRuntime(kernel)
  await runtime.start()
  await runtime.state(searchModule).registry.initialBuild
  const request = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await runtime.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-forwarded-for': ip },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    )
    return { status: res.status, body: (await res.json()) as any }
  }
  return { runtime, request }
}
