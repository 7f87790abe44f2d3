import { and, asc, count, eq, sql } from 'drizzle-orm'
import { audienceSegments, type SegmentRule, storyVariants, storyVariantsPublished } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import type { Tx } from '../../kernel/db'
import { AppError, conflict, notFound, uniqueAs, validationFailed } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import { canonicalLocale } from '../../kernel/locale'
import { localeSettings } from '../spaces/locales'
import { checkStoryContent, storyRefOrFail, touchStoryContent } from '../stories/service'
import './events'
import {
  MAX_SEGMENTS,
  type SaveWarning,
  SegmentErrors,
  type SegmentInput,
  type SegmentPatch,
  type SegmentSaved,
  type SegmentView,
  type VariantInput,
  type VariantPatch,
  type VariantView,
} from './model'
import { ruleErrors } from './rules'

type SegmentRow = typeof audienceSegments.$inferSelect
type VariantRow = typeof storyVariants.$inferSelect

const MAX_INT = 2_147_483_647
/** Serialises segment creation per Space (the 100-segment limit); the second key is the Space id. */
const SEGMENT_LOCK = 0x5e6

// ---- Segments ----

function normaliseRules(rules: SegmentInput['rules']): SegmentRule[] {
  return rules.map((r) => {
    const out: SegmentRule = { type: r.type, operator: r.operator, value: Array.isArray(r.value) ? [...r.value] : r.value }
    if (r.key !== undefined) out.key = r.key
    return out
  })
}

function checkRules(rules: SegmentRule[]) {
  const errors = ruleErrors(rules)
  if (Object.keys(errors).length) throw validationFailed(errors, 'A rule of the segment is not valid.')
}

/**
 * An empty rule list matches every visitor, and one such segment makes every header-less public read of the Space
 * `private`: it must be asked for with `match_all: true`, which in turn takes no rules.
 */
function checkMatchAll(rules: SegmentRule[], matchAll: boolean) {
  if (matchAll && rules.length) {
    throw validationFailed({ match_all: ['must be false when the segment has rules (true matches every visitor, with rules: [])'] }, 'The segment is not valid.')
  }
  if (!matchAll && !rules.length) {
    throw validationFailed(
      { rules: ['must hold at least one rule; a segment for every visitor says match_all: true (with rules: [])'] },
      'A segment without rules would match every visitor.',
    )
  }
}

/** What the editor should know about a saved segment: rules that are saved but cannot match on this installation. */
function saveWarnings(kernel: Kernel, rules: SegmentRule[]): SaveWarning[] {
  if (kernel.config.trustedProxies.length > 0) return []
  const warnings: SaveWarning[] = []
  rules.forEach((r, i) => {
    if (r.type !== 'country') return
    warnings.push({
      code: 'country_rule_inactive',
      field: `rules/${i}`,
      message: `Country rules read ${kernel.config.segmentCountryHeader}, which only a trusted proxy may set; TRUSTED_PROXIES is empty, so this rule never matches (and a neq or not_in rule never matches either).`,
    })
  })
  return warnings
}

function segmentView(r: SegmentRow): SegmentView {
  return {
    id: r.id,
    key: r.key,
    label: r.label,
    priority: r.priority,
    active: r.active,
    rules: r.rules,
    match_all: r.matchAll,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  }
}

/** `{idOrKey}`: digits only is an id, anything else a key. */
async function findSegment(db: Kernel['db']['db'] | Tx, spaceId: number, idOrKey: string, lock = false): Promise<SegmentRow | null> {
  let where
  if (/^[0-9]+$/.test(idOrKey)) {
    const id = Number(idOrKey)
    if (id < 1 || id > MAX_INT) return null
    where = and(eq(audienceSegments.spaceId, spaceId), eq(audienceSegments.id, id))
  } else {
    where = and(eq(audienceSegments.spaceId, spaceId), eq(audienceSegments.key, idOrKey))
  }
  const q = db.select().from(audienceSegments).where(where).limit(1)
  const [row] = lock ? await q.for('update') : await q
  return row ?? null
}

