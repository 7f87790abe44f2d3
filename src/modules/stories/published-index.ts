import { cacheShare, ScopedCache } from '../../kernel/cache'
import type { Kernel } from '../../kernel/kernel'
import { publishedStoryUuids } from './published'

/** Safety expiry only: publish, unpublish and delete events keep a loaded Space exact (here and through NOTIFY). */
const TTL_MS = 10 * 60_000
/** Estimated heap bytes per uuid in a Set (the string and the Set's slot). */
const UUID_BYTES = 120

/**
 * Which Stories of a Space are published, in memory: the beacon asks it for every mount, so a known Space costs a
 * Set lookup and no query. A Space is loaded on first use (single-flight) into a kernel cache (its byte share of
 * CDN_CACHE_MB, SIEVE eviction, cleared on resync by the runtime); the stories module's event handlers keep a loaded
 * Space exact (story.published adds, story.unpublished / story.deleted remove) and move its epoch, so a load that
 * raced with a change of its Space is not stored.
 */
export class PublishedStoryIndex {
  readonly cache: ScopedCache<number, Set<string>>

  constructor(private kernel: Pick<Kernel, 'db' | 'clock' | 'config'>) {
    this.cache = new ScopedCache<number, Set<string>>({
      name: 'stories.published',
      scopeOf: (spaceId) => spaceId,
      idOf: String,
      load: async (spaceId) => new Set(await publishedStoryUuids(this.kernel, spaceId)),
      now: () => kernel.clock.ms(),
      ttlMs: TTL_MS,
      maxBytes: cacheShare(kernel.config, 1 / 32),
      sizeOf: (uuids, id) => 64 + id.length * 2 + uuids.size * UUID_BYTES,
    })
  }

  /** Is `uuid` a published Story of the Space? Synchronous when the Space is loaded. */
  has(spaceId: number, uuid: string): boolean | Promise<boolean> {
    const set = this.cache.get(spaceId)
    return set instanceof Promise ? set.then((s) => s.has(uuid)) : set.has(uuid)
  }

  published(spaceId: number, uuid: string) {
    const set = this.changing(spaceId)
    if (set && !set.has(uuid)) {
      set.add(uuid)
      this.cache.resize(String(spaceId), set, UUID_BYTES)
    }
  }

  removed(spaceId: number, uuid: string) {
    const set = this.changing(spaceId)
    if (set?.delete(uuid)) this.cache.resize(String(spaceId), set, -UUID_BYTES)
  }

  /** The loaded Set of the Space (if any), after moving its epoch: a load in flight may miss this change. */
  private changing(spaceId: number): Set<string> | undefined {
    const set = this.cache.peek(String(spaceId), this.kernel.clock.ms())
    this.cache.invalidate(spaceId, [])
    return set
  }
}
