// A real SMTP sink for mail tests: smtp-server on 127.0.0.1 (port 0), every accepted message parsed with mailparser.
import { type ParsedMail, simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  from: string
  to: string[]
  parsed: ParsedMail
  raw: string
}

export interface SmtpSink {
  url: string
  port: number
  mails: ReceivedMail[]
  /** Refuse the next `n` messages with a 451 (temporary failure). */
  failNext(n: number): void
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedMail[]>
  clear(): void
  stop(): Promise<void>
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const mails: ReceivedMail[] = []
  let failures = 0
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', async () => {
        if (failures > 0) {
          failures--
          const err = Object.assign(new Error('try again later'), { responseCode: 451 })
          return callback(err)
        }
        const raw = Buffer.concat(chunks).toString('utf8')
        const parsed = await simpleParser(raw)
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          parsed,
          raw,
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const port = (server.server.address() as { port: number }).port
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    mails,
    failNext(n) {
      failures = n
    },
    async waitFor(n, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs
      while (mails.length < n) {
        if (Date.now() > until) throw new Error(`expected ${n} mails, got ${mails.length}`)
        await Bun.sleep(10)
      }
      return mails
    },
    clear() {
      mails.length = 0
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
