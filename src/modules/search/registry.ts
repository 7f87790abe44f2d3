import type { DomainEvent } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import { liveSpaceById } from '../spaces/service'
import type { Blueprint } from '../stories/blocks'
import {
  contentVersionsOf,
  countPublishedStories,
  publishedPathsUnder,
  publishedVersions,
  spaceContentVersion,
  spacesWithPublishedStories,
  storiesChangedSince,
} from '../stories/published'
import { type PublishedSnapshot, publishedSnapshots, spaceBlueprints } from '../stories/service'
import { hitId, searchDocument } from './documents'
import { SearchIndex } from './engine'
import { SearchErrors } from './model'
import { decodeSnapshot, encodeSnapshot, SNAPSHOT_FORMAT } from './snapshot'
import { deleteSnapshot, readSnapshot, type StoredSnapshot, writeSnapshot } from './snapshots-store'

/**
 * The search indexes of this process: one per Space and locale, built from the database at start-up and kept in step
 * with the published Stories.
 *
 * - story.published / unpublished / deleted and version.created (moves) arrive through the search module's event
 *   handlers — on this instance at commit, on every other instance through the kernel's event bus; the Story ids go
 *   into a per-Space queue that one worker drains, re-reading each Story's published snapshots from the database (so
 *   whatever the order of events, the index ends at the committed state).
 * - A search waits for its Space's queue to drain, so a Story is searchable as soon as its publish has answered.
 * - Builds (start-up, `content-service reindex`, or after heavy churn) fill fresh indexes off to the side while the old
 *   ones keep answering; Stories that change meanwhile are re-read before the swap.
 * - Every SEARCH_RECONCILE_SECONDS the indexes are compared with the database, which repairs updates lost while a
 *   LISTEN connection was down.
 */

export const SEARCH_CHANNEL = 'cs_search'
/** Stories read from the database per page while building. */
const BUILD_PAGE = 200
/** Longest stretch of index work between two yields to the event loop while building. */
const SLICE_MS = 8
/** Cold loads (from a snapshot or the rows) running at once in one instance; more wait their turn. */
const LOADS_AT_ONCE = 4
/** A snapshot further behind than this many changes is not caught up: the Space is built from its rows. */
const CATCH_UP_MAX = 500
/** Messages on SEARCH_CHANNEL (the reindex command and its answers). `i` is the sending instance. */
export type SearchWire =
  | { t: 'reindex'; r: string; s: number | null }
  | { t: 'reindex.ack'; r: string; i: string; spaces: number }
  | { t: 'reindex.progress'; r: string; i: string; done: number; total: number }
  | { t: 'reindex.done'; r: string; i: string; spaces: number; documents: number; ms: number }
  | { t: 'reindex.failed'; r: string; i: string; error: string }

export interface BuildProgress {
  /** Stories read so far / to read, over every Space of the build. */
  done: number
  total: number
}

interface SpaceEntry {
  id: number
  /** The serving indexes by locale; null until the first build finishes. */
  indexes: Map<string, SearchIndex> | null
  /** The latest build (start-up, reindex, or after many removals). */
  build: Promise<void> | null
  /** Story ids that changed while a build was reading, re-read before it swaps in. */
  dirty: Set<number> | null
  /** Story ids waiting to be re-read into the serving indexes, and the worker draining them. */
  pending: Set<number>
  /** Saves being checked for moves (a query each): a search waits for them as for `draining`. */
  checks: Set<Promise<void>>
  draining: Promise<void> | null
  /** A compaction (vocabulary and postings) scheduled after updates (debounced). */
  merge: ReturnType<typeof setTimeout> | null
  /** False once a build found the Space archived or gone: it is not served, updated or reconciled. */
  live: boolean
  /** The indexes' estimated bytes when last measured (after a build or an update), for SEARCH_MEMORY_MB. */
  bytes: number
  /**
   * The Space's content version (stories' change feed) the indexes hold at least: read before the rows of a build, or
   * by a reconcile before it compared. -1: unknown. Reconcile compares only Spaces whose version moved.
   */
  cv: number
  /** Checked against the rows since it was loaded (a build is; a snapshot is checked by the next reconcile). */
  verified: boolean
  /** The content version of the stored snapshot as far as this instance knows (-1: none known). */
  snapshotCv: number
  /** A snapshot write is queued or running. */
  snapshotting: boolean
}

/**
 * Why one class of about 540 lines: it owns the one piece of state every part changes — the per-Space entries (build
 * promise, pending story ids, drain, debounced compaction, liveness, measured bytes) and the memory budget's recency
 * order — and the parts (build, event-driven refresh, compaction, eviction, the cross-instance wire, reconcile) must
 * see each other's changes to an entry at once: a build racing a refresh or an eviction is what the entry's fields
 * serialise. What needs no entry lives outside it (documents.ts, engine.ts, the wire types).
 */
