import { ScopedCache } from '../../kernel/cache'
import type { Kernel } from '../../kernel/kernel'
import { contentVersion } from './changes'
import type { ContentVersions } from './read-pipeline'

/** Safety expiry only: every event that moves a Space's content version invalidates its entry (every instance). */
const TTL_MS = 10 * 60_000

/**
 * The content version of each Space (`meta.cv`) in memory: one small query per Space after each change, then every
 * read knows it without a Promise (so cached reads stay on the fast path).
 */
export function contentVersions(kernel: Kernel): ContentVersions & { cache: ScopedCache<number, number> } {
  const space = (e: { spaceId: number | null }) => e.spaceId
  const cache = new ScopedCache<number, number>({
    name: 'stories.cv',
    scopeOf: (id) => id,
    idOf: (id) => String(id),
    load: (id) => kernel.replicas.read(id, (db) => contentVersion(db, id)),
    now: () => kernel.clock.ms(),
    ttlMs: TTL_MS,
    maxEntries: 100_000,
    invalidateOn: {
      'story.published': space,
      'story.unpublished': space,
      'story.moved': space,
      'space.archived': space,
    },
  })
  return {
    cache,
    get: (spaceId) => cache.get(spaceId),
    expiresAt: (spaceId) => cache.expiresAt(String(spaceId)),
  }
}
