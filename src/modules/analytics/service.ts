import type { SpaceAccess } from '../../kernel/auth'
import { KernelErrors, validationFailed } from '../../kernel/errors'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { type CompiledRule, HOUR, RateLimitTable } from '../../kernel/rate-limit'
import { storySlugs } from '../stories/published'
import { getStory } from '../stories/service'
import { addDays, bucketOf, type Granularity, dayOf, daysBetween, daysFrom, isDay } from './days'
import type { InsightsModel, OverviewModel, StoriesAnalyticsModel, StoryAnalyticsModel } from './model'
import { StoriesPerPage } from './model'
import { type Dim, type Grouped, groupedSets, type RollupCache, readWatermark, type Scope, topStories } from './repo'

type K = Pick<Kernel, 'db' | 'clock'>
const today = (kernel: K) => dayOf(kernel.clock.now())
export const MAX_RANGE_DAYS = 366
export const DIRECT = '(direct)'

const toCounts = (rows: Grouped[], key: Dim, skipEmpty = true) => {
  const out: Record<string, number> = {}
  for (const r of rows) if (!skipEmpty || r[key] !== '') out[r[key] || DIRECT] = r.mounts
  return out
}

/** The buckets of from..to and the index of each day's bucket, computed once per request (shared by every series). */
function bucketing(from: string, to: string, g: Granularity) {
  const buckets: string[] = []
  const index = new Map<string, number>()
  for (const d of daysFrom(from, to)) {
    const b = bucketOf(d, g)
    if (buckets[buckets.length - 1] !== b) buckets.push(b)
    index.set(d, buckets.length - 1)
  }
  return { buckets, index }
}
type Bucketing = ReturnType<typeof bucketing>

/**
 * Mounts per bucket for each key (`keyOf` a row), in one pass: a set with `day` may list a day once per source, and
 * those add up here.
 */
function sumsBy(rows: Grouped[], b: Bucketing, keyOf: (r: Grouped) => string): Map<string, number[]> {
  const out = new Map<string, number[]>()
  for (const r of rows) {
    const i = b.index.get(r.day)
    if (i === undefined) continue
    const k = keyOf(r)
    let sums = out.get(k)
    if (!sums) out.set(k, (sums = new Array<number>(b.buckets.length).fill(0)))
    sums[i] += r.mounts
  }
  return out
}

/** A dense series: every bucket of from..to, zeros included. */
const series = (sums: number[] | undefined, b: Bucketing) => b.buckets.map((date, i) => ({ date, mounts: sums?.[i] ?? 0 }))

export interface StoriesQueryInput {
  from?: string
  to?: string
  granularity?: Granularity
  page?: number
  per_page?: number
}

/** `GET /spaces/{space}/analytics/stories` (spec 4.14): mounts per Story, most mounted first. */
export async function storiesAnalytics(kernel: K, access: SpaceAccess, query: StoriesQueryInput, cache?: RollupCache): Promise<typeof StoriesAnalyticsModel.static> {
  const errors: Record<string, string[]> = {}
  if (query.from !== undefined && !isDay(query.from)) errors.from = ['must be a real calendar day']
  if (query.to !== undefined && !isDay(query.to)) errors.to = ['must be a real calendar day']
  if (Object.keys(errors).length) throw validationFailed(errors)
  // Only `from`: 30 days from it, but not past today (nor before `from`).
  const to = query.to ?? (query.from !== undefined ? max(query.from, min(addDays(query.from, 29), today(kernel))) : today(kernel))
  const from = query.from ?? addDays(to, -29)
  if (from > to) throw validationFailed({ from: ['must not be after to'] })
  if (daysBetween(from, to) + 1 > MAX_RANGE_DAYS) throw validationFailed({ to: [`the range is at most ${MAX_RANGE_DAYS} days`] })
  const g = query.granularity ?? 'day'
  const page = pageOf(query.page, query.per_page, StoriesPerPage)
  const db = kernel.db.db
  const scope: Scope = { spaceId: access.space.id, from, to, watermark: await readWatermark(db), now: kernel.clock.ms() }
  const { total, rows: top } = await topStories(db, scope, page.perPage, page.offset, cache)
  const uuids = top.map((r) => r.story_uuid)
  const [[days, langs, segments], slugs] = uuids.length
    ? await Promise.all([
        groupedSets(db, { ...scope, storyUuids: uuids }, [
          ['story_uuid', 'day'],
          ['story_uuid', 'lang'],
          ['story_uuid', 'segment_key'],
        ], { cache }),
        storySlugs(kernel, access.space.id, uuids),
      ])
    : [[[], [], []], new Map<string, string>()]
  const byStory = (rows: Grouped[]) => {
    const m = new Map<string, Grouped[]>()
    for (const r of rows) {
      const list = m.get(r.story_uuid)
      if (list) list.push(r)
      else m.set(r.story_uuid, [r])
    }
    return m
  }
  const [langMap, segmentMap] = [byStory(langs), byStory(segments)]
  const b = bucketing(from, to, g)
  const dayMap = sumsBy(days, b, (r) => r.story_uuid)
  return {
    data: top.map((r) => ({
      story_uuid: r.story_uuid,
      slug: slugs.get(r.story_uuid) ?? null,
      mounts: r.mounts,
      by_lang: toCounts(langMap.get(r.story_uuid) ?? [], 'lang'),
      by_segment: toCounts(segmentMap.get(r.story_uuid) ?? [], 'segment_key'),
      by_day: series(dayMap.get(r.story_uuid), b),
    })),
    meta: { from, to, total_stories: total, page: page.page, per_page: page.perPage },
  }
}

