import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { Int, NullableTimestamp, oneOf, pageQuery, SpaceSlug, Timestamp, Uuid } from '../../kernel/schemas'

export const FIELD_TYPES = ['text', 'textarea', 'email', 'tel', 'number', 'select', 'radio', 'checkbox', 'file', 'hidden', 'consent'] as const
export type FieldType = (typeof FIELD_TYPES)[number]
/** Types whose values are free text (they take `max_length`). */
export const TEXT_TYPES: readonly FieldType[] = ['text', 'textarea', 'email', 'tel', 'hidden']
export const SUBMIT_ACTIONS = ['store', 'email', 'webhook', 'lead'] as const
export const SPAM_PROVIDERS = ['turnstile', 'hcaptcha'] as const

export const FORM_SLUG_PATTERN = '^[a-z][a-z0-9-]{0,63}$'
export const FIELD_KEY_PATTERN = '^[a-z][a-z0-9_]{0,63}$'

/** Spec 8: every captured value is capped at 5000 characters. */
export const VALUE_LIMIT = 5000

export const FormErrors = {
  slugTaken: defineError('slug_taken', 409, 'Another live (not archived) form of the Space has this slug.'),
  captchaFailed: defineError('captcha_failed', 422, 'The captcha token was missing or the provider did not accept it; nothing was stored.'),
}

export const FormField = t.Object({
  key: t.String({ pattern: FIELD_KEY_PATTERN, error: 'must match ^[a-z][a-z0-9_]{0,63}$', description: 'Unique in the form; the key in `data`' }),
  type: oneOf(FIELD_TYPES, { error: `must be one of ${FIELD_TYPES.join(', ')}` }),
  label: t.String({ minLength: 1, maxLength: 1000, error: 'must be 1 to 1000 characters' }),
  required: t.Optional(t.Boolean({ description: 'Default false. A required checkbox or consent must be checked.' })),
  options: t.Optional(
    t.Array(t.String({ minLength: 1, maxLength: 500 }), {
      minItems: 1,
      maxItems: 200,
      error: 'must be 1 to 200 non-empty strings',
      description: 'Choices of select and radio fields (required there)',
    }),
  ),
  max_length: t.Optional(Int({ minimum: 1, maximum: 5000, error: 'must be an integer from 1 to 5000', description: 'Text types only' })),
})
export type FormFieldDef = typeof FormField.static

const Url = t.String({ maxLength: 2000, error: 'must be an http(s) URL' })
const NullableUrl = t.Union([Url, t.Null()], { error: 'must be an http(s) URL or null' })

const SpamConfigBody = t.Object({
  secret: t.Optional(t.String({ minLength: 1, maxLength: 500, description: 'The provider secret key (write-only; stored encrypted)' })),
  secret_set: t.Optional(t.Boolean({ description: 'Read-only; ignored' })),
})

export const FormBody = t.Object({
  slug: t.String({ pattern: FORM_SLUG_PATTERN, error: 'must match ^[a-z][a-z0-9-]{0,63}$' }),
  label: t.String({ minLength: 1, maxLength: 200, error: 'must be 1 to 200 characters' }),
  fields: t.Array(FormField, { minItems: 1, maxItems: 100, error: 'must be 1 to 100 fields' }),
  submit_action: t.Optional(oneOf(SUBMIT_ACTIONS, { error: 'must be store, email, webhook or lead', description: 'Default store' })),
  notification_email: t.Optional(t.Union([t.String({ maxLength: 254 }), t.Null()], { description: 'Needed by `email`' })),
  webhook_url: t.Optional(t.Union([Url, t.Null()], { description: 'Needed by `webhook`; http(s), checked against the outbound policy' })),
  redirect_url: t.Optional(NullableUrl),
  success_message: t.Optional(
    t.Record(t.String({ maxLength: 35 }), t.String({ maxLength: 5000 }), { description: 'Locale code (a locale of the Space) → text', maxProperties: 200 }),
  ),
  rate_limit_per_ip: t.Optional(Int({ minimum: 1, maximum: 10_000, error: 'must be an integer from 1 to 10,000', description: 'Submissions per IP per UTC day; default 5' })),
  spam_provider: t.Optional(t.Union([oneOf(SPAM_PROVIDERS), t.Null()], { error: 'must be turnstile, hcaptcha or null' })),
  spam_config: t.Optional(t.Union([SpamConfigBody, t.Null()])),
  // Read-only fields a client may send back from a GET: ignored.
  uuid: t.Optional(t.String({ maxLength: 64, description: 'Read-only; ignored' })),
  compiled_schema: t.Optional(t.Unknown({ description: 'Read-only: compiled from `fields` on every save; a sent value is ignored' })),
  has_webhook_secret: t.Optional(t.Boolean({ description: 'Read-only; ignored' })),
  archived_at: t.Optional(t.Unknown({ description: 'Read-only; ignored' })),
  created_at: t.Optional(t.Unknown({ description: 'Read-only; ignored' })),
  updated_at: t.Optional(t.Unknown({ description: 'Read-only; ignored' })),
})
export type FormInput = typeof FormBody.static

