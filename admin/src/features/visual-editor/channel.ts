/**
 * The visual editor's postMessage channel with `/service-admin.js` in the frame (docs/in-page-editing.md, "The
 * visual editor"). Every message is `{channel: 'content-service', v: 1, type, ...}`; the admin posts only to the
 * preview origin and accepts only messages from its own frame's window on that origin.
 */
export const CHANNEL = 'content-service'
export const VERSION = 1

/** What the site says (site → admin). Anything else is ignored. */
export type SiteMessage =
  | { type: 'ready'; space: string; path: string; reload: boolean }
  | { type: 'select'; story_uuid: string; uid: string | null; field: string | null }
  | { type: 'navigated'; path: string }

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const UID = /^[\w-]{1,64}$/
const FIELD = /^[a-z_][\w-]{0,63}$/i

/** The site's message, validated, or null: wrong window, wrong origin, wrong channel or version, malformed. */
export function siteMessage(e: MessageEvent, frame: Window | null | undefined, origin: string): SiteMessage | null {
  if (!frame || e.source !== frame || e.origin !== origin) return null
  const m = e.data as Record<string, unknown> | null
  if (!m || typeof m !== 'object' || m.channel !== CHANNEL || m.v !== VERSION) return null
  const path = typeof m.path === 'string' && m.path.startsWith('/') && m.path.length <= 1024 ? m.path : null
  if (m.type === 'ready' && typeof m.space === 'string' && path) return { type: 'ready', space: m.space, path, reload: m.reload === true }
  if (m.type === 'navigated' && path) return { type: 'navigated', path }
  if (m.type === 'select' && typeof m.story_uuid === 'string' && UUID.test(m.story_uuid)) {
    const uid = typeof m.uid === 'string' && UID.test(m.uid) ? m.uid : null
    const field = uid && typeof m.field === 'string' && FIELD.test(m.field) ? m.field : null
    return { type: 'select', story_uuid: m.story_uuid.toLowerCase(), uid, field }
  }
  return null
}

/** Posts an admin → site message to the frame, on the preview origin only. */
export function post(frame: Window | null | undefined, origin: string, type: string, data: Record<string, unknown> = {}) {
  frame?.postMessage({ channel: CHANNEL, v: VERSION, type, ...data }, origin)
}

/** The path of the block `uid` in a document (`blocks/0/items/1`), or null. */
export function pathOfBlock(blocks: unknown, uid: string, prefix = 'blocks'): string | null {
  if (!Array.isArray(blocks)) return null
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i] as Record<string, unknown> | null
    if (!b || typeof b !== 'object') continue
    const path = `${prefix}/${i}`
    if (b._uid === uid) return path
    for (const [k, v] of Object.entries(b)) {
      const inner = Array.isArray(v) ? pathOfBlock(v, uid, `${path}/${k}`) : null
      if (inner) return inner
    }
  }
  return null
}
