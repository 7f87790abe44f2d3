import type { Entry } from './store'

/**
 * `$ds:<key>.<accessor>` markers (spec 4.5), resolved in the content's JSON text.
 *
 * Grammar: key `[a-z][a-z0-9_]*`, accessor one or more dot-separated segments of `[A-Za-z0-9_-]`; `$$ds:` is an
 * escape that renders a literal `$ds:`. Markers are found in the JSON text directly: none of their characters is
 * ever escaped in JSON (JSON.stringify leaves `$`, `:`, `.`, letters, digits, `_` and `-` alone) and none is a
 * quote, so a match always lies inside one string; a resolved value is inserted JSON-escaped.
 */
const MARKER = /\$\$ds:|\$ds:([a-z][a-z0-9_]*)\.([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)/g

/** Whether the text may hold a marker or an escape (a cheap test before the regex). */
export const mayHaveMarkers = (json: string) => json.includes('ds:')

/** Unique keys referenced by markers (escapes excluded), with how many markers each. */
export function scanMarkers(json: string): Map<string, number> {
  const counts = new Map<string, number>()
  if (!mayHaveMarkers(json)) return counts
  for (const m of json.matchAll(MARKER)) {
    if (m[1] !== undefined) counts.set(m[1], (counts.get(m[1]) ?? 0) + 1)
  }
  return counts
}

/** Replaces every marker; `sets` maps a key to its entries, or null (unknown key, offline, no data) → ''. */
export function replaceMarkers(json: string, sets: Map<string, Entry[] | null>): string {
  if (!mayHaveMarkers(json)) return json
  return json.replace(MARKER, (whole, key: string | undefined, accessor: string | undefined) => {
    if (key === undefined) return '$ds:'
    const value = resolve(sets.get(key) ?? null, accessor!.split('.'))
    if (value === '') return ''
    // JSON-escaped, without the quotes: the marker sat inside a JSON string.
    return JSON.stringify(value).slice(1, -1)
  })
}

const INDEX = /^(?:0|[1-9][0-9]{0,8})$/

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

const own = (o: object, k: string) => Object.hasOwn(o, k)

/** Spec 4.5 accessor: index, else id/key/slug match, else a field of the first entry; then walk. Scalars only. */
export function resolve(entries: Entry[] | null, segments: string[]): string {
  if (!entries || !entries.length) return ''
  const [first, ...rest] = segments
  let current: unknown
  if (INDEX.test(first)) {
    current = entries[Number(first)]
  } else {
    current = entries.find((e) => isObject(e) && (matches(e.id, first) || matches(e.key, first) || matches(e.slug, first)))
    if (current === undefined) {
      const head = entries[0]
      current = isObject(head) && own(head, first) ? head[first] : undefined
    }
  }
  for (const seg of rest) {
    if (Array.isArray(current)) current = INDEX.test(seg) ? current[Number(seg)] : undefined
    else if (isObject(current)) current = own(current, seg) ? current[seg] : undefined
    else return ''
  }
  if (typeof current === 'string') return current
  if (typeof current === 'number' && Number.isFinite(current)) return String(current)
  if (typeof current === 'boolean') return String(current)
  return ''
}

const matches = (v: unknown, s: string) => (typeof v === 'string' ? v === s : typeof v === 'number' && Number.isFinite(v) && String(v) === s)
