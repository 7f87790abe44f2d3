import { parse, type Selector } from 'css-what'
import picomatch from 'picomatch'
import sanitizeHtml from 'sanitize-html'

/**
 * The checks of an overlay rule, each through a maintained library: selectors parsed by css-what (plus the structural
 * checks a browser's `querySelectorAll` would make), path patterns compiled by picomatch, HTML content cleaned by
 * sanitize-html. The browser side (embed.js) checks attributes and strips script again before inserting anything.
 */

export const MAX_SELECTOR = 1000
export const MAX_PATTERN = 300
/** Longest page path a public read takes. */
export const MAX_PATH = 2048

/** Pseudo-classes `querySelectorAll` knows; anything else (and every pseudo-element) would throw or match nothing. */
const PSEUDO_CLASSES = new Set([
  'not', 'is', 'where', 'has', 'matches',
  'nth-child', 'nth-last-child', 'nth-of-type', 'nth-last-of-type',
  'first-child', 'last-child', 'only-child', 'first-of-type', 'last-of-type', 'only-of-type',
  'empty', 'root', 'scope', 'checked', 'disabled', 'enabled', 'required', 'optional', 'link', 'any-link', 'target',
  'focus', 'focus-within', 'focus-visible', 'hover', 'active', 'visited', 'lang', 'dir', 'placeholder-shown',
  'read-only', 'read-write', 'default', 'indeterminate', 'valid', 'invalid', 'in-range', 'out-of-range', 'defined',
])
const WITH_SELECTOR = new Set(['not', 'is', 'where', 'has', 'matches'])
const NTH = new Set(['nth-child', 'nth-last-child', 'nth-of-type', 'nth-last-of-type'])
const NTH_ARG = /^\s*(?:odd|even|[+-]?\d*n(?:\s*[+-]\s*\d+)?|[+-]?\d+)\s*$/i
const TAG = /^[a-zA-Z][a-zA-Z0-9-]*$/
const IDENT = /^(?:--|-?[_a-zA-Z\u00a0-\uffff])[_a-zA-Z0-9\u00a0-\uffff-]*$/
const ATTR_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]*$/
const TRAVERSALS = new Set(['descendant', 'child', 'sibling', 'adjacent', 'parent', 'column-combinator'])

/** Why a CSS selector is refused, or null when a browser can run it. */
export function selectorError(selector: string): string | null {
  if (selector.trim() === '') return 'must not be empty'
  if (selector.length > MAX_SELECTOR) return `must be at most ${MAX_SELECTOR} characters`
  let parsed: Selector[][]
  try {
    parsed = parse(selector)
  } catch (err) {
    return `is not a valid CSS selector (${(err as Error).message})`
  }
  return groupError(parsed, false)
}

function groupError(group: Selector[][], relative: boolean): string | null {
  if (!group.length) return 'is not a valid CSS selector (empty)'
  for (const seq of group) {
    if (!seq.length) return 'is not a valid CSS selector (an empty part)'
    const last = seq[seq.length - 1]
    if (TRAVERSALS.has(last.type)) return 'is not a valid CSS selector (it ends with a combinator)'
    if (!relative && TRAVERSALS.has(seq[0].type) && seq[0].type !== 'descendant') return 'is not a valid CSS selector (it starts with a combinator)'
    for (const s of seq) {
      const e = tokenError(s)
      if (e) return e
    }
  }
  return null
}