export class SearchRegistry {
  readonly instanceId = crypto.randomUUID()
  private spaces = new Map<number, SpaceEntry>()
  private started = false
  private closed = false
  private listening: Promise<void> | null = null
  private unlisten: (() => Promise<void>) | null = null
  private reconcileTimer: ReturnType<typeof setInterval> | null = null
  private background = new Set<Promise<unknown>>()
  /** The start-up build of every Space (resolves when done; never rejects). */
  initialBuild: Promise<void> | null = null
  /** The start-up build has run (whatever it met: a Space that failed builds again on its first search). */
  warm = false

  private kernel: Kernel
  /**
   * SEARCH_MEMORY_MB in bytes, or null. Set: nothing is built at start-up (readiness does not wait for search); a
   * Space's indexes are built from the database on its first search and the least recently searched Spaces are
   * dropped while the resident ones exceed the budget (the one just searched always stays). Events and reconcile
   * touch only resident Spaces: an evicted Space is read afresh from the database on its next search.
   */
  private budget: number | null
  /** Resident Spaces (built, or building) in order of last search, least recent first. */
  private recency = new Map<number, true>()
  private residentBytes = 0
  evictions = 0
  /** Bytes of evicted indexes' arrays freed at eviction (release()), since start. */
  releasedBytes = 0
  /** Spaces with at least this many published Stories keep a snapshot (on demand only; Infinity: never). */
  private snapshotMin: number
  /** Estimated bytes of resident indexes per byte of their stored snapshot (learnt from the loads; for makeRoom). */
  private snapshotExpansion = 3
  /** Cold loads running, and those waiting for a turn. */
  private loading = 0
  private loadQueue: (() => void)[] = []
  /** Cold loads since start, by source (metrics, the scale simulation). */
  readonly loads = { snapshot: 0, rows: 0, snapshotMs: 0, rowsMs: 0 }

  constructor(kernel: Kernel) {
    this.kernel = kernel
    this.budget = kernel.config.searchMemoryBytes ?? null
    const min = kernel.config.searchSnapshotMinStories ?? 50
    this.snapshotMin = this.budget !== null && min > 0 ? min : Number.POSITIVE_INFINITY
  }

  /** Whether Spaces keep snapshots (SEARCH_MEMORY_MB set and SEARCH_SNAPSHOT_MIN_STORIES above 0). */
  get snapshotsOn(): boolean {
    return this.snapshotMin !== Number.POSITIVE_INFINITY
  }

  /** Bytes of the resident indexes (estimated) and the budget (null: none, everything resident). */
  memory(): { bytes: number; budget: number | null; evictions: number } {
    return { bytes: this.residentBytes, budget: this.budget, evictions: this.evictions }
  }

  private touch(e: SpaceEntry) {
    if (this.budget === null) return
    this.recency.delete(e.id)
    this.recency.set(e.id, true)
  }

  /** Re-measures a Space's indexes and drops least recently searched Spaces while over the budget. */
  private measure(e: SpaceEntry) {
    let bytes = 0
    for (const idx of e.indexes?.values() ?? []) bytes += idx.approxBytes
    if (this.spaces.get(e.id) === e) this.residentBytes += bytes - e.bytes
    e.bytes = bytes
    this.makeRoom(e, 0)
  }

  /**
   * Drops least recently searched Spaces (never `e`) while the resident indexes and `incoming` bytes that `e` is about
   * to take exceed the budget: a cold load makes room before it decodes or builds, so the old indexes and the new one
   * are not held together past the budget.
   */
  private makeRoom(e: SpaceEntry, incoming: number) {
    // A detached build (a snapshot job's) is not resident and makes no room.
    if (this.budget === null || (incoming > 0 && this.spaces.get(e.id) !== e)) return
    for (const id of this.recency.keys()) {
      if (this.residentBytes + incoming <= this.budget) break
      if (id === e.id) continue
      const victim = this.spaces.get(id)
      if (!victim) {
        this.recency.delete(id)
        continue
      }
      // A Space being built or updated stays until that is done (its next measure may evict it).
      if (victim.dirty || victim.draining || victim.checks.size || victim.pending.size) continue
      this.forget(victim)
      this.evictions++
      // Nothing uses the victim's indexes now (a search that got one before asks again): their arrays go back to the
      // allocator at once rather than at the collector's next full collection (engine.ts, release). A snapshot being
      // written or a compaction running may still read them (and a Space's locales loaded from one snapshot share its
      // buffer): then all are left to the collector.
      const victims = [...(victim.indexes?.values() ?? [])]
      if (!victim.snapshotting && victims.every((idx) => idx.releasable)) for (const idx of victims) this.releasedBytes += idx.release()
    }
  }

  private forget(e: SpaceEntry) {
    if (e.merge) clearTimeout(e.merge)
    if (this.spaces.get(e.id) === e) {
      this.spaces.delete(e.id)
      this.residentBytes -= e.bytes
    }
    this.recency.delete(e.id)
  }

  // ---- Life cycle ----

