import { and, asc, count, eq } from 'drizzle-orm'
import { stories, storySchedules } from './tables'
import type { Principal, SpaceAccess } from '../../kernel/auth'
import { AppError, notFound, validationFailed } from '../../kernel/errors'
import type { JobQueue } from '../../kernel/jobs'
import type { Kernel } from '../../kernel/kernel'
import { usersByIds } from '../auth/service'
import { findLiveSpace, parseDateTime, spaceSlugById } from '../spaces/service'
import { StoryErrors } from './model'
import * as repo from './repo'
import { publishStory, unpublishStory } from './service'

// Scheduled publish and unpublish: a row per planned action (story_schedules) and a durable job at its time. The job
// lives in the kernel's queue (Postgres), so it survives restarts and fires on exactly one instance (claims with
// SKIP LOCKED); the row is what editors see and cancel. The job acts only while the row still holds the job's time
// (cancelling deletes the row, re-planning moves it), and the action itself is idempotent (publishing a published
// Story without changes, or unpublishing a draft, does nothing and emits nothing), so a job that ran twice after a
// lost lease still publishes once.

export type ScheduleAction = 'publish' | 'unpublish'
export const SCHEDULE_QUEUE = 'stories.scheduled'

declare module '../../kernel/jobs' {
  interface JobMap {
    'stories.scheduled': { scheduleId: number; runAt: number }
  }
}

/** How far ahead an action may be planned. */
export const MAX_SCHEDULE_AHEAD_MS = 5 * 366 * 86_400_000
const SCHEDULE_PAGE = { perPage: 100, max: 500 }

export interface ScheduleView {
  story_uuid: string
  action: ScheduleAction
  at: string
  created_by: { user_id: number; name: string } | null
  error: string | null
  created_at: string
}

type Row = typeof storySchedules.$inferSelect
const jobKey = (r: { id: number; runAt: Date }) => `${r.id}:${r.runAt.getTime()}`

async function views(kernel: Kernel, rows: (Row & { storyUuid: string })[]): Promise<ScheduleView[]> {
  const names = await usersByIds(kernel.db.db, rows.flatMap((r) => (r.userId === null ? [] : [r.userId])))
  return rows.map((r) => {
    const u = r.userId === null ? undefined : names.get(r.userId)
    return {
      story_uuid: r.storyUuid,
      action: r.action,
      at: r.runAt.toISOString(),
      created_by: u ? { user_id: u.id, name: u.name } : null,
      error: r.error,
      created_at: r.createdAt.toISOString(),
    }
  })
}

const selectWithUuid = (kernel: Kernel) =>
  kernel.db.db
    .select({ row: storySchedules, storyUuid: stories.uuid })
    .from(storySchedules)
    .innerJoin(stories, eq(stories.id, storySchedules.storyId))

/** The planned actions of one Story (at most one publish and one unpublish), soonest first. */
export async function storySchedulesOf(kernel: Kernel, access: SpaceAccess, uuid: string): Promise<ScheduleView[]> {
  const s = await repo.findStory(kernel.db.db, access.space.id, uuid)
  if (!s) throw notFound('Story')
  const rows = await selectWithUuid(kernel).where(eq(storySchedules.storyId, s.id)).orderBy(asc(storySchedules.runAt), asc(storySchedules.id))
  return views(kernel, rows.map((r) => ({ ...r.row, storyUuid: r.storyUuid })))
}

/** Every planned action of the Space, soonest first (paginated): the Story tree marks the Stories they concern. */
export async function spaceSchedules(kernel: Kernel, access: SpaceAccess, query: { page?: number; per_page?: number }) {
  const perPage = Math.min(query.per_page ?? SCHEDULE_PAGE.perPage, SCHEDULE_PAGE.max)
  const page = query.page ?? 1
  const where = eq(storySchedules.spaceId, access.space.id)
  const [rows, [total]] = await Promise.all([
    selectWithUuid(kernel)
      .where(where)
      .orderBy(asc(storySchedules.runAt), asc(storySchedules.id))
      .limit(perPage)
      .offset((page - 1) * perPage),
    kernel.db.db.select({ n: count() }).from(storySchedules).where(where),
  ])
  return { data: await views(kernel, rows.map((r) => ({ ...r.row, storyUuid: r.storyUuid }))), meta: { total: Number(total?.n ?? 0), page, per_page: perPage } }
}

/**
 * Plans `action` for the Story at `at` (an ISO 8601 instant in the future), replacing a plan of the same action: the
 * row and its job are written in one transaction, and the previous job (if any) is cancelled in it.
 */
