import { Elysia } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { Data } from '../../kernel/schemas'
import { InsightsModel, OverviewModel, OverviewQuery, SpaceParams, StoriesAnalyticsModel, StoriesQuery, StoryAnalyticsModel, StoryAnalyticsQuery, StoryParams } from './model'
import type { RollupCache } from './repo'
import { insights, overview, storiesAnalytics, storyAnalytics } from './service'

/** Spec 4.8 / 4.14: aggregated analytics of a Space (viewer or higher). */
export function analyticsRoutes(kernel: Kernel, guards: Guards, cache: RollupCache) {
  return new Elysia({ prefix: '/spaces/:space', tags: ['Analytics'] })
    .use(guards)
    .get('/analytics/stories', ({ access, query }) => storiesAnalytics(kernel, access, query, cache), {
      params: SpaceParams,
      query: StoriesQuery,
      spaceRole: 'viewer',
      response: StoriesAnalyticsModel,
      detail: {
        summary: 'Mounts per Story between two days, most mounted first (spec 4.14)',
        description:
          '`from`/`to`: UTC days `YYYY-MM-DD`, both included (default: the last 30 days up to today); `from` ≤ `to`, at most 366 days (else 422). ' +
          '`by_day` is dense (every bucket, zeros included); `granularity=week` buckets start on Monday (ISO weeks), `month` on the 1st — a first bucket may start before `from` and counts only days from `from`. ' +
          'Counts up to a few minutes ago come from the rollups (every five minutes), the last minutes from the raw beacons. `page`/`per_page` (default 50, at most 200).',
      },
    })
    .get('/stories/:uuid/analytics', async ({ access, params, query }) => ({ data: await storyAnalytics(kernel, access, params.uuid, query.days, cache) }), {
      params: StoryParams,
      query: StoryAnalyticsQuery,
      spaceRole: 'viewer',
      response: Data(StoryAnalyticsModel),
      detail: {
        summary: "One Story's mounts over the last `days` days, with breakdowns and a sparkline",
        description:
          '`days` 1–365 (default 30), up to and including today (UTC). `by_day` is dense; `sparkline.points` are the same numbers and `sparkline.svg` a 120×24 SVG polyline (stroke `currentColor`). A Story of another Space: 404.',
      },
    })
    .get('/analytics/overview', async ({ access, query }) => ({ data: await overview(kernel, access, cache, query.days ? Number(query.days) : 30) }), {
      params: SpaceParams,
      query: OverviewQuery,
      spaceRole: 'viewer',
      response: Data(OverviewModel),
      detail: {
        summary: 'The Space at a glance: last 7 and 30 days against the periods before; for the window (`days` 7, 30 or 90; default 30) the daily series, top Stories and referrers, shares (spec 4.8)',
      },
    })
    .post('/analytics/ai-insights', async ({ access }) => ({ data: await insights(kernel, access, cache) }), {
      params: SpaceParams,
      spaceRole: 'viewer',
      response: Data(InsightsModel),
      detail: {
        summary: 'Plain-text observations on the last 30 days (10 per hour per Space)',
        description:
          'Computed from the numbers (the last 15 days against the 15 before): totals, fastest-growing and fading Stories, language and segment shares, device shifts, referrers — each sentence carries its numbers. ' +
          '`generated_by: rules` (no AI provider is configured; one may later rephrase the same observations: `ai`). The 11th call within an hour in one Space answers 429 with Retry-After.',
        responses: { 429: { description: 'rate_limited: 10 per hour per Space', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } } } as never,
      },
    })
}
