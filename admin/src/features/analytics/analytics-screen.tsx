import { useMutation, useQuery } from '@tanstack/react-query'
import { getRouteApi, Link } from '@tanstack/react-router'
import { useId, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { CatalogError } from '../../components/catalog-error'
import { Button, ErrorNotice, Skeleton } from '../../components/ui'
import { formatNumber } from '../../i18n'
import { t } from './messages'
import { aiStatusQuery } from '../ai/queries'
import { BarChart, formatDay, LineChart, percent } from './charts'
import { DAYS, type Days, overviewQuery } from './queries'

const route = getRouteApi('/app/spaces/$space/analytics')
const DEVICE = { desktop: 'analytics.device.desktop', mobile: 'analytics.device.mobile', tablet: 'analytics.device.tablet' } as const
const shareBars = (shares: Record<string, number>, label: (k: string) => string = (k) => k) =>
  Object.entries(shares)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => ({ label: label(k), value: v, text: percent(v) }))

/** The Space's analytics: views over 7, 30 or 90 days, top Stories, referrers, languages, devices, segments; insights where AI is on. */
export function AnalyticsScreen() {
  const { space } = route.useParams()
  const titleId = useId()
  const [days, setDays] = useState<Days>(30)
  const q = useQuery(overviewQuery(space, days))
  const d = q.data
  return (
    <section className="flex flex-col gap-5" aria-labelledby={titleId}>
      <header className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <h1 id={titleId} tabIndex={-1} className="text-xl font-semibold">{t('analytics.title')}</h1>
          <p className="text-sm text-slate-700">{t('analytics.intro')}</p>
        </div>
        <div role="group" aria-label={t('analytics.range')} className="flex gap-2">
          {DAYS.map((n) => (
            <Button key={n} aria-pressed={days === n} tone={days === n ? 'primary' : 'secondary'} onClick={() => setDays(n)}>
              {t('analytics.days', { n })}
            </Button>
          ))}
        </div>
      </header>
      {q.isPending ? <Skeleton lines={6} /> : null}
      {q.error ? <ErrorNotice error={q.error} onRetry={() => q.refetch()} /> : null}
      {d ? (
        <>
          <div className="flex flex-wrap gap-4">
            <Figure label={t('analytics.views', { n: days })} value={formatNumber(d.window.mounts)} testId="views-total" />
            <Figure
              label={t('analytics.change', { n: days })}
              value={d.window.change_pct === null ? t('analytics.noBefore') : `${d.window.change_pct > 0 ? '+' : ''}${formatNumber(d.window.change_pct)} %`}
            />
            <Figure label={t('analytics.last7')} value={formatNumber(d.last_7_days.mounts)} />
          </div>
          <div className="rounded-lg bg-white p-4 ring-1 ring-slate-200" data-testid="views-chart">
            <h2 className="mb-2 text-base font-semibold">{t('analytics.overTime')}</h2>
            <LineChart
              title={t('analytics.lineTitle', { from: formatDay(d.window.from), to: formatDay(d.window.to) })}
              points={d.by_day}
              caption={t('analytics.lineCaption')}
            />
          </div>
          <div className="grid gap-4 md:grid-cols-2">
            <section className="flex flex-col gap-2 rounded-lg bg-white p-4 ring-1 ring-slate-200" aria-labelledby={`${titleId}-top`} data-testid="top-stories">
              <BarChartInline title={t('analytics.topStories')} headingId={`${titleId}-top`} bars={d.top_stories.map((s) => ({ label: s.slug ?? s.story_uuid, value: s.mounts }))} />
              <ol className="list-decimal pl-6 text-sm">
                {d.top_stories.map((s) => (
                  <li key={s.story_uuid}>
                    <Link to="/spaces/$space/stories/$uuid" params={{ space, uuid: s.story_uuid }} search={{}} className="text-indigo-800 underline">
                      {s.slug ?? t('analytics.deletedStory')}
                    </Link>{' '}
                    · {formatNumber(s.mounts)}
                  </li>
                ))}
              </ol>
            </section>
            <BarChart title={t('analytics.referrers')} empty={t('analytics.none')} bars={d.top_referrers.map((r) => ({ label: r.referrer === '(direct)' ? t('analytics.direct') : r.referrer, value: r.mounts }))} testId="referrers" />
            <BarChart title={t('analytics.languages')} empty={t('analytics.none')} bars={shareBars(d.shares.lang)} testId="languages" />
            <BarChart title={t('analytics.devices')} empty={t('analytics.none')} bars={shareBars(d.shares.device, (k) => (k in DEVICE ? t(DEVICE[k as keyof typeof DEVICE]) : k))} testId="devices" />
            <BarChart title={t('analytics.segments')} empty={t('analytics.noSegments')} bars={shareBars(d.shares.segment)} testId="segments" />
          </div>
          <Insights space={space} />
        </>
      ) : null}
    </section>
  )
}

function Figure({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="min-w-40 rounded-lg bg-white px-4 py-3 ring-1 ring-slate-200">
      <div className="text-xs text-slate-600">{label}</div>
      <div className="text-2xl font-semibold" data-testid={testId}>{value}</div>
    </div>
  )
}

/** The top Stories' bars without a box of their own (the list of links sits under them). */
function BarChartInline({ title, headingId, bars }: { title: string; headingId: string; bars: { label: string; value: number }[] }) {
  return (
    <>
      <h2 id={headingId} className="text-base font-semibold">{title}</h2>
      {bars.length === 0 ? <p className="text-sm text-slate-700">{t('analytics.none')}</p> : (
        <svg viewBox={`0 0 400 ${bars.length * 26}`} role="img" aria-label={`${title}: ${bars.map((b) => `${b.label} ${formatNumber(b.value)}`).join(', ')}`} className="h-auto w-full text-indigo-700">
          <title>{title}</title>
          {bars.map((b, i) => (
            <g key={b.label} transform={`translate(0 ${i * 26})`}>
              <rect x={0} y={4} width={Math.max(2, (b.value / Math.max(1, ...bars.map((x) => x.value))) * 240)} height={18} rx={3} fill="currentColor" opacity={0.8} />
              <text x={248} y={17} className="fill-slate-900 text-[12px]">{`${b.label.length > 22 ? `${b.label.slice(0, 21)}…` : b.label} · ${formatNumber(b.value)}`}</text>
            </g>
          ))}
        </svg>
      )}
    </>
  )
}

/** Observations on the last 30 days, offered where AI is on (10 an hour per Space). */
function Insights({ space }: { space: string }) {
  const headingId = useId()
  const status = useQuery(aiStatusQuery(space))
  const ask = useMutation({
    mutationFn: async () => (await unwrap(api.POST('/v1/spaces/{space}/analytics/ai-insights', { params: { path: { space } } }))).data,
  })
  if (!status.data?.enabled) return null
  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-2 rounded-lg bg-white p-4 ring-1 ring-slate-200" data-testid="insights">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id={headingId} className="text-base font-semibold">{t('analytics.insights')}</h2>
        <Button onClick={() => ask.mutate()} disabled={ask.isPending}>{t('analytics.askInsights')}</Button>
      </div>
      <p className="text-xs text-slate-600">{t('analytics.insightsHint')}</p>
      <CatalogError error={ask.error} />
      {ask.data ? (
        <ul className="list-disc pl-6 text-sm" aria-live="polite">
          {ask.data.observations.map((o) => (
            <li key={o}>{o}</li>
          ))}
        </ul>
      ) : null}
    </section>
  )
}
