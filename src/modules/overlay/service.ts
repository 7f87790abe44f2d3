import { and, asc, count, eq } from 'drizzle-orm'
import { domOverlays } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { notFound, validationFailed } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { canonicalLocale } from '../../kernel/locale'
import { localeSettings } from '../spaces/locales'
import type { OverlayEventPayload } from './events'
import { HTML_ACTIONS, type OverlayAction, type OverlayInput, type OverlayTestInput, type OverlayView } from './model'
import type { OverlayReader } from './public'
import { applyToSnippet, MAX_SNIPPET_ELEMENTS } from './tester'
import { attributeError, attributeTargetError, compilePattern, dangerousValue, sanitize, selectorError } from './rules'

export type OverlayRow = typeof domOverlays.$inferSelect

export function overlayView(row: OverlayRow): OverlayView {
  return {
    id: row.uuid,
    name: row.name,
    path_pattern: row.pathPattern,
    selector: row.selector,
    action: row.action,
    attribute: row.attribute,
    content: row.content,
    segment_key: row.segmentKey,
    active: row.active,
    priority: row.priority,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

const payloadOf = (row: OverlayRow): OverlayEventPayload => ({
  dom_overlay: { id: row.uuid, name: row.name, path_pattern: row.pathPattern, action: row.action, active: row.active },
})

/** Whether a key names a segment of the Space (the segments module's state). */
export type SegmentKeys = (spaceId: number, key: string) => boolean | Promise<boolean>

/**
 * Every rule of an overlay rule beyond the body schema; 422 with all problems at once: the selector through a CSS
 * parser, the pattern through the glob compiler, the attribute (set_attribute only: an allow-listed attribute, on the
 * elements it belongs to), content keyed by the
 * Space's locales — HTML sanitized, attribute values never a javascript: URL — and the segment key.
 */
async function checkOverlay(kernel: Kernel, access: SpaceAccess, input: OverlayInput, isSegmentKey: SegmentKeys) {
  const errors: Record<string, string[]> = {}
  const add = (k: string, m: string) => (errors[k] ??= []).push(m)
  const action = input.action as OverlayAction
  const sel = selectorError(input.selector)
  if (sel) add('selector', sel)
  const pattern = compilePattern(input.path_pattern)
  if ('error' in pattern) add('path_pattern', pattern.error)
  let attribute: string | null = null
  if (action === 'set_attribute') {
    if (!input.attribute) add('attribute', 'is required for set_attribute')
    else {
      const e = attributeError(input.attribute) ?? (sel ? null : attributeTargetError(input.selector, input.attribute))
      if (e) add('attribute', e)
      else attribute = input.attribute.toLowerCase()
    }
  } else if (input.attribute) add('attribute', 'is only for set_attribute')
  const content: Record<string, string> = {}
  if (action !== 'hide') {
    const { codes } = await localeSettings(kernel.db.db, access.space.id)
    for (const [code, raw] of Object.entries(input.content ?? {})) {
      const c = canonicalLocale(code)
      if (!c || !codes.includes(c)) {
        add(`content/${code}`, `is not a locale of the Space (${codes.join(', ')})`)
        continue
      }
      if (action === 'set_attribute' && dangerousValue(raw)) {
        add(`content/${code}`, 'must not be a javascript:, vbscript: or data: URL')
        continue
      }
      content[c] = HTML_ACTIONS.includes(action) ? sanitize(raw) : raw
    }
    if (!Object.keys(input.content ?? {}).length) add('content', `is required for ${action} (a text per locale)`)
  }
  let segmentKey: string | null = null
  if (input.segment_key) {
    const key = input.segment_key.trim().toLowerCase()
    if (!(await isSegmentKey(access.space.id, key))) add('segment_key', 'is not an audience segment of this Space')
    else segmentKey = key
  }
  if (Object.keys(errors).length) throw validationFailed(errors)
  return {
    name: input.name,
    pathPattern: input.path_pattern,
    selector: input.selector.trim(),
    action,
    attribute,
    content,
    segmentKey,
    active: input.active ?? true,
    priority: input.priority ?? 0,
  }
}

export async function createOverlay(kernel: Kernel, access: SpaceAccess, input: OverlayInput, isSegmentKey: SegmentKeys): Promise<OverlayView> {
  const values = await checkOverlay(kernel, access, input, isSegmentKey)
  const now = kernel.clock.now()
  const row = await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .insert(domOverlays)
      .values({ ...values, uuid: crypto.randomUUID(), spaceId: access.space.id, createdAt: now, updatedAt: now })
      .returning()
    emit({ type: 'dom_overlay.created', spaceId: access.space.id, payload: payloadOf(row) })
    return row
  })
  return overlayView(row)
}