  /** Listens for reindex requests and builds every index in the background. Idempotent. */
  start(): void {
    if (this.started || this.closed) return
    this.started = true
    this.listening = this.kernel.db
      .listen(SEARCH_CHANNEL, (payload) => this.receive(payload))
      .then((u) => {
        this.unlisten = u
      })
      .catch((err) => this.kernel.logger.error('search: LISTEN failed; other instances cannot update this one', { error: String(err) }))
    if (this.budget === null) this.initialBuild = this.track(this.buildAll())
    else {
      // On demand: nothing to build before serving.
      this.warm = true
      this.initialBuild = Promise.resolve()
    }
    const every = this.kernel.config.searchReconcileSeconds
    if (every > 0) {
      this.reconcileTimer = setInterval(() => void this.track(this.reconcile()), every * 1000)
      this.reconcileTimer.unref?.()
    }
  }

  async close(): Promise<void> {
    this.closed = true
    if (this.reconcileTimer) clearInterval(this.reconcileTimer)
    await this.listening
    if (this.unlisten) await this.unlisten().catch(() => {})
    this.unlisten = null
    while (this.background.size) await Promise.allSettled([...this.background])
    const running: Promise<unknown>[] = []
    for (const e of this.spaces.values()) {
      if (e.merge) clearTimeout(e.merge)
      if (e.build) running.push(e.build)
      if (e.draining) running.push(e.draining)
    }
    await Promise.allSettled(running)
  }

  private track<T>(p: Promise<T>): Promise<T> {
    const tracked = p.finally(() => this.background.delete(tracked))
    this.background.add(tracked)
    return tracked
  }

  private entry(spaceId: number): SpaceEntry {
    let e = this.spaces.get(spaceId)
    if (!e) {
      e = newEntry(spaceId)
      this.spaces.set(spaceId, e)
    }
    return e
  }

  // ---- Reading ----

  /**
   * The index of a Space and locale, once the Space is built and its queued updates are applied (a search issued after
   * a publish has answered sees that Story). Null when the Space has no published Story in that locale.
   */
  async index(spaceId: number, lang: string): Promise<SearchIndex | null> {
    const e = this.entry(spaceId)
    this.touch(e)
    if (!e.indexes) {
      // While the start-up build runs, a Space whose turn has not come answers at once (503 index_warming with
      // Retry-After) instead of holding the request for seconds; its build starts now if it had not.
      if (!this.warm) {
        void this.ensureBuilt(e).catch(() => {})
        throw SearchErrors.indexWarming(undefined, undefined, { 'retry-after': '2' })
      }
      await this.ensureBuilt(e)
    }
    while (e.checks.size || e.draining) {
      if (e.checks.size) await Promise.allSettled([...e.checks])
      if (e.draining) await e.draining
    }
    const idx = e.indexes?.get(lang) ?? null
    // Evicted (and released) while this request waited: the Space is loaded afresh.
    if (idx?.released) return this.index(spaceId, lang)
    return idx
  }

  /**
   * `index` without waiting, for the fast path: the index (or null: no published Story in that locale) when the Space
   * is built and no update is queued or being applied; undefined when `index` would wait or answer 503 (the regular
   * route answers then).
   */
  readyIndex(spaceId: number, lang: string): SearchIndex | null | undefined {
    const e = this.spaces.get(spaceId)
    if (e === undefined || e.indexes === null || e.draining !== null || e.checks.size !== 0 || e.pending.size !== 0) return undefined
    this.touch(e)
    return e.indexes.get(lang) ?? null
  }

  /** Documents per Space and locale (operations and tests). */
  stats(): { spaces: number; indexes: number; documents: number } {
    let indexes = 0
    let documents = 0
    for (const e of this.spaces.values()) {
      for (const idx of e.indexes?.values() ?? []) {
        indexes++
        documents += idx.size
      }
    }
    return { spaces: this.spaces.size, indexes, documents }
  }

  // ---- Building ----

  private ensureBuilt(e: SpaceEntry): Promise<void> {
    if (e.indexes) return Promise.resolve()
    if (!e.build) {
      const b: Promise<void> = this.load(e).catch((err) => {
        // The next search or update tries again.
        if (e.build === b) e.build = null
        throw err
      })
      e.build = b
    }
    return e.build
  }

  /** Builds every Space with published Stories, one after the other, logging progress. */
  private async buildAll(): Promise<void> {
    const t0 = performance.now()
    try {
      const ids = await spacesWithPublishedStories(this.kernel)
      this.kernel.logger.info('search: building indexes', { spaces: ids.length })
      let documents = 0
      for (const id of ids) {
        if (this.closed) return
        const e = this.entry(id)
        await this.ensureBuilt(e).catch(() => {})
        for (const idx of e.indexes?.values() ?? []) documents += idx.size
      }
      this.kernel.logger.info('search: indexes built', { spaces: ids.length, documents, ms: Math.round(performance.now() - t0) })
    } catch (err) {
      if (!this.closed) this.kernel.logger.error('search: building the indexes failed', { error: String(err) })
    } finally {
      this.warm = true
    }
  }

