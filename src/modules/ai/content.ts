import type { Block, Blueprint, Doc } from '../stories/blocks'

/**
 * Story content as the AI actions see it: the translatable text of each block (fields of type text, textarea,
 * richtext and markdown that the blueprint does not mark `translatable: false`), and the way back. Everything else
 * — `_uid`s, component names, structure, numbers, selects, asset and link fields — is never sent and never changed.
 * `$ds:` markers inside text are swapped for numbered placeholders before the text leaves, and put back after.
 */

export const TRANSLATABLE = new Set(['text', 'textarea', 'richtext', 'markdown'])
const MARKER = /\$\$ds:|\$ds:[a-z][a-z0-9_]*\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*/g

/** One text of a block: where it sits and its value. */
export interface TextSlot {
  key: string
  get(): string
  set(value: string): void
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Text nodes of a rich-text tree ({type: 'doc', content: [...]}), in document order. */
function richTextNodes(node: unknown, out: Record<string, unknown>[] = [], depth = 0): Record<string, unknown>[] {
  if (depth > 64 || !isObj(node)) return out
  if (node.type === 'text' && typeof node.text === 'string') out.push(node)
  if (Array.isArray(node.content)) for (const c of node.content) richTextNodes(c, out, depth + 1)
  return out
}

/** Every block of the document, nested ones included (depth first, in order). */
export function allBlocks(doc: Doc, blueprints: Map<string, Blueprint>): Block[] {
  const out: Block[] = []
  const walk = (blocks: unknown, depth: number) => {
    if (!Array.isArray(blocks) || depth > 16) return
    for (const b of blocks) {
      if (!isObj(b)) continue
      out.push(b as Block)
      const bp = blueprints.get(String(b.component))
      if (!bp) continue
      for (const [name, def] of Object.entries(bp.schema)) if (def.type === 'blocks') walk(b[name], depth + 1)
    }
  }
  walk(doc.blocks, 0)
  return out
}

/** The translatable texts of one block (its own fields, not those of nested blocks). */
export function textSlots(block: Block, blueprints: Map<string, Blueprint>): TextSlot[] {
  const bp = blueprints.get(block.component)
  if (!bp) return []
  const slots: TextSlot[] = []
  for (const [name, def] of Object.entries(bp.schema)) {
    if (!TRANSLATABLE.has(def.type) || def.translatable === false) continue
    const v = block[name]
    if (typeof v === 'string') {
      if (v.trim()) slots.push({ key: name, get: () => block[name] as string, set: (x) => void (block[name] = x) })
    } else if (def.type === 'richtext' && isObj(v)) {
      richTextNodes(v).forEach((node, i) => {
        if ((node.text as string).trim()) slots.push({ key: `${name}.${i}`, get: () => node.text as string, set: (x) => void (node.text = x) })
      })
    }
  }
  return slots
}

/** Text with its `$ds:` markers replaced by ⟦0⟧, ⟦1⟧, …; `restore` puts them back, or null when the model lost one. */
export function protectMarkers(text: string): { text: string; restore(translated: string): string | null } {
  const markers: string[] = []
  const out = text.replace(MARKER, (m) => `⟦${markers.push(m) - 1}⟧`)
  return {
    text: out,
    restore(translated) {
      for (let i = 0; i < markers.length; i++) {
        if (translated.split(`⟦${i}⟧`).length !== 2) return null
      }
      if (/⟦\d+⟧/.test(translated.replace(/⟦(\d+)⟧/g, (m, n) => (Number(n) < markers.length ? '' : m)))) return null
      return translated.replace(/⟦(\d+)⟧/g, (_, n) => markers[Number(n)])
    },
  }
}

/** Plain text of a document for prompts and statistics: every translatable text, in order. */
export function plainText(doc: Doc, blueprints: Map<string, Blueprint>, max = 12_000): string {
  const parts: string[] = []
  let size = 0
  for (const b of allBlocks(doc, blueprints)) {
    for (const s of textSlots(b, blueprints)) {
      const v = s.get().replace(MARKER, '').trim()
      if (!v) continue
      parts.push(v)
      size += v.length
      if (size > max) return parts.join('\n').slice(0, max)
    }
  }
  return parts.join('\n')
}

/** Cuts text to at most `max` characters at a word boundary (an ellipsis is not added: meta text reads better whole). */
export function cutAtWord(text: string, max: number): string {
  const clean = text.replace(/\s+/g, ' ').trim()
  if (clean.length <= max) return clean
  const cut = clean.slice(0, max + 1)
  const space = cut.lastIndexOf(' ')
  const out = (space > 0 ? cut.slice(0, space) : clean.slice(0, max)).replace(/[\s,;:–-]+$/, '')
  return out
}

/**
 * Content passed to the model as data, never as instructions: JSON inside a fixed delimiter, with `<` escaped so
 * the text cannot close the delimiter itself.
 */
export function asData(value: unknown): string {
  return `<data>\n${JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e')}\n</data>`
}

/** The first JSON value in a model's answer (code fences and chatter around it ignored), or undefined. */
export function parseJsonAnswer(text: string): unknown {
  const t = text.replace(/```(?:json)?/gi, '').trim()
  // The value that starts first: a one-element list `[{…}]` is a list, not the object inside it.
  const at = (c: string) => (t.includes(c) ? t.indexOf(c) : Number.POSITIVE_INFINITY)
  const pairs = [
    ['{', '}'],
    ['[', ']'],
  ] as const
  for (const [open, close] of [...pairs].sort((x, y) => at(x[0]) - at(y[0]))) {
    const a = t.indexOf(open)
    const b = t.lastIndexOf(close)
    if (a >= 0 && b > a) {
      try {
        return JSON.parse(t.slice(a, b + 1))
      } catch {}
    }
  }
  return undefined
}

/** Words for statistics and search queries: letters only, folded, 4+ characters, by frequency. */
export function keywords(text: string, n: number): string[] {
  const counts = new Map<string, number>()
  for (const w of text.toLowerCase().match(/\p{L}{4,}/gu) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1)
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, n)
    .map(([w]) => w)
}
