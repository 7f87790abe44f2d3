import { sql } from 'drizzle-orm'
import { rowsOf, type Tx } from '../../kernel/db'
import { GroupCommit } from '../../kernel/group-commit'
import type { Kernel } from '../../kernel/kernel'
import { FORM_ACTION_QUEUE } from './actions'

/** One submission to store, with what its daily limit needs. */
export interface NewSubmission {
  uuid: string
  formId: number
  spaceId: number
  data: Record<string, unknown>
  lang: string | null
  submittedAt: string
  spamScore: number
  spam: boolean
  ipHash: string
  uaHash: string | null
  referrer: string | null
  /** Queue the form's action (and store action_status pending). */
  runsAction: boolean
  /** Base of links in mails, for the action job. */
  base: string
  /** The form's rate_limit_per_ip and the start of the UTC day it counts from. */
  limit: number
  dayStart: string
}

/** The stored row's id, or null when the daily limit of its (form, IP hash) was reached. */
export type WriteResult = { id: number } | null

const MAX_BATCH = 256

/**
 * Stores submissions in batches (kernel/group-commit.ts): submits that arrive while a batch is being written go together in the next one
 * (group commit), so under load the database sees a handful of statements per batch instead of four per submit;
 * alone, a submit waits for nothing. In each batch's transaction:
 *
 * 1. the advisory lock of every (form, IP hash) in the batch, taken in sorted order (no deadlock between instances);
 * 2. one conditional insert per round — a round holds at most one submit per (form, IP hash), so a later round
 *    counts the earlier ones — storing a row only while that pair's count for the day is below the form's limit;
 * 3. the action jobs of the stored rows.
 *
 * If a batch fails as a whole, each of its submits is written again alone, so one bad row fails only its own request.
 */
export class SubmissionWriter {
  private readonly gc: GroupCommit<NewSubmission, WriteResult>

  constructor(private kernel: Kernel) {
    this.gc = new GroupCommit({ db: kernel.db, maxBatch: MAX_BATCH, batch: (tx, items) => this.writeBatch(tx, items) })
  }

  write(item: NewSubmission): Promise<WriteResult> {
    return this.gc.submit(item)
  }

  private async writeBatch(tx: Tx, items: NewSubmission[]): Promise<WriteResult[]> {
    const pairs = [...new Set(items.map((i) => `${i.formId}\u0000${i.ipHash}`))]
      .map((p) => p.split('\u0000'))
      .sort((a, b) => Number(a[0]) - Number(b[0]) || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    // The embedded database never analyzes its tables (no autovacuum): without enable_seqscan off the planner may
    // scan every submission for the daily counts.
    await tx.execute(sql`
      select set_config('enable_seqscan', 'off', true), count(pg_advisory_xact_lock(l.form_id, hashtext(l.ip_hash)))
      from (select * from jsonb_to_recordset(${JSON.stringify(pairs.map(([f, h]) => ({ form_id: Number(f), ip_hash: h })))}::jsonb)
            as r(form_id int, ip_hash text) order by form_id, ip_hash) l`)
    // Rounds: the n-th submit of each (form, IP hash) pair goes into round n.
    const rounds: NewSubmission[][] = []
    const seen = new Map<string, number>()
    for (const item of items) {
      const key = `${item.formId}\u0000${item.ipHash}`
      const n = seen.get(key) ?? 0
      seen.set(key, n + 1)
      ;(rounds[n] ??= []).push(item)
    }
    const ids = new Map<string, number>()
    for (const round of rounds) for (const r of await insertRound(tx, round)) ids.set(r.uuid, Number(r.id))
    const jobs = items
      .filter((i) => i.runsAction && ids.has(i.uuid))
      .map((i) => ({ queue: FORM_ACTION_QUEUE, payload: { submissionId: ids.get(i.uuid)!, base: i.base } }))
    if (jobs.length) await this.kernel.jobs.enqueueMany(tx, jobs)
    return items.map((i) => (ids.has(i.uuid) ? { id: ids.get(i.uuid)! } : null))
  }
}

/** One statement: every row of the round whose (form, IP hash) is still below its daily limit. */
async function insertRound(tx: Tx, round: NewSubmission[]): Promise<{ id: number | string; uuid: string }[]> {
  const rows = round.map((i) => ({
    uuid: i.uuid,
    form_id: i.formId,
    space_id: i.spaceId,
    data: i.data,
    lang: i.lang,
    submitted_at: i.submittedAt,
    spam_score: i.spamScore,
    spam: i.spam,
    ip_hash: i.ipHash,
    ua_hash: i.uaHash,
    referrer: i.referrer,
    action_status: i.runsAction ? 'pending' : 'none',
    lim: i.limit,
    day_start: i.dayStart,
  }))
  return rowsOf(
    await tx.execute(sql`
      insert into form_submissions (uuid, form_id, space_id, data, lang, submitted_at, spam_score, spam, ip_hash, ua_hash, referrer, action_status)
      select r.uuid, r.form_id, r.space_id, r.data, r.lang, r.submitted_at, r.spam_score, r.spam, r.ip_hash, r.ua_hash, r.referrer, r.action_status
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(uuid uuid, form_id int, space_id int, data jsonb, lang text,
        submitted_at timestamptz, spam_score real, spam boolean, ip_hash text, ua_hash text, referrer text, action_status text,
        lim int, day_start timestamptz)
      where (select count(*) from form_submissions s
             where s.form_id = r.form_id and s.ip_hash = r.ip_hash and s.submitted_at >= r.day_start) < r.lim
      returning id, uuid`),
  )
}
