import { useId } from 'react'
import { formatNumber, language } from '../../i18n'
import { t } from './messages'

/**
 * Hand-written SVG charts (no chart library): each is an `<svg role="img">` named by its `<title>` and described by a
 * `<desc>` with the figures in words, followed by the same numbers as a table for screen readers (visually hidden).
 * Colours come from `currentColor` and the theme's tokens, so both themes work.
 */

/** A UTC day (YYYY-MM-DD) in the UI's language, the same day wherever the browser is. */
export function formatDay(day: string | undefined): string {
  if (!day) return ''
  return new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(`${day}T00:00:00Z`))
}

export interface Point {
  date: string
  mounts: number
}

const W = 640
const H = 200
const PAD = { l: 40, r: 8, t: 10, b: 24 }

/** Views over time: a line with its area, y ticks at 0, half and the maximum, the first and last day as x labels. */
export function LineChart({ title, points, caption }: { title: string; points: Point[]; caption: string }) {
  const id = useId()
  const max = Math.max(1, ...points.map((p) => p.mounts))
  const iw = W - PAD.l - PAD.r
  const ih = H - PAD.t - PAD.b
  const x = (i: number) => PAD.l + (points.length <= 1 ? iw / 2 : (i / (points.length - 1)) * iw)
  const y = (v: number) => PAD.t + ih - (v / max) * ih
  const line = points.map((p, i) => `${x(i).toFixed(1)},${y(p.mounts).toFixed(1)}`).join(' ')
  const area = points.length ? `${x(0).toFixed(1)},${y(0)} ${line} ${x(points.length - 1).toFixed(1)},${y(0)}` : ''
  const total = points.reduce((s, p) => s + p.mounts, 0)
  const peak = points.reduce<Point | null>((best, p) => (!best || p.mounts > best.mounts ? p : best), null)
  const desc = t('analytics.lineDesc', {
    total: formatNumber(total),
    from: formatDay(points[0]?.date),
    to: formatDay(points.at(-1)?.date),
    peak: formatNumber(peak?.mounts ?? 0),
    day: formatDay(peak?.date),
  })
  return (
    <figure className="flex flex-col gap-2">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${id}-t ${id}-d`} className="h-auto w-full text-indigo-700" data-chart="line">
        <title id={`${id}-t`}>{title}</title>
        <desc id={`${id}-d`}>{desc}</desc>
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line x1={PAD.l} x2={W - PAD.r} y1={y(max * f)} y2={y(max * f)} className="stroke-slate-200" strokeWidth={1} />
            <text x={PAD.l - 6} y={y(max * f) + 4} textAnchor="end" className="fill-slate-600 text-[11px]">
              {formatNumber(Math.round(max * f))}
            </text>
          </g>
        ))}
        {area ? <polygon points={area} fill="currentColor" opacity={0.12} /> : null}
        {line ? <polyline points={line} fill="none" stroke="currentColor" strokeWidth={2} strokeLinejoin="round" /> : null}
        {points.length <= 31
          ? points.map((p, i) => <circle key={p.date} cx={x(i)} cy={y(p.mounts)} r={2.5} fill="currentColor" />)
          : null}
        {points.length ? (
          <>
            <text x={PAD.l} y={H - 6} className="fill-slate-600 text-[11px]">{formatDay(points[0]!.date)}</text>
            <text x={W - PAD.r} y={H - 6} textAnchor="end" className="fill-slate-600 text-[11px]">{formatDay(points.at(-1)!.date)}</text>
          </>
        ) : null}
      </svg>
      <figcaption className="text-xs text-slate-600">{caption}</figcaption>
      <table className="sr-only">
        <caption>{title}</caption>
        <thead>
          <tr>
            <th scope="col">{t('analytics.col.day')}</th>
            <th scope="col">{t('analytics.col.views')}</th>
          </tr>
        </thead>
        <tbody>
          {points.map((p) => (
            <tr key={p.date}>
              <th scope="row">{formatDay(p.date)}</th>
              <td>{formatNumber(p.mounts)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  )
}

export interface Bar {
  label: string
  value: number
  /** Shown instead of the value (e.g. a share as a percentage). */
  text?: string
}

/** Horizontal bars, one row each: an SVG named by its title, and the rows as a table for screen readers. */
export function BarChart({ title, bars, empty, testId }: { title: string; bars: Bar[]; empty: string; testId?: string }) {
  const id = useId()
  const max = Math.max(1, ...bars.map((b) => b.value))
  const row = 26
  const h = bars.length * row
  return (
    <section aria-labelledby={`${id}-h`} className="flex flex-col gap-2 rounded-lg bg-white p-4 ring-1 ring-slate-200" data-testid={testId}>
      <h2 id={`${id}-h`} className="text-base font-semibold">{title}</h2>
      {bars.length === 0 ? (
        <p className="text-sm text-slate-700">{empty}</p>
      ) : (
        <>
          <svg viewBox={`0 0 400 ${h}`} role="img" aria-labelledby={`${id}-t`} className="h-auto w-full text-indigo-700">
            <title id={`${id}-t`}>{`${title}: ${bars.map((b) => `${b.label} ${b.text ?? formatNumber(b.value)}`).join(', ')}`}</title>
            {bars.map((b, i) => (
              <g key={b.label} transform={`translate(0 ${i * row})`}>
                <rect x={0} y={4} width={Math.max(2, (b.value / max) * 240)} height={row - 8} rx={3} fill="currentColor" opacity={0.8} />
                <text x={248} y={row / 2 + 4} className="fill-slate-900 text-[12px]">
                  {`${b.label.length > 22 ? `${b.label.slice(0, 21)}…` : b.label} · ${b.text ?? formatNumber(b.value)}`}
                </text>
              </g>
            ))}
          </svg>
          <table className="sr-only">
            <caption>{title}</caption>
            <tbody>
              {bars.map((b) => (
                <tr key={b.label}>
                  <th scope="row">{b.label}</th>
                  <td>{b.text ?? formatNumber(b.value)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  )
}

/** A small line of daily numbers (a Story's last days), named by its title. */
export function Sparkline({ title, points }: { title: string; points: number[] }) {
  const id = useId()
  const max = Math.max(1, ...points)
  const pts = points.map((v, i) => `${(points.length <= 1 ? 60 : (i / (points.length - 1)) * 118 + 1).toFixed(1)},${(23 - (v / max) * 22).toFixed(1)}`).join(' ')
  return (
    <svg viewBox="0 0 120 24" role="img" aria-labelledby={`${id}-t`} className="h-8 w-40 text-indigo-700" data-chart="sparkline">
      <title id={`${id}-t`}>{title}</title>
      <polyline points={pts} fill="none" stroke="currentColor" strokeWidth={1.5} />
    </svg>
  )
}

/** A share (0..1) as a percentage in the UI's language. */
export const percent = (share: number) => formatNumber(share, { style: 'percent', maximumFractionDigits: 1 })
