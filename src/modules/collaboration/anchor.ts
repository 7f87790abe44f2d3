/**
 * Comment anchors. A `block_path` such as `blocks/3` or `blocks/3/columns/1/headline` names a block of a Story's draft
 * by position (and optionally a field below it). Comments store the addressed block's `_uid` instead, so they follow
 * the block when blocks are reordered; the path is recomputed from the uid on every read.
 */
export const BLOCK_PATH_PATTERN = '^blocks/(0|[1-9][0-9]{0,5})(/([A-Za-z_][A-Za-z0-9_-]{0,63}|0|[1-9][0-9]{0,5}))*$'
const BLOCK_PATH_RE = new RegExp(BLOCK_PATH_PATTERN)
const MAX_WALK = 100_000

export interface Anchor {
  uid: string
  /** The field path below the block ('' when the block itself is addressed). */
  suffix: string
  /** The block's own path (without the suffix). */
  blockPath: string
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isBlock = (v: unknown): v is Record<string, unknown> & { _uid: string } => isObject(v) && typeof v._uid === 'string' && v._uid !== ''

export const isBlockPath = (s: string) => s.length <= 256 && BLOCK_PATH_RE.test(s)

/** Resolves a path against a document (`{blocks: [...]}`) to the deepest block it names; null when it names none. */
export function resolveAnchor(doc: unknown, path: string): Anchor | null {
  if (!isBlockPath(path)) return null
  const segs = path.split('/')
  let node: unknown = doc
  let found: { uid: string; end: number } | null = null
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(s)) return null
      node = node[Number(s)]
      if (node === undefined) return null
    } else if (isObject(node)) {
      if (!Object.hasOwn(node, s)) {
        // A field the block does not hold (yet): allowed as the last segment, below a block.
        if (found && found.end === i && i === segs.length - 1 && !/^[0-9]/.test(s)) break
        return null
      }
      node = node[s]
    } else {
      return null
    }
    if (isBlock(node)) found = { uid: node._uid, end: i + 1 }
  }
  if (!found) return null
  return { uid: found.uid, suffix: segs.slice(found.end).join('/'), blockPath: segs.slice(0, found.end).join('/') }
}

/** Every block uid of a document and its path (`blocks/2/items/0`), breadth-first, bounded. */
export function blockPaths(doc: unknown): Map<string, string> {
  const out = new Map<string, string>()
  const queue: [unknown, string][] = [[doc, '']]
  for (let q = 0; q < queue.length && q < MAX_WALK; q++) {
    const [node, path] = queue[q]
    if (Array.isArray(node)) {
      node.forEach((v, i) => queue.push([v, path ? `${path}/${i}` : String(i)]))
    } else if (isObject(node)) {
      if (path && isBlock(node) && !out.has(node._uid)) out.set(node._uid, path)
      for (const k of Object.keys(node)) {
        const v = node[k]
        if (typeof v === 'object' && v !== null) queue.push([v, path ? `${path}/${k}` : k])
      }
    }
  }
  return out
}
