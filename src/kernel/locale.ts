import { validationFailed } from './errors'

/**
 * BCP-47 language tags, validated and canonicalised by the platform's ICU (Intl.getCanonicalLocales):
 * `de-at` → `de-AT`, `zh-hant-tw` → `zh-Hant-TW`. Returns null for anything that is not a well-formed tag.
 */
export function canonicalLocale(tag: string): string | null {
  if (typeof tag !== 'string' || tag.length === 0 || tag.length > 35 || !/^[A-Za-z0-9-]+$/.test(tag)) return null
  try {
    const [c] = Intl.getCanonicalLocales(tag)
    return c ?? null
  } catch {
    return null
  }
}

/** The language subtag of a canonical tag: de-AT → de, zh-Hant-TW → zh. */
export const languageOf = (tag: string) => {
  const i = tag.indexOf('-')
  return i === -1 ? tag : tag.slice(0, i)
}

/** What locale negotiation needs of a Space: its locales in order, explicit fallbacks, its default. */
export interface LocaleSettings {
  codes: string[]
  fallbacks: Map<string, string>
  defaultLang: string
}

/**
 * Locale chain: the requested tag; its explicit fallback; its language subtag; the Space default. Only the Space's
 * locales take part. Without `lang`, the best Accept-Language match stands in for the requested tag.
 */
export function localeChain(space: LocaleSettings, requested: string | null): string[] {
  const chain: string[] = []
  const add = (c: string | null | undefined) => {
    if (c && space.codes.includes(c) && !chain.includes(c)) chain.push(c)
  }
  if (requested) {
    add(requested)
    add(space.fallbacks.get(requested))
    add(languageOf(requested))
  }
  add(space.defaultLang)
  return chain
}

/** RFC 4647 lookup over an Accept-Language header: highest q first, then truncating each range. */
export function bestAcceptLanguage(header: string, codes: string[]): string | null {
  const ranges: { tag: string; q: number; i: number }[] = []
  const parts = header.split(',')
  for (let i = 0; i < parts.length && i < 32; i++) {
    const [rawTag, ...params] = parts[i].trim().split(';')
    let q = 1
    for (const p of params) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(p)
      if (m) q = Number(m[1])
    }
    const tag = rawTag.trim()
    if (q > 0 && tag && tag !== '*') ranges.push({ tag, q, i })
  }
  ranges.sort((a, b) => b.q - a.q || a.i - b.i)
  for (const r of ranges) {
    const c = canonicalLocale(r.tag)
    if (!c) continue
    for (let t = c; t; t = t.includes('-') ? t.slice(0, t.lastIndexOf('-')) : '') if (codes.includes(t)) return t
    // A bare language range ("de") also accepts a regional locale ("de-AT").
    const regional = codes.find((code) => languageOf(code) === c)
    if (regional) return regional
  }
  return null
}

/**
 * `?lang` of a public read — one rule for every route that takes it (Stories, the Story list, products, events,
 * galleries, the overlay, segments): absent (undefined or null) → undefined; a BCP-47 tag → its canonical form; anything
 * else (`!!`, empty) → 422 `validation_failed` naming `lang`, never a silent fallback to the default locale.
 */
export function langParam(lang: string | undefined | null): string | undefined {
  if (lang === undefined || lang === null) return undefined
  const c = canonicalLocale(lang)
  if (!c) throw validationFailed({ lang: [`"${String(lang).slice(0, 40)}" is not a valid BCP-47 language tag.`] })
  return c
}

/** The locale a public read asks for: `?lang` (see `langParam`), else the best Accept-Language match, else null. */
export function requestedLocale(lang: string | undefined | null, acceptLanguage: string | null, codes: string[]): string | null {
  const c = langParam(lang)
  if (c !== undefined) return c
  return acceptLanguage ? bestAcceptLanguage(acceptLanguage, codes) : null
}

/** The locale chain of a public read (`requestedLocale`, then `localeChain`). */
export function publicLocaleChain(space: LocaleSettings, lang: string | undefined | null, acceptLanguage: string | null): string[] {
  return localeChain(space, requestedLocale(lang, acceptLanguage, space.codes))
}

/** Chains memoised per Space; past it the Space's memo is dropped and filled anew. */
const MAX_CHAINS_PER_SPACE = 512

/**
 * The locale chain of a public read in a live Space (`publicLocaleChain`), memoised on the Space object by `?lang` or
 * Accept-Language — the one place every public read (Stories, lists, GraphQL, the overlay, galleries, products,
 * events) gets its chain. A malformed `lang` throws (422) and is never memoised.
 */
export function spaceLocaleChain(space: LocaleSettings & { chains: Map<string, string[]> }, lang: string | undefined | null, acceptLanguage: string | null): string[] {
  const key = lang !== undefined && lang !== null ? `?${lang}` : (acceptLanguage ?? '')
  const known = space.chains.get(key)
  if (known) return known
  const chain = publicLocaleChain(space, lang, acceptLanguage)
  if (space.chains.size >= MAX_CHAINS_PER_SPACE) space.chains.clear()
  space.chains.set(key, chain)
  return chain
}
