import type { Deps } from '../../deps'
import { searchCdnRoutes, type SpaceResolver } from './routes'

/**
 * Wires search into an app: starts this process's index registry (build from the database, bus and NOTIFY updates,
 * reconciliation) and returns the public route. `spaces` resolves a public Space slug (the stories module's cached
 * lookup, so a search costs no database round trip for its Space).
 */
export function searchModule(deps: Deps, spaces: SpaceResolver) {
  deps.search.start(deps)
  return { cdn: searchCdnRoutes(deps, spaces) }
}
