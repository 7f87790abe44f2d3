import type { Block } from '../../../fields/types'

/** A Story's content as the editor holds it. */
export interface Doc {
  type: 'doc'
  blocks: Block[]
}

export const asDoc = (content: unknown): Doc => {
  const c = content as Partial<Doc> | null | undefined
  return { type: 'doc', blocks: Array.isArray(c?.blocks) ? (c.blocks as Block[]) : [] }
}

/** No errors (a stable object: the read-only fallback form). */
export const NO_ERRORS: Record<string, string[]> = {}

/** The `_uid` → path of every block of a document (comments anchor by the saved draft's paths). */
export function blockPaths(doc: Doc | null): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (blocks: unknown, prefix: string) => {
    if (!Array.isArray(blocks)) return
    blocks.forEach((b, i) => {
      if (!b || typeof b !== 'object' || typeof (b as Block)._uid !== 'string') return
      const path = `${prefix}/${i}`
      out.set((b as Block)._uid, path)
      for (const [k, v] of Object.entries(b)) if (Array.isArray(v)) walk(v, `${path}/${k}`)
    })
  }
  walk(doc?.blocks, 'blocks')
  return out
}

/**
 * The locales a reader of `lang` gets, in order: the tag, its explicit fallback, its language subtag, the Space
 * default (as the public read resolves them); the Story's own locale is the last resort.
 */
export function localeChain(lang: string, locales: { code: string; fallback: string | null; is_default: boolean }[], own: string): string[] {
  const codes = new Set(locales.map((l) => l.code))
  const chain: string[] = []
  const add = (c: string | null | undefined) => {
    if (c && codes.has(c) && !chain.includes(c)) chain.push(c)
  }
  add(lang)
  add(locales.find((l) => l.code === lang)?.fallback)
  add(lang.split('-')[0])
  add(locales.find((l) => l.is_default)?.code)
  if (!chain.includes(own)) chain.push(own)
  return chain
}

/** The public (CDN) URL of a published Story. */
export const publicUrl = (space: string, fullPath: string) => `${location.origin}/v1/cdn/${encodeURIComponent(space)}/stories${fullPath}`
