import { asc, eq } from 'drizzle-orm'
import { audienceSegments } from './tables'
import { ScopedCache, cacheShare, plainSize } from '../../kernel/cache'
import type { Kernel } from '../../kernel/kernel'
import { type CompiledRule, compileRule, ruleMatches, type Signals } from './rules'

/** A segment as resolution uses it. */
export interface LiveSegment {
  id: number
  key: string
  /** The render-key part: id and key, so a renamed or re-created segment never meets a body rendered for the old one. */
  part: string
  /** `{X-Service-Segment: key}`, one object per segment: the read path keys its prebuilt response headers by it. */
  headers: Record<string, string>
  /** Its memo key when named by X-Service-Segment (ReadStep.vary). */
  vary: string
  rules: CompiledRule[]
  /** A stored rule no longer compiles: the segment never matches by rules (the header short-cut still names it). */
  broken: boolean
}

/** The segments of one Space, as resolution needs them. */
export interface SegmentSet {
  /** Active segments in priority order, ties by id. */
  active: LiveSegment[]
  /** Active segments by key (the X-Service-Segment short-cut). */
  byKey: Map<string, LiveSegment>
  /** Every key of the Space, inactive segments included. */
  keys: Set<string>
  /** Which request headers the active segments' rules read (besides Accept-Language): what a resolution varies on. */
  reads: { country: boolean; referer: boolean; cookie: boolean }
}

const MAX_SPACES = 10_000

/**
 * Every Space's segments in memory, so resolving a read costs no database round trip. Loaded on first use; dropped
 * when a segment changes or the Space is archived (the runtime wires `invalidateOn`: this instance at commit, the
 * others through the event bus's LISTEN/NOTIFY), and wholesale when the bus reconnects. A load that raced with a
 * change is not stored (kernel/cache.ts).
 */
export type SegmentCache = ScopedCache<number, SegmentSet>

export function segmentCache(kernel: Pick<Kernel, 'db' | 'clock' | 'config'>): SegmentCache {
  return new ScopedCache({
    name: 'segments',
    scopeOf: (spaceId) => spaceId,
    idOf: String,
    load: (spaceId) => loadSegments(kernel, spaceId),
    now: () => kernel.clock.ms(),
    maxEntries: MAX_SPACES,
    maxBytes: cacheShare(kernel.config, 1 / 32),
    sizeOf: plainSize,
    invalidateOn: {
      'audience_segment.changed': (e) => e.spaceId,
      'space.archived': (e) => e.spaceId,
    },
  })
}

async function loadSegments(kernel: Pick<Kernel, 'db'>, spaceId: number): Promise<SegmentSet> {
  const rows = await kernel.db.db
    .select()
    .from(audienceSegments)
    .where(eq(audienceSegments.spaceId, spaceId))
    .orderBy(asc(audienceSegments.priority), asc(audienceSegments.id))
  const set: SegmentSet = { active: [], byKey: new Map(), keys: new Set(), reads: { country: false, referer: false, cookie: false } }
  for (const r of rows) {
    set.keys.add(r.key)
    if (!r.active) continue
    const compiled = r.rules.map(compileRule)
    const rules = compiled.filter((c): c is CompiledRule => c !== null)
    const s: LiveSegment = {
      id: r.id,
      key: r.key,
      part: `seg:${r.id}:${r.key}`,
      headers: { 'X-Service-Segment': r.key },
      vary: `h${r.key}`,
      rules,
      // No rules match every visitor: only when the segment says so (the service refuses anything else at save).
      broken: rules.length !== compiled.length || (rules.length === 0 && !r.matchAll),
    }
    for (const rule of rules) {
      if (rule.type === 'country') set.reads.country = true
      // utm rules read the query string first: a URL with one never takes the memoised path (it is part of the URL).
      else if (rule.type === 'referrer' || rule.type === 'utm_source' || rule.type === 'utm_campaign') set.reads.referer = true
      else if (rule.type === 'cookie') set.reads.cookie = true
    }
    set.active.push(s)
    set.byKey.set(r.key, s)
  }
  return set
}

/** §4.9: active segments in priority order; the first whose rules all match. */
export function matchSegment(set: SegmentSet, signals: Signals): LiveSegment | null {
  outer: for (const s of set.active) {
    if (s.broken) continue
    for (const r of s.rules) if (!ruleMatches(r, signals)) continue outer
    return s
  }
  return null
}

/** The X-Service-Segment short-cut: an active segment of the Space named by the header, or null (ignored). */
export function segmentFromHeader(set: SegmentSet, header: string | null): LiveSegment | null {
  if (!header || header.length > 64) return null
  return set.byKey.get(header) ?? set.byKey.get(header.trim().toLowerCase()) ?? null
}
