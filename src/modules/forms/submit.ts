import { eq, lt } from 'drizzle-orm'
import { formIpSalts } from './tables'
import { randomBytes, sha256Hex } from '../../kernel/crypto'
import { KernelErrors, validationFailed } from '../../kernel/errors'
import { publicActor } from '../../kernel/filters'
import type { Kernel } from '../../kernel/kernel'
import { outboundFetch } from '../../kernel/outbound'
import { bestAcceptLanguage, canonicalLocale, localeChain } from '../../kernel/locale'
import type { PublicSpace } from '../spaces/public'
import { type FormFieldDef, FormErrors } from './model'
import { fieldErrors, normalizeData, parseRenderedAt, SPAM_THRESHOLD, spamScore, storedData, type Validators } from './schema'
import { SPAM_SECRET_CONTEXT, type FormRow } from './service'
import type { SubmissionWriter } from './writer'

const DAY_MS = 86_400_000

/** `YYYY-MM-DD` of the UTC day of `d`. */
export const utcDay = (d: Date) => d.toISOString().slice(0, 10)

/**
 * The random salt of each UTC day for IP hashes, kept in the database (so every instance hashes alike) and deleted
 * after two days by the `forms.prune-salts` job: once it is gone, no hash of that day can be recomputed from an IP.
 */
export class DailySalts {
  private cache = new Map<string, Promise<string>>()

  constructor(private kernel: Pick<Kernel, 'db' | 'clock'>) {}

  get(day: string): Promise<string> {
    let p = this.cache.get(day)
    if (!p) {
      if (this.cache.size > 4) this.cache.clear()
      p = this.load(day).catch((err) => {
        this.cache.delete(day)
        throw err
      })
      this.cache.set(day, p)
    }
    return p
  }

  private async load(day: string): Promise<string> {
    const db = this.kernel.db.db
    await db
      .insert(formIpSalts)
      .values({ day, salt: Buffer.from(randomBytes(32)).toString('hex'), createdAt: this.kernel.clock.now() })
      .onConflictDoNothing()
    const [row] = await db.select({ salt: formIpSalts.salt }).from(formIpSalts).where(eq(formIpSalts.day, day))
    return row.salt
  }

  /** Deletes the salts of days before yesterday (UTC). */
  async prune(): Promise<number> {
    const keepFrom = utcDay(new Date(this.kernel.clock.ms() - DAY_MS))
    const rows = await this.kernel.db.db.delete(formIpSalts).where(lt(formIpSalts.day, keepFrom)).returning({ day: formIpSalts.day })
    for (const r of rows) this.cache.delete(r.day)
    return rows.length
  }
}

/** Referrer cut to scheme and host (spec 2); null when absent or not http(s). */
export function referrerOrigin(raw: string | null): string | null {
  if (!raw) return null
  try {
    const u = new URL(raw)
    return u.protocol === 'http:' || u.protocol === 'https:' ? `${u.protocol}//${u.host}` : null
  } catch {
    return null
  }
}

export interface SubmitRequest {
  ip: string
  userAgent: string | null
  referer: string | null
  acceptLanguage: string | null
  lang: string | undefined
  /** Base of links in mails (lead action). */
  base: string
}

export interface SubmitBodyInput {
  _hp?: string
  data?: Record<string, unknown>
  captcha_token?: string
  rendered_at?: string | number
}

export type SubmitOutcome =
  | { honeypot: true }
  | { honeypot: false; submission_uuid: string; success_message: string | null; redirect_url: string | null }

/** Seconds until the end of the UTC day of `now`: the Retry-After of the per-form daily limit. */
export function secondsToEndOfDay(now: Date): number {
  const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)
  return Math.max(1, Math.ceil((end - now.getTime()) / 1000))
}

async function verifyCaptcha(kernel: Kernel, form: FormRow, token: string | undefined): Promise<boolean> {
  if (!token || !form.spamSecretSealed) return false
  let secret: string
  try {
    secret = kernel.secrets.open(form.spamSecretSealed, SPAM_SECRET_CONTEXT)
  } catch {
    kernel.logger.error('form captcha secret cannot be opened', { form: form.uuid })
    return false
  }
  const url = form.spamProvider === 'hcaptcha' ? kernel.config.hcaptchaVerifyUrl : kernel.config.turnstileVerifyUrl
  try {
    // The verifier is the operator's (trusted like AI_BASE_URL, so a private address is allowed), but its answer is
    // still read to a cap: a verifier that streams without end must not fill the process's memory.
    const res = await outboundFetch(
      url,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': 'content-service-forms' },
        body: new URLSearchParams({ secret, response: token }).toString(),
        timeoutMs: 5_000,
        maxResponseBytes: CAPTCHA_ANSWER_MAX_BYTES,
      },
      { allowPrivate: true },
    )
    if (res.status < 200 || res.status >= 300) return false
    if (res.truncated) {
      kernel.logger.warn('captcha verification failed', { provider: form.spamProvider, error: `the verifier's answer is over ${CAPTCHA_ANSWER_MAX_BYTES} bytes` })
      return false
    }
    const body = JSON.parse(res.body) as { success?: unknown }
    return body?.success === true
  } catch (err) {
    kernel.logger.warn('captcha verification failed', { provider: form.spamProvider, error: String(err) })
    return false
  }
}

