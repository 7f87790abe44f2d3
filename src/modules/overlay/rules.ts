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

/** Path segments a pattern may have. */
export const MAX_PATTERN_SEGMENTS = 32
const GLOBSTAR = null

/**
 * A path glob compiled to a matcher, or the reason it is refused. Each path segment of the pattern is a picomatch
 * glob (`*` at most once per segment, `?`, `[...]` classes); a whole segment `**` matches any number of segments
 * (none included). The path is matched segment by segment (a table over pattern × path segments), never as one
 * regular expression: picomatch's regexes backtrack, and a pattern such as `/*a*a*a*b` or one with braces or
 * parentheses would stall the server on a long path. So braces, extglobs, parentheses and `|` are refused, and a
 * segment's own regex has at most one star: matching costs about pattern segments × path length.
 */
export function compilePattern(pattern: string): { match: (path: string) => boolean } | { error: string } {
  if (!pattern.startsWith('/')) return { error: 'must start with / (a glob on the page path, e.g. /blog/**)' }
  if (pattern.length > MAX_PATTERN) return { error: `must be at most ${MAX_PATTERN} characters` }
  if (/[\u0000-\u001f\u007f]/.test(pattern)) return { error: 'must not contain control characters' }
  if (/[{}()|!+@]/.test(pattern)) return { error: 'may use *, **, ? and [...] only (no braces, parentheses, |, !, + or @)' }
  const parts = pattern.slice(1).split('/')
  if (parts.length > MAX_PATTERN_SEGMENTS) return { error: `must have at most ${MAX_PATTERN_SEGMENTS} path segments` }
  const segments: (RegExp | string | typeof GLOBSTAR)[] = []
  for (const part of parts) {
    if (part === '**') {
      if (segments[segments.length - 1] !== GLOBSTAR || !segments.length) segments.push(GLOBSTAR)
      continue
    }
    const stars = part.split('*').length - 1
    if (part.includes('**')) return { error: '** must be a whole path segment (e.g. /blog/**)' }
    if (stars > 1) return { error: 'may use * at most once per path segment' }
    if (!/[*?[\\]/.test(part)) {
      segments.push(part) // a literal segment (also the empty one of `/` or a trailing slash)
      continue
    }
    try {
      segments.push(picomatch.makeRe(part, { dot: true, strictBrackets: true, noextglob: true, nobrace: true, noglobstar: true }))
    } catch (err) {
      return { error: `is not a valid glob (${(err as Error).message})` }
    }
  }
  return { match: (path: string) => matchSegments(segments, path.slice(1).split('/')) }
}

/** Whether the path's segments match the pattern's (`null` = `**`, a string = a literal segment): a table from the end, O(pattern × path). */
function matchSegments(pattern: (RegExp | string | null)[], path: string[]): boolean {
  const P = pattern.length
  const S = path.length
  // next[j]: does pattern[i+1..] match path[j..]; cur[j]: pattern[i..] against path[j..].
  let next = new Uint8Array(S + 1)
  next[S] = 1
  for (let i = P - 1; i >= 0; i--) {
    const cur = new Uint8Array(S + 1)
    const p = pattern[i]
    for (let j = S; j >= 0; j--) {
      if (p === null) cur[j] = next[j] || (j < S && cur[j + 1]) ? 1 : 0
      else cur[j] = j < S && next[j + 1] && (typeof p === 'string' ? p === path[j] : p.test(path[j])) ? 1 : 0
    }
    next = cur
  }
  return next[0] === 1
}

/**
 * The attributes set_attribute may set (an allow-list, lower case). The ones in ANY_ELEMENT load, link and run
 * nothing, so they go on any element; `aria-*` too. The others point somewhere or change what a control does, so
 * each goes only on the elements named: a link's target, an image's source — never `<base href>`, `<link href>`,
 * `<script src>`, `<iframe src>`, a form's `action` or an input's `value`.
 */
export const ANY_ELEMENT_ATTRIBUTES: readonly string[] = ['class', 'title', 'lang', 'dir', 'hidden', 'role', 'translate']
export const ELEMENT_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  href: ['a', 'area'],
  target: ['a', 'area'],
  rel: ['a', 'area'],
  hreflang: ['a'],
  alt: ['img', 'area'],
  src: ['img'],
  srcset: ['img', 'source'],
  sizes: ['img', 'source'],
  width: ['img'],
  height: ['img'],
  loading: ['img'],
  decoding: ['img'],
  media: ['source'],
  type: ['source'],
  placeholder: ['input', 'textarea'],
  datetime: ['time'],
}
const ARIA = /^aria-[a-z]+$/

