import { eq, sql } from 'drizzle-orm'
import { formSubmissions, forms } from './tables'
import { failed, GroupCommit } from '../../kernel/group-commit'
import { type JobContext, type JobQueue, type JobResult, LeaseLostError } from '../../kernel/jobs'
import type { Kernel } from '../../kernel/kernel'
import { RETRY_DELAYS_MS, signedPost } from '../../kernel/signed-post'
import { spaceNameById } from '../spaces/service'
import { requestSubscription } from '../subscribers/service'
import type { FormFieldDef } from './model'
import type { DailySalts } from './submit'
import { WEBHOOK_SECRET_CONTEXT } from './service'
import './jobs'

/**
 * A submission's action (email, webhook, lead) runs as one durable job, queued in the submit's transaction and
 * retried on the webhook schedule of spec 6 (30 s, 5 min, 30 min, 2 h, 12 h). The submission's `action_status`
 * follows: pending → done, or failed once retries are exhausted (or at once for a 4xx from a webhook receiver).
 */
export const FORM_ACTION_QUEUE = 'forms.action' as const

type Outcome = { kind: 'done' } | { kind: 'retry' | 'failed'; error: string }

function readable(fields: FormFieldDef[], data: Record<string, unknown>): string {
  return fields
    .filter((f) => Object.hasOwn(data, f.key))
    .map((f) => {
      const v = data[f.key]
      const text =
        v && typeof v === 'object' && 'accepted' in v
          ? `${(v as { accepted: boolean }).accepted ? 'yes' : 'no'} (“${(v as unknown as { text: string }).text}”)`
          : typeof v === 'boolean'
            ? v
              ? 'yes'
              : 'no'
            : String(v)
      return `${f.label} (${f.key}):\n${text}\n`
    })
    .join('\n')
}

async function sendWebhook(kernel: Kernel, form: typeof forms.$inferSelect, body: string, deliveryId: string, at: Date): Promise<Outcome> {
  if (!form.webhookUrl || !form.webhookSecretSealed) return { kind: 'failed', error: 'the form has no webhook_url or secret' }
  let secret: string
  try {
    secret = kernel.secrets.open(form.webhookSecretSealed, WEBHOOK_SECRET_CONTEXT)
  } catch {
    return { kind: 'failed', error: 'the signing secret cannot be decrypted (was SERVICE_SECRET_KEY changed?); rotate the secret' }
  }
  const r = await signedPost(kernel, { url: form.webhookUrl, body, secret, at, event: 'form.submitted', deliveryId })
  return r.outcome === 'delivered' ? { kind: 'done' } : { kind: r.outcome, error: r.error }
}

