// What the search index sees of a Story: the text of its published snapshot cut into the searchable fields, and the
// one normalisation (case, diacritics, apostrophes, word splitting) applied to documents and queries alike.
import { stopwords as danish } from '@orama/stopwords/danish'
import { stopwords as dutch } from '@orama/stopwords/dutch'
import { stopwords as english } from '@orama/stopwords/english'
import { stopwords as finnish } from '@orama/stopwords/finnish'
import { stopwords as french } from '@orama/stopwords/french'
import { stopwords as german } from '@orama/stopwords/german'
import { stopwords as italian } from '@orama/stopwords/italian'
import { stopwords as norwegian } from '@orama/stopwords/norwegian'
import { stopwords as portuguese } from '@orama/stopwords/portuguese'
import { stopwords as spanish } from '@orama/stopwords/spanish'
import { stopwords as swedish } from '@orama/stopwords/swedish'
import type { Blueprint } from '../stories/blocks'

/** The searchable fields, by descending weight (spec 4.4). */
export const SEARCH_FIELDS = ['headline', 'lead', 'body_text', 'tags', 'slug', 'full_path'] as const
export type SearchField = (typeof SEARCH_FIELDS)[number]

/** Where the hit's `headline` comes from: the first of these text fields (breadth first), else the Story name. */
export const HEADLINE_KEYS = ['headline', 'title'] as const
/** Where the hit's `lead` comes from: the first of these text fields (breadth first), else null. */
export const LEAD_KEYS = ['lead', 'intro', 'teaser', 'summary'] as const

/** Longer "words" (hashes, URLs glued together, base64) are not words anyone types; they stay out of the index. */
export const MAX_WORD_LENGTH = 40
/** Text read per field of one Story; a body beyond it is not indexed (keeps one huge page from dominating memory). */
export const MAX_FIELD_CHARS = 100_000
const MAX_HEADLINE_CHARS = 300
const MAX_LEAD_CHARS = 1000

const NON_ASCII = /[^\x00-\x7f]/
const MARKS = /\p{M}+/gu
const APOSTROPHES = /['\u2019\u02bc]/g
const SPLIT = /[^\p{L}\p{N}]+/u

/** Lower case, diacritics removed (é → e, ü → u), apostrophes dropped (don't → dont). */
export function foldText(text: string): string {
  let t = text.toLowerCase()
  if (NON_ASCII.test(t)) t = t.normalize('NFD').replace(MARKS, '')
  return t.replace(APOSTROPHES, '')
}

/** The words of a text after folding, in order, duplicates kept. */
export function wordsOf(text: string): string[] {
  const out: string[] = []
  for (const w of foldText(text).split(SPLIT)) if (w.length > 0 && w.length <= MAX_WORD_LENGTH) out.push(w)
  return out
}

/** The distinct words of a text, space-joined: the form stored in the index (its tokenizer only splits on spaces). */
export function tokenString(text: string, stop?: ReadonlySet<string>): string {
  const seen = new Set<string>()
  for (const w of wordsOf(text)) if (!stop?.has(w)) seen.add(w)
  return [...seen].join(' ')
}

const STOP_SOURCES: Record<string, readonly string[]> = {
  da: danish,
  de: german,
  en: english,
  es: spanish,
  fi: finnish,
  fr: french,
  it: italian,
  nb: norwegian,
  nl: dutch,
  nn: norwegian,
  no: norwegian,
  pt: portuguese,
  sv: swedish,
}
const stopCache = new Map<string, ReadonlySet<string>>()
const NO_STOP_WORDS: ReadonlySet<string> = new Set()

/** Stop words of a locale's language (folded like indexed words); empty for languages without a list. */
export function stopWordsFor(locale: string): ReadonlySet<string> {
  const language = locale.split('-')[0].toLowerCase()
  const source = STOP_SOURCES[language]
  if (!source) return NO_STOP_WORDS
  let set = stopCache.get(language)
  if (!set) {
    const s = new Set<string>()
    for (const w of source) for (const f of wordsOf(w)) s.add(f)
    stopCache.set(language, (set = s))
  }
  return set
}

// ---- Markup ----

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  shy: '',
  szlig: 'ß',
  aelig: 'æ',
  oslash: 'ø',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
}
// Accented letters by their entity names (&eacute; &Uuml; &ccedil; ...): the base letter is all the index keeps.
const ACCENTS: Record<string, string> = { acute: '\u0301', grave: '\u0300', circ: '\u0302', uml: '\u0308', tilde: '\u0303', ring: '\u030a', cedil: '\u0327' }

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,8});/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10)
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : ' '
    }
    const named = ENTITIES[e.toLowerCase()]
    if (named !== undefined) return named
    const accent = /^([a-z])(acute|grave|circ|uml|tilde|ring|cedil)$/i.exec(e)
    return accent ? (accent[1] + ACCENTS[accent[2].toLowerCase()]).normalize('NFC') : m
  })
}

