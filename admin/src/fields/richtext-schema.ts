import { DOMParser as PMDOMParser, type MarkSpec, type Node as PMNode, type NodeSpec, Schema } from 'prosemirror-model'
import { marks as basicMarks, nodes as basicNodes } from 'prosemirror-schema-basic'
import { bulletList, listItem, orderedList } from 'prosemirror-schema-list'

/**
 * The rich-text tree of a `richtext` field, as the API stores it: `{type: 'doc', content: [...]}` with ProseMirror's
 * JSON shape. Nodes: paragraph, heading (`attrs.level` 1–6), bullet_list, ordered_list (`attrs.order`), list_item,
 * blockquote, code_block, horizontal_rule, hard_break, text; marks on text: bold, italic, code, link
 * (`attrs.href`, `attrs.title`). The names are Storyblok's, so its renderers read it.
 */

/** Schemes a link may use; a relative URL (`/path`, `#anchor`, `page.html`) has none and is allowed. */
const SAFE_SCHEMES = new Set(['http', 'https', 'mailto', 'tel'])

/**
 * Whether a link target is safe to follow: no `javascript:`, `data:`, `vbscript:` or any other scheme than http(s),
 * mailto and tel. Browsers ignore ASCII whitespace and control characters inside a scheme (`java\tscript:`): they
 * are removed before the check.
 */
export function safeHref(href: unknown): href is string {
  if (typeof href !== 'string') return false
  const v = href.replace(/[\u0000-\u0020\u007f-\u009f]/g, '')
  if (v === '') return false
  const scheme = /^([^/?#:]*):/.exec(v)
  return !scheme || SAFE_SCHEMES.has(scheme[1]!.toLowerCase())
}

const link: MarkSpec = {
  attrs: { href: { validate: 'string' }, title: { default: null } },
  inclusive: false,
  parseDOM: [
    {
      tag: 'a[href]',
      // Pasted or markup links with an unsafe target become plain text.
      getAttrs: (dom) => {
        const href = (dom as HTMLElement).getAttribute('href')
        return safeHref(href) ? { href, title: (dom as HTMLElement).getAttribute('title') } : false
      },
    },
  ],
  // An unsafe target stored by another client is shown, never followable: the <a> gets no href.
  toDOM: (mark) => {
    const ok = safeHref(mark.attrs.href)
    return [
      'a',
      {
        href: ok ? mark.attrs.href : null,
        title: ok ? mark.attrs.title : `Not a safe link: ${String(mark.attrs.href).slice(0, 200)}`,
        rel: 'noopener noreferrer nofollow',
        'data-unsafe': ok ? null : 'true',
      },
      0,
    ]
  },
}

const nodes: Record<string, NodeSpec> = {
  doc: basicNodes.doc,
  paragraph: basicNodes.paragraph,
  blockquote: basicNodes.blockquote,
  horizontal_rule: basicNodes.horizontal_rule,
  heading: basicNodes.heading,
  code_block: basicNodes.code_block,
  text: basicNodes.text,
  hard_break: basicNodes.hard_break,
  ordered_list: { ...orderedList, content: 'list_item+', group: 'block' },
  bullet_list: { ...bulletList, content: 'list_item+', group: 'block' },
  list_item: { ...listItem, content: 'paragraph block*' },
}

export const richtextSchema = new Schema({
  nodes,
  marks: { link, bold: basicMarks.strong, italic: basicMarks.em, code: basicMarks.code },
})

export type RichText = { type: 'doc'; content: unknown[] }

export type Parsed = { doc: PMNode; fromMarkup?: boolean } | { error: string }

/**
 * The editor's document for a stored value: nothing → an empty paragraph; a tree → checked against the schema (an
 * unknown node or mark, or a structure the schema does not allow, is an error: the field is then edited as JSON);
 * markup text (the API also takes a string) → parsed in an inert document (no script runs, no image loads), keeping
 * only what the schema knows.
 */
export function parseRichtext(value: unknown): Parsed {
  if (value === undefined || value === null) return { doc: richtextSchema.topNodeType.createAndFill()! }
  if (typeof value === 'string') {
    const dom = new DOMParser().parseFromString(value, 'text/html')
    return { doc: PMDOMParser.fromSchema(richtextSchema).parse(dom.body), fromMarkup: true }
  }
  try {
    const doc = richtextSchema.nodeFromJSON(value)
    doc.check()
    return { doc }
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) }
  }
}

/** The stored value of a document: undefined when it is empty (the field is removed). */
export function richtextValue(doc: PMNode): RichText | undefined {
  const empty = doc.childCount === 1 && doc.firstChild!.type.name === 'paragraph' && doc.firstChild!.content.size === 0
  return empty ? undefined : (doc.toJSON() as RichText)
}
