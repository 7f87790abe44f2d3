import { fileTypeFromBuffer } from 'file-type'
import { ALLOWED_TYPES } from './model'

/**
 * What a file is, from its bytes only: `file-type` reads the magic numbers; SVG, which has none, counts only when the
 * whole text parses as an XML document whose root is <svg>.
 */
export async function detectType(head: Uint8Array, readAll: () => Promise<Uint8Array>, size: number): Promise<string | null> {
  const found = await fileTypeFromBuffer(head)
  // An SVG with an XML declaration is reported as XML: it still has to parse as SVG below.
  if (found && found.mime !== 'application/xml' && found.mime !== 'text/xml') return (ALLOWED_TYPES as readonly string[]).includes(found.mime) ? found.mime : null
  if (size <= SVG_MAX_BYTES && looksLikeXml(head) && isSvg(await readAll())) return 'image/svg+xml'
  return null
}

export const SVG_MAX_BYTES = 10 * 1024 * 1024

function looksLikeXml(head: Uint8Array): boolean {
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0
  while (i < head.length && (head[i] === 0x20 || head[i] === 0x0a || head[i] === 0x0d || head[i] === 0x09)) i++
  return head[i] === 0x3c // '<'
}

const NAME = '[A-Za-z_:][A-Za-z0-9_.:-]*'
const ATTRS = `(?:\\s+${NAME}\\s*=\\s*(?:"[^"<]*"|'[^'<]*'))*\\s*`
const OPEN_TAG = new RegExp(`<(${NAME})${ATTRS}(/?)>`, 'y')
const CLOSE_TAG = new RegExp(`</(${NAME})\\s*>`, 'y')

/**
 * A small well-formedness check: balanced elements, quoted attributes, comments, CDATA, processing instructions and
 * a DOCTYPE without an internal subset (entity declarations are how XML bombs start). The root must be `svg`.
 */
export function isSvg(bytes: Uint8Array): boolean {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return false
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  const stack: string[] = []
  let root: string | null = null
  let closedRoot = false
  let i = 0
  while (i < text.length) {
    const lt = text.indexOf('<', i)
    const chunk = lt === -1 ? text.slice(i) : text.slice(i, lt)
    if (chunk.trim() && stack.length === 0) return false // text outside the root element
    if (lt === -1) break
    if (text.startsWith('<!--', lt)) {
      const end = text.indexOf('-->', lt + 4)
      if (end === -1) return false
      i = end + 3
    } else if (text.startsWith('<![CDATA[', lt)) {
      if (!stack.length) return false
      const end = text.indexOf(']]>', lt)
      if (end === -1) return false
      i = end + 3
    } else if (text.startsWith('<?', lt)) {
      const end = text.indexOf('?>', lt)
      if (end === -1) return false
      i = end + 2
    } else if (text.startsWith('<!DOCTYPE', lt)) {
      const end = text.indexOf('>', lt)
      if (end === -1 || root !== null || text.slice(lt, end).includes('[')) return false
      i = end + 1
    } else if (text.startsWith('</', lt)) {
      CLOSE_TAG.lastIndex = lt
      const m = CLOSE_TAG.exec(text)
      if (!m || stack.pop() !== m[1]) return false
      if (!stack.length) closedRoot = true
      i = lt + m[0].length
    } else {
      OPEN_TAG.lastIndex = lt
      const m = OPEN_TAG.exec(text)
      if (!m) return false
      if (closedRoot) return false // a second root
      if (root === null) root = m[1]!
      if (m[2] !== '/') stack.push(m[1]!)
      else if (!stack.length) closedRoot = true
      i = lt + m[0].length
    }
  }
  return !stack.length && closedRoot && (root === 'svg' || root!.endsWith(':svg'))
}

/** The size an SVG states on its root (width/height, else the viewBox), when it is in plain pixels. */
export function svgSize(bytes: Uint8Array): { width: number; height: number } | null {
  const text = new TextDecoder().decode(bytes.subarray(0, 64 * 1024))
  const m = /<(?:[A-Za-z_][\w.-]*:)?svg\b([^>]*)>/.exec(text)
  if (!m) return null
  const attr = (name: string) => new RegExp(`\\s${name}\\s*=\\s*["']([^"']*)["']`).exec(m[1]!)?.[1]
  const px = (v?: string) => (v && /^\s*\d+(\.\d+)?\s*(px)?\s*$/.test(v) ? Math.round(parseFloat(v)) : null)
  const w = px(attr('width'))
  const h = px(attr('height'))
  if (w && h) return { width: w, height: h }
  const vb = attr('viewBox')?.trim().split(/[\s,]+/).map(Number)
  if (vb && vb.length === 4 && vb.every(Number.isFinite) && vb[2]! > 0 && vb[3]! > 0) return { width: Math.round(vb[2]!), height: Math.round(vb[3]!) }
  return null
}
