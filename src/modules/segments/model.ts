import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { Int, IntId, oneOf, SpaceSlug, Timestamp, Uuid } from '../../kernel/schemas'

export const RULE_TYPES = ['country', 'language', 'referrer', 'cookie', 'query', 'utm_source', 'utm_campaign'] as const
export const RULE_OPERATORS = ['eq', 'neq', 'in', 'not_in', 'contains', 'starts_with', 'regex'] as const
export type RuleType = (typeof RULE_TYPES)[number]
export type RuleOperator = (typeof RULE_OPERATORS)[number]

export const SEGMENT_KEY_PATTERN = '^[a-z][a-z0-9_-]{0,63}$'
export const MAX_RULES = 20
export const MAX_SEGMENTS = 100
export const MAX_LIST_VALUES = 50
export const MAX_REGEX_LENGTH = 200
export const MAX_VALUE_LENGTH = 500

export const SegmentErrors = {
  segmentLimit: defineError('segment_limit', 409, `The Space already has ${MAX_SEGMENTS} audience segments, the most it may have.`),
}

const INT32 = { minimum: -2_147_483_648, maximum: 2_147_483_647 }

const SegmentKey = t.String({
  pattern: SEGMENT_KEY_PATTERN,
  error: 'must match ^[a-z][a-z0-9_-]{0,63}$',
  description: 'Unique per Space: ^[a-z][a-z0-9_-]{0,63}$',
})
const Label = t.String({ minLength: 1, maxLength: 200, error: 'must be 1 to 200 characters' })
const Priority = Int({ ...INT32, error: 'must be an integer', description: 'Lower first; ties: lower id first' })
const Active = t.Boolean({ error: 'must be true or false', description: 'Only active segments take part in matching (default true)' })

// Value shape per operator, the cookie/query key and regex compilation are checked by the service (rules.ts), so a
// bad rule answers 422 keyed `rules/<i>/<field>` with the reason.
export const RuleBody = t.Object({
  type: oneOf(RULE_TYPES, { error: `must be one of ${RULE_TYPES.join(', ')}` }),
  operator: oneOf(RULE_OPERATORS, { error: `must be one of ${RULE_OPERATORS.join(', ')}` }),
  value: t.Union([t.String({ maxLength: MAX_VALUE_LENGTH }), t.Array(t.String({ maxLength: MAX_VALUE_LENGTH }), { maxItems: MAX_LIST_VALUES })], {
    error: `must be a string (at most ${MAX_VALUE_LENGTH} characters), or for in / not_in an array of 1 to ${MAX_LIST_VALUES} strings`,
    description: 'An array of 1–50 strings for in / not_in, a string otherwise (regex: at most 200 characters, RE2 syntax)',
  }),
  key: t.Optional(t.String({ minLength: 1, maxLength: 128, error: 'must be 1 to 128 characters', description: 'The cookie or query parameter name (cookie and query rules only)' })),
})
const Rules = t.Array(RuleBody, {
  maxItems: MAX_RULES,
  error: `must be an array of at most ${MAX_RULES} rules`,
  description: `1 to ${MAX_RULES} rules, all of which must match; empty only with match_all: true (otherwise 422)`,
})
const MatchAll = t.Boolean({
  error: 'must be true or false',
  description: 'true: the segment matches every visitor, and `rules` must be empty. Default false: an empty `rules` is refused (422), so no segment matches everyone by accident',
})

export const CreateSegmentBody = t.Object({
  key: SegmentKey,
  label: Label,
  priority: Priority,
  active: t.Optional(Active),
  rules: Rules,
  match_all: t.Optional(MatchAll),
})
/** `POST …/check-rules`: rules checked as a save would, for an editor to see the refusals while typing. */
export const CheckRulesBody = t.Object({ rules: Rules })
export const CheckRulesModel = t.Object({
  data: t.Object({
    valid: t.Boolean(),
    errors: t.Record(t.String(), t.Array(t.String()), { description: 'Messages keyed `rules/<i>/<field>`, as a save answers them in a 422' }),
  }),
})

export const PatchSegmentBody = t.Object({
  key: t.Optional(SegmentKey),
  label: t.Optional(Label),
  priority: t.Optional(Priority),
  active: t.Optional(Active),
  rules: t.Optional(Rules),
  match_all: t.Optional(MatchAll),
})

export const SegmentParams = t.Object({
  space: SpaceSlug,
  idOrKey: t.String({
    pattern: '^(?:[0-9]{1,10}|[a-z][a-z0-9_-]{0,63})$',
    description: 'The segment id (digits only) or its key',
  }),
})

export const RuleModel = t.Object({
  type: t.String(),
  operator: t.String(),
  value: t.Union([t.String(), t.Array(t.String())]),
  key: t.Optional(t.String()),
})
export const SegmentModel = t.Object({
  id: Int(),
  key: t.String(),
  label: t.String(),
  priority: Int(),
  active: t.Boolean(),
  rules: t.Array(RuleModel),
  match_all: t.Boolean({ description: 'Matches every visitor (`rules` is then empty)' }),
  created_at: Timestamp,
  updated_at: Timestamp,
})
export type SegmentView = typeof SegmentModel.static

/** Something about a saved segment the editor should know: it was saved, but may not do what they expect. */
export const SaveWarningModel = t.Object({
  code: t.String({ description: '`country_rule_inactive`: a country rule while TRUSTED_PROXIES is empty — it never matches' }),
  field: t.String({ description: 'What it is about, as error keys are: `rules/<i>`' }),
  message: t.String(),
})
export type SaveWarning = typeof SaveWarningModel.static
/** The answer of a segment create, replace or change: the segment and what the editor should know about it. */
export const SegmentSavedModel = t.Object({
  data: SegmentModel,
  warnings: t.Array(SaveWarningModel, { description: 'Empty when there is nothing to say; the segment is saved either way' }),
})
export type SegmentSaved = typeof SegmentSavedModel.static
export type SegmentInput = typeof CreateSegmentBody.static
export type SegmentPatch = typeof PatchSegmentBody.static

// ---- Variants ----

const SegmentId = Int({ minimum: 1, maximum: 2_147_483_647, error: 'must be an audience segment id' })
const Content = t.Unknown({
  description: "The block document `{type: 'doc', blocks: [...]}` served instead of the Story's; validated against the component blueprints",
})
const Lang = t.String({ minLength: 1, maxLength: 35, error: 'must be a BCP-47 language tag', description: "One of the Space's locales (default: the Space default)" })

export const CreateVariantBody = t.Object({ audience_segment_id: SegmentId, content: Content, lang: t.Optional(Lang) })
export const PatchVariantBody = t.Object({ audience_segment_id: t.Optional(SegmentId), content: t.Optional(Content), lang: t.Optional(Lang) })
export type VariantInput = typeof CreateVariantBody.static
export type VariantPatch = typeof PatchVariantBody.static

export const VariantStoryParams = t.Object({ space: SpaceSlug, uuid: Uuid })
export const VariantParams = t.Object({ space: SpaceSlug, uuid: Uuid, id: IntId })

export const VariantModel = t.Object({
  id: Int(),
  story_uuid: t.String(),
  audience_segment_id: Int(),
  segment_key: t.String(),
  lang: t.String(),
  content: t.Unknown(),
  created_at: Timestamp,
  updated_at: Timestamp,
})
export type VariantView = typeof VariantModel.static

export const ResolvedSegmentModel = t.Object({
  data: t.Object({ segment: t.Union([t.String(), t.Null()], { description: 'The key of the segment this request resolves to, or null' }) }),
})
