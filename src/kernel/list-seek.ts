import { cacheShare, type InvalidateOn, plainSize, ScopedCache } from './cache'
import type { Kernel } from './kernel'

/** Every change arrives as a domain event of the list's Space (at commit here, through NOTIFY elsewhere); the expiry is a safety net. */
const TTL_MS = 60_000

interface Known<B> {
  total?: number
  after?: B
  /** The range of the list's moving parameter (e.g. `from` = now) over which the matching set stays the same. */
  from: number
  to: number
}

/**
 * What a page-numbered public list (`page`, `per_page`, `meta.total`) remembers between requests, per Space: the total
 * of each filter, and the sort key of the last row of each page served. A request for page N whose page N−1 was served
 * before (a client paging on) then reads its rows by keyset (`key > last key of N−1`, an index range) instead of
 * reading and skipping (N−1)·per_page rows, and the total costs no `count(*)`. The answers are the ones OFFSET and
 * `count(*)` give: everything of a Space is dropped when any of the declared events of that Space arrives (a load that
 * raced the event is not stored), and a value is used only inside the range of the list's moving parameter over which
 * the caller vouched that the matching set stays the same (events: until the first matching event ends). Unknown →
 * the caller falls back to OFFSET and `count(*)`.
 */
export class ListSeek<B> {
  readonly cache: ScopedCache<string, Known<B>>

  constructor(kernel: Pick<Kernel, 'clock' | 'config'>, name: string, invalidateOn: InvalidateOn) {
    this.cache = new ScopedCache<string, Known<B>>({
      name,
      scopeOf: (id) => Number(id.slice(0, id.indexOf('\u0000'))),
      idOf: (id) => id,
      load: () => Promise.reject(new Error(`${name}: values are stored by the list, never loaded`)),
      now: () => kernel.clock.ms(),
      ttlMs: TTL_MS,
      maxBytes: cacheShare(kernel.config, 1 / 64),
      sizeOf: plainSize,
      invalidateOn,
    })
  }

  private totalId = (spaceId: number, list: string) => `${spaceId}\u0000t\u0000${list}`
  private pageId = (spaceId: number, list: string, perPage: number, page: number) => `${spaceId}\u0000p\u0000${perPage}\u0000${page}\u0000${list}`

  private valid(id: string, at: number): Known<B> | undefined {
    const k = this.cache.peek(id, this.cache.options.now())
    return k && k.from <= at && at <= k.to ? k : undefined
  }

  /**
   * What is known of list `list` (the filter, spelled by the caller) of the Space at `at` (the moving parameter; 0
   * for a list without one): its total, the window it holds for, and the last key of page `page − 1`. `epoch` goes
   * back to `remember`.
   */
  lookup(spaceId: number, list: string, perPage: number, page: number, at = 0) {
    const epoch = this.cache.epoch(spaceId)
    const total = this.valid(this.totalId(spaceId, list), at)
    const after = page > 1 && total ? this.valid(this.pageId(spaceId, list, perPage, page - 1), at)?.after : undefined
    return { epoch, total: total?.total, window: total ? { from: total.from, to: total.to } : undefined, after }
  }

  /**
   * Remembers the total (with the window over which the set is the same) and, for a full page, its last key — unless
   * the Space changed since `lookup` handed out `epoch`.
   */
  remember(spaceId: number, list: string, perPage: number, page: number, epoch: number, total: number, window: { from: number; to: number }, last?: B) {
    this.cache.store(spaceId, this.totalId(spaceId, list), { total, ...window }, epoch)
    if (last !== undefined) this.cache.store(spaceId, this.pageId(spaceId, list, perPage, page), { after: last, ...window }, epoch)
  }
}
