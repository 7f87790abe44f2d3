import { ApiFailure } from '../api/client'
import { de } from './de'
import { en, type MessageKey } from './en'

export type { MessageKey } from './en'
export type Language = 'en' | 'de'

const CATALOGS: Record<Language, Record<MessageKey, string>> = { en, de }

/** The UI language: the browser's first preferred language the app has a catalog for, else English. */
function detect(): Language {
  const wanted = typeof navigator === 'undefined' ? [] : navigator.languages?.length ? navigator.languages : [navigator.language]
  for (const tag of wanted) {
    const base = String(tag).toLowerCase().split('-')[0]
    if (base === 'de' || base === 'en') return base
  }
  return 'en'
}

export const language: Language = detect()
if (typeof document !== 'undefined') document.documentElement.lang = language

/** The message `key` in the UI's language, `{name}` placeholders filled from `values`. */
export function t(key: MessageKey, values?: Record<string, string | number>): string {
  const text = CATALOGS[language][key] ?? en[key]
  return values ? text.replace(/\{(\w+)\}/g, (m, name: string) => (name in values ? String(values[name]) : m)) : text
}

/** A date and time in the UI's language (Intl). */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return ''
  return new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso))
}

/** A number in the UI's language (Intl). */
export const formatNumber = (n: number) => new Intl.NumberFormat(language).format(n)

/** A size in bytes as the UI's language writes it (kB, MB, GB: powers of 1000). */
export function formatBytes(n: number): string {
  const units = ['byte', 'kilobyte', 'megabyte', 'gigabyte', 'terabyte'] as const
  let i = 0
  let v = n
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000
    i++
  }
  return new Intl.NumberFormat(language, { style: 'unit', unit: units[i], unitDisplay: 'short', maximumFractionDigits: 1 }).format(v)
}

/** The role's name in the UI's language. */
export const roleName = (role: string) => (role === 'viewer' || role === 'editor' || role === 'admin' ? t(`roles.${role}`) : role)

/**
 * What the person reads for a failure: the catalog's sentence for the API's error code when there is one, else the
 * server's own message (English).
 */
export function errorText(error: unknown): string {
  if (error instanceof ApiFailure) {
    const key = `error.${error.body.error}` as MessageKey
    return key in en ? t(key) : error.message
  }
  return error instanceof Error ? error.message : String(error)
}
