import type { Deps } from '../../deps'
import type { Guards } from '../../kernel/plugin'
import { storyCdnRoutes } from './cdn'
import { type ReadStep, StoryReadPipeline } from './read-pipeline'
import { componentRoutes, storyRoutes } from './routes'

/**
 * Wires the stories module into an app: the read pipeline (with the extension steps of later features), cache
 * invalidation from the event bus and from other instances (LISTEN), and the routes.
 */
export function storiesModule(deps: Deps, guards: Guards, opts: { readSteps?: ReadStep[] } = {}) {
  const cache = deps.storyCache
  const pathOf = (payload: Record<string, unknown>) => (payload.story as { full_path?: string } | undefined)?.full_path
  for (const type of ['story.published', 'story.unpublished', 'story.deleted'] as const) {
    deps.bus.subscribe(type, (e) => {
      const path = pathOf(e.payload)
      if (e.spaceId === null) return
      if (path) cache.invalidatePaths(e.spaceId, [path])
      else cache.invalidateSpace(e.spaceId)
    })
  }
  deps.bus.subscribe('space.archived', (e) => {
    if (e.spaceId !== null) cache.invalidateSpace(e.spaceId)
  })
  // A Space created under a slug that was asked for before must not stay a cached 404 until the entry expires.
  deps.bus.subscribe('space.created', (e) => {
    const slug = (e.payload.space as { slug?: string } | undefined)?.slug
    if (slug) cache.forgetSpaceSlug(slug)
  })
  void cache.listen()
  const pipeline = new StoryReadPipeline(deps, opts.readSteps)
  return {
    pipeline,
    management: storyRoutes(deps, guards),
    components: componentRoutes(deps, guards),
    cdn: storyCdnRoutes(deps, pipeline),
  }
}
