import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import type { Transporter } from 'nodemailer'
import type { Config } from '../config'
import type { Clock } from './clock'
import type { SecretBox } from './crypto'
import type { DbOrTx } from './db'
import { defineError } from './errors'
import type { JobQueue, PayloadCodec } from './jobs'
import type { Logger } from './logger'

/**
 * The one mailer of the service (forms notifications, subscriber confirmations, later invitations and orders).
 *
 * - `SMTP_URL` set: messages go out through nodemailer's SMTP transport, from `MAIL_FROM`.
 * - Unset (the embedded default): each message is rendered to RFC 5322 text by the same library and written as an
 *   `.eml` file under `DATA_DIR/mail/`, and a log line names the file, so a self-hoster sees what would have gone out.
 *
 * Mail is never sent inside a request or a transaction: callers `enqueue` it (in their transaction, so it exists
 * only if the change commits) and the durable `mail.send` job sends it, retried on failure. Job handlers of other
 * queues that own their retry policy (form actions) may call `send` directly: they run outside any request too.
 *
 * Links in mail hold capabilities (confirm, unsubscribe, cancel, invitation, password reset), so:
 * - their base is `linkBase()`, PUBLIC_URL, never a request's Host (a forged one would mail the victim a link to the
 *   attacker's site, token included); without it a mail that needs a link is refused (`mail_links_unavailable`) or
 *   goes without its links, as each sender documents;
 * - the queued message never sits in a row in clear: the `mail.send` queue seals every payload with the instance
 *   key (AES-256-GCM, kernel.secrets) whoever enqueues it (`enqueue`, `jobs.enqueue`, `jobs.enqueueMany`), and a
 *   settled job keeps only `to`, `subject` and the outcome (SettledMailJob). Old row versions, the WAL and backups
 *   hold ciphertext only;
 * - the `.eml` files of the file driver are deleted after MAIL_FILE_RETENTION_DAYS, as finished jobs are.
 */

declare module './jobs' {
  interface JobMap {
    'mail.send': { message: MailMessage }
    'mail.prune': { olderThanDays?: number }
  }
}

export const MAIL_QUEUE = 'mail.send' as const

/** `.eml` files of the file driver are kept this long (as `jobs.prune` keeps finished jobs, mail jobs among them). */
export const MAIL_FILE_RETENTION_DAYS = 7

/** Additional data of the sealed `mail.send` payloads: a value sealed for another purpose does not open here. */
const MAIL_SEAL_CONTEXT = 'mail.send'

/** The RFC 8058 header that offers one-click unsubscription by a POST to the List-Unsubscribe URL. */
export const ONE_CLICK_UNSUBSCRIBE = { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } as const

export const MailErrors = {
  linksUnavailable: defineError(
    'mail_links_unavailable',
    403,
    "This action mails a link, and the service has no PUBLIC_URL to build it from (never from the request's Host, which a client can forge). Its operator sets PUBLIC_URL.",
  ),
} as const

/** Retries of a failed send: after 30 s, 5 min, 30 min, 2 h and 12 h (the webhook schedule of spec 6). */
export const MAIL_RETRY_DELAYS_MS = [30_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 12 * 3_600_000]

export interface MailMessage {
  to: string
  subject: string
  text: string
  html?: string
  replyTo?: string
  /** Extra headers, e.g. `List-Unsubscribe`. */
  headers?: Record<string, string>
}

export interface SentMail {
  messageId: string
  /** The .eml file written (file driver only). */
  file?: string
}

export class Mailer {
  readonly driver: 'smtp' | 'file'
  private transport: Transporter
  private dir: string

  /** Epoch ms (clock) of the last prune of the .eml files by this process. */
  private prunedAt = Number.NEGATIVE_INFINITY

  constructor(
    private config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'dataDir' | 'publicUrl'>,
    private logger: Logger,
    private clock: Clock,
    private jobs: JobQueue,
  ) {
    this.driver = config.smtpUrl ? 'smtp' : 'file'
    this.dir = join(config.dataDir, 'mail')
    this.transport = config.smtpUrl
      ? nodemailer.createTransport(config.smtpUrl, { from: config.mailFrom })
      : nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' })
  }

  /**
   * The base of every link a mail carries: PUBLIC_URL, or null when it is unset. Never the request's origin: anyone
   * can send a Host header, and a mail link on the attacker's host hands them the token when the victim clicks.
   */
  linkBase(): string | null {
    return this.config.publicUrl
  }

