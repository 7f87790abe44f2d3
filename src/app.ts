import { Elysia } from 'elysia'
import type { Deps } from './deps'
import { guardPlugin, kernelPlugin } from './kernel/plugin'
import { authRoutes } from './modules/auth/routes'
import { localeRoutes } from './modules/locales/routes'
import { searchModule } from './modules/search'
import { spaceRoutes } from './modules/spaces/routes'
import { storiesModule } from './modules/stories'
import { systemRoutes } from './modules/system/routes'
import { webhookRoutes } from './modules/webhooks/routes'

/** Builds the whole HTTP app around `deps`; nothing global, so tests build one per database. */
export function createApp(deps: Deps) {
  const guards = guardPlugin(deps)
  const system = systemRoutes(deps)
  const stories = storiesModule(deps, guards)
  const search = searchModule(deps, (slug) => stories.pipeline.space(slug))
  return new Elysia()
    .use(kernelPlugin(deps))
    .use(system.root)
    .group('/v1', (v1) =>
      v1
        .use(system.v1)
        .use(authRoutes(deps, guards))
        .use(spaceRoutes(deps, guards))
        .use(localeRoutes(deps, guards))
        .use(stories.management)
        .use(stories.components)
        .use(stories.cdn)
        .use(search.cdn)
        .use(webhookRoutes(deps, guards)),
    )
}

export type App = ReturnType<typeof createApp>