export async function listOverlays(kernel: Kernel, access: SpaceAccess, q: { page?: number; per_page?: number }) {
  const page = pageOf(q.page, q.per_page)
  const where = eq(domOverlays.spaceId, access.space.id)
  const [rows, [{ total }]] = await Promise.all([
    kernel.db.db.select().from(domOverlays).where(where).orderBy(asc(domOverlays.priority), asc(domOverlays.id)).limit(page.perPage).offset(page.offset),
    kernel.db.db.select({ total: count() }).from(domOverlays).where(where),
  ])
  return { data: rows.map(overlayView), meta: { total: Number(total), page: page.page, per_page: page.perPage } }
}

async function requireOverlay(kernel: Kernel, access: SpaceAccess, id: string): Promise<OverlayRow> {
  const [row] = await kernel.db.db
    .select()
    .from(domOverlays)
    .where(and(eq(domOverlays.uuid, id.toLowerCase()), eq(domOverlays.spaceId, access.space.id)))
    .limit(1)
  if (!row) throw notFound('DOM overlay')
  return row
}

export async function getOverlay(kernel: Kernel, access: SpaceAccess, id: string): Promise<OverlayView> {
  return overlayView(await requireOverlay(kernel, access, id))
}

export async function updateOverlay(kernel: Kernel, access: SpaceAccess, id: string, input: OverlayInput, isSegmentKey: SegmentKeys): Promise<OverlayView> {
  const current = await requireOverlay(kernel, access, id)
  const values = await checkOverlay(kernel, access, input, isSegmentKey)
  const row = await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .update(domOverlays)
      .set({ ...values, updatedAt: kernel.clock.now() })
      .where(eq(domOverlays.id, current.id))
      .returning()
    if (!row) throw notFound('DOM overlay')
    emit({ type: 'dom_overlay.updated', spaceId: access.space.id, payload: payloadOf(row) })
    return row
  })
  return overlayView(row)
}

export async function deleteOverlay(kernel: Kernel, access: SpaceAccess, id: string): Promise<void> {
  const current = await requireOverlay(kernel, access, id)
  await transact(kernel, async (tx, emit) => {
    const gone = await tx.delete(domOverlays).where(eq(domOverlays.id, current.id)).returning({ id: domOverlays.id })
    if (!gone.length) throw notFound('DOM overlay')
    emit({ type: 'dom_overlay.deleted', spaceId: access.space.id, payload: payloadOf(current) })
  })
}

/** A Space's active rules in priority order, for the public read's cache. */
export async function activeOverlays(kernel: Kernel, spaceId: number): Promise<OverlayRow[]> {
  return kernel.db.db
    .select()
    .from(domOverlays)
    .where(and(eq(domOverlays.spaceId, spaceId), eq(domOverlays.active, true)))
    .orderBy(asc(domOverlays.priority), asc(domOverlays.id))
}

/**
 * The tester: the rules `path` gets (as the public read chooses them, for a visitor in `segment_key` or in none) applied
 * to an HTML snippet on the server. Reads only; stores nothing. 422 names an unknown locale or segment.
 */
export async function testOverlays(kernel: Kernel, access: SpaceAccess, input: OverlayTestInput, isSegmentKey: SegmentKeys, reader: OverlayReader) {
  const errors: Record<string, string[]> = {}
  let lang: string | undefined
  if (input.lang) {
    const { codes } = await localeSettings(kernel.db.db, access.space.id)
    const c = canonicalLocale(input.lang)
    if (!c || !codes.includes(c)) errors.lang = [`is not a locale of the Space (${codes.join(', ')})`]
    else lang = c
  }
  let segment: string | null = null
  if (input.segment_key) {
    const key = input.segment_key.trim().toLowerCase()
    if (!(await isSegmentKey(access.space.id, key))) errors.segment_key = ['is not an audience segment of this Space']
    else segment = key
  }
  if (/[\u0000]/.test(input.html)) errors.html = ['must not contain NUL characters']
  if (Object.keys(errors).length) throw validationFailed(errors)
  const chosen = await reader.testRules(access.space.slug, input.path, lang, segment)
  const outcome = applyToSnippet(input.html, chosen.rules)
  if (outcome.tooLarge) throw validationFailed({ html: [`must hold at most ${MAX_SNIPPET_ELEMENTS} elements`] })
  const elements = new Map(outcome.applied.map((a) => [a.id, a.elements]))
  return {
    lang: chosen.lang,
    segment,
    html: outcome.html,
    rules: chosen.rules.filter((r) => elements.has(r.id)).map((r) => ({ id: r.id, name: r.name, selector: r.selector, action: r.action, elements: elements.get(r.id)! })),
    skipped: outcome.skipped,
  }
}
