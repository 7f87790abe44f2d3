import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { simpleParser } from 'mailparser'
import { type TestApp, testApp } from '../helpers/app'
import { type SmtpSink, startSmtpSink } from '../helpers/smtp'

setDefaultTimeout(30_000)

const jobState = async (t: TestApp, id: number) =>
  (await t.kernel.db.query<{ status: string; attempts: number }>('select status, attempts from jobs where id = $1', [id]))[0]

describe('mailer over SMTP (SMTP_URL set)', () => {
  let t: TestApp
  let sink: SmtpSink

  beforeAll(async () => {
    sink = await startSmtpSink()
    t = await testApp({}, { SMTP_URL: sink.url, MAIL_FROM: 'Acme CMS <cms@acme.test>' })
  })
  afterAll(async () => {
    await t?.close()
    await sink?.stop()
  })

  test('the kernel exposes an SMTP mailer', () => {
    expect(t.kernel.mail.driver).toBe('smtp')
  })

  test('an enqueued message is sent by the durable job and arrives intact', async () => {
    sink.clear()
    const id = await t.kernel.mail.enqueue({
      to: 'ada@example.com',
      subject: 'Grüße — hello',
      text: 'Line one\nLine two: ünïcödé',
      headers: { 'List-Unsubscribe': '<https://example.com/u/1>' },
    })
    expect(sink.mails).toHaveLength(0) // nothing goes out before the job runs
    await t.kernel.jobs.runDueJobs()
    const [mail] = await sink.waitFor(1)
    expect(mail.to).toEqual(['ada@example.com'])
    expect(mail.from).toBe('cms@acme.test')
    expect(mail.parsed.subject).toBe('Grüße — hello')
    expect(mail.parsed.text?.trim()).toBe('Line one\nLine two: ünïcödé')
    expect(mail.parsed.from?.value[0]).toEqual({ address: 'cms@acme.test', name: 'Acme CMS' })
    expect(mail.raw).toContain('List-Unsubscribe: <https://example.com/u/1>')
    expect((await jobState(t, id!)).status).toBe('done')
  })

  test('a message enqueued in a rolled-back transaction is never sent', async () => {
    sink.clear()
    await t.kernel.db.db
      .transaction(async (tx) => {
        await t.kernel.mail.enqueue({ to: 'nobody@example.com', subject: 'x', text: 'x' }, tx)
        throw new Error('rollback')
      })
      .catch(() => {})
    await t.kernel.jobs.runDueJobs()
    expect(sink.mails).toHaveLength(0)
  })

  test('a refused message is retried on the schedule until the server takes it', async () => {
    sink.clear()
    sink.failNext(2)
    const id = await t.kernel.mail.enqueue({ to: 'retry@example.com', subject: 'Retry me', text: 'body' })
    await t.kernel.jobs.runDueJobs()
    expect(sink.mails).toHaveLength(0)
    expect(await jobState(t, id!)).toEqual({ status: 'pending', attempts: 1 })
    t.clock.advance(30_000)
    await t.kernel.jobs.runDueJobs()
    expect(await jobState(t, id!)).toEqual({ status: 'pending', attempts: 2 })
    t.clock.advance(5 * 60_000)
    await t.kernel.jobs.runDueJobs()
    await sink.waitFor(1)
    expect(sink.mails[0].parsed.subject).toBe('Retry me')
    expect(await jobState(t, id!)).toEqual({ status: 'done', attempts: 3 })
  })

  test('a message that fails for good keeps only its metadata: the body (and the links in it) are gone', async () => {
    sink.clear()
    sink.failNext(100)
    const id = await t.kernel.mail.enqueue({ to: 'never@example.com', subject: 'Never', text: 'secret-link-token-123', html: '<a>secret-link-token-123</a>' })
    for (let i = 0; i < 10 && (await jobState(t, id!)).status === 'pending'; i++) {
      await t.kernel.jobs.runDueJobs()
      t.clock.advance(13 * 3_600_000)
    }
    sink.failNext(0)
    const [row] = await t.kernel.db.query<{ status: string; payload: unknown; last_error: string }>('select status, payload, last_error from jobs where id = $1', [id])
    expect(row.status).toBe('failed')
    expect(row.payload).toEqual({ to: 'never@example.com', subject: 'Never', message_id: null, sent_at: null })
    expect(row.last_error).toBeTruthy()
    expect(sink.mails).toHaveLength(0)
  })

  test('a retried message keeps its body, sealed, until it is sent', async () => {
    sink.clear()
    sink.failNext(1)
    const id = await t.kernel.mail.enqueue({ to: 'later@example.com', subject: 'Later', text: 'kept-for-retry' })
    await t.kernel.jobs.runDueJobs()
    const [row] = await t.kernel.db.query<{ status: string; payload: any }>('select status, payload from jobs where id = $1', [id])
    expect(row.status).toBe('pending')
    expect(Object.keys(row.payload)).toEqual(['sealed'])
    expect(JSON.stringify(row.payload)).not.toContain('kept-for-retry')
    expect(JSON.stringify(row.payload)).not.toContain('later@example.com')
    t.clock.advance(30_000)
    await t.kernel.jobs.runDueJobs()
    await sink.waitFor(1)
    expect(sink.mails[0].parsed.text?.trim()).toBe('kept-for-retry')
    const [after] = await t.kernel.db.query<{ status: string; payload: any }>('select status, payload from jobs where id = $1', [id])
    expect(after.status).toBe('done')
    expect(JSON.stringify(after.payload)).not.toContain('kept-for-retry')
  })
})

describe('mailer without SMTP_URL (embedded default)', () => {
  let t: TestApp
  let dir: string

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cs-mail-'))
    t = await testApp({ dataDir: dir })
  })
  afterAll(async () => {
    await t?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('each message is written as an .eml file under DATA_DIR/mail/', async () => {
    expect(t.kernel.mail.driver).toBe('file')
    await t.kernel.mail.enqueue({ to: 'grace@example.com', subject: 'Written, not sent', text: 'Hello Grace' })
    await t.kernel.jobs.runDueJobs()
    const files = readdirSync(join(dir, 'mail')).filter((f) => f.endsWith('.eml'))
    expect(files).toHaveLength(1)
    const parsed = await simpleParser(readFileSync(join(dir, 'mail', files[0])))
    expect(parsed.subject).toBe('Written, not sent')
    expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value[0].address : null).toBe('grace@example.com')
    expect(parsed.text?.trim()).toBe('Hello Grace')
  })
})
