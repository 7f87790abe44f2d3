import type { MessageKey } from './messages'
import { formatDateTime, language } from '../../i18n'
import { t } from './messages'

/**
 * A pull's `last_error` (the server writes it in English, e.g. "the source answered 500") as a sentence in the UI's
 * language; a reason this list does not know is shown as the server wrote it.
 */
export function lastErrorText(error: string | null): string {
  if (!error) return ''
  const rules: [RegExp, MessageKey, (m: RegExpExecArray) => Record<string, string>][] = [
    [/^the source answered (\d{3}) \(redirects/, 'ds.err.redirect', (m) => ({ status: m[1]! })],
    [/^the source answered (\d{3})/, 'ds.err.status', (m) => ({ status: m[1]! })],
    [/^the response body is not valid JSON/, 'ds.err.json', () => ({})],
    [/^the response body is larger than (\d+) MB/, 'ds.err.tooLarge', (m) => ({ mb: m[1]! })],
    [/^the JSONPath (.*) matched nothing$/, 'ds.err.noMatch', (m) => ({ path: m[1]! })],
    [/^connection_failed: could not connect to (\S+?)(?: \(([A-Z0-9_]+)\))?$/, 'ds.err.connect', (m) => ({ host: m[1]!, code: m[2] ? ` (${m[2]})` : '' })],
    [/^blocked_address: the host (\S+)/, 'ds.err.blocked', (m) => ({ host: m[1]! })],
    [/^dns_failed: the host (\S+) does not resolve/, 'ds.err.dns', (m) => ({ host: m[1]! })],
    [/^timeout: /, 'ds.err.timeout', () => ({})],
  ]
  for (const [re, key, values] of rules) {
    const m = re.exec(error)
    if (m) return t(key, values(m))
  }
  return error
}

/** "in 3 hours" / "vor 2 Minuten": how far a time is from now, in the UI's language. */
export function relativeTime(iso: string, now = Date.now()): string {
  const diff = (Date.parse(iso) - now) / 1000
  const steps: [Intl.RelativeTimeFormatUnit, number][] = [
    ['second', 60],
    ['minute', 60],
    ['hour', 24],
    ['day', 30],
    ['month', 12],
  ]
  let v = diff
  for (const [unit, size] of steps) {
    if (Math.abs(v) < size) return new Intl.RelativeTimeFormat(language, { numeric: 'auto' }).format(Math.round(v), unit)
    v /= size
  }
  return new Intl.RelativeTimeFormat(language, { numeric: 'auto' }).format(Math.round(v), 'year')
}

/** A run time in words: the date and time, and how far off it is. */
export const runInWords = (iso: string) => `${formatDateTime(iso)} (${relativeTime(iso)})`
