import type { Kernel } from '../../kernel/kernel'
import { publishedStoryUuids } from './published'

/** Spaces whose published uuids are held at once; the oldest-loaded is dropped past it. */
const MAX_SPACES = 10_000
/** Safety expiry only: publish, unpublish and delete events keep a loaded Space exact (here and through NOTIFY). */
const TTL_MS = 10 * 60_000

type Entry = { uuids: Set<string>; expiresAt: number }

/**
 * Which Stories of a Space are published, in memory: the beacon asks it for every mount, so a known Space costs a
 * Set lookup and no query. A Space is loaded on first use (single-flight); the stories module's event handlers keep
 * it exact (story.published adds, story.unpublished / story.deleted remove; a reconnect of the event bus clears all).
 * A load that raced with a change of its Space is not stored.
 */
export class PublishedStoryIndex {
  private entries = new Map<number, Entry>()
  private inflight = new Map<number, Promise<Set<string>>>()
  private epochs = new Map<number, number>()
  private epoch = 0

  constructor(private kernel: Pick<Kernel, 'db' | 'clock'>) {}

  /** Is `uuid` a published Story of the Space? Synchronous when the Space is loaded. */
  has(spaceId: number, uuid: string): boolean | Promise<boolean> {
    const e = this.entries.get(spaceId)
    if (e && e.expiresAt > this.kernel.clock.ms()) return e.uuids.has(uuid)
    let p = this.inflight.get(spaceId)
    if (!p) {
      p = this.load(spaceId).finally(() => this.inflight.delete(spaceId))
      this.inflight.set(spaceId, p)
    }
    return p.then((set) => set.has(uuid))
  }

  private async load(spaceId: number): Promise<Set<string>> {
    const startEpoch = this.epoch
    const spaceEpoch = this.epochs.get(spaceId) ?? 0
    const uuids = new Set(await publishedStoryUuids(this.kernel, spaceId))
    if (startEpoch === this.epoch && spaceEpoch === (this.epochs.get(spaceId) ?? 0)) {
      if (this.entries.size >= MAX_SPACES) this.entries.delete(this.entries.keys().next().value!)
      this.entries.set(spaceId, { uuids, expiresAt: this.kernel.clock.ms() + TTL_MS })
    }
    return uuids
  }

  private touch(spaceId: number) {
    this.epochs.set(spaceId, (this.epochs.get(spaceId) ?? 0) + 1)
    // Bounded: the counters only matter while a load of that Space runs.
    if (this.epochs.size > MAX_SPACES) this.epochs.clear(), this.epoch++
  }

  published(spaceId: number, uuid: string) {
    this.touch(spaceId)
    this.entries.get(spaceId)?.uuids.add(uuid)
  }

  removed(spaceId: number, uuid: string) {
    this.touch(spaceId)
    this.entries.get(spaceId)?.uuids.delete(uuid)
  }

  clear() {
    this.epoch++
    this.entries.clear()
  }
}
