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