export const FormModel = t.Object({
  uuid: t.String(),
  slug: t.String(),
  label: t.String(),
  fields: t.Array(FormField),
  submit_action: t.String(),
  notification_email: t.Union([t.String(), t.Null()]),
  webhook_url: t.Union([t.String(), t.Null()]),
  redirect_url: t.Union([t.String(), t.Null()]),
  success_message: t.Record(t.String(), t.String()),
  rate_limit_per_ip: Int(),
  spam_provider: t.Union([t.String(), t.Null()]),
  spam_config: t.Union([t.Object({ secret_set: t.Boolean() }), t.Null()], { description: 'The provider secret is never shown' }),
  compiled_schema: t.Record(t.String(), t.Unknown(), { description: 'JSON Schema (draft 2020-12) compiled from `fields`' }),
  has_webhook_secret: t.Boolean(),
  archived_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
  secret: t.Optional(t.String({ description: 'The webhook signing secret: only when it was just created (create, rotate-secret, a switch to webhook)' })),
})
export type FormView = typeof FormModel.static

export const FormParams = t.Object({ space: SpaceSlug, uuid: Uuid })
export const SubmissionParams = t.Object({ space: SpaceSlug, uuid: Uuid, submissionUuid: Uuid })
export const FormListQuery = t.Object({
  include_archived: t.Optional(t.Union([t.Literal('0'), t.Literal('1')], { error: 'must be 0 or 1', description: '1: list archived forms too' })),
})
export const SubmissionListQuery = t.Composite([
  pageQuery(100, 25),
  t.Object({
    include_spam: t.Optional(t.Union([t.Literal('0'), t.Literal('1')], { error: 'must be 0 or 1', description: '1: include spam rows (default 0)' })),
    spam: t.Optional(t.Literal('only', { error: 'must be only', description: '`only`: spam rows only (the spam view); overrides include_spam' })),
    q: t.Optional(t.String({ maxLength: 200, error: 'must be at most 200 characters', description: 'Part of any stored value (case-insensitive)' })),
  }),
])

export const SubmissionModel = t.Object({
  uuid: t.String(),
  data: t.Record(t.String(), t.Unknown(), { description: 'Values by field key; a consent field holds {accepted, text}' }),
  lang: t.Union([t.String(), t.Null()]),
  submitted_at: Timestamp,
  spam_score: t.Number(),
  spam: t.Boolean(),
  action_status: t.String({ description: 'none, pending, done or failed' }),
  action_error: t.Union([t.String(), t.Null()]),
  ua_hash: t.Union([t.String(), t.Null()]),
  referrer: t.Union([t.String(), t.Null()]),
})
export type SubmissionView = typeof SubmissionModel.static

export const SubmitParams = t.Object({ space: SpaceSlug, slug: t.String({ pattern: FORM_SLUG_PATTERN }) })
export const SubmitQuery = t.Object({ lang: t.Optional(t.String({ maxLength: 35 })) })
export const SubmitBody = t.Object({
  _hp: t.Optional(t.String({ maxLength: 10_000, description: 'Honeypot: must stay empty' })),
  data: t.Optional(t.Record(t.String(), t.Unknown(), { description: 'Values keyed by field key; unknown keys are dropped' })),
  captcha_token: t.Optional(t.String({ maxLength: 8192, description: 'Turnstile or hCaptcha response token (forms with a spam_provider)' })),
  rendered_at: t.Optional(
    t.Union([t.String({ maxLength: 64 }), t.Number()], { description: 'When the form was shown (ISO 8601 or epoch ms): a submit within 2 s counts towards spam' }),
  ),
})
export const SubmitAccepted = t.Object({
  data: t.Object({
    ok: t.Boolean(),
    submission_uuid: t.String(),
    success_message: t.Union([t.String(), t.Null()]),
    redirect_url: t.Union([t.String(), t.Null()]),
  }),
})
export const HoneypotAnswer = t.Object({ ok: t.Boolean() })
