import { language } from '../i18n'
import type { FieldDef } from './types'

/** A per-locale text of a blueprint field in the UI's language: that locale, its language, English, else any. */
function pick(texts: Record<string, string> | undefined): string | undefined {
  if (!texts) return undefined
  const entries = Object.entries(texts).filter(([, v]) => v.trim() !== '')
  if (!entries.length) return undefined
  const base = (code: string) => code.toLowerCase().split('-')[0]
  return (
    entries.find(([k]) => k.toLowerCase() === language)?.[1] ??
    entries.find(([k]) => base(k) === language)?.[1] ??
    entries.find(([k]) => base(k) === 'en')?.[1] ??
    entries[0][1]
  )
}

/** What the editor shows for a field: its label in the UI's language, else its key. */
export const fieldLabel = (def: FieldDef, key: string): string => pick(def.label) ?? key

/** The field's help text in the UI's language, if it has one. */
export const fieldHelp = (def: FieldDef): string | undefined => pick(def.help)
