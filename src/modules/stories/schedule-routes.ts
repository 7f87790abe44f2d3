import { Elysia, t } from 'elysia'
import type { Guards } from '../../kernel/guards'
import type { Kernel } from '../../kernel/kernel'
import { Data, DataList, Int, oneOf, pageQuery, PageMeta, SpaceParams, SpaceSlug, Timestamp, Uuid } from '../../kernel/schemas'
import { cancelSchedule, scheduleStory, spaceSchedules, storySchedulesOf } from './schedule'

const Action = oneOf(['publish', 'unpublish'], { error: 'must be publish or unpublish', description: 'What happens at the time' })
const ScheduleParams = t.Object({ space: SpaceSlug, uuid: Uuid, action: Action })
const ScheduleBody = t.Object({
  at: t.String({
    format: 'date-time',
    maxLength: 64,
    error: 'must be an ISO 8601 date-time with Z or an offset, in the future',
    description: 'When: an ISO 8601 date-time with Z or an offset, in the future (at most 5 years ahead)',
  }),
})

export const ScheduleModel = t.Object(
  {
    story_uuid: t.String({ format: 'uuid' }),
    action: oneOf(['publish', 'unpublish']),
    at: Timestamp,
    created_by: t.Union([t.Object({ user_id: Int(), name: t.String() }), t.Null()], { description: 'Who planned it (null for a Space token without a user)' }),
    error: t.Union([t.String(), t.Null()], {
      description: 'Why the action was refused when its time came (e.g. the Story was archived, a plugin vetoed); the plan stays until cancelled',
    }),
    created_at: Timestamp,
  },
  { $id: 'StorySchedule' },
)

/**
 * Scheduled publish and unpublish of Stories: `PUT` plans (or re-plans) one action of a Story for a time, `DELETE`
 * cancels it; the Space's plans are listed soonest first.
 */
export function scheduleRoutes(kernel: Kernel, guards: Guards) {
  return new Elysia({ prefix: '/spaces/:space/stories', tags: ['Stories'] })
    .use(guards)
    .get('/schedules', async ({ access, query }) => spaceSchedules(kernel, access, query), {
      params: SpaceParams,
      query: pageQuery(500, 100),
      spaceRole: 'viewer',
      response: t.Object({ data: t.Array(ScheduleModel), meta: PageMeta }),
      detail: { summary: 'The planned publishes and unpublishes of the Space, soonest first (paginated)' },
    })
    .get('/:uuid/schedules', async ({ access, params }) => ({ data: await storySchedulesOf(kernel, access, params.uuid) }), {
      params: t.Object({ space: SpaceSlug, uuid: Uuid }),
      spaceRole: 'viewer',
      response: DataList(ScheduleModel),
      detail: { summary: 'The planned publish and unpublish of a Story (at most one of each), soonest first' },
    })
    .put(
      '/:uuid/schedules/:action',
      async ({ access, params, body }) => ({ data: await scheduleStory(kernel, access, params.uuid, params.action, body) }),
      {
        params: ScheduleParams,
        body: ScheduleBody,
        spaceRole: 'editor',
        response: Data(ScheduleModel),
        detail: {
          summary: 'Plan a publish or unpublish of a Story at a time (replaces a plan of the same action)',
          description:
            'The action runs within seconds after `at`, on one instance, across restarts. It runs as the caller: a publish publishes the drafts as they are then. Archived Stories (409) and folders (422) cannot be scheduled.',
        },
      },
    )
    .delete(
      '/:uuid/schedules/:action',
      async ({ access, params, set }) => {
        await cancelSchedule(kernel, access, params.uuid, params.action)
        set.status = 204
      },
      { params: ScheduleParams, spaceRole: 'editor', response: { 204: t.Void() }, detail: { summary: 'Cancel the planned publish or unpublish of a Story (404 when none is planned)' } },
    )
}