  /**
   * Builds fresh indexes for a Space from the database and swaps them in; the previous ones answer meanwhile. A build
   * started while another runs waits for it (each build reads everything, so the later one wins).
   */
  rebuild(spaceId: number, onProgress?: (storiesRead: number) => void): Promise<void> {
    const e = this.entry(spaceId)
    const previous = e.build ?? Promise.resolve()
    const next = previous.catch(() => {}).then(() => this.build(e, onProgress))
    e.build = next
    return next
  }

  /**
   * What every load needs before it reads Stories, in one round of parallel queries: whether the Space is live, its
   * content version (read before any row, so the rows hold at least that version), its blueprints, and its snapshot
   * when snapshots are on.
   */
  private async prefetch(e: SpaceEntry, withSnapshot: boolean): Promise<Prefetched> {
    const [space, cv, blueprints, snap] = await Promise.all([
      liveSpaceById(this.kernel, e.id),
      spaceContentVersion(this.kernel, e.id),
      spaceBlueprints(this.kernel, e.id),
      withSnapshot ? readSnapshot(this.kernel, e.id) : null,
    ])
    return { space, cv, blueprints, snap }
  }

  /**
   * Builds fresh indexes from the rows and swaps them in. `pre`/`dirty`: what load() already read and the set it
   * collects changed Stories in (it clears it); otherwise the build reads them and keeps its own.
   */
  private async build(e: SpaceEntry, onProgress?: (storiesRead: number) => void, pre?: Prefetched, given?: Set<number>): Promise<void> {
    const t0 = performance.now()
    const dirty = given ?? new Set<number>()
    e.dirty = dirty
    try {
      const { space, cv, blueprints } = pre ?? (await this.prefetch(e, false))
      const fresh = new Map<string, SearchIndex>()
      e.live = space !== null
      if (!space) {
        e.indexes = fresh
        this.measure(e)
        return
      }
      // Counted only for the progress lines of a large Space.
      let total: number | null = null
      const logEvery = 5000
      let read = 0
      let nextLog = logEvery
      let afterId = 0
      let dbMs = 0
      let indexMs = 0
      for (;;) {
        if (this.closed) return
        const t1 = performance.now()
        const page = await publishedSnapshots(this.kernel, { spaceId: e.id, afterId, limit: BUILD_PAGE })
        dbMs += performance.now() - t1
        if (!page.length) break
        let sliceStart = performance.now()
        for (const story of page) {
          addStory(fresh, story, blueprints, true)
          if (performance.now() - sliceStart > SLICE_MS) {
            indexMs += performance.now() - sliceStart
            await yieldToEventLoop()
            sliceStart = performance.now()
          }
        }
        indexMs += performance.now() - sliceStart
        read += page.length
        afterId = page[page.length - 1].id
        // A cold Space makes room as its new indexes grow (a rebuilt resident one counts its old indexes meanwhile).
        let building = 0
        for (const idx of fresh.values()) building += idx.approxBytes
        this.makeRoom(e, building)
        onProgress?.(page.length)
        // A short page is the last one (a Story published meanwhile is in `dirty`, re-read below).
        if (page.length < BUILD_PAGE) break
        if (read >= nextLog) {
          nextLog += logEvery
          total ??= await countPublishedStories(this.kernel, e.id)
          this.kernel.logger.info('search: building', { space: space.slug, stories: read, of: total, ms: Math.round(performance.now() - t0) })
        }
      }
      // Sort the postings into their compact arrays and merge the vocabulary (in slices), then re-read the Stories that
      // changed while we read, until nothing changed during the last read; the swap follows without a pause.
      const t2 = performance.now()
      for (const idx of fresh.values()) await idx.compactInSlices(yieldToEventLoop)
      indexMs += performance.now() - t2
      while (dirty.size) {
        const ids = [...dirty]
        dirty.clear()
        await this.refresh(e.id, fresh, ids)
      }
      if (this.closed) return
      e.indexes = fresh
      e.cv = cv
      e.verified = true
      this.measure(e)
      let documents = 0
      for (const idx of fresh.values()) documents += idx.size
      if (read >= this.snapshotMin && e.snapshotCv < cv) this.snapshotLater(e)
      this.kernel.logger.info('search: index built', {
        space: space.slug,
        stories: read,
        documents,
        locales: [...fresh.keys()],
        ms: Math.round(performance.now() - t0),
        db_ms: Math.round(dbMs),
        index_ms: Math.round(indexMs),
      })
    } catch (err) {
      this.kernel.logger.error('search: building an index failed', { space_id: e.id, error: String(err) })
      throw err
    } finally {
      if (e.dirty === dirty) e.dirty = null
    }
  }


  // ---- Cold loads and snapshots (SEARCH_MEMORY_MB) ----

