import { and, eq, gt } from 'drizzle-orm'
import { presenceSessions } from './tables'
import type { Kernel } from '../../kernel/kernel'
import { userNames } from '../auth/service'
import type { PresenceChangedPayload } from './events'
import type { PresenceView } from './model'

/** Sessions whose last heartbeat is at most this old are active. */
export const ACTIVE_MS = 30_000
/**
 * How old a Story's roster may get before it is read again from the database, in the background (the answer in hand
 * is served meanwhile). Joins, moves and leaves on any instance (`presence.changed`, which carries the whole session)
 * and every heartbeat answered by this instance patch the roster at once; only the `last_seen` and `selection` of
 * another instance's sessions that stayed on their block may lag by this much (plus one query).
 */
const ROSTER_REFRESH_MS = 2_000
const MAX_STORIES = 10_000
const MAX_NAMES = 10_000

/** One session as the roster holds it: the view, its epoch ms, and its JSON text (made once per change). */
interface Entry {
  view: PresenceView
  lastSeenMs: number
  json: string
}

interface StoryRoster {
  storyId: number
  /** Session id → entry, oldest heartbeat first (a patch moves its session to the end). */
  entries: Map<string, Entry>
  loadedAt: number
  /** A load in flight: patches that arrive meanwhile are kept and applied again on top of what it read. */
  loading: Promise<void> | null
  pending: { sessionId: string; entry: Entry | null }[]
}

const entryOf = (view: PresenceView, lastSeenMs: number): Entry => ({ view, lastSeenMs, json: JSON.stringify(view) })

/**
 * The active presence sessions of each Story, kept in memory and patched in place: a thousand editors on one Story
 * cost no query per heartbeat (the heartbeat's own write aside) and no name lookup, and each session's JSON is made
 * once per change, so a heartbeat's answer (up to 999 other sessions) is a join of ready-made strings.
 *
 * Correct across the instances of a fleet: every instance applies `presence.changed` (a join, a move to another
 * block, a leave — on any instance, through the event bus) and re-reads a Story's roster in the background when it is
 * older than ROSTER_REFRESH_MS, which brings in the other instances' heartbeats that changed nothing but `last_seen`.
 */
export class PresenceRoster {
  private stories = new Map<string, StoryRoster>()
  private names = new Map<number, string>()

  constructor(private kernel: Kernel) {}

  /** The Story's active sessions, oldest heartbeat first, without `exceptSession`. */
  async active(story: { id: number; uuid: string }, exceptSession?: string): Promise<PresenceView[]> {
    const out: PresenceView[] = []
    for (const e of await this.current(story, exceptSession)) out.push(e.view)
    return out
  }

  /** The same as JSON text: `[…]`, each session's JSON made once per change. */
  async activeJson(story: { id: number; uuid: string }, exceptSession?: string): Promise<string> {
    const list = await this.current(story, exceptSession)
    let s = '['
    for (let i = 0; i < list.length; i++) s += (i ? ',' : '') + list[i].json
    return s + ']'
  }

  /** The display name of a user (remembered; refreshed by every roster load). */
  async nameOf(userId: number): Promise<string> {
    const known = this.names.get(userId)
    if (known !== undefined) return known
    const name = (await userNames(this.kernel, [userId])).get(userId) ?? ''
    this.remember(userId, name)
    return name
  }

  /** A session joined, moved, or beat (`left`: ended) — on this instance or another one. Older news is ignored. */
  apply(storyUuid: string, p: { session_id: string; user_id: number; user_name?: string; block_path: string | null; selection?: { anchor: number; head: number }; last_seen?: string; left: boolean }) {
    const r = this.stories.get(storyUuid)
    if (!r) return // not held: the next read loads it
    if (p.left || p.block_path === null) return this.patch(r, p.session_id, null)
    if (p.last_seen === undefined || p.selection === undefined || p.user_name === undefined) {
      // An event from an instance that does not send the whole session: read the roster again.
      r.loadedAt = Number.NEGATIVE_INFINITY
      return
    }
    if (p.user_name) this.remember(p.user_id, p.user_name)
    const view: PresenceView = {
      session_id: p.session_id,
      user_id: p.user_id,
      user_name: p.user_name,
      block_path: p.block_path,
      selection: { anchor: p.selection.anchor, head: p.selection.head },
      last_seen: p.last_seen,
    }
    this.patch(r, p.session_id, entryOf(view, Date.parse(p.last_seen)))
  }