const min = (a: string, b: string) => (a < b ? a : b)
const max = (a: string, b: string) => (a > b ? a : b)

/** `GET /spaces/{space}/stories/{uuid}/analytics`: one Story's daily mounts and breakdowns over the last `days`. */
export async function storyAnalytics(kernel: Kernel, access: SpaceAccess, uuid: string, days = 30, cache?: RollupCache): Promise<typeof StoryAnalyticsModel.static> {
  const story = await getStory(kernel, access, uuid) // 404 for a Story of no (or another) Space
  const to = today(kernel)
  const from = addDays(to, -(days - 1))
  const db = kernel.db.db
  const scope: Scope = { spaceId: access.space.id, from, to, storyUuids: [story.uuid], watermark: await readWatermark(db), now: kernel.clock.ms() }
  const [byDay, langs, segments, devices, referrers] = await groupedSets(db, scope, [['day'], ['lang'], ['segment_key'], ['device'], ['referrer']], { cache })
  const b = bucketing(from, to, 'day')
  const by_day = series(sumsBy(byDay, b, () => '').get(''), b)
  const points = by_day.map((d) => d.mounts)
  return {
    story_uuid: story.uuid,
    days,
    mounts: points.reduce((a, b) => a + b, 0),
    by_day,
    by_lang: toCounts(langs, 'lang'),
    by_segment: toCounts(segments, 'segment_key'),
    by_device: toCounts(devices, 'device'),
    by_referrer: toCounts(referrers, 'referrer', false),
    sparkline: { points, svg: sparklineSvg(points) },
  }
}

const SPARK_W = 120
const SPARK_H = 24

/** A small inline SVG polyline of `points` (120×24, stroke in currentColor), for the admin UI to drop in. */
export function sparklineSvg(points: number[]): string {
  const n = points.length
  const max = Math.max(1, ...points)
  const x = (i: number) => (n === 1 ? SPARK_W / 2 : 1 + (i * (SPARK_W - 2)) / (n - 1))
  const y = (v: number) => SPARK_H - 1 - (v / max) * (SPARK_H - 2)
  const r = (v: number) => String(Math.round(v * 10) / 10)
  const coords = n === 1 ? [`1,${r(y(points[0]))}`, `${SPARK_W - 1},${r(y(points[0]))}`] : points.map((v, i) => `${r(x(i))},${r(y(v))}`)
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${SPARK_W} ${SPARK_H}" width="${SPARK_W}" height="${SPARK_H}" role="img" aria-label="Mounts per day">` +
    `<polyline fill="none" stroke="currentColor" stroke-width="1.5" stroke-linejoin="round" stroke-linecap="round" points="${coords.join(' ')}"/></svg>`
  )
}

const pct = (now: number, before: number) => (before === 0 ? null : Math.round(((now - before) / before) * 1000) / 10)
const share = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000)
const shares = (rows: Grouped[], key: Dim, whole: number) => {
  const out: Record<string, number> = {}
  for (const r of rows) if (r[key] !== '') out[r[key]] = share(r.mounts, whole)
  return out
}

const DIMS_30: Dim[] = ['story_uuid', 'referrer', 'device', 'lang', 'segment_key']
/** The groups with mounts since `splitAt` (`recent`), by those mounts: most first, ties by the grouped value. */
const last30 = (rows: Grouped[], key: Dim): Grouped[] =>
  rows
    .filter((r) => r.recent > 0)
    .map((r) => ({ ...r, mounts: r.recent }))
    .sort((a, b) => b.mounts - a.mounts || (a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0))

