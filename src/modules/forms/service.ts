import { stringify } from 'csv-stringify/sync'
import { and, asc, count, desc, eq, gt, isNull, type SQL, sql } from 'drizzle-orm'
import { formSubmissions, forms } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { randomSecret } from '../../kernel/crypto'
import { safeCell } from '../../kernel/csv'
import { normalizeEmail } from '../../kernel/email'
import { notFound, uniqueAs, validationFailed } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { canonicalLocale } from '../../kernel/locale'
import { OutboundError, parseOutboundUrl, resolveTarget } from '../../kernel/outbound'
import { localeSettings } from '../spaces/locales'
import { type FormFieldDef, type FormInput, FormErrors, type FormView, type SubmissionView, TEXT_TYPES } from './model'
import { assertCompiles, compileSchema } from './schema'

export type FormRow = typeof forms.$inferSelect
type SubmissionRow = typeof formSubmissions.$inferSelect

/** Additional data binding sealed secrets to their purpose. */
export const WEBHOOK_SECRET_CONTEXT = 'form-webhook-secret'
export const SPAM_SECRET_CONTEXT = 'form-spam-secret'

export function formView(row: FormRow, secret?: string): FormView {
  const v: FormView = {
    uuid: row.uuid,
    slug: row.slug,
    label: row.label,
    fields: row.fields as FormFieldDef[],
    submit_action: row.submitAction,
    notification_email: row.notificationEmail,
    webhook_url: row.webhookUrl,
    redirect_url: row.redirectUrl,
    success_message: row.successMessage as Record<string, string>,
    rate_limit_per_ip: row.rateLimitPerIp,
    spam_provider: row.spamProvider,
    spam_config: row.spamProvider ? { secret_set: !!row.spamSecretSealed } : null,
    compiled_schema: row.compiledSchema as Record<string, unknown>,
    has_webhook_secret: !!row.webhookSecretSealed,
    archived_at: row.archivedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
  if (secret !== undefined) v.secret = secret
  return v
}

function submissionView(row: SubmissionRow): SubmissionView {
  return {
    uuid: row.uuid,
    data: row.data as Record<string, unknown>,
    lang: row.lang,
    submitted_at: row.submittedAt.toISOString(),
    spam_score: row.spamScore,
    spam: row.spam,
    action_status: row.actionStatus,
    action_error: row.actionError,
    ua_hash: row.uaHash,
    referrer: row.referrer,
  }
}

function httpUrl(raw: string): string | null {
  try {
    const u = new URL(raw.trim())
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null
  } catch {
    return null
  }
}

/** Every rule of a form definition beyond the body schema; 422 with all problems at once. */
async function checkForm(kernel: Kernel, access: SpaceAccess, input: FormInput, current: FormRow | null) {
  const errors: Record<string, string[]> = {}
  const add = (k: string, m: string) => (errors[k] ??= []).push(m)
  const keys = new Set<string>()
  input.fields.forEach((f, i) => {
    if (keys.has(f.key)) add(`fields/${i}/key`, `duplicates the key "${f.key}"`)
    keys.add(f.key)
    if ((f.type === 'select' || f.type === 'radio') && !f.options?.length) add(`fields/${i}/options`, `is required for ${f.type} fields`)
    if (f.options && new Set(f.options).size !== f.options.length) add(`fields/${i}/options`, 'must not repeat a value')
    if (f.max_length !== undefined && !TEXT_TYPES.includes(f.type)) add(`fields/${i}/max_length`, 'applies to text types only')
  })
  const action = input.submit_action ?? 'store'
  let notificationEmail: string | null = null
  if (input.notification_email) {
    notificationEmail = normalizeEmail(input.notification_email)
    if (!notificationEmail) add('notification_email', 'must be an e-mail address')
  }
  if (action === 'email' && !input.notification_email) add('notification_email', 'is required when submit_action is email')
  let webhookUrl: string | null = null
  if (input.webhook_url) {
    try {
      const url = parseOutboundUrl(input.webhook_url.trim())
      await resolveTarget(url, { allowPrivate: kernel.config.outboundAllowPrivate }, AbortSignal.timeout(5_000))
      webhookUrl = input.webhook_url.trim()
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err
      add('webhook_url', err.message)
    }
  }
  if (action === 'webhook' && !input.webhook_url) add('webhook_url', 'is required when submit_action is webhook')
  if (action === 'lead' && !input.fields.some((f) => f.type === 'email')) add('fields', 'a lead form needs a field of type email')
  let redirectUrl: string | null = null
  if (input.redirect_url) {
    redirectUrl = httpUrl(input.redirect_url)
    if (!redirectUrl) add('redirect_url', 'must be an http(s) URL')
  }
  const successMessage: Record<string, string> = {}
  if (input.success_message) {
    const { codes } = await localeSettings(kernel.db.db, access.space.id)
    for (const [code, text] of Object.entries(input.success_message)) {
      const c = canonicalLocale(code)
      if (!c || !codes.includes(c)) add(`success_message/${code}`, `is not a locale of the Space (${codes.join(', ')})`)
      else successMessage[c] = text
    }
  }
  const provider = input.spam_provider ?? null
  let spamSecretSealed: string | null = null
  if (provider) {
    const secret = input.spam_config?.secret
    if (secret) spamSecretSealed = kernel.secrets.seal(secret, SPAM_SECRET_CONTEXT)
    else if (current?.spamProvider === provider && current.spamSecretSealed) spamSecretSealed = current.spamSecretSealed
    else add('spam_config/secret', `is required with spam_provider ${provider}`)
  }
  if (Object.keys(errors).length) throw validationFailed(errors)
  const fields: FormFieldDef[] = input.fields.map((f) => {
    const out: FormFieldDef = { key: f.key, type: f.type, label: f.label, required: f.required ?? false }
    if (f.type === 'select' || f.type === 'radio') out.options = f.options
    if (f.max_length !== undefined) out.max_length = f.max_length
    return out
  })
  const compiledSchema = compileSchema(fields)
  assertCompiles(compiledSchema)
  return {
    slug: input.slug,
    label: input.label,
    fields,
    submitAction: action,
    notificationEmail,
    webhookUrl,
    redirectUrl,
    successMessage,
    rateLimitPerIp: input.rate_limit_per_ip ?? 5,
    spamProvider: provider,
    spamSecretSealed,
    compiledSchema,
  }
}

const newSecret = () => randomSecret('whsec_')

const slugTaken = uniqueAs('forms_space_slug_live_key', () => FormErrors.slugTaken())

export async function createForm(kernel: Kernel, access: SpaceAccess, input: FormInput): Promise<FormView> {
  const values = await checkForm(kernel, access, input, null)
  const secret = values.submitAction === 'webhook' ? newSecret() : undefined
  const now = kernel.clock.now()
  const row = await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .insert(forms)
      .values({
        ...values,
        uuid: crypto.randomUUID(),
        spaceId: access.space.id,
        webhookSecretSealed: secret ? kernel.secrets.seal(secret, WEBHOOK_SECRET_CONTEXT) : null,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
    emit({ type: 'form.changed', spaceId: access.space.id, payload: { space_id: access.space.id, slug: row.slug } })
    return row
  }).catch(slugTaken)
  return formView(row, secret)
}

export async function listForms(kernel: Kernel, access: SpaceAccess, includeArchived: boolean): Promise<FormView[]> {
  const where = includeArchived ? eq(forms.spaceId, access.space.id) : and(eq(forms.spaceId, access.space.id), isNull(forms.archivedAt))
  const rows = await kernel.db.db.select().from(forms).where(where).orderBy(desc(forms.createdAt), desc(forms.id))
  return rows.map((r) => formView(r))
}

async function requireForm(kernel: Kernel, access: SpaceAccess, uuid: string, opts: { live?: boolean } = {}): Promise<FormRow> {
  const [row] = await kernel.db.db
    .select()
    .from(forms)
    .where(and(eq(forms.uuid, uuid.toLowerCase()), eq(forms.spaceId, access.space.id)))
    .limit(1)
  if (!row || (opts.live && row.archivedAt)) throw notFound('Form')
  return row
}

export async function getForm(kernel: Kernel, access: SpaceAccess, uuid: string): Promise<FormView> {
  return formView(await requireForm(kernel, access, uuid))
}

/** Replaces the definition (PUT). A switch to `webhook` creates a signing secret, shown in this answer. */
export async function updateForm(kernel: Kernel, access: SpaceAccess, uuid: string, input: FormInput): Promise<FormView> {
  const current = await requireForm(kernel, access, uuid, { live: true })
  const values = await checkForm(kernel, access, input, current)
  const secret = values.submitAction === 'webhook' && !current.webhookSecretSealed ? newSecret() : undefined
  const row = await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .update(forms)
      .set({
        ...values,
        ...(secret ? { webhookSecretSealed: kernel.secrets.seal(secret, WEBHOOK_SECRET_CONTEXT) } : {}),
        updatedAt: kernel.clock.now(),
      })
      .where(eq(forms.id, current.id))
      .returning()
    emit({ type: 'form.changed', spaceId: access.space.id, payload: { space_id: access.space.id, slug: current.slug } })
    if (row.slug !== current.slug) emit({ type: 'form.changed', spaceId: access.space.id, payload: { space_id: access.space.id, slug: row.slug } })
    return row
  }).catch(slugTaken)
  return formView(row, secret)
}