  /**
   * A cold Space's first load: from its snapshot when there is one (caught up on the changes since), else from the
   * rows. At most LOADS_AT_ONCE run at once in an instance; the others wait their turn (one per Space: ensureBuilt).
   */
  private async load(e: SpaceEntry): Promise<void> {
    if (this.loading >= LOADS_AT_ONCE) await new Promise<void>((resolve) => this.loadQueue.push(resolve))
    this.loading++
    // Stories that change while the load reads: re-read before the indexes are swapped in.
    const dirty = new Set<number>()
    e.dirty = dirty
    try {
      const t0 = performance.now()
      const pre = await this.prefetch(e, this.snapshotsOn)
      if (pre.snap && pre.space) {
        const done = await this.fromSnapshot(e, pre, pre.snap, dirty, t0).catch((err) => {
          this.kernel.logger.warn('search: snapshot not loaded; building from the Stories', { space_id: e.id, error: String(err) })
          return false
        })
        if (done) {
          this.loads.snapshot++
          this.loads.snapshotMs += performance.now() - t0
          return
        }
      }
      await this.build(e, undefined, pre, dirty)
      this.loads.rows++
      this.loads.rowsMs += performance.now() - t0
    } finally {
      if (e.dirty === dirty) e.dirty = null
      this.loading--
      this.loadQueue.shift()?.()
    }
  }

  /**
   * Loads a Space's indexes from its snapshot and re-reads the Stories changed since it was written (the change feed
   * after the snapshot's content version, plus any event meanwhile). False when there is no usable snapshot, or it is
   * too far behind (the caller builds from the rows).
   */
  private async fromSnapshot(e: SpaceEntry, pre: Prefetched, snap: StoredSnapshot, dirty: Set<number>, t0: number): Promise<boolean> {
    {
      const { space, cv } = pre
      if (snap.format !== SNAPSHOT_FORMAT || snap.cv > cv || !space) return false
      const tRead = performance.now()
      // Room for what the snapshot decodes to, before it is decoded (estimated from its size as the last loads were).
      this.makeRoom(e, snap.data.length * this.snapshotExpansion)
      const indexes = decodeSnapshot(snap.data)
      const tDecode = performance.now()
      let caughtUp = 0
      if (snap.cv < cv) {
        const changed = await storiesChangedSince(this.kernel, e.id, snap.cv, CATCH_UP_MAX + 1)
        if (changed.length > CATCH_UP_MAX) return false
        const byUuid = new Map<string, number>()
        if (changed.some((c) => c.id === null)) for (const idx of indexes.values()) for (const { hit } of idx.documents()) byUuid.set(hit.story_uuid, hit.story_id)
        const ids = new Set<number>()
        for (const c of changed) {
          const id = c.id ?? byUuid.get(c.uuid)
          if (id !== undefined) ids.add(id)
        }
        caughtUp = ids.size
        if (ids.size) await this.refresh(e.id, indexes, [...ids])
      }
      while (dirty.size) {
        const ids = [...dirty]
        dirty.clear()
        await this.refresh(e.id, indexes, ids)
      }
      if (this.closed) return true
      e.indexes = indexes
      e.live = true
      e.cv = cv
      e.verified = false
      e.snapshotCv = snap.cv
      this.measure(e)
      if (snap.data.length > 0) this.snapshotExpansion = 0.8 * this.snapshotExpansion + (0.2 * e.bytes) / snap.data.length
      this.maybeCompact(e)
      let documents = 0
      for (const idx of indexes.values()) documents += idx.size
      this.kernel.logger.info('search: index loaded from its snapshot', {
        space: space.slug,
        documents,
        caught_up: caughtUp,
        bytes: snap.data.length,
        ms: Math.round(performance.now() - t0),
        read_ms: Math.round(tRead - t0),
        decode_ms: Math.round(tDecode - tRead),
      })
      // Far behind: a fresh snapshot spares the next instance the catch-up.
      if (caughtUp >= 50 && !this.closed) this.snapshotLater(e)
      return true
    }
  }

  /** Writes the Space's snapshot in the background, once its indexes are quiet and compacted. */
  private snapshotLater(e: SpaceEntry) {
    if (e.snapshotting || this.closed) return
    e.snapshotting = true
    void this.track(
      this.snapshotNow(e)
        .catch((err) => {
          if (!this.closed) this.kernel.logger.warn('search: writing a snapshot failed', { space_id: e.id, error: String(err) })
        })
        .finally(() => {
          e.snapshotting = false
        }),
    )
  }