  /** Sends one message now (SMTP) or writes it to DATA_DIR/mail/ (file driver). Throws when the server refuses. */
  async send(message: MailMessage): Promise<SentMail> {
    const info = await this.transport.sendMail({
      from: this.config.mailFrom,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      replyTo: message.replyTo,
      headers: message.headers,
      date: this.clock.now(),
    })
    const messageId = String(info.messageId ?? '')
    if (this.driver === 'smtp') {
      this.logger.info('mail sent', { to: message.to, subject: message.subject, message_id: messageId })
      return { messageId }
    }
    mkdirSync(this.dir, { recursive: true })
    const stamp = this.clock.now().toISOString().replace(/[:.]/g, '-')
    const file = join(this.dir, `${stamp}-${crypto.randomUUID().slice(0, 8)}.eml`)
    writeFileSync(file, (info as unknown as { message: Buffer }).message)
    this.logger.info('mail written (no SMTP_URL)', { to: message.to, subject: message.subject, file })
    // Every instance writing files prunes its own folder (the hourly `mail.prune` job runs on one instance only).
    if (this.clock.ms() - this.prunedAt >= 3_600_000) this.pruneFiles()
    return { messageId, file }
  }

  /**
   * Deletes the `.eml` files this mailer wrote more than `olderThanDays` ago (by the time in their names, which is
   * the kernel clock's). Other files in the folder are left alone. Returns how many were deleted.
   */
  pruneFiles(olderThanDays = MAIL_FILE_RETENTION_DAYS): number {
    if (this.driver !== 'file') return 0
    this.prunedAt = this.clock.ms()
    let names: string[]
    try {
      names = readdirSync(this.dir)
    } catch {
      return 0 // no folder yet: nothing was written
    }
    const cutoff = this.clock.ms() - olderThanDays * 86_400_000
    let deleted = 0
    for (const name of names) {
      const m = EML_NAME.exec(name)
      if (!m) continue
      const written = Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`)
      if (!(written < cutoff)) continue
      try {
        rmSync(join(this.dir, name), { force: true })
        deleted++
      } catch (err) {
        this.logger.warn('could not delete an old mail file', { file: join(this.dir, name), error: String(err) })
      }
    }
    if (deleted) this.logger.info('old mail files deleted', { dir: this.dir, deleted, older_than_days: olderThanDays })
    return deleted
  }

  /** Queues a message on the durable `mail.send` queue; inside `tx` it exists only if that transaction commits. */
  enqueue(message: MailMessage, tx?: DbOrTx): Promise<number | null> {
    return this.jobs.enqueue(MAIL_QUEUE, { message }, { tx })
  }

  close() {
    this.transport.close()
  }
}

/**
 * What a settled `mail.send` job keeps: the rendered message holds links with secrets (confirm and unsubscribe
 * tokens) that must exist in clear only in the mail itself, so once the job is done or has failed for good its row
 * keeps only this. `message_id` and `sent_at` are null for a failed job (its error is in `last_error`).
 */
export interface SettledMailJob {
  to: string
  subject: string
  message_id: string | null
  sent_at: string | null
}

/** The name the file driver gives each message: `<ISO time with - for : and .>-<8 hex>.eml`. */
const EML_NAME = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z-[0-9a-f]{8}\.eml$/

/**
 * The stored form of a `mail.send` payload: `{sealed}`, the message sealed with the instance key. A payload queued
 * in clear by an earlier version (`{message}`) still opens, so an upgrade sends what was waiting.
 */
export function mailPayloadCodec(secrets: SecretBox): PayloadCodec<{ message: MailMessage }> {
  return {
    seal: (payload) => ({ sealed: secrets.seal(JSON.stringify(payload.message), MAIL_SEAL_CONTEXT) }),
    open: (stored) => {
      const s = (stored ?? {}) as { sealed?: unknown; message?: MailMessage }
      if (typeof s.sealed === 'string') {
        try {
          return { message: JSON.parse(secrets.open(s.sealed, MAIL_SEAL_CONTEXT)) as MailMessage }
        } catch {
          throw new Error('the queued mail does not open with this SERVICE_SECRET_KEY (was the key changed?)')
        }
      }
      if (s.message && typeof s.message === 'object') return { message: s.message }
      throw new Error('not a mail job payload')
    },
  }
}

/** Registers the `mail.send` queue (one job per message, retried on the schedule above) and the `.eml` pruning. */
export function registerMailQueue(jobs: JobQueue, mailer: Mailer, clock: Clock, secrets: SecretBox) {
  jobs.define('mail.prune', {
    handler: async ({ job }) => {
      mailer.pruneFiles(job.payload.olderThanDays ?? MAIL_FILE_RETENTION_DAYS)
    },
  })
  jobs.schedule({ name: 'mail.prune', cron: '47 * * * *', queue: 'mail.prune', payload: { olderThanDays: MAIL_FILE_RETENTION_DAYS } })
  jobs.define(MAIL_QUEUE, {
    concurrency: 4,
    retryDelaysMs: MAIL_RETRY_DELAYS_MS,
    payloadCodec: mailPayloadCodec(secrets),
    handler: async (ctx) => {
      const { to, subject } = ctx.job.payload.message
      // Kept if this attempt is the last and fails (a retry keeps the message to send it again).
      ctx.keepPayload({ to, subject, message_id: null, sent_at: null } satisfies SettledMailJob)
      const sent = await mailer.send(ctx.job.payload.message)
      ctx.keepPayload({ to, subject, message_id: sent.messageId || null, sent_at: clock.now().toISOString() } satisfies SettledMailJob)
    },
  })
}
