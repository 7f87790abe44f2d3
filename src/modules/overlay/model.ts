import { t } from 'elysia'
import { Int, oneOf, pageQuery, SpaceSlug, Timestamp, Uuid } from '../../kernel/schemas'
import { MAX_PATTERN, MAX_SELECTOR } from './rules'
import { MAX_TEST_HTML } from './tester'

export const ACTIONS = ['replace_text', 'replace_html', 'set_attribute', 'hide', 'insert_before', 'insert_after'] as const
export type OverlayAction = (typeof ACTIONS)[number]
/** Actions whose content is HTML (sanitized at save). */
export const HTML_ACTIONS: readonly OverlayAction[] = ['replace_html', 'insert_before', 'insert_after']

const Content = t.Record(t.String({ maxLength: 35 }), t.String({ maxLength: 20_000 }), {
  maxProperties: 200,
  description:
    'Locale of the Space → text. replace_text: plain text; replace_html, insert_before, insert_after: HTML, sanitized at save; set_attribute: the attribute value; hide: none (ignored)',
})

export const OverlayBody = t.Object({
  name: t.String({ minLength: 1, maxLength: 200, error: 'must be 1 to 200 characters' }),
  path_pattern: t.String({ minLength: 1, maxLength: MAX_PATTERN, description: 'Glob on the page path, e.g. /blog/** or /products/*: picomatch segments (* once per segment, ?, [...]) and whole-segment **' }),
  selector: t.String({ minLength: 1, maxLength: MAX_SELECTOR, description: 'CSS selector of the elements the action applies to' }),
  action: oneOf(ACTIONS, { error: `must be one of ${ACTIONS.join(', ')}` }),
  attribute: t.Optional(t.Union([t.String({ maxLength: 100 }), t.Null()], { description: 'set_attribute only: an allow-listed attribute name (docs/overlay.md); linking ones (href, src, …) only with a selector ending at their elements' })),
  content: t.Optional(Content),
  segment_key: t.Optional(t.Union([t.String({ maxLength: 64 }), t.Null()], { description: 'Only visitors of this audience segment get the rule (a segment key of the Space)' })),
  active: t.Optional(t.Boolean({ description: 'Default true' })),
  priority: t.Optional(Int({ minimum: -1_000_000, maximum: 1_000_000, error: 'must be an integer from -1,000,000 to 1,000,000', description: 'Lower applies first (default 0); ties by creation' })),
  // Read-only fields a client may send back from a GET: ignored.
  id: t.Optional(t.String({ maxLength: 64, description: 'Read-only; ignored' })),
  created_at: t.Optional(t.Unknown({ description: 'Read-only; ignored' })),
  updated_at: t.Optional(t.Unknown({ description: 'Read-only; ignored' })),
})
export type OverlayInput = typeof OverlayBody.static

export const OverlayModel = t.Object({
  id: t.String({ format: 'uuid' }),
  name: t.String(),
  path_pattern: t.String(),
  selector: t.String(),
  action: t.String({ description: ACTIONS.join(' | ') }),
  attribute: t.Union([t.String(), t.Null()]),
  content: t.Record(t.String(), t.String(), { description: 'As stored: HTML content already sanitized' }),
  segment_key: t.Union([t.String(), t.Null()]),
  active: t.Boolean(),
  priority: Int(),
  created_at: Timestamp,
  updated_at: Timestamp,
})
export type OverlayView = typeof OverlayModel.static

export const OverlayParams = t.Object({ space: SpaceSlug, id: Uuid })
export const OverlayListQuery = pageQuery(100, 25)

// ---- the public read ----

export const PublicRule = t.Object({
  id: t.String({ format: 'uuid' }),
  selector: t.String(),
  action: t.String({ description: ACTIONS.join(' | ') }),
  attribute: t.Union([t.String(), t.Null()]),
  content: t.Union([t.String(), t.Null()], { description: 'In the served locale chain; null for hide' }),
  priority: Int(),
})

export const PublicOverlayModel = t.Object({
  data: t.Object({
    lang: t.String({ description: 'The first locale of the fallback chain' }),
    segment: t.Union([t.String(), t.Null()], { description: 'The audience segment the request resolved to' }),
    rules: t.Array(PublicRule, { description: 'Active rules whose pattern matches the path, in priority order' }),
  }),
})
export type PublicOverlay = typeof PublicOverlayModel.static

export const PublicOverlayQuery = t.Object(
  {
    path: t.String({ minLength: 1, maxLength: 2048, pattern: '^/', error: 'must be a page path starting with /', description: 'The page path (no query or fragment)' }),
    lang: t.Optional(t.String({ maxLength: 35, description: 'BCP-47 tag; a fallback chain applies (else Accept-Language)' })),
  },
  // Segment rules may read any query parameter (query and utm rules), as on Story reads.
  { additionalProperties: true },
)

// ---- the tester ----

export const OverlayTestBody = t.Object({
  path: t.String({ minLength: 1, maxLength: 2048, pattern: '^/', error: 'must be a page path starting with /', description: 'The page path to test (no query or fragment)' }),
  html: t.String({ maxLength: MAX_TEST_HTML, error: `must be at most ${MAX_TEST_HTML} characters of HTML`, description: `An HTML snippet of the page (at most ${MAX_TEST_HTML} characters); nothing in it runs` }),
  lang: t.Optional(t.String({ maxLength: 35, description: 'A locale of the Space; the fallback chain applies as on the public read (default: the Space default)' })),
  segment_key: t.Optional(t.Union([t.String({ maxLength: 64 }), t.Null()], { description: 'Test as a visitor of this audience segment (default: a visitor in none)' })),
})
export type OverlayTestInput = typeof OverlayTestBody.static

export const OverlayTestModel = t.Object({
  lang: t.String({ description: 'The first locale of the chain the content was taken from' }),
  segment: t.Union([t.String(), t.Null()]),
  html: t.String({ description: 'The snippet after the rules, serialized (inserted markup stripped as embed.js strips it)' }),
  rules: t.Array(
    t.Object({ id: t.String({ format: 'uuid' }), name: t.String(), selector: t.String(), action: t.String(), elements: Int({ description: 'Elements the selector found in the snippet' }) }),
    { description: 'The rules the page gets, in the order they applied' },
  ),
  skipped: t.Array(t.String(), { description: 'Rules not applied because the test ran out of time (ids)' }),
})