/**
 * `GET /spaces/{space}/analytics/overview` (spec 4.8): the Space at a glance. `days` (7, 30 or 90; default 30) is the
 * window of `window`, `by_day`, the top lists and the shares; `last_7_days` and `last_30_days` are always there.
 */
export async function overview(kernel: K, access: SpaceAccess, cache?: RollupCache, days = 30): Promise<typeof OverviewModel.static> {
  const to = today(kernel)
  const from = addDays(to, -(days - 1))
  const db = kernel.db.db
  const spaceId = access.space.id
  // One pass over the window and the period before it (at least 60 days, for the 30-day comparison): the daily
  // series, and the breakdowns of the window as `recent`.
  const span = Math.max(2 * days, 60)
  const scope: Scope = { spaceId, from: addDays(to, -(span - 1)), to, watermark: await readWatermark(db), now: kernel.clock.ms() }
  const [byDay, ...breakdowns] = await groupedSets(db, scope, [['day'], ['story_uuid'], ['referrer'], ['device'], ['lang'], ['segment_key']], {
    splitAt: from,
    cache,
  })
  const [stories, referrerRows, devices, langRows, segmentRows] = breakdowns.map((rows, k) => last30(rows, DIMS_30[k]))
  const top = stories.slice(0, 10)
  const referrers = referrerRows.slice(0, 10)
  const langs = langRows.filter((r) => r.lang !== '')
  const segments = segmentRows.filter((r) => r.segment_key !== '')
  const perDay = new Map<string, number>()
  for (const r of byDay) perDay.set(r.day, (perDay.get(r.day) ?? 0) + r.mounts)
  const sum = (a: string, b: string) => byDay.reduce((s, r) => (r.day >= a && r.day <= b ? s + r.mounts : s), 0)
  const period = (n: number) => {
    const start = addDays(to, -(n - 1))
    const mounts = sum(start, to)
    const previous = sum(addDays(start, -n), addDays(start, -1))
    return { from: start, to, mounts, previous_mounts: previous, change_pct: pct(mounts, previous) }
  }
  const window = { days, ...period(days) }
  const slugs = await storySlugs(kernel, spaceId, top.map((r) => r.story_uuid))
  const whole = window.mounts
  return {
    last_7_days: period(7),
    last_30_days: period(30),
    window,
    by_day: daysFrom(from, to).map((date) => ({ date, mounts: perDay.get(date) ?? 0 })),
    top_stories: top.map((r) => ({ story_uuid: r.story_uuid, slug: slugs.get(r.story_uuid) ?? null, mounts: r.mounts })),
    top_referrers: referrers.map((r) => ({ referrer: r.referrer || DIRECT, mounts: r.mounts })),
    shares: { device: shares(devices, 'device', whole), lang: shares(langs, 'lang', whole), segment: shares(segments, 'segment_key', whole) },
  }
}

/** Spec 4.14 / 8: ai-insights, 10 per hour per Space (counted with the kernel's store, keyed by Space, not by IP). */
export const INSIGHTS_RULE: CompiledRule = new RateLimitTable([
  { id: 'analytics.ai-insights.space', method: 'POST', path: '/v1/spaces/:space/analytics/ai-insights', limit: 10, windowSeconds: HOUR },
]).rules[0]

const fmt = (n: number) => n.toLocaleString('en-US')
const percent = (part: number, whole: number) => `${whole === 0 ? 0 : Math.round((part / whole) * 100)}%`
const signed = (p: number | null) => (p === null ? 'new' : `${p > 0 ? '+' : ''}${p}%`)

/**
 * `POST /spaces/{space}/analytics/ai-insights`: plain sentences computed from the last 30 days, each with its numbers
 * — the last 15 days are compared with the 15 before them. No AI provider exists yet, so `generated_by` is `rules`
 * (a provider, when configured, may only rephrase these observations).
 */
