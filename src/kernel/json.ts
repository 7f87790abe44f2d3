/**
 * The bounded JSON reader of every request body, and the string rules of every text input.
 *
 * - Nesting: at most MAX_JSON_DEPTH levels of arrays and objects, checked by one linear scan of the text before
 *   JSON.parse — a 100,000-deep body costs a scan, never a parse, a recursive validation or a stack overflow.
 * - Encoding: the body must be valid UTF-8 (no silent U+FFFD replacement).
 * - Strings (values and keys): no NUL character (Postgres cannot store it in text) and no lone UTF-16 surrogate (it is
 *   not a character; it would be stored as U+FFFD or rejected), found by an iterative walk that reports the path.
 * - Size: bodies are capped in bytes before this (JSON_BODY_LIMIT), so the walk is linear in a bounded input.
 */

export const MAX_JSON_DEPTH = 64
/** Array elements and object members in one body, all levels together. */
export const MAX_JSON_NODES = 200_000

export type JsonProblem =
  | { kind: 'syntax' }
  | { kind: 'encoding' }
  | { kind: 'depth' }
  | { kind: 'size' }
  | { kind: 'string'; path: string; reason: string }

const decoder = new TextDecoder('utf-8', { fatal: true })

/** Whether the text nests arrays/objects deeper than `max` (strings skipped, escapes honoured). Linear, no allocation. */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92 /* \ */) i++
      else if (c === 34 /* " */) inString = false
      continue
    }
    if (c === 34) inString = true
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
}

/** Why a string cannot be stored as text, or null when it can. */
export function stringProblem(s: string): string | null {
  if (s.indexOf('\u0000') !== -1) return 'must not contain NUL characters (\\u0000)'
  if (!s.isWellFormed()) return 'must not contain lone UTF-16 surrogates (invalid characters)'
  return null
}

/** The first string (value or key) in `value` that cannot be stored, with its path (`a/0/b`), found without recursion. */
export function findBadString(value: unknown): { path: string; reason: string } | 'too_large' | null {
  const stack: [unknown, string][] = [[value, '']]
  let nodes = 0
  while (stack.length) {
    const [v, path] = stack.pop()!
    if (typeof v === 'string') {
      const reason = stringProblem(v)
      if (reason) return { path, reason }
      continue
    }
    if (v === null || typeof v !== 'object') continue
    if (Array.isArray(v)) {
      nodes += v.length
      if (nodes > MAX_JSON_NODES) return 'too_large'
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], path ? `${path}/${i}` : String(i)])
      continue
    }
    const keys = Object.keys(v)
    nodes += keys.length
    if (nodes > MAX_JSON_NODES) return 'too_large'
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i]
      const at = path ? `${path}/${k}` : k
      const reason = stringProblem(k)
      if (reason) return { path: at, reason: `(a key) ${reason}` }
      stack.push([(v as Record<string, unknown>)[k], at])
    }
  }
  return null
}

/** Parses a request body: bytes → UTF-8 text → depth check → JSON.parse → string check. */
export function readJson(bytes: Uint8Array): { value: unknown } | JsonProblem {
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch {
    return { kind: 'encoding' }
  }
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) return { kind: 'depth' }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { kind: 'syntax' }
  }
  const bad = findBadString(value)
  if (bad === 'too_large') return { kind: 'size' }
  if (bad) return { kind: 'string', path: bad.path, reason: bad.reason }
  return { value }
}