/** What a captcha verifier may answer: its JSON is a few hundred bytes. */
export const CAPTCHA_ANSWER_MAX_BYTES = 64 * 1024

function successMessage(space: PublicSpace, form: FormRow, req: SubmitRequest): { lang: string; text: string | null } {
  const messages = form.successMessage as Record<string, string>
  let requested: string | null = null
  if (req.lang !== undefined) requested = canonicalLocale(req.lang)
  else if (req.acceptLanguage) requested = bestAcceptLanguage(req.acceptLanguage, space.codes)
  const chain = localeChain(space, requested)
  const lang = chain[0] ?? space.defaultLang
  for (const c of chain) if (messages[c] !== undefined) return { lang, text: messages[c] }
  return { lang, text: messages[space.defaultLang] ?? null }
}

/**
 * The public submit (spec 4.6): honeypot → normalise and validate → captcha → daily per-IP-hash limit, insert and
 * the action job in one transaction, under the advisory lock of the (form, IP hash) (SubmissionWriter).
 */
export async function submitForm(
  kernel: Kernel,
  deps: { salts: DailySalts; validators: Validators; writer: SubmissionWriter },
  space: PublicSpace,
  form: FormRow,
  body: SubmitBodyInput,
  req: SubmitRequest,
): Promise<SubmitOutcome> {
  if (body._hp) return { honeypot: true }
  if (body.data === undefined) throw validationFailed({ data: ['is required'] })
  const fields = form.fields as FormFieldDef[]
  let normalized = normalizeData(fields, body.data)
  const validate = deps.validators.get(form.compiledSchema as Record<string, unknown>)
  if (!validate(normalized.data)) throw KernelErrors.validationFailed('The submission is not valid.', fieldErrors(validate.errors))
  if (form.spamProvider && !(await verifyCaptcha(kernel, form, body.captcha_token))) throw FormErrors.captchaFailed()
  const msg = successMessage(space, form, req)

  // Filter hook (plugins) before the write: may veto, or amend the values (normalised and validated again). The
  // payload carries no client address or user agent.
  const hooked = { form: { uuid: form.uuid, slug: form.slug, name: form.label }, data: normalized.data, lang: msg.lang }
  const out = await kernel.filters.run('form.before_submit', hooked, publicActor(space))
  if (out !== hooked) {
    const data = (out as { data?: unknown } | null)?.data
    if (!data || typeof data !== 'object' || Array.isArray(data)) throw validationFailed({ data: ["a plugin's amendment is not an object of field values"] })
    normalized = normalizeData(fields, data as Record<string, unknown>)
    if (!validate(normalized.data)) {
      throw KernelErrors.validationFailed("A plugin's amendment of the submission is not valid.", fieldErrors(validate.errors))
    }
  }

  const now = kernel.clock.now()
  const day = utcDay(now)
  const salt = await deps.salts.get(day)
  const ipHash = sha256Hex(`${salt}:${space.id}:${req.ip}`)
  const uaHash = req.userAgent ? sha256Hex(req.userAgent).slice(0, 16) : null
  const score = spamScore(normalized, body.data, parseRenderedAt(body.rendered_at), now)
  const spam = score >= SPAM_THRESHOLD
  const runsAction = !spam && form.submitAction !== 'store'
  const uuid = crypto.randomUUID()
  const dayStart = new Date(`${day}T00:00:00.000Z`)

  const stored = await deps.writer.write({
    uuid,
    formId: form.id,
    spaceId: space.id,
    data: storedData(fields, normalized.data),
    lang: msg.lang,
    submittedAt: now.toISOString(),
    spamScore: score,
    spam,
    ipHash,
    uaHash,
    referrer: referrerOrigin(req.referer),
    runsAction,
    base: req.base,
    limit: form.rateLimitPerIp,
    dayStart: dayStart.toISOString(),
  })
  if (!stored) {
    throw KernelErrors.rateLimited(`This form takes ${form.rateLimitPerIp} submissions per day from one address; try again tomorrow (UTC).`, undefined, {
      'Retry-After': String(secondsToEndOfDay(now)),
    })
  }
  return { honeypot: false, submission_uuid: uuid, success_message: msg.text, redirect_url: form.redirectUrl }
}