export async function scheduleStory(kernel: Kernel, access: SpaceAccess, uuid: string, action: ScheduleAction, input: { at: string }): Promise<ScheduleView> {
  const at = parseDateTime(input.at)
  if (!at) throw validationFailed({ at: ['must be an ISO 8601 date-time with Z or an offset'] })
  const now = kernel.clock.now()
  if (at.getTime() <= now.getTime()) throw validationFailed({ at: ['must be in the future'] })
  if (at.getTime() - now.getTime() > MAX_SCHEDULE_AHEAD_MS) throw validationFailed({ at: ['must be within 5 years'] })
  const p = access.principal
  const userId = p.userId ?? null
  const tokenId = p.kind === 'space' ? p.tokenId : null
  const id = await kernel.db.db.transaction(async (tx) => {
    const s = await repo.findStory(tx, access.space.id, uuid, true)
    if (!s) throw notFound('Story')
    if (s.status === 'archived') throw StoryErrors.storyArchived('The Story is archived: it can only be deleted.')
    if (s.isFolder) throw validationFailed({ action: ['Folders are not published; schedule the Stories in them.'] }, 'A folder cannot be scheduled.')
    const [old] = await tx
      .select()
      .from(storySchedules)
      .where(and(eq(storySchedules.storyId, s.id), eq(storySchedules.action, action)))
      .for('update')
    let row: Row
    if (old) {
      await kernel.jobs.cancel(tx, SCHEDULE_QUEUE, [jobKey(old)])
      ;[row] = await tx
        .update(storySchedules)
        .set({ runAt: at, userId, tokenId, error: null, createdAt: now })
        .where(eq(storySchedules.id, old.id))
        .returning()
    } else {
      ;[row] = await tx
        .insert(storySchedules)
        .values({ spaceId: access.space.id, storyId: s.id, action, runAt: at, userId, tokenId, createdAt: now })
        .returning()
    }
    await kernel.jobs.enqueue(SCHEDULE_QUEUE, { scheduleId: row.id, runAt: at.getTime() }, { tx, runAt: at, dedupeKey: jobKey(row) })
    return row.id
  })
  const [r] = await selectWithUuid(kernel).where(eq(storySchedules.id, id))
  return (await views(kernel, [{ ...r.row, storyUuid: r.storyUuid }]))[0]
}

/** Cancels the planned `action` of the Story (its job with it); 404 when none is planned. */
export async function cancelSchedule(kernel: Kernel, access: SpaceAccess, uuid: string, action: ScheduleAction): Promise<void> {
  await kernel.db.db.transaction(async (tx) => {
    const s = await repo.findStory(tx, access.space.id, uuid)
    if (!s) throw notFound('Story')
    const [row] = await tx
      .delete(storySchedules)
      .where(and(eq(storySchedules.storyId, s.id), eq(storySchedules.action, action)))
      .returning()
    if (!row) throw notFound('Schedule')
    await kernel.jobs.cancel(tx, SCHEDULE_QUEUE, [jobKey(row)])
  })
}

/** The identity a planned action runs with: the user (or Space token) who planned it, with editor rights. */
function principalOf(row: Row, tenantId: number): Principal {
  if (row.tokenId !== null) {
    return { kind: 'space', tokenId: row.tokenId, tenantId, spaceId: row.spaceId, role: 'editor', userId: row.userId, expiresAt: null }
  }
  return { kind: 'user', tokenId: '', tenantId, userId: row.userId ?? 0, expiresAt: null }
}

/** Runs one due schedule: the action, then the row is removed; a refusal (404, 409, a plugin's veto) is kept on the row. */
export async function runSchedule(kernel: Kernel, scheduleId: number, runAt: number): Promise<void> {
  const [row] = await kernel.db.db.select().from(storySchedules).where(eq(storySchedules.id, scheduleId))
  // Cancelled, re-planned for another time, or already refused: this job is stale.
  if (!row || row.runAt.getTime() !== runAt || row.error !== null) return
  const slug = await spaceSlugById(kernel, row.spaceId)
  const space = slug ? await findLiveSpace(kernel, slug) : null
  const [story] = await kernel.db.db.select({ uuid: stories.uuid }).from(stories).where(eq(stories.id, row.storyId))
  const stillThere = and(eq(storySchedules.id, row.id), eq(storySchedules.runAt, row.runAt))
  if (!space || !story) {
    await kernel.db.db.delete(storySchedules).where(stillThere)
    return
  }
  const access: SpaceAccess = { principal: principalOf(row, space.tenantId), space, role: 'editor' }
  try {
    if (row.action === 'publish') await publishStory(kernel, access, story.uuid)
    else await unpublishStory(kernel, access, story.uuid)
  } catch (err) {
    // A refusal is final for this plan (retrying cannot fix an archived Story or a veto): the editor sees why.
    if (err instanceof AppError && err.status < 500) {
      await kernel.db.db.update(storySchedules).set({ error: err.message.slice(0, 500) }).where(stillThere)
      kernel.logger.warn('scheduled story action refused', { story: story.uuid, action: row.action, error: err.message })
      return
    }
    throw err
  }
  await kernel.db.db.delete(storySchedules).where(stillThere)
  kernel.logger.info('scheduled story action done', { story: story.uuid, action: row.action })
}

export function registerScheduleJobs(jobs: JobQueue, kernel: Kernel): void {
  jobs.define(SCHEDULE_QUEUE, {
    // A passing database outage must not lose a plan: retried a few times within the next minutes.
    retryDelaysMs: [5_000, 30_000, 120_000, 600_000],
    handler: async ({ job }) => runSchedule(kernel, job.payload.scheduleId, job.payload.runAt),
  })
}

