import { ApiFailure } from '../api/client'
import { de } from './de'
import { en, type MessageKey } from './en'

export type { MessageKey } from './en'
export type Language = 'en' | 'de'

const CATALOGS: Record<Language, Record<MessageKey, string>> = { en, de }

const LANGUAGE_KEY = 'content-service.language'
const catalogOf = (tag: string | null | undefined): Language | undefined => {
  const base = String(tag ?? '').toLowerCase().split('-')[0]
  return base === 'de' || base === 'en' ? base : undefined
}

/**
 * The UI language: the one chosen in the user's profile (remembered in this browser once the profile was read),
 * else the browser's first preferred language the app has a catalog for, else English.
 */
function detect(): Language {
  const chosen = typeof localStorage === 'undefined' ? undefined : catalogOf(localStorage.getItem(LANGUAGE_KEY))
  if (chosen) return chosen
  const wanted = typeof navigator === 'undefined' ? [] : navigator.languages?.length ? navigator.languages : [navigator.language]
  for (const tag of wanted) {
    const found = catalogOf(String(tag))
    if (found) return found
  }
  return 'en'
}

/** The languages with a catalog, each named in its own language (the profile's choice). */
export const LANGUAGES: { code: Language; name: string }[] = [
  { code: 'en', name: 'English' },
  { code: 'de', name: 'Deutsch' },
]

/**
 * The profile's language (`ui_language`, null: the browser's) becomes this browser's: answers whether the UI's
 * language changes, in which case the caller reloads the page (every screen reads its text once).
 */
export function adoptLanguage(tag: string | null): boolean {
  if (typeof localStorage === 'undefined') return false
  const wanted = catalogOf(tag)
  if (wanted) localStorage.setItem(LANGUAGE_KEY, wanted)
  else localStorage.removeItem(LANGUAGE_KEY)
  return detect() !== language
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
export function formatNumber(n: number, options?: Intl.NumberFormatOptions): string {
  return new Intl.NumberFormat(language, options).format(n)
}

/** A date without the time, in the UI's language (Intl). */
export function formatDate(iso: string | null | undefined): string {
  if (!iso) return ''
  return new Intl.DateTimeFormat(language, { dateStyle: 'medium' }).format(new Date(iso))
}

/**
 * The API's 422 `errors` (keyed by field, in English) as sentences in the UI's language: a field with a catalog
 * sentence in `sentences` shows that, any other the server's own words.
 */
export function fieldErrors(error: unknown, sentences: Partial<Record<string, MessageKey>>): Record<string, string[]> {
  if (!(error instanceof ApiFailure) || !error.body.errors) return {}
  const out: Record<string, string[]> = {}
  for (const [field, messages] of Object.entries(error.body.errors)) {
    const key = sentences[field]
    out[field] = key ? [t(key)] : messages
  }
  return out
}

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