export async function insights(kernel: Kernel, access: SpaceAccess, cache?: RollupCache): Promise<typeof InsightsModel.static> {
  const decision = await kernel.rateLimiter.hit(INSIGHTS_RULE, `space:${access.space.id}`)
  if (!decision.allowed) {
    throw KernelErrors.rateLimited('This Space asked for insights 10 times in the last hour. Retry after the time given in Retry-After.', undefined, decision.headers)
  }
  const to = today(kernel)
  const from = addDays(to, -29)
  const mid = addDays(to, -14)
  const db = kernel.db.db
  const scope: Scope = { spaceId: access.space.id, from, to, watermark: await readWatermark(db), now: kernel.clock.ms() }
  const [byStory, langRows, segmentRows, devices, referrerRows] = await groupedSets(
    db,
    scope,
    [['story_uuid'], ['lang'], ['segment_key'], ['device'], ['referrer']],
    { splitAt: mid, cache },
  )
  const langs = langRows.filter((r) => r.lang !== '').slice(0, 5)
  const segments = segmentRows.filter((r) => r.segment_key !== '').slice(0, 5)
  const referrers = referrerRows.slice(0, 5)
  const total = byStory.reduce((s, r) => s + r.mounts, 0)
  const observations: string[] = []
  const result = () => ({ period: { from, to }, generated_by: 'rules' as const, observations })
  if (total === 0) {
    observations.push(`No mounts were recorded between ${from} and ${to}.`)
    return result()
  }
  const recent = byStory.reduce((s, r) => s + r.recent, 0)
  const earlier = total - recent
  observations.push(
    `${fmt(total)} mounts across ${fmt(byStory.length)} ${byStory.length === 1 ? 'Story' : 'Stories'} between ${from} and ${to}: ${fmt(recent)} in the last 15 days against ${fmt(earlier)} in the 15 before (${signed(pct(recent, earlier))}).`,
  )

  const change = byStory.map((r) => ({ uuid: r.story_uuid, recent: r.recent, earlier: r.mounts - r.recent, delta: 2 * r.recent - r.mounts }))
  const growing = change.filter((c) => c.delta > 0).sort((a, b) => b.delta - a.delta || (a.uuid < b.uuid ? -1 : 1))[0]
  const fading = change.filter((c) => c.delta < 0).sort((a, b) => a.delta - b.delta || (a.uuid < b.uuid ? -1 : 1))[0]
  const slugs = await storySlugs(kernel, access.space.id, [growing?.uuid, fading?.uuid].filter((u): u is string => !!u))
  const name = (uuid: string) => (slugs.has(uuid) ? `"${slugs.get(uuid)}"` : `Story ${uuid}`)
  if (growing) {
    observations.push(
      `Fastest-growing: ${name(growing.uuid)} with ${fmt(growing.recent)} mounts in the last 15 days against ${fmt(growing.earlier)} in the 15 before (${signed(pct(growing.recent, growing.earlier))}).`,
    )
  }
  if (fading) {
    observations.push(
      `Fading: ${name(fading.uuid)} with ${fmt(fading.recent)} mounts in the last 15 days against ${fmt(fading.earlier)} in the 15 before (${signed(pct(fading.recent, fading.earlier))}).`,
    )
  }

  const known = langs.reduce((s, r) => s + r.mounts, 0)
  if (langs.length) {
    const list = langs.map((r) => `${r.lang} ${percent(r.mounts, total)} (${fmt(r.mounts)})`).join(', ')
    observations.push(`Languages: ${list}${known < total ? `; ${percent(total - known, total)} of mounts carried no language` : ''}.`)
  } else {
    observations.push('No mount carried a language.')
  }
  const segmented = segments.reduce((s, r) => s + r.mounts, 0)
  if (segments.length) {
    const list = segments.map((r) => `${r.segment_key} ${percent(r.mounts, total)} (${fmt(r.mounts)})`).join(', ')
    observations.push(`Segments: ${list}; ${percent(total - segmented, total)} of mounts had no segment.`)
  } else {
    observations.push('No mount was attributed to an audience segment.')
  }

  // Device shift: the share of each device in the earlier and the recent half, in percentage points.
  const shift = devices
    .map((d) => {
      const a = earlier === 0 ? 0 : ((d.mounts - d.recent) / earlier) * 100
      const b = recent === 0 ? 0 : (d.recent / recent) * 100
      return { device: d.device, a: Math.round(a), b: Math.round(b), points: Math.round(b - a) }
    })
    .sort((x, y) => Math.abs(y.points) - Math.abs(x.points) || (x.device < y.device ? -1 : 1))
  if (earlier > 0 && recent > 0 && shift[0] && Math.abs(shift[0].points) >= 5) {
    const s = shift[0]
    observations.push(`Device shift: ${s.device} went from ${s.a}% of mounts in the earlier 15 days to ${s.b}% in the last 15 (${s.points > 0 ? '+' : ''}${s.points} points).`)
  } else {
    const list = devices.map((d) => `${d.device} ${percent(d.mounts, total)}`).join(', ')
    observations.push(`Device mix: ${list}${earlier > 0 && recent > 0 ? ', stable between the two halves (under 5 points of change)' : ''}.`)
  }
  if (referrers.length) {
    const list = referrers.map((r) => `${r.referrer || DIRECT} ${fmt(r.mounts)} (${percent(r.mounts, total)})`).join(', ')
    observations.push(`Top referrers: ${list}.`)
  }
  return result()
}

