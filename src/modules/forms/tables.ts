import { sql } from 'drizzle-orm'
import { bigserial, boolean, index, integer, jsonb, pgTable, real, serial, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { spaces } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * A Space's form (spec 2, 4.12). `fields` is the definition; `compiled_schema` the JSON Schema (2020-12) compiled from
 * it on every save. The webhook signing secret and the captcha provider secret are stored sealed (AES-256-GCM).
 * DELETE archives (`archived_at`); the slug is unique among a Space's live forms only.
 */
export const forms = pgTable(
  'forms',
  {
    id: serial('id').primaryKey(),
    uuid: uuid('uuid').notNull(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    label: text('label').notNull(),
    fields: jsonb('fields').notNull(),
    submitAction: text('submit_action', { enum: ['store', 'email', 'webhook', 'lead'] }).notNull(),
    notificationEmail: text('notification_email'),
    webhookUrl: text('webhook_url'),
    webhookSecretSealed: text('webhook_secret_sealed'),
    redirectUrl: text('redirect_url'),
    successMessage: jsonb('success_message').notNull(),
    rateLimitPerIp: integer('rate_limit_per_ip').notNull(),
    spamProvider: text('spam_provider', { enum: ['turnstile', 'hcaptcha'] }),
    spamSecretSealed: text('spam_secret_sealed'),
    compiledSchema: jsonb('compiled_schema').notNull(),
    archivedAt: ts('archived_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('forms_uuid_key').on(t.uuid),
    uniqueIndex('forms_space_slug_live_key').on(t.spaceId, t.slug).where(sql`archived_at is null`),
  ],
)

/**
 * One stored submission. Privacy (spec 2): no IP — `ip_hash` is SHA-256 over the day's random salt, the Space and
 * the IP; `ua_hash` 16 hex characters of SHA-256 of the User-Agent; `referrer` scheme and host only.
 * action_status: none (store, or spam) | pending | done | failed.
 */
export const formSubmissions = pgTable(
  'form_submissions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    uuid: uuid('uuid').notNull(),
    formId: integer('form_id')
      .notNull()
      .references(() => forms.id, { onDelete: 'cascade' }),
    spaceId: integer('space_id').notNull(),
    data: jsonb('data').notNull(),
    lang: text('lang'),
    submittedAt: ts('submitted_at').notNull(),
    spamScore: real('spam_score').notNull(),
    spam: boolean('spam').notNull(),
    ipHash: text('ip_hash').notNull(),
    uaHash: text('ua_hash'),
    referrer: text('referrer'),
    actionStatus: text('action_status', { enum: ['none', 'pending', 'done', 'failed'] }).notNull(),
    actionError: text('action_error'),
  },
  (t) => [
    uniqueIndex('form_submissions_uuid_key').on(t.uuid),
    index('form_submissions_form_idx').on(t.formId, t.id),
    index('form_submissions_ip_day_idx').on(t.formId, t.ipHash, t.submittedAt),
  ],
)

/** The random salt of each UTC day for submission IP hashes; deleted after two days, so a hash cannot be recomputed. */
export const formIpSalts = pgTable('form_ip_salts', {
  day: text('day').primaryKey(),
  salt: text('salt').notNull(),
  createdAt: ts('created_at').notNull(),
})
