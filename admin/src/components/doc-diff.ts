/**
 * What changed between two versions of a Story, field by field: blocks are matched by `_uid` (so a moved block is a
 * move, not a removal and an addition), each block is named by its path in the newer version, and every value is
 * rendered as plain text (a richtext document becomes its text; never HTML).
 */

export interface Change {
  kind: 'added' | 'removed' | 'changed' | 'moved'
  /** `name`, `blocks/2` (a block), `blocks/2/headline` (a field of a block). */
  path: string
  /** The block's component (for a block or a field of one). */
  component?: string
  before?: string
  after?: string
}

interface Side {
  name?: string
  content: unknown
}

interface FlatBlock {
  uid: string
  path: string
  component: string
  /** `<parent uid>/<field>` ('' at the top level): the list the block is in. */
  list: string
  fields: Record<string, unknown>
}

const isBlock = (v: unknown): v is Record<string, unknown> & { component: string; _uid: string } =>
  typeof v === 'object' && v !== null && typeof (v as { component?: unknown }).component === 'string' && typeof (v as { _uid?: unknown })._uid === 'string'
const isBlockList = (v: unknown): v is unknown[] => Array.isArray(v) && v.every(isBlock) // an empty list counts as one: it holds nothing to compare

function flatten(content: unknown): Map<string, FlatBlock> {
  const out = new Map<string, FlatBlock>()
  const walk = (blocks: unknown[], prefix: string, list: string) => {
    blocks.forEach((b, i) => {
      if (!isBlock(b)) return
      const path = `${prefix}/${i}`
      const fields: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(b)) {
        if (k === 'component' || k === '_uid') continue
        if (isBlockList(v)) walk(v, `${path}/${k}`, `${b._uid}/${k}`)
        else fields[k] = v
      }
      // A duplicated uid (hand-made content) keeps its first occurrence.
      if (!out.has(b._uid)) out.set(b._uid, { uid: b._uid, path, component: b.component, list, fields })
    })
  }
  const blocks = (content as { blocks?: unknown } | null)?.blocks
  if (Array.isArray(blocks)) walk(blocks, 'blocks', '')
  return out
}

/** A stable JSON form (object keys sorted) for comparing values. */
function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(v) ?? 'undefined'
}

/** The text of a richtext-like document: its text nodes, block nodes on their own lines. */
function richText(node: unknown): string {
  if (!node || typeof node !== 'object') return ''
  const n = node as { type?: string; text?: unknown; content?: unknown }
  if (typeof n.text === 'string') return n.text
  if (!Array.isArray(n.content)) return ''
  const parts = n.content.map(richText)
  return n.type === 'doc' || n.type === 'bulletList' || n.type === 'orderedList' ? parts.join('\n') : parts.join('')
}

/** A value as text for people: strings as they are, lists joined, links by URL, richtext by its text, else JSON. */
export function asText(v: unknown): string {
  if (v === undefined || v === null) return ''
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number')) return v.join(', ')
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>
    if (o.type === 'doc' && Array.isArray(o.content)) return richText(o)
    if (typeof o.url === 'string' && Object.keys(o).every((k) => ['url', 'target', 'linktype', 'title'].includes(k))) return o.url
  }
  return JSON.stringify(v)
}

/** The uids of `a` that keep their relative order in `b` (a longest common subsequence): the others moved. */
function stayed(a: string[], b: string[]): Set<string> {
  const n = a.length
  const m = b.length
  if (n * m > 4_000_000) return new Set(a.filter((x, i) => b[i] === x)) // huge lists: same position counts as stayed
  const dp: Uint16Array[] = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1))
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) dp[i][j] = a[i] === b[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1])
  const keep = new Set<string>()
  let i = 0
  let j = 0
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      keep.add(a[i])
      i++
      j++
    } else if (dp[i + 1][j] >= dp[i][j + 1]) i++
    else j++
  }
  return keep
}

/** The changes from `before` to `after`, in the order of the newer document (removed blocks last). */
export function diffStories(before: Side, after: Side): Change[] {
  const changes: Change[] = []
  if (before.name !== undefined && after.name !== undefined && before.name !== after.name) {
    changes.push({ kind: 'changed', path: 'name', before: before.name, after: after.name })
  }
  const a = flatten(before.content)
  const b = flatten(after.content)

  // Moves: a block in another list, or out of order among the blocks both versions have in its list.
  const moved = new Set<string>()
  const lists = new Map<string, { a: string[]; b: string[] }>()
  const listOf = (key: string) => {
    let l = lists.get(key)
    if (!l) lists.set(key, (l = { a: [], b: [] }))
    return l
  }
  for (const x of a.values()) {
    const y = b.get(x.uid)
    if (!y) continue
    if (y.list !== x.list) moved.add(x.uid)
    else listOf(x.list).a.push(x.uid)
  }
  for (const y of b.values()) {
    const x = a.get(y.uid)
    if (x && x.list === y.list) listOf(y.list).b.push(y.uid)
  }
  for (const l of lists.values()) {
    const keep = stayed(l.a, l.b)
    for (const uid of l.b) if (!keep.has(uid)) moved.add(uid)
  }

  for (const y of b.values()) {
    const x = a.get(y.uid)
    if (!x) {
      const summary = Object.entries(y.fields)
        .map(([k, v]) => `${k}: ${asText(v)}`)
        .join('\n')
      changes.push({ kind: 'added', path: y.path, component: y.component, after: summary })
      continue
    }
    if (moved.has(y.uid)) changes.push({ kind: 'moved', path: y.path, component: y.component, before: x.path, after: y.path })
    if (x.component !== y.component) changes.push({ kind: 'changed', path: `${y.path}/component`, component: y.component, before: x.component, after: y.component })
    const keys = new Set([...Object.keys(x.fields), ...Object.keys(y.fields)])
    for (const k of keys) {
      const va = x.fields[k]
      const vb = y.fields[k]
      if (stable(va) === stable(vb)) continue
      changes.push({
        kind: va === undefined ? 'added' : vb === undefined ? 'removed' : 'changed',
        path: `${y.path}/${k}`,
        component: y.component,
        before: va === undefined ? undefined : asText(va),
        after: vb === undefined ? undefined : asText(vb),
      })
    }
  }
  for (const x of a.values()) {
    if (b.has(x.uid)) continue
    const summary = Object.entries(x.fields)
      .map(([k, v]) => `${k}: ${asText(v)}`)
      .join('\n')
    changes.push({ kind: 'removed', path: x.path, component: x.component, before: summary })
  }
  return changes
}
