import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { Int, NullableTimestamp, oneOf, pageQuery, SpaceSlug, Timestamp, Uuid } from '../../kernel/schemas'

export const AiErrors = {
  unavailable: defineError('ai_unavailable', 503, 'AI is not configured on this server (AI_BASE_URL and AI_MODEL; AI_VISION_MODEL for images); the message says how to enable it.'),
  budgetExhausted: defineError('ai_budget_exhausted', 429, "The Space has used this month's AI token budget (AI_MONTHLY_TOKENS)."),
  providerRateLimited: defineError('ai_provider_rate_limited', 429, 'The AI provider refused the request as too many (after 2 retries).'),
  providerError: defineError('ai_provider_error', 502, "The AI provider failed or answered an error (after 2 retries for 5xx); the message carries the provider's status and message."),
  timeout: defineError('ai_timeout', 504, 'The AI provider did not answer (or stopped streaming) within 60 s.'),
  jobNotReviewable: defineError('ai_job_not_reviewable', 409, 'The AI job is not awaiting review (already approved, rejected, failed, or still running).'),
}

export const MAX_PROMPT = 8000
export const AI_JOB_KINDS = ['translate', 'alt_text'] as const
export const AI_JOB_STATUSES = ['queued', 'running', 'awaiting_review', 'approved', 'rejected', 'failed'] as const

const Lang = t.String({ minLength: 1, maxLength: 35, description: 'A locale of the Space (BCP-47)' })
export const UsageModel = t.Object({ prompt_tokens: Int(), completion_tokens: Int() })

export const TextBody = t.Object({
  prompt: t.String({ minLength: 1, maxLength: MAX_PROMPT, error: `must be 1 to ${MAX_PROMPT} characters`, description: 'The instruction' }),
  context: t.Optional(
    t.Object({
      story_uuid: t.Optional(Uuid),
      lang: t.Optional(Lang),
    }, { description: 'A Story whose content (in `lang`) the model sees as data' }),
  ),
})
export const TextAnswer = t.Object({ data: t.Object({ text: t.String(), usage: UsageModel }) })

export const StoryLangBody = t.Object({ story_uuid: Uuid, lang: t.Optional(Lang) })
export const AltTextBody = t.Object({ asset_uuid: Uuid, lang: Lang })
export const InsightsBody = t.Object({ story_uuid: Uuid })
export const TranslateBody = t.Object({ story_uuid: Uuid, source_lang: t.Optional(Lang), target_lang: Lang })

export const SeoAnswer = t.Object({
  data: t.Object({
    title: t.String({ maxLength: 60 }),
    description: t.String({ maxLength: 160 }),
    usage: UsageModel,
  }),
})
export const LinksAnswer = t.Object({
  data: t.Array(t.Object({ text: t.String(), story_uuid: t.String(), full_path: t.String(), score: t.Number() })),
  meta: t.Object({ usage: UsageModel }),
})
export const InsightsAnswer = t.Object({
  data: t.Object({
    observations: t.Array(t.Object({ kind: t.String({ description: 'statistic | content | model' }), text: t.String() })),
    analytics: t.Object({ days: Int(), mounts: Int(), previous_mounts: Int() }),
    usage: UsageModel,
  }),
})

export const AiJobModel = t.Object({
  uuid: t.String(),
  kind: oneOf(AI_JOB_KINDS),
  status: oneOf(AI_JOB_STATUSES),
  target: t.Record(t.String(), t.Unknown(), { description: 'translate: {story_uuid, source_lang, target_lang, version_no}; alt_text: {asset_uuid, lang}' }),
  result: t.Union([t.Record(t.String(), t.Unknown()), t.Null()], { description: 'translate: {content, name}; alt_text: {alt}' }),
  error: t.Union([t.String(), t.Null()]),
  usage: UsageModel,
  created_at: Timestamp,
  created_by: t.Union([Int(), t.Null()]),
  decided_at: NullableTimestamp,
})
export type AiJobView = typeof AiJobModel.static

export const AiJobListQuery = t.Composite([
  pageQuery(100, 25),
  t.Object({ status: t.Optional(oneOf(AI_JOB_STATUSES)), kind: t.Optional(oneOf(AI_JOB_KINDS)) }),
])
export const AiJobParams = t.Object({ space: SpaceSlug, aiJob: Uuid })

export const StatusAnswer = t.Object({
  data: t.Object({
    enabled: t.Boolean(),
    model: t.Union([t.String(), t.Null()]),
    vision: t.Union([t.String(), t.Null()], { description: 'The vision model, or null' }),
    usage: t.Object({ month: t.String(), requests: Int(), prompt_tokens: Int(), completion_tokens: Int() }),
    limits: t.Object({ monthly_tokens: t.Union([Int(), t.Null()], { description: 'null: unlimited' }), remaining_tokens: t.Union([Int(), t.Null()]) }),
  }),
})