/** Why set_attribute may not set `name` (on any element), or null. */
export function attributeError(name: string): string | null {
  if (!ATTR_NAME.test(name) || name.length > 100) return 'must be an attribute name (letters, digits, - _ . :)'
  const lower = name.toLowerCase()
  if (ANY_ELEMENT_ATTRIBUTES.includes(lower) || ARIA.test(lower) || Object.hasOwn(ELEMENT_ATTRIBUTES, lower)) return null
  return `is not an attribute set_attribute may set (${[...ANY_ELEMENT_ATTRIBUTES, 'aria-*', ...Object.keys(ELEMENT_ATTRIBUTES)].join(', ')})`
}

/**
 * Why `selector` may not carry set_attribute of `attribute`, or null. An attribute of ELEMENT_ATTRIBUTES needs every
 * part of the selector to end at one of its elements (`a.cta`, `main img`): querySelectorAll then finds no other
 * element, so the pair holds in the browser without the browser checking it.
 */
export function attributeTargetError(selector: string, attribute: string): string | null {
  const lower = attribute.toLowerCase()
  const elements = Object.hasOwn(ELEMENT_ATTRIBUTES, lower) ? ELEMENT_ATTRIBUTES[lower]! : null
  if (!elements) return null
  let parsed: Selector[][]
  try {
    parsed = parse(selector)
  } catch {
    return null // the selector's own check reports it
  }
  for (const seq of parsed) {
    let start = seq.length
    while (start > 0 && !TRAVERSALS.has(seq[start - 1]!.type)) start--
    const tag = seq.slice(start).find((s) => s.type === 'tag') as { name: string } | undefined
    if (!tag || !elements.includes(tag.name.toLowerCase())) {
      return `${lower} may be set only on ${elements.map((e) => `<${e}>`).join(' or ')}: each part of the selector must end at such an element (e.g. ${elements[0]}.cta)`
    }
  }
  return null
}

/** Schemes a URL-like attribute value must not carry (browsers ignore leading control characters and spaces). */
export function dangerousValue(value: string): boolean {
  // eslint-disable-next-line no-control-regex
  const v = value.replace(/[\u0000-\u0020\u007f-\u009f]/g, '').toLowerCase()
  return v.startsWith('javascript:') || v.startsWith('vbscript:') || (v.startsWith('data:') && !/^data:image\/(?:png|jpeg|gif|webp|avif);/.test(v))
}

/**
 * HTML content cleaned on save (and again when a Space's rules are loaded, so rules stored under an older policy
 * follow this one): sanitize-html's default tag list (text, lists, tables, links) plus images and `<picture>`,
 * `class`/`title`/`lang`/`dir` everywhere; links and images only http(s), mailto, tel or relative. Script, style,
 * event handlers and javascript: URLs never survive, nor `id` or `name`: an inserted element with one would shadow
 * the page's globals (`window.x`, `document.x`, form fields: DOM clobbering).
 */
export function sanitize(html: string): string {
  return sanitizeHtml(html, {
    allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'picture', 'source'],
    allowedAttributes: {
      '*': ['class', 'title', 'lang', 'dir'],
      a: ['href', 'target', 'rel'],
      img: ['src', 'srcset', 'sizes', 'alt', 'width', 'height', 'loading'],
      source: ['srcset', 'sizes', 'type', 'media'],
    },
    allowedSchemes: ['http', 'https', 'mailto', 'tel'],
    allowProtocolRelative: false,
  })
}