/** Archives (soft delete): the public submit answers 404, listings hide it, submissions stay. */
export async function archiveForm(kernel: Kernel, access: SpaceAccess, uuid: string): Promise<void> {
  const current = await requireForm(kernel, access, uuid, { live: true })
  await transact(kernel, async (tx, emit) => {
    const now = kernel.clock.now()
    await tx.update(forms).set({ archivedAt: now, updatedAt: now }).where(eq(forms.id, current.id))
    emit({ type: 'form.changed', spaceId: access.space.id, payload: { space_id: access.space.id, slug: current.slug } })
  })
}

export async function rotateFormSecret(kernel: Kernel, access: SpaceAccess, uuid: string): Promise<FormView> {
  const current = await requireForm(kernel, access, uuid, { live: true })
  if (current.submitAction !== 'webhook') throw validationFailed({ submit_action: ['only webhook forms have a signing secret'] })
  const secret = newSecret()
  const [row] = await kernel.db.db
    .update(forms)
    .set({ webhookSecretSealed: kernel.secrets.seal(secret, WEBHOOK_SECRET_CONTEXT), updatedAt: kernel.clock.now() })
    .where(eq(forms.id, current.id))
    .returning()
  return formView(row, secret)
}

// ---- submissions ----

export async function listSubmissions(
  kernel: Kernel,
  access: SpaceAccess,
  uuid: string,
  q: { page?: number; per_page?: number; include_spam?: '0' | '1'; spam?: 'only'; q?: string },
) {
  const form = await requireForm(kernel, access, uuid)
  const page = pageOf(q.page, q.per_page)
  const parts: SQL[] = [eq(formSubmissions.formId, form.id)]
  if (q.spam === 'only') parts.push(eq(formSubmissions.spam, true))
  else if (q.include_spam !== '1') parts.push(eq(formSubmissions.spam, false))
  const needle = q.q?.trim()
  // The values as text (jsonb's ->> of each key, not the JSON source: a quote or backslash matches as typed).
  if (needle) {
    parts.push(
      sql`exists (select 1 from jsonb_each(${formSubmissions.data}) as kv where (case jsonb_typeof(kv.value) when 'string' then kv.value #>> '{}' else kv.value::text end) ilike ${`%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`})`,
    )
  }
  const where = and(...parts)
  const [rows, [{ total }]] = await Promise.all([
    kernel.db.db
      .select()
      .from(formSubmissions)
      .where(where)
      .orderBy(desc(formSubmissions.submittedAt), desc(formSubmissions.id))
      .limit(page.perPage)
      .offset(page.offset),
    kernel.db.db.select({ total: count() }).from(formSubmissions).where(where),
  ])
  return { data: rows.map(submissionView), meta: { total: Number(total), page: page.page, per_page: page.perPage } }
}

