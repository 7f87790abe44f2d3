import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import type { Transporter } from 'nodemailer'
import type { Config } from '../config'
import type { Clock } from './clock'
import type { DbOrTx } from './db'
import type { JobQueue } from './jobs'
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
 */

declare module './jobs' {
  interface JobMap {
    'mail.send': { message: MailMessage }
  }
}

export const MAIL_QUEUE = 'mail.send' as const

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

  constructor(
    private config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'dataDir'>,
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
    return { messageId, file }
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

/** Registers the `mail.send` queue: one job per message, retried on the schedule above. */
export function registerMailQueue(jobs: JobQueue, mailer: Mailer, clock: Clock) {
  jobs.define(MAIL_QUEUE, {
    concurrency: 4,
    retryDelaysMs: MAIL_RETRY_DELAYS_MS,
    handler: async (ctx) => {
      const { to, subject } = ctx.job.payload.message
      // Kept if this attempt is the last and fails (a retry keeps the message to send it again).
      ctx.keepPayload({ to, subject, message_id: null, sent_at: null } satisfies SettledMailJob)
      const sent = await mailer.send(ctx.job.payload.message)
      ctx.keepPayload({ to, subject, message_id: sent.messageId || null, sent_at: clock.now().toISOString() } satisfies SettledMailJob)
    },
  })
}