const keyTaken: (err: unknown) => never = uniqueAs('audience_segments_space_key', () => conflict('Another audience segment of this Space has this key.'))

export async function listSegments(kernel: Kernel, access: SpaceAccess): Promise<SegmentView[]> {
  const rows = await kernel.db.db
    .select()
    .from(audienceSegments)
    .where(eq(audienceSegments.spaceId, access.space.id))
    .orderBy(asc(audienceSegments.priority), asc(audienceSegments.id))
  return rows.map(segmentView)
}

export async function getSegment(kernel: Kernel, access: SpaceAccess, idOrKey: string): Promise<SegmentView> {
  const row = await findSegment(kernel.db.db, access.space.id, idOrKey)
  if (!row) throw notFound('Audience segment')
  return segmentView(row)
}

export async function createSegment(kernel: Kernel, access: SpaceAccess, input: SegmentInput): Promise<SegmentSaved> {
  const rules = normaliseRules(input.rules)
  checkRules(rules)
  const matchAll = input.match_all ?? false
  checkMatchAll(rules, matchAll)
  const spaceId = access.space.id
  try {
    return await transact(kernel, async (tx, emit) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${SEGMENT_LOCK}, ${spaceId})`)
      const [{ n }] = await tx.select({ n: count() }).from(audienceSegments).where(eq(audienceSegments.spaceId, spaceId))
      if (Number(n) >= MAX_SEGMENTS) throw SegmentErrors.segmentLimit()
      const now = kernel.clock.now()
      const [row] = await tx
        .insert(audienceSegments)
        .values({ spaceId, key: input.key, label: input.label, priority: input.priority, active: input.active ?? true, rules, matchAll, createdAt: now, updatedAt: now })
        .returning()
      emit({ type: 'audience_segment.changed', spaceId, payload: { segment: { id: row.id, key: row.key, action: 'created' } } })
      return { data: segmentView(row), warnings: saveWarnings(kernel, row.rules) }
    })
  } catch (err) {
    keyTaken(err)
  }
}

/** PUT replaces (every field but `active` and `match_all` required; they default to true and false), PATCH merges. */
export async function updateSegment(kernel: Kernel, access: SpaceAccess, idOrKey: string, input: SegmentPatch, replace: boolean): Promise<SegmentSaved> {
  const rules = input.rules === undefined ? undefined : normaliseRules(input.rules)
  if (rules) checkRules(rules)
  const spaceId = access.space.id
  try {
    return await transact(kernel, async (tx, emit) => {
      const existing = await findSegment(tx, spaceId, idOrKey, true)
      if (!existing) throw notFound('Audience segment')
      const patch: Partial<typeof audienceSegments.$inferInsert> = { updatedAt: kernel.clock.now() }
      if (input.key !== undefined) patch.key = input.key
      if (input.label !== undefined) patch.label = input.label
      if (input.priority !== undefined) patch.priority = input.priority
      if (input.active !== undefined) patch.active = input.active
      else if (replace) patch.active = true
      if (rules) patch.rules = rules
      if (input.match_all !== undefined) patch.matchAll = input.match_all
      else if (replace) patch.matchAll = false
      // Checked on the segment as it will be (PATCH merges): the transaction rolls back on a refusal.
      checkMatchAll(patch.rules ?? existing.rules, patch.matchAll ?? existing.matchAll)
      const [row] = await tx.update(audienceSegments).set(patch).where(eq(audienceSegments.id, existing.id)).returning()
      emit({ type: 'audience_segment.changed', spaceId, payload: { segment: { id: row.id, key: row.key, action: 'updated' } } })
      return { data: segmentView(row), warnings: saveWarnings(kernel, row.rules) }
    })
  } catch (err) {
    keyTaken(err)
  }
}

/** Deletes the segment and, with it, its variants (drafts and published). */
export async function deleteSegment(kernel: Kernel, access: SpaceAccess, idOrKey: string): Promise<void> {
  const spaceId = access.space.id
  await transact(kernel, async (tx, emit) => {
    const existing = await findSegment(tx, spaceId, idOrKey, true)
    if (!existing) throw notFound('Audience segment')
    await tx.delete(audienceSegments).where(eq(audienceSegments.id, existing.id))
    emit({ type: 'audience_segment.changed', spaceId, payload: { segment: { id: existing.id, key: existing.key, action: 'deleted' } } })
  })
}

// ---- Variants ----

function variantView(r: VariantRow, storyUuid: string, segmentKey: string): VariantView {
  return {
    id: r.id,
    story_uuid: storyUuid,
    audience_segment_id: r.segmentId,
    segment_key: segmentKey,
    lang: r.lang,
    content: r.content,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  }
}

async function variantLangOrFail(tx: Tx, access: SpaceAccess, raw: string | undefined): Promise<string> {
  if (raw === undefined) return access.space.defaultLang
  const lang = canonicalLocale(raw)
  if (!lang) throw validationFailed({ lang: [`"${raw.slice(0, 40)}" is not a valid BCP-47 language tag.`] })
  const { codes } = await localeSettings(tx, access.space.id)
  if (!codes.includes(lang)) throw validationFailed({ lang: [`"${lang}" is not one of this Space's locales (${codes.join(', ')}).`] })
  return lang
}

async function segmentOfSpaceOrFail(tx: Tx, spaceId: number, id: number): Promise<SegmentRow> {
  const row = await findSegment(tx, spaceId, String(id))
  if (!row) throw validationFailed({ audience_segment_id: ['No audience segment with this id in this Space.'] })
  return row
}

/** Story content rules, with error keys under `content/` (the body field the document came in). */
async function contentOrFail(tx: Tx, spaceId: number, content: unknown) {
  try {
    return await checkStoryContent(tx, spaceId, content)
  } catch (err) {
    if (err instanceof AppError && err.fields) {
      const fields: Record<string, string[]> = {}
      for (const [k, v] of Object.entries(err.fields)) fields[k === 'content' || k.startsWith('content/') ? k : `content/${k}`] = v
      throw validationFailed(fields, err.message)
    }
    throw err
  }
}

const duplicateVariant: (err: unknown) => never = uniqueAs('story_variants_story_segment_lang_key', () =>
  conflict('The Story already has a variant for this audience segment in this locale.'),
)

export async function listVariants(kernel: Kernel, access: SpaceAccess, uuid: string): Promise<VariantView[]> {
  const db = kernel.db.db
  const story = await storyRefOrFail(db, access.space.id, uuid)
  const rows = await db
    .select({ v: storyVariants, key: audienceSegments.key })
    .from(storyVariants)
    .innerJoin(audienceSegments, eq(audienceSegments.id, storyVariants.segmentId))
    .where(eq(storyVariants.storyId, story.id))
    .orderBy(asc(audienceSegments.priority), asc(audienceSegments.id), asc(storyVariants.lang))
  return rows.map((r) => variantView(r.v, story.uuid, r.key))
}

/** A variant is a draft of the Story: the Story shows unpublished changes until it is published again. */
export async function createVariant(kernel: Kernel, access: SpaceAccess, uuid: string, input: VariantInput): Promise<VariantView> {
  const spaceId = access.space.id
  try {
    return await transact(kernel, async (tx) => {
      const story = await touchStoryContent(tx, kernel, spaceId, uuid)
      const segment = await segmentOfSpaceOrFail(tx, spaceId, input.audience_segment_id)
      const lang = await variantLangOrFail(tx, access, input.lang)
      const content = await contentOrFail(tx, spaceId, input.content)
      const now = kernel.clock.now()
      const [row] = await tx
        .insert(storyVariants)
        .values({ spaceId, storyId: story.id, segmentId: segment.id, lang, content, createdAt: now, updatedAt: now })
        .returning()
      return variantView(row, story.uuid, segment.key)
    })
  } catch (err) {
    duplicateVariant(err)
  }
}

async function variantOfStory(tx: Tx, storyId: number, id: number): Promise<VariantRow> {
  const [row] = await tx
    .select()
    .from(storyVariants)
    .where(and(eq(storyVariants.storyId, storyId), eq(storyVariants.id, id)))
    .limit(1)
  if (!row) throw notFound('Variant')
  return row
}

export async function updateVariant(kernel: Kernel, access: SpaceAccess, uuid: string, id: number, input: VariantPatch): Promise<VariantView> {
  const spaceId = access.space.id
  try {
    return await transact(kernel, async (tx) => {
      const story = await touchStoryContent(tx, kernel, spaceId, uuid)
      const existing = await variantOfStory(tx, story.id, id)
      const segment = await segmentOfSpaceOrFail(tx, spaceId, input.audience_segment_id ?? existing.segmentId)
      const patch: Partial<typeof storyVariants.$inferInsert> = { updatedAt: kernel.clock.now(), segmentId: segment.id }
      if (input.lang !== undefined) patch.lang = await variantLangOrFail(tx, access, input.lang)
      if (input.content !== undefined) patch.content = await contentOrFail(tx, spaceId, input.content)
      const [row] = await tx.update(storyVariants).set(patch).where(eq(storyVariants.id, existing.id)).returning()
      return variantView(row, story.uuid, segment.key)
    })
  } catch (err) {
    duplicateVariant(err)
  }
}

/** Removes the draft; the published variant stays until the Story is published again. */
export async function deleteVariant(kernel: Kernel, access: SpaceAccess, uuid: string, id: number): Promise<void> {
  await transact(kernel, async (tx) => {
    const story = await touchStoryContent(tx, kernel, access.space.id, uuid)
    const existing = await variantOfStory(tx, story.id, id)
    await tx.delete(storyVariants).where(eq(storyVariants.id, existing.id))
  })
}

// ---- Publishing (in the Story's publish / withdraw transaction) ----

/** The Story's draft variants become its published ones (the publish snapshot includes them). */
export async function publishVariants(tx: Tx, storyId: number) {
  await tx.delete(storyVariantsPublished).where(eq(storyVariantsPublished.storyId, storyId))
  const drafts = await tx
    .select({ segmentId: storyVariants.segmentId, lang: storyVariants.lang, content: storyVariants.content })
    .from(storyVariants)
    .where(eq(storyVariants.storyId, storyId))
  if (drafts.length) await tx.insert(storyVariantsPublished).values(drafts.map((d) => ({ storyId, ...d })))
}

export async function withdrawVariants(tx: Tx, storyId: number) {
  await tx.delete(storyVariantsPublished).where(eq(storyVariantsPublished.storyId, storyId))
}

/** The content a read serves to a segment: the published variant, or with `draft` the latest draft; null when none. */
export async function variantContentJson(kernel: Kernel, draft: boolean, storyId: number, segmentId: number, lang: string): Promise<string | null> {
  const db = kernel.db.db
  const rows = draft
    ? await db
        .select({ content: storyVariants.content })
        .from(storyVariants)
        .where(and(eq(storyVariants.storyId, storyId), eq(storyVariants.segmentId, segmentId), eq(storyVariants.lang, lang)))
        .limit(1)
    : await db
        .select({ content: storyVariantsPublished.content })
        .from(storyVariantsPublished)
        .where(and(eq(storyVariantsPublished.storyId, storyId), eq(storyVariantsPublished.segmentId, segmentId), eq(storyVariantsPublished.lang, lang)))
        .limit(1)
  return rows.length ? JSON.stringify(rows[0].content) : null
}
