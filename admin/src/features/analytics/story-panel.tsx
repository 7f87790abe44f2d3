import { useQuery } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { ErrorNotice, Skeleton } from '../../components/ui'
import { formatNumber } from '../../i18n'
import { t } from './messages'
import { BarChart, Sparkline } from './charts'
import { storyAnalyticsQuery } from './queries'

const bars = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([label, value]) => ({ label, value }))

/** A Story's views in the editor: a sparkline of the last days, and the views by language and by segment. */
export function StoryAnalyticsPanel({ space, uuid }: { space: string; uuid: string }) {
  const headingId = useId()
  const selectId = useId()
  const [days, setDays] = useState(30)
  const q = useQuery(storyAnalyticsQuery(space, uuid, days))
  return (
    <details className="rounded-lg bg-white p-3 ring-1 ring-slate-200" data-testid="story-analytics">
      <summary className="cursor-pointer text-sm font-semibold" id={headingId}>{t('analytics.story')}</summary>
      <div className="mt-2 flex flex-col gap-3">
        <div className="flex items-center gap-2">
          <label htmlFor={selectId} className="text-sm">{t('analytics.range')}</label>
          <select id={selectId} className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm" value={days} onChange={(e) => setDays(Number(e.target.value))}>
            {[7, 30, 90].map((n) => (
              <option key={n} value={n}>{t('analytics.days', { n })}</option>
            ))}
          </select>
        </div>
        {q.isPending ? <Skeleton lines={2} /> : null}
        {q.error ? <ErrorNotice error={q.error} onRetry={() => q.refetch()} /> : null}
        {q.data ? (
          <>
            <div className="flex items-center gap-3">
              <Sparkline title={t('analytics.sparkTitle', { n: days, total: formatNumber(q.data.mounts) })} points={q.data.sparkline.points} />
              <span className="text-sm" data-testid="story-views">{t('analytics.storyViews', { n: formatNumber(q.data.mounts) })}</span>
            </div>
            <BarChart title={t('analytics.byLanguage')} empty={t('analytics.none')} bars={bars(q.data.by_lang)} />
            <BarChart title={t('analytics.bySegment')} empty={t('analytics.noSegments')} bars={bars(q.data.by_segment)} />
          </>
        ) : null}
      </div>
    </details>
  )
}
