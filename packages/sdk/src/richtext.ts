/**
 * @content-service/sdk/richtext — HTML of a `richtext` field: the stored tree `{type: 'doc', content: [...]}`
 * (ProseMirror JSON: paragraph, heading, bullet_list, ordered_list, list_item, blockquote, code_block,
 * horizontal_rule, hard_break, text; marks bold, italic, code, link). Text and attributes are escaped; link targets are
 * allow-listed (http, https, mailto, tel, relative); every node and mark can be overridden.
 */

export interface RichNode {
  type: string
  text?: string
  attrs?: Record<string, unknown>
  marks?: RichMark[]
  content?: RichNode[]
}

export interface RichMark {
  type: string
  attrs?: Record<string, unknown>
}

export interface RenderOptions {
  /** Per node type: the HTML of a node from its rendered children. */
  nodes?: Record<string, (node: RichNode, children: string) => string>
  /** Per mark type: the HTML around its (rendered) text. */
  marks?: Record<string, (mark: RichMark, inner: string) => string>
}

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESC[c])

/** A link target that is safe to follow: no `javascript:`, `data:` or any scheme but http(s), mailto, tel. */
export function safeHref(href: unknown): string | null {
  if (typeof href !== 'string') return null
  const v = href.replace(/[\u0000-\u0020\u007f-\u009f]/g, '')
  const scheme = /^([^/?#:]*):/.exec(v)
  return v && (!scheme || ['http', 'https', 'mailto', 'tel'].includes(scheme[1].toLowerCase())) ? href : null
}

const wrap = (tag: string) => (_n: RichNode, c: string) => `<${tag}>${c}</${tag}>`

const NODES: Record<string, (n: RichNode, c: string) => string> = {
  doc: (_n, c) => c,
  paragraph: wrap('p'),
  heading: (n, c) => {
    const l = Math.min(6, Math.max(1, Number(n.attrs?.level) || 1))
    return `<h${l}>${c}</h${l}>`
  },
  bullet_list: wrap('ul'),
  ordered_list: (n, c) => {
    const o = Number(n.attrs?.order)
    return `<ol${Number.isInteger(o) && o !== 1 ? ` start="${o}"` : ''}>${c}</ol>`
  },
  list_item: wrap('li'),
  blockquote: wrap('blockquote'),
  code_block: (_n, c) => `<pre><code>${c}</code></pre>`,
  horizontal_rule: () => '<hr>',
  hard_break: () => '<br>',
}

const MARKS: Record<string, (m: RichMark, inner: string) => string> = {
  bold: (_m, i) => `<strong>${i}</strong>`,
  italic: (_m, i) => `<em>${i}</em>`,
  code: (_m, i) => `<code>${i}</code>`,
  link: (m, i) => {
    const href = safeHref(m.attrs?.href)
    const title = typeof m.attrs?.title === 'string' ? ` title="${escapeHtml(m.attrs.title)}"` : ''
    return href ? `<a href="${escapeHtml(href)}"${title} rel="noopener noreferrer">${i}</a>` : i
  },
}

/** The HTML of a rich-text field; a plain string is escaped into one paragraph. Unknown nodes render their children. */
export function renderHtml(value: RichNode | string | null | undefined, o: RenderOptions = {}): string {
  if (value == null) return ''
  if (typeof value === 'string') return value ? `<p>${escapeHtml(value)}</p>` : ''
  const nodes = { ...NODES, ...o.nodes }
  const marks = { ...MARKS, ...o.marks }
  const node = (n: RichNode, depth: number): string => {
    if (!n || typeof n !== 'object' || depth > 64) return ''
    if (n.type === 'text') {
      let out = escapeHtml(String(n.text ?? ''))
      for (const m of n.marks ?? []) out = marks[m.type]?.(m, out) ?? out
      return out
    }
    const children = Array.isArray(n.content) ? n.content.map((c) => node(c, depth + 1)).join('') : ''
    return (nodes[n.type] ?? ((_n, c) => c))(n, children)
  }
  return node(value, 0)
}