/**
 * Datasource markers (issue 11): `$ds:<key>.<accessor>` stands for a value filled in at read time — key
 * `[a-z][a-z0-9_]*`, accessor one or more dot-separated segments of `[A-Za-z0-9_-]` — and is not text of the Story;
 * `$$ds:` is the escape for a literal `$ds:`. One left-to-right pass, so an escape is never read as a marker.
 */
const DS_MARKER = /\$\$ds:|\$ds:[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_-]+)+/g

/** Text without datasource markers (an escaped `$$ds:` becomes the literal `$ds:`). */
export function stripDatasourceMarkers(s: string): string {
  if (!s.includes('$ds:')) return s
  return s.replace(DS_MARKER, (m) => (m === '$$ds:' ? '$ds:' : ' '))
}

/**
 * Text without HTML tags (script and style contents dropped), entities decoded, Markdown links reduced to their text,
 * datasource markers removed.
 */
export function stripMarkup(s: string): string {
  if (s.length > MAX_FIELD_CHARS) s = s.slice(0, MAX_FIELD_CHARS)
  s = stripDatasourceMarkers(s)
  if (s.includes('<')) s = s.replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ').replace(/<\/?[a-z!][^>]*>/gi, ' ')
  if (s.includes('&')) s = decodeEntities(s)
  if (s.includes('](')) s = s.replace(/!?\[([^\]]*)\]\([^)\s]*(?:\s+"[^"]*")?\)/g, '$1')
  return s
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim()

/** The text of a rich-text tree ({type: 'doc', content: [...]}): every `text` leaf, in order. */
function richTextOf(node: unknown, out: string[], budget: { chars: number }) {
  if (budget.chars <= 0 || typeof node !== 'object' || node === null) return
  if (Array.isArray(node)) {
    for (const n of node) richTextOf(n, out, budget)
    return
  }
  const n = node as Record<string, unknown>
  if (typeof n.text === 'string') {
    out.push(n.text)
    budget.chars -= n.text.length
  }
  if (Array.isArray(n.content)) richTextOf(n.content, out, budget)
}

const TEXT_TYPES = new Set(['text', 'textarea', 'richtext', 'markdown'])
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isBlock = (v: unknown): v is Record<string, unknown> & { component: string } => isPlainObject(v) && typeof v.component === 'string'

export interface StoryText {
  /** Shown in the hit; never empty (the Story name stands in). */
  headline: string
  lead: string | null
  /** Every other text of every block, markup stripped. */
  body: string
  tags: string[]
}

/**
 * Cuts a published snapshot into the searchable fields. Blocks are read breadth first (as the OG card finds its
 * title): the first `headline`/`title` text becomes the headline, the first `lead`/`intro`/`teaser`/`summary` text
 * the lead; both are left out of the body so a word there is not counted twice. Field types come from the
 * blueprints: text, textarea, markdown and rich text are text; `tags` fields are tags; select values, numbers, dates,
 * links and assets are not searched. Fields of a component without a blueprint count as text when they are strings.
 */
export function storyText(content: unknown, name: string, blueprints: Map<string, Blueprint>): StoryText {
  let headline: string | null = null
  let lead: string | null = null
  const body: string[] = []
  const tags: string[] = []
  const budget = { chars: MAX_FIELD_CHARS }
  const blocks = isPlainObject(content) ? content.blocks : undefined
  const queue: unknown[] = Array.isArray(blocks) ? [...blocks] : []
  for (let qi = 0; qi < queue.length && budget.chars > 0; qi++) {
    const block = queue[qi]
    if (!isBlock(block)) continue
    const schema = blueprints.get(block.component)?.schema
    for (const key of Object.keys(block)) {
      if (key === 'component' || key === '_uid') continue
      const value = block[key]
      const type = schema?.[key]?.type
      if (type === 'tags') {
        if (Array.isArray(value)) for (const v of value) if (typeof v === 'string') tags.push(stripDatasourceMarkers(v))
        continue
      }
      if (Array.isArray(value)) {
        if (type === undefined || type === 'blocks') for (const v of value) if (isBlock(v)) queue.push(v)
        continue
      }
      if (type !== undefined && !TEXT_TYPES.has(type)) continue
      let text: string
      if (typeof value === 'string') text = value
      else if (type === 'richtext' && isPlainObject(value)) {
        const parts: string[] = []
        richTextOf(value, parts, { chars: budget.chars })
        text = parts.join(' ')
      } else continue
      text = stripMarkup(text)
      budget.chars -= text.length
      if (headline === null && (HEADLINE_KEYS as readonly string[]).includes(key) && text.trim()) {
        headline = collapse(text).slice(0, MAX_HEADLINE_CHARS)
      } else if (lead === null && (LEAD_KEYS as readonly string[]).includes(key) && text.trim()) {
        lead = collapse(text).slice(0, MAX_LEAD_CHARS)
      } else body.push(text)
    }
  }
  return { headline: headline ?? (collapse(name).slice(0, MAX_HEADLINE_CHARS) || name), lead, body: body.join('\n'), tags }
}