function tokenError(s: Selector): string | null {
  switch (s.type) {
    case 'tag':
      if (s.namespace !== null) return 'must not use namespaces'
      return TAG.test(s.name) ? null : `is not a valid CSS selector ("${s.name}" is not an element name)`
    case 'universal':
      return s.namespace !== null ? 'must not use namespaces' : null
    case 'attribute':
      if (s.namespace !== null) return 'must not use namespaces'
      if (s.action === 'element' && s.name === 'class' && !IDENT.test(s.value)) return `is not a valid CSS selector (".${s.value}" is not a class name)`
      if (s.action === 'equals' && s.name === 'id' && s.ignoreCase === 'quirks' && !IDENT.test(s.value)) return `is not a valid CSS selector ("#${s.value}" is not an id)`
      return ATTR_NAME.test(s.name) ? null : `is not a valid CSS selector ("${s.name}" is not an attribute name)`
    case 'pseudo-element':
      return `must not use pseudo-elements (::${s.name} selects no element)`
    case 'pseudo': {
      const name = s.name.toLowerCase()
      if (!PSEUDO_CLASSES.has(name)) return `is not a valid CSS selector (unknown pseudo-class :${s.name})`
      if (WITH_SELECTOR.has(name)) return Array.isArray(s.data) ? groupError(s.data, name === 'has') : `is not a valid CSS selector (:${name} needs a selector)`
      if (NTH.has(name)) return typeof s.data === 'string' && NTH_ARG.test(s.data) ? null : `is not a valid CSS selector (bad :${name} argument)`
      if (name === 'lang' || name === 'dir') return typeof s.data === 'string' && /^[a-zA-Z0-9-]{1,35}$/.test(s.data) ? null : `is not a valid CSS selector (bad :${name} argument)`
      return s.data === null ? null : `is not a valid CSS selector (:${name} takes no argument)`
    }
    default:
      return null
  }
}

/** A path glob (picomatch syntax) compiled to a matcher, or the reason it is refused. */
export function compilePattern(pattern: string): { match: (path: string) => boolean } | { error: string } {
  if (!pattern.startsWith('/')) return { error: 'must start with / (a glob on the page path, e.g. /blog/**)' }
  if (pattern.length > MAX_PATTERN) return { error: `must be at most ${MAX_PATTERN} characters` }
  if (/[\u0000-\u001f\u007f]/.test(pattern)) return { error: 'must not contain control characters' }
  try {
    const re = picomatch.makeRe(pattern, { dot: true, strictBrackets: true })
    return { match: (path: string) => re.test(path) }
  } catch (err) {
    return { error: `is not a valid glob (${(err as Error).message})` }
  }
}

/** Attribute names set_attribute may never set: event handlers, and markup injected as a document. */
export function attributeError(name: string): string | null {
  if (!ATTR_NAME.test(name) || name.length > 100) return 'must be an attribute name (letters, digits, - _ . :)'
  const lower = name.toLowerCase()
  if (lower.startsWith('on')) return 'must not be an event handler attribute (on*)'
  if (lower === 'srcdoc' || lower === 'style' || lower === 'is') return `must not be ${lower}`
  return null
}

/** Schemes a URL-like attribute value must not carry (browsers ignore leading control characters and spaces). */
export function dangerousValue(value: string): boolean {
  // eslint-disable-next-line no-control-regex
  const v = value.replace(/[\u0000-\u0020\u007f-\u009f]/g, '').toLowerCase()
  return v.startsWith('javascript:') || v.startsWith('vbscript:') || (v.startsWith('data:') && !/^data:image\/(?:png|jpeg|gif|webp|avif);/.test(v))
}

/**
 * HTML content cleaned on save: sanitize-html's default tag list (text, lists, tables, links) plus images and
 * `<picture>`, `class`/`id`/`title`/`lang`/`dir` everywhere; links and images only http(s), mailto, tel or relative.
 * Script, style, event handlers and javascript: URLs never survive.
 */
export function sanitize(html: string): string {
  return sanitizeHtml(html, {
    allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'picture', 'source'],
    allowedAttributes: {
      '*': ['class', 'id', 'title', 'lang', 'dir'],
      a: ['href', 'name', 'target', 'rel'],
      img: ['src', 'srcset', 'sizes', 'alt', 'width', 'height', 'loading'],
      source: ['srcset', 'sizes', 'type', 'media'],
    },
    allowedSchemes: ['http', 'https', 'mailto', 'tel'],
    allowProtocolRelative: false,
  })
}