  /** The `presence.changed` handler. */
  onChanged(p: PresenceChangedPayload) {
    this.apply(p.story_uuid, p)
  }

  /** Events may have been missed (the bus resynced): forget everything. */
  clear() {
    this.stories.clear()
    this.names.clear()
  }

  get size() {
    return this.stories.size
  }

  private patch(r: StoryRoster, sessionId: string, entry: Entry | null) {
    if (r.loading) r.pending.push({ sessionId, entry })
    const had = r.entries.get(sessionId)
    if (entry && had && had.lastSeenMs > entry.lastSeenMs) return
    r.entries.delete(sessionId)
    if (entry) r.entries.set(sessionId, entry)
  }

  private remember(userId: number, name: string) {
    if (!this.names.has(userId) && this.names.size >= MAX_NAMES) this.names.delete(this.names.keys().next().value!)
    this.names.set(userId, name)
  }

  private async current(story: { id: number; uuid: string }, exceptSession?: string): Promise<Entry[]> {
    const now = this.kernel.clock.ms()
    let r = this.stories.get(story.uuid)
    if (!r || r.storyId !== story.id) {
      r = { storyId: story.id, entries: new Map(), loadedAt: 0, loading: null, pending: [] }
      this.stories.set(story.uuid, r)
      if (this.stories.size > MAX_STORIES) this.evict()
    }
    if (r.loadedAt === 0) await (r.loading ?? this.reload(r)) // never read yet: wait for it
    else if (now - r.loadedAt > ROSTER_REFRESH_MS && !r.loading) {
      void this.reload(r).catch((err) => this.kernel.logger.warn('presence roster: reload failed', { error: String(err) }))
    }
    // Least recently used last: a read moves the Story to the end of the eviction order.
    this.stories.delete(story.uuid)
    this.stories.set(story.uuid, r)
    const since = now - ACTIVE_MS
    const out: Entry[] = []
    for (const [id, e] of r.entries) {
      if (e.lastSeenMs <= since) r.entries.delete(id) // silent for over 30 s: gone from every answer
      else if (id !== exceptSession) out.push(e)
    }
    return out
  }

  private reload(r: StoryRoster): Promise<void> {
    r.loading ??= (async () => {
      r.pending = []
      try {
        const startedAt = this.kernel.clock.ms()
        const since = new Date(startedAt - ACTIVE_MS)
        const rows = await this.kernel.db.db
          .select()
          .from(presenceSessions)
          .where(and(eq(presenceSessions.storyId, r.storyId), gt(presenceSessions.lastSeen, since)))
        rows.sort((a, b) => a.lastSeen.getTime() - b.lastSeen.getTime())
        const names = await userNames(this.kernel, rows.map((x) => x.userId))
        for (const [id, name] of names) this.remember(id, name)
        const entries = new Map<string, Entry>()
        for (const x of rows) {
          const view: PresenceView = {
            session_id: x.sessionId,
            user_id: x.userId,
            user_name: names.get(x.userId) ?? '',
            block_path: x.blockPath,
            selection: { anchor: x.selection.anchor, head: x.selection.head },
            last_seen: x.lastSeen.toISOString(),
          }
          const ms = x.lastSeen.getTime()
          const had = r.entries.get(x.sessionId)
          const same =
            had &&
            had.lastSeenMs === ms &&
            had.view.block_path === x.blockPath &&
            had.view.user_name === view.user_name &&
            had.view.selection.anchor === x.selection.anchor &&
            had.view.selection.head === x.selection.head
          entries.set(x.sessionId, same ? had : entryOf(view, ms))
        }
        const pending = r.pending
        r.entries = entries
        r.loadedAt = Math.max(1, startedAt)
        r.loading = null
        r.pending = []
        // What changed while the rows were read is newer than them (or equal): apply it again.
        for (const p of pending) this.patch(r, p.sessionId, p.entry)
      } finally {
        r.loading = null
      }
    })()
    return r.loading
  }

  private evict() {
    for (const [uuid, r] of this.stories) {
      if (this.stories.size <= MAX_STORIES) return
      if (!r.loading) this.stories.delete(uuid)
    }
  }
}
