import { fieldErrors, language, type MessageKey, t as shellT } from '.'

/**
 * A screen's own message catalog, loaded with its chunk instead of the first load: `en` holds the keys with their
 * English texts, `de` every one of them in German (typed, so a missing text fails the type check). The returned `t`
 * reads the screen's keys in the UI's language and any shell key (`common.cancel`) from the main catalogs, and
 * `fieldErrors` turns a 422's fields into the screen's sentences. test/admin/i18n.test.ts and the German walk read
 * these catalogs too (every `features/<feature>/messages.ts`).
 */
export function featureMessages<K extends string>(en: Record<K, string>, de: Record<K, string>) {
  const table: Record<K, string> = language === 'de' ? de : en
  const fill = (text: string, values?: Record<string, string | number>) =>
    values ? text.replace(/\{(\w+)\}/g, (m, name: string) => (name in values ? String(values[name]) : m)) : text
  const t = (key: K | MessageKey, values?: Record<string, string | number>): string =>
    key in table ? fill(table[key as K] ?? en[key as K], values) : shellT(key as MessageKey, values)
  return {
    t,
    /** The API's 422 `errors` by field: a field with a sentence here shows it, any other the server's own words. */
    fieldErrors: (error: unknown, sentences: Partial<Record<string, K>>): Record<string, string[]> => {
      const out = fieldErrors(error, {})
      for (const field of Object.keys(out)) {
        const key = sentences[field]
        if (key) out[field] = [t(key)]
      }
      return out
    },
  }
}
