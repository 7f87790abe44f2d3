import type { ChildNode, Document, Element } from 'domhandler'

/**
 * The parser and selector engine, loaded with require() when the tester first runs: sanitize-html (rules.ts) requires
 * the same htmlparser2, and an ES import of it beside that require() can meet the module mid-evaluation ("require()
 * async module is unsupported") depending on load order.
 */
type Libs = typeof import('css-select') & typeof import('domhandler') & typeof import('domutils') & typeof import('htmlparser2')
let libs: Libs | undefined
const lib = (): Libs => (libs ??= { ...require('css-select'), ...require('domhandler'), ...require('domutils'), ...require('htmlparser2') } as Libs)

/** The largest snippet the tester takes (characters); the body schema answers 422 above it. */
export const MAX_TEST_HTML = 100_000
/** Elements one rule may touch in a test. */
const MAX_ELEMENTS = 1_000
/** Elements a snippet may hold: a selector's cost grows with them (`:has()` scans below every element). */
export const MAX_SNIPPET_ELEMENTS = 5_000
/** CPU time (ms) a test may take before the remaining rules are skipped (the answer names them). */
const BUDGET_MS = 500

export interface TestRule {
  id: string
  name: string
  selector: string
  action: string
  attribute: string | null
  content: string | null
}

export interface TestOutcome {
  /** The snippet holds more than MAX_SNIPPET_ELEMENTS elements: nothing applied. */
  tooLarge?: true
  html: string
  applied: { id: string; elements: number }[]
  /** Rules not applied because the time budget ran out. */
  skipped: string[]
}

/** What embed.js strips from inserted markup (its `bad()`): event handlers, id/name, and script URLs. */
const bad = (name: string, value: string) => /^(on|id$|name$)/i.test(name) || /^[\s\0-\x1f]*(javascript|vbscript|data:text)/i.test(value)
const INERT = /^(script|i?frame|object|embed|style|link|meta|base)$/i

/** Markup parsed as embed.js's `frag()` does: the elements that could run or load something removed, bad attributes dropped. */
function fragment(html: string): ChildNode[] {
  const { parseDocument, Element } = lib()
  const doc = parseDocument(html)
  const strip = (nodes: ChildNode[]): ChildNode[] =>
    nodes.filter((n) => {
      if (!(n instanceof Element)) return true
      if (INERT.test(n.name)) return false
      for (const a of Object.keys(n.attribs)) if (bad(a, n.attribs[a] ?? '')) delete n.attribs[a]
      n.children = strip(n.children)
      for (const c of n.children) c.parent = n
      return true
    })
  const out = strip(doc.children)
  for (const n of out) n.parent = null
  return out
}

function setChildren(el: Element, nodes: ChildNode[]) {
  const { appendChild } = lib()
  for (const c of el.children) c.parent = null
  el.children = []
  for (const n of nodes) appendChild(el, n)
}

/**
 * The overlay rules applied to an HTML snippet on the server, as embed.js applies them in the browser: in order, each
 * rule to every element its selector finds (css-select on an htmlparser2 tree — nothing in the snippet runs), with
 * embed.js's actions: replace_text (the text), replace_html (children from the content, stripped as embed.js strips
 * it), insert_before / insert_after, hide (`display: none` in the element's style) and set_attribute (never an event
 * handler, id/name or a script URL). Bounded: the snippet's size (schema) and elements, elements per rule, and a time budget
 * checked between rules.
 */
export function applyToSnippet(html: string, rules: TestRule[], now: () => number = () => performance.now()): TestOutcome {
  const { parseDocument, Element, Text, selectAll, prepend, append, getOuterHTML } = lib()
  const doc: Document = parseDocument(html)
  let elements = 0
  const count = (nodes: ChildNode[]): boolean => {
    for (const n of nodes) if (n instanceof Element && (++elements > MAX_SNIPPET_ELEMENTS || !count(n.children))) return false
    return true
  }
  if (!count(doc.children)) return { tooLarge: true, html: '', applied: [], skipped: [] }
  const started = now()
  const applied: TestOutcome['applied'] = []
  const skipped: string[] = []
  for (const r of rules) {
    if (now() - started > BUDGET_MS) {
      skipped.push(r.id)
      continue
    }
    let found: Element[]
    try {
      found = selectAll(r.selector, doc as never) as unknown as Element[]
    } catch {
      found = [] // a selector the browser would refuse selects nothing there either
    }
    found = found.slice(0, MAX_ELEMENTS)
    const c = r.content ?? ''
    for (const el of found) {
      if (r.action === 'replace_text') setChildren(el, [new Text(c)])
      else if (r.action === 'replace_html') setChildren(el, fragment(c))
      else if (r.action === 'insert_before') for (const n of fragment(c)) prepend(el, n)
      else if (r.action === 'insert_after') for (const n of fragment(c).reverse()) append(el, n)
      else if (r.action === 'hide') {
        const style = (el.attribs.style ?? '').trim()
        el.attribs.style = `${style}${style && !style.endsWith(';') ? '; ' : style ? ' ' : ''}display: none;`
      } else if (r.action === 'set_attribute' && r.attribute && !bad(r.attribute, c)) el.attribs[r.attribute] = c
    }
    applied.push({ id: r.id, elements: found.length })
  }
  return { html: getOuterHTML(doc.children as never), applied, skipped }
}
