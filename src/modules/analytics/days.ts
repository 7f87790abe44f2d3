/** UTC calendar days as `YYYY-MM-DD` text, the unit of every analytics query. */

export const DAY_MS = 86_400_000
const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/

/** The UTC day of an instant. */
export const dayOf = (d: Date | number): string => new Date(typeof d === 'number' ? d : d.getTime()).toISOString().slice(0, 10)

/** Midnight UTC of a day, in epoch ms; NaN for text that is not a real calendar day. */
export function dayStart(day: string): number {
  const m = DAY_RE.exec(day)
  if (!m) return Number.NaN
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))
  return dayOf(ms) === day ? ms : Number.NaN
}

export const isDay = (day: string) => !Number.isNaN(dayStart(day))
export const addDays = (day: string, n: number) => dayOf(dayStart(day) + n * DAY_MS)
/** Days from `a` to `b` (b − a). */
export const daysBetween = (a: string, b: string) => Math.round((dayStart(b) - dayStart(a)) / DAY_MS)
export const isoStart = (day: string) => new Date(dayStart(day)).toISOString()

/** Every day from `from` to `to`, both included. */
export function daysFrom(from: string, to: string): string[] {
  const out: string[] = []
  for (let ms = dayStart(from), end = dayStart(to); ms <= end; ms += DAY_MS) out.push(dayOf(ms))
  return out
}

export type Granularity = 'day' | 'week' | 'month'

/** The first day of the bucket holding `day`: itself, its ISO week's Monday, or the first of its month. */
export function bucketOf(day: string, g: Granularity): string {
  if (g === 'day') return day
  if (g === 'month') return `${day.slice(0, 8)}01`
  const ms = dayStart(day)
  const weekday = (new Date(ms).getUTCDay() + 6) % 7 // Monday 0 … Sunday 6
  return dayOf(ms - weekday * DAY_MS)
}
