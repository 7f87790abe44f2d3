import { and, asc, eq, gt } from 'drizzle-orm'
import { presenceSessions } from '../../../db/schema'
import { ScopedCache } from '../../kernel/cache'
import type { Kernel } from '../../kernel/kernel'
import { userNames } from '../auth/service'
import type { PresenceView } from './model'

/** Sessions whose last heartbeat is at most this old are active. */
export const ACTIVE_MS = 30_000
/**
 * How long a Story's roster is reused. Joins, leaves and focus changes (`presence.changed`, on every instance)
 * replace it at once; only the `last_seen` of sessions that changed nothing may lag by this much.
 */
const ROSTER_TTL_MS = 1_000
const MAX_STORIES = 10_000

export interface RosterEntry extends PresenceView {
  lastSeenMs: number
}

/**
 * The active presence sessions of each Story, with their names, shared by every heartbeat of that Story: a
 * thousand editors on one Story cost one roster query a second, not a query and a name lookup per beat.
 */
export class PresenceRoster {
  readonly cache: ScopedCache<{ id: number; uuid: string }, RosterEntry[]>

  constructor(private kernel: Kernel) {
    this.cache = new ScopedCache({
      name: 'presence-roster',
      scopeOf: (story) => story.uuid,
      idOf: (story) => story.uuid,
      load: (story) => this.load(story.id),
      now: () => kernel.clock.ms(),
      ttlMs: ROSTER_TTL_MS,
      maxEntries: MAX_STORIES,
      invalidateOn: { 'presence.changed': (e) => e.payload.story_uuid },
    })
  }

  /** The Story's active sessions, oldest heartbeat first, without `exceptSession`. */
  async active(story: { id: number; uuid: string }, exceptSession?: string): Promise<PresenceView[]> {
    const since = this.kernel.clock.ms() - ACTIVE_MS
    const out: PresenceView[] = []
    for (const r of await this.cache.get(story)) {
      if (r.lastSeenMs > since && r.session_id !== exceptSession) {
        out.push({ session_id: r.session_id, user_id: r.user_id, user_name: r.user_name, block_path: r.block_path, selection: r.selection, last_seen: r.last_seen })
      }
    }
    return out
  }

  private async load(storyId: number): Promise<RosterEntry[]> {
    const since = new Date(this.kernel.clock.ms() - ACTIVE_MS)
    const rows = await this.kernel.db.db
      .select()
      .from(presenceSessions)
      .where(and(eq(presenceSessions.storyId, storyId), gt(presenceSessions.lastSeen, since)))
      .orderBy(asc(presenceSessions.lastSeen))
    const names = await userNames(this.kernel, rows.map((r) => r.userId))
    return rows.map((r) => ({
      session_id: r.sessionId,
      user_id: r.userId,
      user_name: names.get(r.userId) ?? '',
      block_path: r.blockPath,
      selection: r.selection,
      last_seen: r.lastSeen.toISOString(),
      lastSeenMs: r.lastSeen.getTime(),
    }))
  }
}