async function runAction(kernel: Kernel, ctx: JobContext<{ submissionId: number; base: string }>, results: GroupCommit<ActionResult, void>) {
  const [row] = await kernel.db.db
    .select({ submission: formSubmissions, form: forms })
    .from(formSubmissions)
    .innerJoin(forms, eq(forms.id, formSubmissions.formId))
    .where(eq(formSubmissions.id, ctx.job.payload.submissionId))
    .limit(1)
  if (!row || row.submission.actionStatus !== 'pending') return
  // The Space is the spaces module's table: asked through its service.
  const space = await spaceNameById(kernel, row.submission.spaceId)
  if (!space) return
  const { submission: s, form } = row
  const fields = form.fields as FormFieldDef[]
  const data = s.data as Record<string, unknown>
  let outcome: Outcome
  try {
    switch (form.submitAction) {
      case 'email': {
        if (!form.notificationEmail) {
          outcome = { kind: 'failed', error: 'the form has no notification_email' }
          break
        }
        await kernel.mail.send({
          to: form.notificationEmail,
          subject: `New submission: ${form.label}`,
          text: `A new submission of the form "${form.label}" (${form.slug}) in ${space.name} arrived at ${s.submittedAt.toISOString()}.\n\n${readable(fields, data)}\nSubmission ${s.uuid}`,
        })
        outcome = { kind: 'done' }
        break
      }
      case 'webhook': {
        const now = kernel.clock.now()
        const body = JSON.stringify({
          event: 'form.submitted',
          delivered_at: now.toISOString(),
          space: { slug: space.slug },
          form: { uuid: form.uuid, slug: form.slug },
          submission: { uuid: s.uuid, data, lang: s.lang, submitted_at: s.submittedAt.toISOString(), spam_score: s.spamScore },
        })
        outcome = await sendWebhook(kernel, form, body, s.uuid, now)
        break
      }
      case 'lead': {
        const emailField = fields.find((f) => f.type === 'email' && typeof data[f.key] === 'string')
        if (!emailField) {
          outcome = { kind: 'done' } // the optional e-mail field was left empty: no one to subscribe
          break
        }
        const name = typeof data.name === 'string' ? data.name : null
        // The confirmation mail's links come from PUBLIC_URL only (never the submitter's Host): without it the
        // lead is not subscribed, and the submission says why.
        if (!kernel.mail.linkBase()) {
          outcome = { kind: 'failed', error: 'the lead was not subscribed: the confirmation mail needs PUBLIC_URL on this service' }
          break
        }
        await requestSubscription(kernel, space, { email: data[emailField.key] as string, name, lang: s.lang }, { source: 'form' })
        outcome = { kind: 'done' }
        break
      }
      default:
        outcome = { kind: 'done' }
    }
  } catch (err) {
    outcome = { kind: 'retry', error: err instanceof Error ? err.message : String(err) }
  }
  const next = outcome.kind === 'retry' ? ctx.nextRetryAt() : null
  const final = outcome.kind === 'retry' && !next ? 'failed' : outcome.kind
  const error = outcome.kind === 'done' ? null : outcome.error.slice(0, 2000)
  await results.submit({
    ctx,
    submissionId: s.id,
    status: final === 'retry' ? 'pending' : final,
    error,
    result: final === 'done' ? { status: 'done' } : final === 'retry' ? { status: 'retry', error: error!, runAt: next! } : { status: 'failed', error: error! },
  })
}

/** One action's outcome, recorded after the send: the submission's action_status and its job's new state. */
interface ActionResult {
  ctx: JobContext<{ submissionId: number; base: string }>
  submissionId: number
  status: 'done' | 'pending' | 'failed'
  error: string | null
  result: JobResult
}

/**
 * Records the outcomes of actions with group commit (kernel/group-commit.ts): outcomes that arrive while a batch
 * commits go together in the next short transaction (one commit and one fsync per batch instead of one per action).
 * The send itself (SMTP, webhook) ran before, with no transaction open and no connection held: on the embedded
 * database a stalled SMTP server must never keep submits waiting. A job whose lease was lost (another worker holds it
 * now) writes nothing and its handler gets LeaseLostError, as ctx.settle does.
 */
function actionResults(kernel: Kernel, jobs: JobQueue) {
  return new GroupCommit<ActionResult, void>({
    db: kernel.db,
    maxBatch: 64,
    async batch(tx, items) {
      const lost = new Set(await jobs.settleMany(tx, items.map((i) => ({ ctx: i.ctx, result: i.result }))))
      const kept = items.filter((i) => !lost.has(i.ctx))
      if (kept.length) {
        const rows = JSON.stringify(kept.map((i) => ({ id: i.submissionId, status: i.status, error: i.error })))
        await tx.execute(sql`
          update form_submissions s set action_status = v.status, action_error = v.error
          from jsonb_to_recordset(${rows}::jsonb) as v(id bigint, status text, error text)
          where s.id = v.id`)
      }
      return items.map((i) => (lost.has(i.ctx) ? failed(new LeaseLostError(`job ${i.ctx.job.id} was claimed by another worker`)) : undefined))
    },
  })
}

export function registerFormJobs(jobs: JobQueue, kernel: Kernel, salts: DailySalts) {
  const results = actionResults(kernel, jobs)
  jobs.define(FORM_ACTION_QUEUE, {
    // Low on purpose: on the embedded database actions share its one connection with the submits they follow. No
    // action holds a transaction or the connection while it sends; outcomes are recorded in batches (actionResults).
    concurrency: 4,
    retryDelaysMs: RETRY_DELAYS_MS,
    handler: (ctx) => runAction(kernel, ctx, results),
  })
  jobs.define('forms.prune-salts', {
    handler: async () => {
      const n = await salts.prune()
      if (n) kernel.logger.info('deleted old form IP salts', { salts: n })
    },
  })
  jobs.schedule({ name: 'forms.prune-salts', cron: '7 * * * *', queue: 'forms.prune-salts', payload: {} })
}
