import { Elysia } from 'elysia'
import type { Deps } from './deps'
import { guardPlugin, kernelPlugin } from './kernel/plugin'
import { authRoutes } from './modules/auth/routes'
import { spaceRoutes } from './modules/spaces/routes'
import { systemRoutes } from './modules/system/routes'

/** Builds the whole HTTP app around `deps`; nothing global, so tests build one per database. */
export function createApp(deps: Deps) {
  const guards = guardPlugin(deps)
  const system = systemRoutes(deps)
  return new Elysia()
    .use(kernelPlugin(deps))
    .use(system.root)
    .group('/v1', (v1) => v1.use(system.v1).use(authRoutes(deps, guards)).use(spaceRoutes(deps, guards)))
}

export type App = ReturnType<typeof createApp>