  private async snapshotNow(e: SpaceEntry): Promise<boolean> {
    for (let attempt = 0; attempt < 20; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, attempt === 0 ? 0 : 250))
      if (this.closed || this.spaces.get(e.id) !== e || !e.indexes || !e.live) return false
      if (e.dirty || e.draining || e.pending.size || e.checks.size) continue
      for (const idx of e.indexes.values()) if (idx.needsCompaction || idx.vocabulary.pendingCount) await idx.compactInSlices(yieldToEventLoop)
      // Evicted meanwhile (its indexes may be released): nothing to write from.
      if (this.closed || this.spaces.get(e.id) !== e) return false
      if (e.dirty || e.draining || e.pending.size || e.checks.size || !e.indexes) continue
      const cv = e.cv
      let documents = 0
      for (const idx of e.indexes.values()) documents += idx.size
      if (documents < this.snapshotMin) {
        if (e.snapshotCv >= 0) await deleteSnapshot(this.kernel, e.id)
        e.snapshotCv = -1
        return false
      }
      const data = encodeSnapshot(e.indexes)
      if (!data) continue
      await writeSnapshot(this.kernel, { spaceId: e.id, format: SNAPSHOT_FORMAT, cv, documents, data })
      e.snapshotCv = Math.max(e.snapshotCv, cv)
      this.kernel.logger.debug('search: snapshot written', { space_id: e.id, documents, bytes: data.length, cv })
      return true
    }
    return false
  }

  /**
   * The snapshot of one Space written now (the search.snapshot job, the reindex command): from its resident indexes,
   * else built from the rows off to the side (not made resident). Returns the documents written, or 0.
   */
  async writeSnapshotOf(spaceId: number): Promise<number> {
    const resident = this.spaces.get(spaceId)
    if (resident?.indexes) {
      if (resident.snapshotCv >= resident.cv && resident.cv >= 0) return 0
      return (await this.snapshotNow(resident)) ? [...resident.indexes.values()].reduce((n, idx) => n + idx.size, 0) : 0
    }
    const total = await countPublishedStories(this.kernel, spaceId)
    if (total < this.snapshotMin) {
      await deleteSnapshot(this.kernel, spaceId)
      return 0
    }
    const e = this.detachedEntry(spaceId)
    await this.build(e)
    if (!e.indexes || !e.live) return 0
    for (const idx of e.indexes.values()) await idx.compactInSlices(yieldToEventLoop)
    const data = encodeSnapshot(e.indexes)
    if (!data) return 0
    let documents = 0
    for (const idx of e.indexes.values()) documents += idx.size
    await writeSnapshot(this.kernel, { spaceId, format: SNAPSHOT_FORMAT, cv: e.cv, documents, data })
    return documents
  }

  /** An entry built like a resident one but never entered into the map (neither served nor counted), no snapshot of its own. */
  private detachedEntry(spaceId: number): SpaceEntry {
    return { ...newEntry(spaceId), snapshotCv: Number.POSITIVE_INFINITY, snapshotting: true }
  }

  // ---- Updates ----

  /** Queues Stories to be re-read from the database into the indexes of their Space. */
  enqueue(spaceId: number, storyIds: number[]): void {
    if (this.closed || !storyIds.length) return
    // On demand, a Space that is not resident is read afresh from the database by its next search: nothing to do.
    if (this.budget !== null && !this.spaces.has(spaceId)) return
    const e = this.entry(spaceId)
    if (!e.live) return
    if (e.dirty) for (const id of storyIds) e.dirty.add(id)
    if (!e.indexes) {
      // Not built yet (a Space's first publish, or still starting): the build reads the committed state.
      void this.ensureBuilt(e).catch(() => {})
      return
    }
    for (const id of storyIds) e.pending.add(id)
    this.drain(e)
  }

  private drain(e: SpaceEntry): void {
    if (e.draining) return
    e.draining = (async () => {
      try {
        while (e.pending.size && !this.closed) {
          const ids = [...e.pending]
          e.pending.clear()
          if (e.indexes) await this.refresh(e.id, e.indexes, ids)
        }
      } catch (err) {
        this.kernel.logger.error('search: updating an index failed', { space_id: e.id, error: String(err) })
      } finally {
        e.draining = null
        if (e.pending.size && !this.closed) this.drain(e)
      }
      this.measure(e)
      this.maybeCompact(e)
    })()
  }

  /** Re-reads Stories into `indexes`: their published snapshots replace what is there; a Story not published goes. */
  private async refresh(spaceId: number, indexes: Map<string, SearchIndex>, storyIds: number[]): Promise<void> {
    const blueprints = await spaceBlueprints(this.kernel, spaceId)
    for (let i = 0; i < storyIds.length; i += BUILD_PAGE) {
      const ids = storyIds.slice(i, i + BUILD_PAGE)
      const published = new Map<number, PublishedSnapshot>()
      for (const s of await publishedSnapshots(this.kernel, { spaceId, storyIds: ids, limit: ids.length })) published.set(s.id, s)
      for (const id of ids) {
        const story = published.get(id)
        const langs = new Set(story?.locales.map((l) => l.lang))
        for (const [lang, idx] of indexes) if (!langs.has(lang)) idx.remove(hitId(id, lang))
        if (story) addStory(indexes, story, blueprints, false)
      }
    }
  }

  /**
   * New words are searchable at once but checked one by one until merged into the sorted vocabulary, and new postings
   * sit in small per-word arrays until merged into the compact one (removed documents' postings are dropped then):
   * the compaction (O(postings), in slices) runs a second after the last update, not after each. A rebuild once the
   * per-document table holds three times as many ordinals as live documents (each update takes a new ordinal).
   */
  private maybeCompact(e: SpaceEntry) {
    if (!e.indexes || this.closed) return
    let rebuild = false
    let merge = false
    for (const idx of e.indexes.values()) {
      if (idx.needsCompaction) merge = true
      if (idx.ordinalCount > Math.max(20_000, 3 * idx.size)) rebuild = true
    }
    if (merge) {
      if (e.merge) clearTimeout(e.merge)
      e.merge = setTimeout(() => {
        e.merge = null
        for (const idx of e.indexes?.values() ?? []) if (idx.needsCompaction) void this.track(idx.compactInSlices(yieldToEventLoop))
      }, 1000)
      e.merge.unref?.()
    }
    if (rebuild && !e.dirty) {
      this.kernel.logger.info('search: rebuilding after many removals', { space_id: e.id })
      void this.track(this.rebuild(e.id).catch(() => {}))
    }
  }

  /** story.published, .unpublished, .deleted: re-read that Story. */
  onStoryEvent(event: DomainEvent<'story.published' | 'story.unpublished' | 'story.deleted'>) {
    const id = event.payload.story?.id
    if (event.spaceId === null || typeof id !== 'number') return
    this.enqueue(event.spaceId, [id])
  }

  /** space.archived: its indexes go (an archived Space is not searchable). */
  dropSpace(spaceId: number) {
    const e = this.spaces.get(spaceId)
    if (e) this.forget(e)
  }

  /**
   * A save may have moved a Story, and with it its subtree (new full_path). Nothing to do when the Story is indexed at
   * the path it was saved with; otherwise (moved, or a folder or draft whose published descendants may have moved)
   * the published Stories at and under that path are compared with the index.
   */
  onSaved(event: DomainEvent<'version.created'>): Promise<void> | undefined {
    if (event.spaceId === null) return
    const e = this.spaces.get(event.spaceId)
    if (!e?.indexes) return
    const check = this.checkMoved(e, event).finally(() => e.checks.delete(check))
    e.checks.add(check)
    return check
  }

  private async checkMoved(e: SpaceEntry, event: DomainEvent<'version.created'>) {
    const story = event.payload.story
    if (event.spaceId === null || typeof story?.id !== 'number' || typeof story.full_path !== 'string') return
    if (!e.indexes) return
    const indexedPath = (id: number) => {
      for (const idx of e.indexes!.values()) {
        const hit = idx.hit(hitId(id, idx.lang))
        if (hit) return hit.full_path
      }
      return undefined
    }
    if (indexedPath(story.id) === story.full_path) return
    const rows = await publishedPathsUnder(this.kernel, event.spaceId, story.full_path)
    const moved = rows.filter((r) => {
      const was = indexedPath(r.id)
      return was !== undefined && was !== r.fullPath
    })
    if (!moved.length) return
    this.enqueue(
      event.spaceId,
      moved.map((r) => r.id),
    )
  }

  private async announce(msg: SearchWire) {
    try {
      await this.kernel.db.notify(SEARCH_CHANNEL, JSON.stringify(msg))
    } catch (err) {
      if (!this.closed) this.kernel.logger.warn('search: NOTIFY failed; other instances catch up at their next reconcile', { error: String(err) })
    }
  }

  private receive(payload: string) {
    let msg: SearchWire
    try {
      msg = JSON.parse(payload)
    } catch {
      return
    }
    if (this.closed || typeof msg !== 'object' || msg === null) return
    switch (msg.t) {
      case 'reindex':
        if (typeof msg.r === 'string') void this.track(this.answerReindex(msg.r, typeof msg.s === 'number' ? msg.s : null))
        return
    }
  }

  // ---- Full rebuilds on request (content-service reindex) ----

  /** Rebuilds one Space or every Space, reporting progress; used by the reindex command through NOTIFY. */
  async rebuildAll(spaceId: number | null, onProgress?: (p: BuildProgress) => void): Promise<{ spaces: number; documents: number }> {
    // On demand (SEARCH_MEMORY_MB), "every Space" is every resident one: the others are read afresh on their next search.
    const ids =
      spaceId !== null
        ? [spaceId]
        : this.budget !== null
          ? [...this.spaces.keys()]
          : [...new Set([...(await spacesWithPublishedStories(this.kernel)), ...this.spaces.keys()])]
    const counts = await Promise.all(ids.map((id) => countPublishedStories(this.kernel, id)))
    const progress: BuildProgress = { done: 0, total: counts.reduce((a, b) => a + b, 0) }
    onProgress?.(progress)
    let documents = 0
    for (const id of ids) {
      await this.rebuild(id, (n) => {
        progress.done += n
        onProgress?.(progress)
      })
      for (const idx of this.spaces.get(id)?.indexes?.values() ?? []) documents += idx.size
    }
    return { spaces: ids.length, documents }
  }

  private async answerReindex(requestId: string, spaceId: number | null) {
    const i = this.instanceId
    const t0 = performance.now()
    await this.announce({ t: 'reindex.ack', r: requestId, i, spaces: spaceId === null ? this.spaces.size : 1 })
    this.kernel.logger.info('search: reindex requested', { request: requestId, space_id: spaceId })
    let lastSent = 0
    try {
      const result = await this.rebuildAll(spaceId, (p) => {
        const now = performance.now()
        if (now - lastSent < 500 && p.done < p.total) return
        lastSent = now
        void this.announce({ t: 'reindex.progress', r: requestId, i, done: p.done, total: p.total })
      })
      const ms = Math.round(performance.now() - t0)
      this.kernel.logger.info('search: reindex done', { request: requestId, ...result, ms })
      await this.announce({ t: 'reindex.done', r: requestId, i, spaces: result.spaces, documents: result.documents, ms })
    } catch (err) {
      await this.announce({ t: 'reindex.failed', r: requestId, i, error: String(err) })
    }
  }

  // ---- Reconciliation ----

  /**
   * Compares the resident indexes with the database and re-reads the Stories that differ; returns how many did. One
   * query reads every resident Space's content version: a Space whose version has not moved since its indexes were
   * checked is skipped; the others (and Spaces loaded from a snapshot, once) are compared Story by Story. A Space whose
   * snapshot is behind its indexes gets a fresh one written.
   */
  async reconcile(): Promise<number> {
    let repaired = 0
    const entries = [...this.spaces.values()].filter((e) => e.indexes && !e.dirty && e.live)
    let versions: Map<number, number>
    try {
      versions = await contentVersionsOf(
        this.kernel,
        entries.map((e) => e.id),
      )
    } catch (err) {
      if (!this.closed) this.kernel.logger.error('search: reconcile failed', { error: String(err) })
      return 0
    }
    for (const e of entries) {
      if (this.closed) break
      if (!e.indexes || e.dirty || !e.live || this.spaces.get(e.id) !== e) continue
      const cv = versions.get(e.id) ?? 0
      if (cv !== e.cv || !e.verified) {
        try {
          repaired += await this.compare(e)
          e.cv = cv
          e.verified = true
        } catch (err) {
          if (!this.closed) this.kernel.logger.error('search: reconcile failed', { space_id: e.id, error: String(err) })
          continue
        }
      }
      if (e.cv > e.snapshotCv) {
        let documents = 0
        for (const idx of e.indexes.values()) documents += idx.size
        if (documents >= this.snapshotMin) this.snapshotLater(e)
      }
    }
    return repaired
  }

  /** Compares one Space's indexes with its published Stories and queues the ones that differ; returns how many. */
  private async compare(e: SpaceEntry): Promise<number> {
    const rows = await publishedVersions(this.kernel, e.id)
    if (!e.indexes) return 0
    const want = new Map<string, { id: number; fullPath: string; versionNo: number }>()
    for (const r of rows) want.set(hitId(r.id, r.lang), r)
    const stale = new Set<number>()
    for (const idx of e.indexes.values()) {
      for (const { hit, version } of idx.documents()) {
        const w = want.get(hit.id)
        if (!w || w.fullPath !== hit.full_path || w.versionNo !== version) stale.add(hit.story_id)
        want.delete(hit.id)
      }
    }
    for (const w of want.values()) stale.add(w.id)
    if (stale.size) {
      this.kernel.logger.warn('search: index out of step with the database; repairing', { space_id: e.id, stories: stale.size })
      this.enqueue(e.id, [...stale])
    }
    return stale.size
  }
}

function newEntry(spaceId: number): SpaceEntry {
  return {
    id: spaceId,
    indexes: null,
    build: null,
    dirty: null,
    pending: new Set(),
    checks: new Set(),
    draining: null,
    merge: null,
    live: true,
    bytes: 0,
    cv: -1,
    verified: false,
    snapshotCv: -1,
    snapshotting: false,
  }
}

/** What a load reads before the Stories (SearchRegistry.prefetch). */
interface Prefetched {
  space: { slug: string } | null
  cv: number
  blueprints: Map<string, Blueprint>
  snap: StoredSnapshot | null
}

/** Puts every published locale of a Story into the index of that locale (`bulk`: indexes being built). */
function addStory(indexes: Map<string, SearchIndex>, story: PublishedSnapshot, blueprints: Map<string, Blueprint>, bulk: boolean) {
  for (const locale of story.locales) {
    let idx = indexes.get(locale.lang)
    if (!idx) indexes.set(locale.lang, (idx = new SearchIndex(locale.lang, { bulk })))
    idx.upsert(searchDocument(story, locale, blueprints))
  }
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