/** Toggles the spam flag (spec 3). Marking spam does not undo an action already run. */
export async function toggleSpam(kernel: Kernel, access: SpaceAccess, uuid: string, submissionUuid: string): Promise<SubmissionView> {
  const form = await requireForm(kernel, access, uuid)
  const [current] = await kernel.db.db
    .select({ id: formSubmissions.id, spam: formSubmissions.spam })
    .from(formSubmissions)
    .where(and(eq(formSubmissions.uuid, submissionUuid.toLowerCase()), eq(formSubmissions.formId, form.id)))
    .limit(1)
  if (!current) throw notFound('Submission')
  const [row] = await kernel.db.db
    .update(formSubmissions)
    .set({ spam: !current.spam })
    .where(eq(formSubmissions.id, current.id))
    .returning()
  return submissionView(row)
}

/** One CSV cell of a stored value. */
function cellOf(v: unknown): string {
  if (v === null || v === undefined) return ''
  if (typeof v === 'object' && v && 'accepted' in v) return (v as { accepted: boolean }).accepted ? 'true' : 'false'
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
}

export const CSV_BATCH = 1000

/**
 * The submissions export (spec 4.12), streamed: header, then batches of 1000 rows read by id (keyset), so memory
 * stays flat whatever the count. Columns: the field keys in definition order without file fields, then
 * submitted_at, uuid, spam_score. Spam rows are left out. UTF-8 with BOM, RFC 4180 quoting (csv-stringify), CRLF;
 * field cells beginning with = + - @, tab or CR get a leading apostrophe.
 */
export async function submissionsCsv(kernel: Kernel, access: SpaceAccess, uuid: string): Promise<{ slug: string; stream: ReadableStream<Uint8Array> }> {
  const form = await requireForm(kernel, access, uuid)
  const keys = (form.fields as FormFieldDef[]).filter((f) => f.type !== 'file').map((f) => f.key)
  const enc = new TextEncoder()
  const opts = { record_delimiter: 'windows' as const }
  let lastId = 0
  let started = false
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true
        controller.enqueue(enc.encode(`\uFEFF${stringify([[...keys, 'submitted_at', 'uuid', 'spam_score']], opts)}`))
        return
      }
      const rows = await kernel.db.db
        .select({ id: formSubmissions.id, uuid: formSubmissions.uuid, data: formSubmissions.data, submittedAt: formSubmissions.submittedAt, spamScore: formSubmissions.spamScore })
        .from(formSubmissions)
        .where(and(eq(formSubmissions.formId, form.id), eq(formSubmissions.spam, false), gt(formSubmissions.id, lastId)))
        .orderBy(asc(formSubmissions.id))
        .limit(CSV_BATCH)
      if (!rows.length) return controller.close()
      lastId = rows[rows.length - 1].id
      const records = rows.map((r) => {
        const data = r.data as Record<string, unknown>
        return [...keys.map((k) => safeCell(cellOf(data[k]))), r.submittedAt.toISOString(), r.uuid, String(r.spamScore)]
      })
      controller.enqueue(enc.encode(stringify(records, opts)))
    },
  })
  return { slug: form.slug, stream }
}
