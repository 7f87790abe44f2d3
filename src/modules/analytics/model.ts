import { t } from 'elysia'
import { Int, intString, oneOf, PageNo, SpaceSlug, Uuid } from '../../kernel/schemas'

export const DAY_PATTERN = '^\\d{4}-\\d{2}-\\d{2}$'
const Day = t.String({ pattern: DAY_PATTERN, error: 'must be a date YYYY-MM-DD (UTC)', description: 'A UTC day, YYYY-MM-DD' })

export const StoriesPerPage = { perPage: 50, max: 200 }

export const StoriesQuery = t.Object({
  from: t.Optional(Day),
  to: t.Optional(Day),
  granularity: t.Optional(oneOf(['day', 'week', 'month'] as const, { error: 'must be day, week or month', description: 'Buckets of `by_day` (default day; weeks start on Monday, ISO)' })),
  page: t.Optional(PageNo),
  per_page: t.Optional(intString(1, StoriesPerPage.max, { description: `Stories per page, 1 to ${StoriesPerPage.max} (default ${StoriesPerPage.perPage})` })),
})

export const StoryAnalyticsQuery = t.Object({
  days: t.Optional(intString(1, 365, { description: 'Days up to and including today (UTC), 1 to 365 (default 30)' })),
})

export const SpaceParams = t.Object({ space: SpaceSlug })
export const StoryParams = t.Object({ space: SpaceSlug, uuid: Uuid })

const Counts = (description: string) => t.Record(t.String(), Int(), { description })
const DayPoint = t.Object({ date: t.String({ description: 'The day, or the first day of the week (Monday) or month' }), mounts: Int() })

export const StoryStatsModel = t.Object({
  story_uuid: t.String(),
  slug: t.Union([t.String(), t.Null()], { description: 'The current slug; null once the Story is deleted' }),
  mounts: Int(),
  by_lang: Counts('Mounts per canonical BCP-47 tag (mounts without a language are not listed)'),
  by_segment: Counts('Mounts per segment key (mounts without a segment are not listed)'),
  by_day: t.Array(DayPoint, { description: 'Every bucket from `from` to `to`, zeros included' }),
})

export const StoriesAnalyticsModel = t.Object({
  data: t.Array(StoryStatsModel),
  meta: t.Object({ from: t.String(), to: t.String(), total_stories: Int(), page: Int(), per_page: Int() }),
})

export const StoryAnalyticsModel = t.Object({
  story_uuid: t.String(),
  days: Int(),
  mounts: Int(),
  by_day: t.Array(DayPoint),
  by_lang: Counts('Mounts per canonical BCP-47 tag'),
  by_segment: Counts('Mounts per segment key'),
  by_device: Counts('Mounts per device: desktop, mobile, tablet'),
  by_referrer: Counts('Mounts per referrer origin (scheme://host); `(direct)` without one'),
  sparkline: t.Object({
    points: t.Array(Int(), { description: 'Mounts per day, oldest first (the same as by_day)' }),
    svg: t.String({ description: 'A 120×24 inline SVG polyline of the points' }),
  }),
})

const Period = t.Object({
  from: t.String(),
  to: t.String(),
  mounts: Int(),
  previous_mounts: Int({ description: 'The same number of days just before' }),
  change_pct: t.Union([t.Number(), t.Null()], { description: 'Change against the previous period in percent (one decimal); null when it had none' }),
})
const Shares = (description: string) => t.Record(t.String(), t.Number(), { description })

export const OverviewQuery = t.Object({
  days: t.Optional(oneOf(['7', '30', '90'] as const, { error: 'must be 7, 30 or 90', description: 'The window of `window`, `by_day`, the top lists and the shares (default 30)' })),
})

export const OverviewModel = t.Object({
  last_7_days: Period,
  last_30_days: Period,
  window: t.Composite([t.Object({ days: Int({ description: '7, 30 or 90 (the `days` asked for)' }) }), Period], { description: 'The last `days` days against the same number before' }),
  by_day: t.Array(DayPoint, { description: 'Mounts per day of the window, oldest first, zeros included' }),
  top_stories: t.Array(t.Object({ story_uuid: t.String(), slug: t.Union([t.String(), t.Null()]), mounts: Int() }), { description: 'The window, most mounts first (10)' }),
  top_referrers: t.Array(t.Object({ referrer: t.String(), mounts: Int() }), { description: 'The window (10); `(direct)` without a referrer' }),
  shares: t.Object(
    {
      device: Shares('Share of mounts per device (0..1)'),
      lang: Shares('Share of all mounts per language (0..1; mounts without a language make up the rest)'),
      segment: Shares('Share of all mounts per segment (0..1; mounts without a segment make up the rest)'),
    },
    { description: 'The window' },
  ),
})

export const InsightsModel = t.Object({
  period: t.Object({ from: t.String(), to: t.String() }),
  generated_by: oneOf(['rules', 'ai'] as const, { description: '`rules`: computed here; `ai`: rephrased by the configured AI provider' }),
  observations: t.Array(t.String()),
})
